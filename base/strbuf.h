/*
 * strbuf.h - pb_buf, a growable byte buffer (a string builder): append
 * bytes or printf-formatted text, then read or take the bytes.
 *
 * The bytes are always NUL-terminated once anything was appended (the NUL
 * is not counted in len).  Growth doubles and is checked: an append that
 * cannot get memory returns false, sets `oom` and leaves the buffer as it
 * was, so a writer can append freely and check once at the end.  A zeroed
 * pb_buf is an empty buffer; the buffer owns its bytes until pb_buf_take.
 */
#ifndef PRISM_BASE_STRBUF_H
#define PRISM_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pb_buf {
    char *data;                 /* len bytes, then a NUL; NULL when empty */
    size_t len, cap;
    bool oom;                   /* an append failed */
} pb_buf;

/* Room for `more` bytes (and the NUL) past len; false without memory. */
bool pb_buf_reserve(pb_buf *b, size_t more);
bool pb_buf_append(pb_buf *b, const void *p, size_t n);
bool pb_buf_puts(pb_buf *b, const char *s);
bool pb_buf_putc(pb_buf *b, char c);
bool pb_buf_printf(pb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The bytes handed over (the caller frees them; "" is malloc'd for an empty
 * buffer, NULL without memory); the buffer is empty again. */
char *pb_buf_take(pb_buf *b, size_t *len);
/* Release the bytes; the buffer is empty (and usable) again. */
void pb_buf_free(pb_buf *b);
/* Empty again, the memory kept for reuse. */
void pb_buf_clear(pb_buf *b);
/* The text, "" when nothing was appended (never NULL); borrowed until the
 * next append. */
static inline const char *pb_buf_str(const pb_buf *b) { return b->data ? b->data : ""; }

#endif

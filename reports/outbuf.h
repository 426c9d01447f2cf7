/*
 * outbuf.h - ob, the exports' output buffer: the bytes of the events
 * gathered in one large block and handed to the FILE with one fwrite when
 * it fills, and the formatting an event writer needs done by hand, without
 * printf (integers, nanoseconds as microseconds, JSON strings).  The
 * chrome-trace and speedscope exports write millions of small events;
 * through stdio, one call per field, the calls cost more than the work.
 *
 *   ob o;
 *   if (!ob_open(&o, f)) ...;          // out of memory
 *   OB_LIT(&o, "{\"ts\":");
 *   ob_us(&o, ts_ns);                 // 1234.5 (microseconds, exact)
 *   ob_close(&o);                     // flushed; ferror(f) tells the rest
 *
 * Everything written through an ob reaches f in order; nothing else may
 * write to f between ob_open and ob_close (or an ob_flush).  Once the first
 * block fills, a writer thread takes the full blocks (two, alternating), so
 * that the formatting of the next block overlaps the copy of the last into
 * the kernel; ob_flush waits for it (after it, f is the caller's again),
 * and without a thread the blocks are written in place.  Internal to
 * reports/.
 */
#ifndef PRISM_REPORTS_OUTBUF_H
#define PRISM_REPORTS_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "strbuf.h"

#define OB_CAP (1u << 20)
/* Bytes ob_u64 / ob_i64 / ob_us / ob_double write at most. */
#define OB_NUM_MAX 32

typedef struct ob_writer ob_writer;

typedef struct ob {
    FILE *f;
    char *buf;                  /* OB_CAP bytes                              */
    size_t len;
    pb_buf scratch;             /* ob_json_str's escaping                    */
    ob_writer *w;               /* the writer thread; NULL: none (yet)       */
    bool sync;                  /* no thread could start: write in place     */
} ob;

/* false when out of memory (nothing to close then). */
bool ob_open(ob *o, FILE *f);
/* Hand what is held to the FILE and wait until it is there (fwrite; its
 * errors stay in ferror). */
void ob_flush(ob *o);
/* Flush, stop the writer thread and free the buffers. */
void ob_close(ob *o);
/* The block is full: to the writer thread (ob_room's slow path). */
void ob_spill(ob *o);

/* n bytes of room at the end (handing the block on first if need be);
 * n <= OB_CAP. */
static inline char *ob_room(ob *o, size_t n)
{
    if (OB_CAP - o->len < n)
        ob_spill(o);
    return o->buf + o->len;
}

/* The bytes p[0..n), of any length. */
void ob_big(ob *o, const void *p, size_t n);
static inline void ob_mem(ob *o, const void *p, size_t n)
{
    if (n > OB_CAP / 4) {
        ob_big(o, p, n);
        return;
    }
    memcpy(ob_room(o, n), p, n);
    o->len += n;
}
static inline void ob_str(ob *o, const char *s) { ob_mem(o, s, strlen(s)); }
static inline void ob_putc(ob *o, char c)
{
    *ob_room(o, 1) = c;
    o->len++;
}
/* A string literal, its length known at compile time. */
#define OB_LIT(o, lit) ob_mem((o), (lit), sizeof(lit) - 1)

/* Digits of v written at p; the end. */
char *ob_fmt_u64(char *p, uint64_t v);
/* ns as microseconds, exact: "1234", "1234.5", "1234.567" (the fraction's
 * trailing zeros left out); written at p, the end. */
char *ob_fmt_us(char *p, uint64_t ns);

static inline void ob_u64(ob *o, uint64_t v)
{
    char *p = ob_room(o, OB_NUM_MAX);
    o->len = (size_t)(ob_fmt_u64(p, v) - o->buf);
}
void ob_i64(ob *o, int64_t v);
static inline void ob_us(ob *o, uint64_t ns)
{
    char *p = ob_room(o, OB_NUM_MAX);
    o->len = (size_t)(ob_fmt_us(p, ns) - o->buf);
}
/* %.17g (reads back bit for bit); null when not finite (JSON has no NaN). */
void ob_double(ob *o, double v);
/* s[0..n) as a quoted JSON string, escaped as jsonw.h escapes. */
void ob_json_str(ob *o, const char *s, size_t n);
static inline void ob_json_cstr(ob *o, const char *s) { ob_json_str(o, s, strlen(s)); }

#endif

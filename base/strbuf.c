/*
 * strbuf.c - pb_buf, the growable byte buffer (see strbuf.h).
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pb_buf_reserve(pb_buf *b, size_t more)
{
    if (more >= SIZE_MAX / 2 - b->len) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + more + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

bool pb_buf_append(pb_buf *b, const void *p, size_t n)
{
    if (!pb_buf_reserve(b, n))
        return false;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

bool pb_buf_puts(pb_buf *b, const char *s)
{
    return pb_buf_append(b, s, strlen(s));
}

bool pb_buf_putc(pb_buf *b, char c)
{
    return pb_buf_append(b, &c, 1);
}

bool pb_buf_printf(pb_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return false;
    if ((size_t)n < sizeof small)
        return pb_buf_append(b, small, (size_t)n);
    if (!pb_buf_reserve(b, (size_t)n))
        return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

char *pb_buf_take(pb_buf *b, size_t *len)
{
    char *p = b->data ? b->data : calloc(1, 1);
    if (len)
        *len = p ? b->len : 0;
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
    return p;
}

void pb_buf_free(pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pb_buf_clear(pb_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

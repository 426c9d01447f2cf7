/*
 * outbuf.c - ob, the exports' output buffer (see outbuf.h).
 */
#include "outbuf.h"

#include <math.h>
#include <stdlib.h>

#include "jsonw.h"

bool ob_open(ob *o, FILE *f)
{
    o->f = f;
    o->len = 0;
    o->scratch = (pb_buf){ 0 };
    o->buf = malloc(OB_CAP);
    return o->buf != NULL;
}

void ob_flush(ob *o)
{
    if (o->len)
        fwrite(o->buf, 1, o->len, o->f);
    o->len = 0;
}

void ob_close(ob *o)
{
    ob_flush(o);
    free(o->buf);
    o->buf = NULL;
    pb_buf_free(&o->scratch);
}

void ob_big(ob *o, const void *p, size_t n)
{
    if (OB_CAP - o->len >= n) {
        memcpy(o->buf + o->len, p, n);
        o->len += n;
        return;
    }
    ob_flush(o);
    fwrite(p, 1, n, o->f);
}

/* "00" .. "99" */
static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v (1 for 0). */
static unsigned ndigits(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
    };
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    unsigned n = (bits * 1233u) >> 12;          /* ~ bits * log10(2) */
    return n + ((v | 1) >= pow10[n]);       /* v | 1: 0 has a digit */
}

char *ob_fmt_u64(char *p, uint64_t v)
{
    char *e = p + ndigits(v), *q = e;           /* written from the end, in place */
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = digits2[d + 1];
        *--q = digits2[d];
    }
    if (v >= 10) {
        *--q = digits2[v * 2 + 1];
        *--q = digits2[v * 2];
    } else {
        *--q = (char)('0' + v);
    }
    return e;
}

char *ob_fmt_us(char *p, uint64_t ns)
{
    p = ob_fmt_u64(p, ns / 1000u);
    unsigned f = (unsigned)(ns % 1000u);
    if (f) {
        *p++ = '.';
        *p++ = (char)('0' + f / 100);
        f %= 100;
        if (f) {
            *p++ = (char)('0' + f / 10);
            if (f % 10)
                *p++ = (char)('0' + f % 10);
        }
    }
    return p;
}

void ob_i64(ob *o, int64_t v)
{
    char *p = ob_room(o, OB_NUM_MAX);
    char *s = p;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        *p++ = '-';
        u = 0 - u;                      /* INT64_MIN too */
    }
    o->len += (size_t)(ob_fmt_u64(p, u) - s);
}

void ob_double(ob *o, double v)
{
    if (!isfinite(v)) {
        OB_LIT(o, "null");
        return;
    }
    char *p = ob_room(o, OB_NUM_MAX);
    int n = snprintf(p, OB_NUM_MAX, "%.17g", v);
    if (n > 0 && n < OB_NUM_MAX)
        o->len += (size_t)n;
}

void ob_json_str(ob *o, const char *s, size_t n)
{
    pb_buf_clear(&o->scratch);
    if (pb_json_buf_string(&o->scratch, s, n)) {
        ob_mem(o, o->scratch.data, o->scratch.len);
        return;
    }
    ob_flush(o);                        /* no memory: escaped straight to f */
    pb_json_put_string(o->f, s, n);
}

/*
 * cbor_cursor.h - a small bounded CBOR decoder for the reader (internal).
 *
 * Every read checks the bytes left; nothing here allocates.  Heads with an
 * indefinite length (additional info 31) or reserved additional info (28-30)
 * are reported as CUR_BAD: PRISM files never use them.
 */
#ifndef PRISM_CBOR_CURSOR_H
#define PRISM_CBOR_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "prism/profile.h"

enum { CUR_OK = 0, CUR_SHORT = 1, CUR_BAD = 2 };

enum {
    MT_UINT = 0, MT_NEGINT = 1, MT_BYTES = 2, MT_TEXT = 3,
    MT_ARRAY = 4, MT_MAP = 5, MT_TAG = 6, MT_SIMPLE = 7
};

typedef struct cur {
    const uint8_t *p, *end;
} cur;

static inline uint64_t cur_be(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Read one head.  For major type 7, *arg holds the raw bits of a float
 * (ai 25-27) or the simple value. *ai receives the additional info. */
static inline int cur_head(cur *c, unsigned *major, uint64_t *arg, unsigned *ai)
{
    if (c->p >= c->end)
        return CUR_SHORT;
    uint8_t b = *c->p;
    unsigned a = b & 31u;
    *major = b >> 5;
    *ai = a;
    if (a < 24) {
        *arg = a;
        c->p++;
        return CUR_OK;
    }
    if (a > 27)
        return CUR_BAD;
    unsigned n = 1u << (a - 24);
    if ((size_t)(c->end - c->p) < 1 + (size_t)n)
        return CUR_SHORT;
    *arg = cur_be(c->p + 1, n);
    c->p += 1 + n;
    return CUR_OK;
}

/* Read an unsigned integer (major type 0). */
static inline int cur_uint(cur *c, uint64_t *v)
{
    const uint8_t *save = c->p;
    unsigned mt, ai;
    int rc = cur_head(c, &mt, v, &ai);
    if (rc != CUR_OK)
        return rc;
    if (mt != MT_UINT) {
        c->p = save;
        return CUR_BAD;
    }
    return CUR_OK;
}

/* Unsigned integer that must fit in 32 bits. */
static inline int cur_u32(cur *c, uint32_t *v)
{
    uint64_t x;
    int rc = cur_uint(c, &x);
    if (rc != CUR_OK)
        return rc;
    if (x > UINT32_MAX)
        return CUR_BAD;
    *v = (uint32_t)x;
    return CUR_OK;
}

/* A signed integer (major 0 or 1) in int64 range. */
static inline int cur_int(cur *c, int64_t *v)
{
    unsigned mt, ai;
    uint64_t a;
    int rc = cur_head(c, &mt, &a, &ai);
    if (rc != CUR_OK)
        return rc;
    if (a > (uint64_t)INT64_MAX)
        return CUR_BAD;
    if (mt == MT_UINT)
        *v = (int64_t)a;
    else if (mt == MT_NEGINT)
        *v = -1 - (int64_t)a;
    else
        return CUR_BAD;
    return CUR_OK;
}

/* A definite array head whose count is plausible for the bytes left
 * (every element needs at least one byte). */
static inline int cur_array(cur *c, uint64_t *n)
{
    unsigned mt, ai;
    int rc = cur_head(c, &mt, n, &ai);
    if (rc != CUR_OK)
        return rc;
    if (mt != MT_ARRAY)
        return CUR_BAD;
    if (*n > (uint64_t)(c->end - c->p))
        return CUR_SHORT;
    return CUR_OK;
}

/* A text string: *s points into the input, not NUL-terminated. */
static inline int cur_text(cur *c, const char **s, size_t *len, size_t max)
{
    unsigned mt, ai;
    uint64_t n;
    int rc = cur_head(c, &mt, &n, &ai);
    if (rc != CUR_OK)
        return rc;
    if (mt != MT_TEXT || n > max)
        return CUR_BAD;
    if (n > (uint64_t)(c->end - c->p))
        return CUR_SHORT;
    *s = (const char *)c->p;
    *len = (size_t)n;
    c->p += n;
    return CUR_OK;
}

/* Is the next item null (simple value 22)? Consumes it if so. */
static inline bool cur_null(cur *c)
{
    if (c->p < c->end && *c->p == 0xf6) {
        c->p++;
        return true;
    }
    return false;
}

/* Decode a half-precision float's bits. */
double pf_cur_half(uint16_t h);

/* Read a scalar value (int, float, bool, null, or text up to max bytes).
 * Text points into the input and is not NUL-terminated: *tlen its length. */
int pf_cur_value(cur *c, prism_value *v, size_t *tlen, size_t max_text);

/* Skip one complete item, nested at most `depth` levels. */
int pf_cur_skip(cur *c, unsigned depth);

#endif

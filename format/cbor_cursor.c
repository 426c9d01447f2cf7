/* cbor_cursor.c - the out-of-line parts of the bounded CBOR cursor. */
#include "cbor_cursor.h"

#include <math.h>

double pf_cur_half(uint16_t h)
{
    unsigned exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(mant, -24);
    else if (exp != 31)
        v = ldexp(mant + 1024, (int)exp - 25);
    else
        v = mant == 0 ? INFINITY : NAN;
    return (h & 0x8000) ? -v : v;
}

int pf_cur_value(cur *c, prism_value *v, size_t *tlen, size_t max_text)
{
    const uint8_t *save = c->p;
    unsigned mt, ai;
    uint64_t a;
    int rc = cur_head(c, &mt, &a, &ai);
    if (rc != CUR_OK)
        return rc;
    *tlen = 0;
    switch (mt) {
    case MT_UINT:
        v->type = PRISM_VAL_UINT;
        v->v.u = a;
        return CUR_OK;
    case MT_NEGINT:
        if (a > (uint64_t)INT64_MAX)
            return CUR_BAD;
        v->type = PRISM_VAL_INT;
        v->v.i = -1 - (int64_t)a;
        return CUR_OK;
    case MT_TEXT: {
        c->p = save;
        const char *s;
        rc = cur_text(c, &s, tlen, max_text);
        if (rc != CUR_OK)
            return rc;
        v->type = PRISM_VAL_TEXT;
        v->v.s = s;
        return CUR_OK;
    }
    case MT_SIMPLE:
        if (ai == 25) {
            v->type = PRISM_VAL_FLOAT;
            v->v.f = pf_cur_half((uint16_t)a);
        } else if (ai == 26) {
            uint32_t bits = (uint32_t)a;
            float f;
            memcpy(&f, &bits, sizeof f);
            v->type = PRISM_VAL_FLOAT;
            v->v.f = f;
        } else if (ai == 27) {
            double d;
            memcpy(&d, &a, sizeof d);
            v->type = PRISM_VAL_FLOAT;
            v->v.f = d;
        } else if (a == 20 || a == 21) {
            v->type = PRISM_VAL_BOOL;
            v->v.b = a == 21;
        } else if (a == 22 || a == 23) {
            v->type = PRISM_VAL_NULL;
        } else {
            return CUR_BAD;
        }
        return CUR_OK;
    default:
        return CUR_BAD;
    }
}

int pf_cur_skip(cur *c, unsigned depth)
{
    unsigned mt, ai;
    uint64_t a;
    int rc = cur_head(c, &mt, &a, &ai);
    if (rc != CUR_OK)
        return rc;
    switch (mt) {
    case MT_BYTES:
    case MT_TEXT:
        if (a > (uint64_t)(c->end - c->p))
            return CUR_SHORT;
        c->p += a;
        return CUR_OK;
    case MT_ARRAY:
    case MT_MAP:
        if (depth == 0)
            return CUR_BAD;
        if (mt == MT_MAP) {
            if (a > UINT64_MAX / 2)
                return CUR_BAD;
            a *= 2;
        }
        if (a > (uint64_t)(c->end - c->p))
            return CUR_SHORT;
        for (uint64_t i = 0; i < a; i++)
            if ((rc = pf_cur_skip(c, depth - 1)) != CUR_OK)
                return rc;
        return CUR_OK;
    case MT_TAG:
        if (depth == 0)
            return CUR_BAD;
        return pf_cur_skip(c, depth - 1);
    default:
        return CUR_OK;
    }
}

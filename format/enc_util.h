/*
 * enc_util.h - a bounded append writer over libcbor's primitive encoders
 * (internal).  A failed append clears `ok`; the caller discards the partial
 * record by not committing `pos`.
 */
#ifndef PRISM_ENC_UTIL_H
#define PRISM_ENC_UTIL_H

#include <cbor.h>
#include <stdbool.h>
#include <string.h>

#include "prism/profile.h"

typedef struct wr {
    uint8_t *b;
    size_t pos, cap;
    bool ok;
} wr;

static inline void w_adv(wr *w, size_t n)
{
    if (n == 0)
        w->ok = false;
    w->pos += n;
}

static inline void w_raw(wr *w, uint8_t byte)
{
    if (!w->ok || w->pos >= w->cap) {
        w->ok = false;
        return;
    }
    w->b[w->pos++] = byte;
}

static inline void w_uint(wr *w, uint64_t v)
{
    if (w->ok)
        w_adv(w, cbor_encode_uint(v, w->b + w->pos, w->cap - w->pos));
}

static inline void w_int(wr *w, int64_t v)
{
    if (!w->ok)
        return;
    if (v >= 0)
        w_adv(w, cbor_encode_uint((uint64_t)v, w->b + w->pos, w->cap - w->pos));
    else
        w_adv(w, cbor_encode_negint((uint64_t)(-1 - v), w->b + w->pos, w->cap - w->pos));
}

static inline void w_array(wr *w, size_t n)
{
    if (w->ok)
        w_adv(w, cbor_encode_array_start(n, w->b + w->pos, w->cap - w->pos));
}

static inline void w_map(wr *w, size_t n)
{
    if (w->ok)
        w_adv(w, cbor_encode_map_start(n, w->b + w->pos, w->cap - w->pos));
}

static inline void w_text(wr *w, const char *s, size_t len)
{
    if (!w->ok)
        return;
    w_adv(w, cbor_encode_string_start(len, w->b + w->pos, w->cap - w->pos));
    if (!w->ok || w->cap - w->pos < len) {
        w->ok = false;
        return;
    }
    if (len)
        memcpy(w->b + w->pos, s, len);
    w->pos += len;
}

/* A C string, cut at PRISM_MAX_STRING_BYTES (a reader rejects longer). */
static inline void w_cstr(wr *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    w_text(w, s ? s : "", n > PRISM_MAX_STRING_BYTES ? PRISM_MAX_STRING_BYTES : n);
}

static inline void w_double(wr *w, double d)
{
    if (w->ok)
        w_adv(w, cbor_encode_double(d, w->b + w->pos, w->cap - w->pos));
}

static inline void w_bool(wr *w, bool b)
{
    if (w->ok)
        w_adv(w, cbor_encode_bool(b, w->b + w->pos, w->cap - w->pos));
}

static inline void w_null(wr *w)
{
    if (w->ok)
        w_adv(w, cbor_encode_null(w->b + w->pos, w->cap - w->pos));
}

/* A prism_value; PRISM_E_ARG for an unknown type or an over-long text. */
static inline prism_status w_value(wr *w, const prism_value *v)
{
    switch (v->type) {
    case PRISM_VAL_INT: w_int(w, v->v.i); break;
    case PRISM_VAL_UINT: w_uint(w, v->v.u); break;
    case PRISM_VAL_FLOAT: w_double(w, v->v.f); break;
    case PRISM_VAL_BOOL: w_bool(w, v->v.b); break;
    case PRISM_VAL_NULL: w_null(w); break;
    case PRISM_VAL_TEXT: {
        size_t n = v->v.s ? strlen(v->v.s) : 0;
        if (n > PRISM_MAX_STRING_BYTES)
            return PRISM_E_ARG;
        w_text(w, v->v.s ? v->v.s : "", n);
        break;
    }
    default:
        return PRISM_E_ARG;
    }
    return PRISM_OK;
}

#endif

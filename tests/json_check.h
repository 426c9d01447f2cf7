/*
 * json_check.h - a strict, minimal recursive-descent JSON validator for
 * the tests (RFC 8259): one value with optional surrounding whitespace,
 * strings with valid escapes and no raw control characters, valid UTF-8,
 * numbers by the grammar (no NaN, Infinity, leading zeros or bare dots).
 * It builds nothing: it answers whether the text is JSON and, if not,
 * where it stopped.  Header-only (static inline).
 */
#ifndef PRISM_TEST_JSON_CHECK_H
#define PRISM_TEST_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define JSON_CHECK_MAX_DEPTH 4096

typedef struct json_check {
    const unsigned char *p, *end;
    unsigned depth;
    size_t values;              /* values seen (scalars and containers) */
} json_check;

static inline void jc_ws(json_check *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static inline bool jc_lit(json_check *c, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n))
        return false;
    c->p += n;
    return true;
}

static inline bool jc_hex(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* One UTF-8 sequence (not ASCII) at c->p. */
static inline bool jc_utf8(json_check *c)
{
    unsigned ch = *c->p, n, cp;
    if (ch >= 0xc2 && ch <= 0xdf) { n = 1; cp = ch & 0x1f; }
    else if (ch >= 0xe0 && ch <= 0xef) { n = 2; cp = ch & 0x0f; }
    else if (ch >= 0xf0 && ch <= 0xf4) { n = 3; cp = ch & 0x07; }
    else return false;
    if ((size_t)(c->end - c->p) <= n)
        return false;
    for (unsigned i = 1; i <= n; i++) {
        if ((c->p[i] & 0xc0) != 0x80)
            return false;
        cp = cp << 6 | (c->p[i] & 0x3f);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return false;
    c->p += n + 1;
    return true;
}

static inline bool jc_string(json_check *c)
{
    if (c->p >= c->end || *c->p != '"')
        return false;
    c->p++;
    while (c->p < c->end) {
        unsigned char ch = *c->p;
        if (ch == '"') {
            c->p++;
            return true;
        }
        if (ch < 0x20)
            return false;
        if (ch == '\\') {
            if (c->end - c->p < 2)
                return false;
            unsigned char e = c->p[1];
            if (e == 'u') {
                if (c->end - c->p < 6)
                    return false;
                for (int i = 2; i < 6; i++)
                    if (!jc_hex(c->p[i]))
                        return false;
                c->p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || !e)
                return false;
            c->p += 2;
            continue;
        }
        if (ch >= 0x80) {
            if (!jc_utf8(c))
                return false;
            continue;
        }
        c->p++;
    }
    return false;
}

static inline bool jc_digits(json_check *c)
{
    const unsigned char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
        c->p++;
    return c->p > s;
}

static inline bool jc_number(json_check *c)
{
    if (c->p < c->end && *c->p == '-')
        c->p++;
    if (c->p < c->end && *c->p == '0')
        c->p++;                         /* a lone zero: no leading zeros */
    else if (!jc_digits(c))
        return false;
    if (c->p < c->end && *c->p == '.') {
        c->p++;
        if (!jc_digits(c))
            return false;
    }
    if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
        c->p++;
        if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
            c->p++;
        if (!jc_digits(c))
            return false;
    }
    return true;
}

static inline bool jc_value(json_check *c);

static inline bool jc_container(json_check *c, bool obj)
{
    if (++c->depth > JSON_CHECK_MAX_DEPTH)
        return false;
    c->p++;
    jc_ws(c);
    if (c->p < c->end && *c->p == (obj ? '}' : ']')) {
        c->p++;
        c->depth--;
        return true;
    }
    for (;;) {
        if (obj) {
            if (!jc_string(c))
                return false;
            jc_ws(c);
            if (c->p >= c->end || *c->p != ':')
                return false;
            c->p++;
        }
        if (!jc_value(c))
            return false;
        jc_ws(c);
        if (c->p >= c->end)
            return false;
        if (*c->p == ',') {
            c->p++;
            jc_ws(c);
            continue;
        }
        if (*c->p != (obj ? '}' : ']'))
            return false;
        c->p++;
        c->depth--;
        return true;
    }
}

static inline bool jc_value(json_check *c)
{
    jc_ws(c);
    if (c->p >= c->end)
        return false;
    c->values++;
    switch (*c->p) {
    case '{': return jc_container(c, true);
    case '[': return jc_container(c, false);
    case '"': return jc_string(c);
    case 't': return jc_lit(c, "true");
    case 'f': return jc_lit(c, "false");
    case 'n': return jc_lit(c, "null");
    default: return jc_number(c);
    }
}

/* True if s[0..n) is one JSON text.  *where: the offset where a failure
 * was found (or n); *values: how many values it holds (may be NULL). */
static inline bool json_valid(const char *s, size_t n, size_t *where, size_t *values)
{
    json_check c = { (const unsigned char *)s, (const unsigned char *)s + n, 0, 0 };
    bool ok = jc_value(&c);
    if (ok) {
        jc_ws(&c);
        ok = c.p == c.end;
    }
    if (where)
        *where = (size_t)(c.p - (const unsigned char *)s);
    if (values)
        *values = c.values;
    return ok;
}

#endif

/*
 * json.c - the streaming JSON writer (see json.h).
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(json_w *w, FILE *f, unsigned indent)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->indent = indent;
}

bool json_finish(json_w *w)
{
    fputc('\n', w->f);
    return !w->bad && w->depth == 0;
}

static void newline(json_w *w)
{
    if (!w->indent)
        return;
    fputc('\n', w->f);
    for (unsigned i = 0; i < w->depth * w->indent; i++)
        fputc(' ', w->f);
}

/* Before a value or a key: the separator and the line break it needs. */
static void before_item(json_w *w, bool is_key)
{
    if (w->depth == 0)
        return;
    unsigned d = w->depth - 1;
    if (w->obj[d] && !is_key) {
        /* a value inside an object must follow its key */
        if (w->key_due)
            w->bad = true;
        w->key_due = true;
        return;
    }
    if (w->obj[d] && !w->key_due)
        w->bad = true;              /* two keys in a row */
    if (w->any[d])
        fputc(',', w->f);
    w->any[d] = 1;
    newline(w);
    if (is_key)
        w->key_due = false;
}

static void open_ctr(json_w *w, bool obj)
{
    before_item(w, false);
    fputc(obj ? '{' : '[', w->f);
    if (w->depth >= JSON_MAX_DEPTH) {
        w->bad = true;
        return;
    }
    w->obj[w->depth] = obj;
    w->any[w->depth] = 0;
    w->depth++;
    w->key_due = obj;
}

static void close_ctr(json_w *w, bool obj)
{
    if (w->depth == 0 || w->obj[w->depth - 1] != obj || (obj && !w->key_due)) {
        w->bad = true;
        if (w->depth == 0)
            return;
    }
    w->depth--;
    if (w->any[w->depth])
        newline(w);
    fputc(obj ? '}' : ']', w->f);
    w->key_due = w->depth > 0 && w->obj[w->depth - 1];
}

void json_begin_object(json_w *w) { open_ctr(w, true); }
void json_end_object(json_w *w) { close_ctr(w, true); }
void json_begin_array(json_w *w) { open_ctr(w, false); }
void json_end_array(json_w *w) { close_ctr(w, false); }

void json_key(json_w *w, const char *key)
{
    if (w->depth == 0 || !w->obj[w->depth - 1]) {
        w->bad = true;
        return;
    }
    before_item(w, true);
    json_put_string(w->f, key, strlen(key));
    fputs(w->indent ? ": " : ":", w->f);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void json_put_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    size_t i = 0;
    while (i < n) {
        size_t run = i;                 /* plain ASCII goes out in one piece */
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        if (run > i) {
            fwrite(s + i, 1, run - i, f);
            i = run;
            continue;
        }
        unsigned char c = s[i];
        switch (c) {
        case '"': fputs("\\\"", f); i++; continue;
        case '\\': fputs("\\\\", f); i++; continue;
        case '\b': fputs("\\b", f); i++; continue;
        case '\f': fputs("\\f", f); i++; continue;
        case '\n': fputs("\\n", f); i++; continue;
        case '\r': fputs("\\r", f); i++; continue;
        case '\t': fputs("\\t", f); i++; continue;
        default: break;
        }
        if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
            i++;
            continue;
        }
        size_t len = utf8_len(s + i, n - i);
        if (len == 0) {
            fputs("\\ufffd", f);
            i++;
            continue;
        }
        fwrite(s + i, 1, len, f);
        i += len;
    }
    fputc('"', f);
}

void json_put_double(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

void json_string(json_w *w, const char *s)
{
    if (!s) {
        json_null(w);
        return;
    }
    json_stringn(w, s, strlen(s));
}

void json_stringn(json_w *w, const char *s, size_t n)
{
    before_item(w, false);
    json_put_string(w->f, s, n);
}

void json_uint(json_w *w, uint64_t v)
{
    before_item(w, false);
    fprintf(w->f, "%" PRIu64, v);
}

void json_int(json_w *w, int64_t v)
{
    before_item(w, false);
    fprintf(w->f, "%" PRId64, v);
}

void json_double(json_w *w, double v)
{
    before_item(w, false);
    json_put_double(w->f, v);
}

void json_bool(json_w *w, bool v)
{
    before_item(w, false);
    fputs(v ? "true" : "false", w->f);
}

void json_null(json_w *w)
{
    before_item(w, false);
    fputs("null", w->f);
}

void json_kstring(json_w *w, const char *key, const char *s)
{
    json_key(w, key);
    json_string(w, s);
}

void json_kuint(json_w *w, const char *key, uint64_t v)
{
    json_key(w, key);
    json_uint(w, v);
}

void json_kint(json_w *w, const char *key, int64_t v)
{
    json_key(w, key);
    json_int(w, v);
}

void json_kdouble(json_w *w, const char *key, double v)
{
    json_key(w, key);
    json_double(w, v);
}

void json_kbool(json_w *w, const char *key, bool v)
{
    json_key(w, key);
    json_bool(w, v);
}

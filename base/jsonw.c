/*
 * jsonw.c - pb_json, the streaming JSON writer (see jsonw.h).
 */
#include "jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "escape.h"            /* esc_utf8_decode: the project's one decoder */

/* ---- where the bytes go: a FILE, or a pb_buf when f is NULL ---- */

static void out(FILE *f, pb_buf *b, const void *p, size_t n)
{
    if (f)
        fwrite(p, 1, n, f);
    else
        pb_buf_append(b, p, n);
}

static void outs(FILE *f, pb_buf *b, const char *s)
{
    out(f, b, s, strlen(s));
}

static void outc(FILE *f, pb_buf *b, char c)
{
    if (f)
        fputc(c, f);
    else
        pb_buf_putc(b, c);
}

#define W_OUTC(w, c) outc((w)->f, (w)->buf, (c))
#define W_OUTS(w, s) outs((w)->f, (w)->buf, (s))

static void put_string(FILE *f, pb_buf *b, const char *str, size_t n, size_t max);

void pb_json_init(pb_json *w, FILE *f, unsigned indent)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->indent = indent;
}

void pb_json_init_buf(pb_json *w, pb_buf *b, unsigned indent)
{
    memset(w, 0, sizeof *w);
    w->buf = b;
    w->indent = indent;
}

bool pb_json_finish(pb_json *w)
{
    W_OUTC(w, '\n');
    return !w->bad && w->depth == 0;
}

static void newline(pb_json *w)
{
    if (!w->indent)
        return;
    W_OUTC(w, '\n');
    for (unsigned i = 0; i < w->depth * w->indent; i++)
        W_OUTC(w, ' ');
}

/* Before a value or a key: the separator and the line break it needs. */
static void before_item(pb_json *w, bool is_key)
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
        W_OUTC(w, ',');
    w->any[d] = 1;
    newline(w);
    if (is_key)
        w->key_due = false;
}

static void open_ctr(pb_json *w, bool obj)
{
    before_item(w, false);
    W_OUTC(w, obj ? '{' : '[');
    if (w->depth >= PB_JSON_MAX_DEPTH) {
        w->bad = true;
        return;
    }
    w->obj[w->depth] = obj;
    w->any[w->depth] = 0;
    w->depth++;
    w->key_due = obj;
}

static void close_ctr(pb_json *w, bool obj)
{
    if (w->depth == 0 || w->obj[w->depth - 1] != obj || (obj && !w->key_due)) {
        w->bad = true;
        if (w->depth == 0)
            return;
    }
    w->depth--;
    if (w->any[w->depth])
        newline(w);
    W_OUTC(w, obj ? '}' : ']');
    w->key_due = w->depth > 0 && w->obj[w->depth - 1];
}

void pb_json_begin_object(pb_json *w) { open_ctr(w, true); }
void pb_json_end_object(pb_json *w) { close_ctr(w, true); }
void pb_json_begin_array(pb_json *w) { open_ctr(w, false); }
void pb_json_end_array(pb_json *w) { close_ctr(w, false); }

void pb_json_key(pb_json *w, const char *key)
{
    if (w->depth == 0 || !w->obj[w->depth - 1]) {
        w->bad = true;
        return;
    }
    before_item(w, true);
    put_string(w->f, w->buf, key, strlen(key), SIZE_MAX);
    W_OUTS(w, w->indent ? ": " : ":");
}

/* Length of the valid UTF-8 sequence at s (n bytes left) and its code point
 * in *cp, 0 if invalid: escape.h's decoder, never reading past n. */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n >= 4)
        return esc_utf8_decode(s, cp);
    unsigned char t[4] = { 0 };
    memcpy(t, s, n);
    size_t len = esc_utf8_decode(t, cp);
    return len <= n ? len : 0;
}

/* s[0..n) quoted and escaped; cut, at a character, before more than max
 * bytes between the quotes.  The escaping rule is escape.h's, in JSON's
 * syntax: C0, DEL, C1 and the bidi controls and separators esc_cp_unsafe
 * names become \uXXXX (the short forms for \b \f \n \r \t), so no output
 * holds a raw character a terminal or a viewer acts on, and the text reads
 * back to the same string. */
static void put_string(FILE *f, pb_buf *b, const char *str, size_t n, size_t max)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t used = 0;
    outc(f, b, '"');
    size_t i = 0;
    while (i < n) {
        size_t run = i, room = max - used;    /* plain ASCII goes out in one piece */
        while (run < n && run - i < room && s[run] >= 0x20 && s[run] < 0x7f && s[run] != '"' &&
               s[run] != '\\')
            run++;
        if (run > i) {
            out(f, b, s + i, run - i);
            used += run - i;
            i = run;
            continue;
        }
        unsigned char c = s[i];
        char rep[12];
        size_t len, in = 1;
        uint32_t cp = 0;
        bool raw = false;
        switch (c) {
        case '"': memcpy(rep, "\\\"", len = 2); break;
        case '\\': memcpy(rep, "\\\\", len = 2); break;
        case '\b': memcpy(rep, "\\b", len = 2); break;
        case '\f': memcpy(rep, "\\f", len = 2); break;
        case '\n': memcpy(rep, "\\n", len = 2); break;
        case '\r': memcpy(rep, "\\r", len = 2); break;
        case '\t': memcpy(rep, "\\t", len = 2); break;
        default:
            if (c < 0x20 || c == 0x7f)         /* C0, DEL */
                len = (size_t)snprintf(rep, sizeof rep, "\\u%04x", c);
            else if (c < 0x80)
                len = 0;                        /* plain: no room left for it */
            else if ((in = utf8_len(s + i, n - i, &cp)) == 0)
                memcpy(rep, "\\ufffd", (in = 1, len = 6));
            else if (esc_cp_unsafe(cp))        /* C1, bidi, U+2028/2029 */
                len = (size_t)snprintf(rep, sizeof rep, "\\u%04x", (unsigned)cp);
            else
                len = in, raw = true;
            break;
        }
        if (!len || used + len > max)
            break;
        if (raw)
            out(f, b, s + i, len);
        else
            out(f, b, rep, len);
        used += len;
        i += in;
    }
    outc(f, b, '"');
}

void pb_json_put_string(FILE *f, const char *s, size_t n)
{
    put_string(f, NULL, s, n, SIZE_MAX);
}

void pb_json_put_string_max(FILE *f, const char *s, size_t n, size_t max)
{
    put_string(f, NULL, s, n, max);
}

bool pb_json_buf_string(pb_buf *b, const char *s, size_t n)
{
    bool was = b->oom;
    b->oom = false;
    put_string(NULL, b, s, n, SIZE_MAX);
    bool ok = !b->oom;
    b->oom = was || !ok;
    return ok;
}

static void put_double(FILE *f, pb_buf *b, double v)
{
    if (!isfinite(v)) {
        outs(f, b, "null");
    } else if (f) {
        fprintf(f, "%.17g", v);
    } else {
        pb_buf_printf(b, "%.17g", v);
    }
}

void pb_json_put_double(FILE *f, double v)
{
    put_double(f, NULL, v);
}

void pb_json_string(pb_json *w, const char *s)
{
    if (!s) {
        pb_json_null(w);
        return;
    }
    pb_json_stringn(w, s, strlen(s));
}

void pb_json_stringn(pb_json *w, const char *s, size_t n)
{
    before_item(w, false);
    put_string(w->f, w->buf, s, n, SIZE_MAX);
}

void pb_json_uint(pb_json *w, uint64_t v)
{
    before_item(w, false);
    char t[24];
    snprintf(t, sizeof t, "%" PRIu64, v);
    W_OUTS(w, t);
}

void pb_json_int(pb_json *w, int64_t v)
{
    before_item(w, false);
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, v);
    W_OUTS(w, t);
}

void pb_json_double(pb_json *w, double v)
{
    before_item(w, false);
    put_double(w->f, w->buf, v);
}

void pb_json_bool(pb_json *w, bool v)
{
    before_item(w, false);
    W_OUTS(w, v ? "true" : "false");
}

void pb_json_null(pb_json *w)
{
    before_item(w, false);
    W_OUTS(w, "null");
}

void pb_json_kstring(pb_json *w, const char *key, const char *s)
{
    pb_json_key(w, key);
    pb_json_string(w, s);
}

void pb_json_kuint(pb_json *w, const char *key, uint64_t v)
{
    pb_json_key(w, key);
    pb_json_uint(w, v);
}

void pb_json_kint(pb_json *w, const char *key, int64_t v)
{
    pb_json_key(w, key);
    pb_json_int(w, v);
}

void pb_json_kdouble(pb_json *w, const char *key, double v)
{
    pb_json_key(w, key);
    pb_json_double(w, v);
}

void pb_json_kbool(pb_json *w, const char *key, bool v)
{
    pb_json_key(w, key);
    pb_json_bool(w, v);
}

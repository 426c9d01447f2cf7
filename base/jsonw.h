/*
 * jsonw.h - pb_json, the one streaming JSON writer (the reports, the
 * exports, the rank summary).
 *
 * Writes to a FILE, or appends to a pb_buf (pb_json_init_buf).  Strings are
 * escaped per RFC 8259 (quote, backslash and every control character; bytes
 * that are not valid UTF-8 become U+FFFD so the output is always valid
 * UTF-8) and by escape.h's rule for untrusted text: DEL, the C1 controls
 * and the bidi controls and separators (U+061C, U+200E/F, U+2028..U+202E,
 * U+2066..U+2069) are written as \uXXXX too, so no JSON output holds a
 * character a terminal or a viewer acts on, and it reads back unchanged.
 * Doubles are printed with %.17g (they read back bit for bit); NaN and
 * infinities, which JSON cannot hold, are written as null.
 *
 *   pb_json w;
 *   pb_json_init(&w, f, 2);            // 2 spaces per level; 0 = compact
 *   pb_json_begin_object(&w);
 *   pb_json_key(&w, "schema"); pb_json_string(&w, "prism.analyze/1");
 *   pb_json_kuint(&w, "events", 42);   // key + value in one call
 *   pb_json_end_object(&w);
 *   pb_json_finish(&w);                // final newline; false if misused
 *
 * Commas, colons and indentation are the writer's business.  Misuse (a
 * value where a key is due, unbalanced ends, nesting beyond PB_JSON_MAX_DEPTH)
 * sets w.bad; the output is then not to be trusted.
 */
#ifndef PRISM_BASE_JSONW_H
#define PRISM_BASE_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strbuf.h"

#define PB_JSON_MAX_DEPTH 2048u

typedef struct pb_json {
    FILE *f;                /* the output, or NULL: ...                      */
    pb_buf *buf;            /* ... appended here (the caller owns it)        */
    unsigned indent;        /* spaces per level; 0: compact, one line        */
    unsigned depth;
    bool bad;               /* misuse seen                                   */
    bool key_due;           /* inside an object and no key pending           */
    uint8_t any[PB_JSON_MAX_DEPTH];    /* per level: 1 once it holds something  */
    uint8_t obj[PB_JSON_MAX_DEPTH];    /* per level: 1 object, 0 array          */
} pb_json;

void pb_json_init(pb_json *w, FILE *f, unsigned indent);
/* The same, appending to b (borrowed until the last call). */
void pb_json_init_buf(pb_json *w, pb_buf *b, unsigned indent);
/* Ends the document with a newline.  False if the writer was misused or
 * left containers open. */
bool pb_json_finish(pb_json *w);

void pb_json_begin_object(pb_json *w);
void pb_json_end_object(pb_json *w);
void pb_json_begin_array(pb_json *w);
void pb_json_end_array(pb_json *w);
void pb_json_key(pb_json *w, const char *key);

/* Values.  pb_json_string(NULL) writes null. */
void pb_json_string(pb_json *w, const char *s);
void pb_json_stringn(pb_json *w, const char *s, size_t n);
void pb_json_uint(pb_json *w, uint64_t v);
void pb_json_int(pb_json *w, int64_t v);
void pb_json_double(pb_json *w, double v);
void pb_json_bool(pb_json *w, bool v);
void pb_json_null(pb_json *w);

/* Key and value together. */
void pb_json_kstring(pb_json *w, const char *key, const char *s);
void pb_json_kuint(pb_json *w, const char *key, uint64_t v);
void pb_json_kint(pb_json *w, const char *key, int64_t v);
void pb_json_kdouble(pb_json *w, const char *key, double v);
void pb_json_kbool(pb_json *w, const char *key, bool v);

/* Write s[0..n) as a quoted, escaped JSON string literal onto f.  For
 * writers that lay out their own lines (the chrome-trace export). */
void pb_json_put_string(FILE *f, const char *s, size_t n);
/* The same, cut at a character before more than max bytes between the
 * quotes (the rank summary: what is written reads back). */
void pb_json_put_string_max(FILE *f, const char *s, size_t n, size_t max);
/* The same, appended to b (false, b->oom set, when out of memory): for
 * writers that keep escaped names to copy many times (the chrome trace). */
bool pb_json_buf_string(pb_buf *b, const char *s, size_t n);
/* A double as JSON: %.17g, or null when not finite. */
void pb_json_put_double(FILE *f, double v);

#endif

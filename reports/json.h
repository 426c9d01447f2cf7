/*
 * json.h - a tiny streaming JSON writer for prism-top's reports.
 *
 * Writes straight to a FILE: nothing is built in memory.  Strings are
 * escaped per RFC 8259 (quote, backslash and every control character; bytes
 * that are not valid UTF-8 become U+FFFD so the output is always valid
 * UTF-8).  Doubles are printed with %.17g (they read back bit for bit);
 * NaN and infinities, which JSON cannot hold, are written as null.
 *
 *   json_w w;
 *   json_init(&w, f, 2);            // 2 spaces per level; 0 = compact
 *   json_begin_object(&w);
 *   json_key(&w, "schema"); json_string(&w, "prism.analyze/1");
 *   json_kuint(&w, "events", 42);   // key + value in one call
 *   json_end_object(&w);
 *   json_finish(&w);                // final newline; false if misused
 *
 * Commas, colons and indentation are the writer's business.  Misuse (a
 * value where a key is due, unbalanced ends, nesting beyond JSON_MAX_DEPTH)
 * sets w.bad; the output is then not to be trusted.
 */
#ifndef PRISM_TUI_JSON_H
#define PRISM_TUI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 2048u

typedef struct json_w {
    FILE *f;
    unsigned indent;        /* spaces per level; 0: compact, one line        */
    unsigned depth;
    bool bad;               /* misuse seen                                   */
    bool key_due;           /* inside an object and no key pending           */
    uint8_t any[JSON_MAX_DEPTH];    /* per level: 1 once it holds something  */
    uint8_t obj[JSON_MAX_DEPTH];    /* per level: 1 object, 0 array          */
} json_w;

void json_init(json_w *w, FILE *f, unsigned indent);
/* Ends the document with a newline.  False if the writer was misused or
 * left containers open. */
bool json_finish(json_w *w);

void json_begin_object(json_w *w);
void json_end_object(json_w *w);
void json_begin_array(json_w *w);
void json_end_array(json_w *w);
void json_key(json_w *w, const char *key);

/* Values.  json_string(NULL) writes null. */
void json_string(json_w *w, const char *s);
void json_stringn(json_w *w, const char *s, size_t n);
void json_uint(json_w *w, uint64_t v);
void json_int(json_w *w, int64_t v);
void json_double(json_w *w, double v);
void json_bool(json_w *w, bool v);
void json_null(json_w *w);

/* Key and value together. */
void json_kstring(json_w *w, const char *key, const char *s);
void json_kuint(json_w *w, const char *key, uint64_t v);
void json_kint(json_w *w, const char *key, int64_t v);
void json_kdouble(json_w *w, const char *key, double v);
void json_kbool(json_w *w, const char *key, bool v);

/* Write s[0..n) as a quoted, escaped JSON string literal onto f.  For
 * writers that lay out their own lines (the chrome-trace export). */
void json_put_string(FILE *f, const char *s, size_t n);
/* A double as JSON: %.17g, or null when not finite. */
void json_put_double(FILE *f, double v);

#endif

/*
 * out_check.h - what the fuzz targets that write outputs share
 * (header-only, static inline): an output into memory, and the check that
 * it holds no raw control, bidi or separator character, only valid UTF-8,
 * and, when it should be JSON, JSON.  A failure aborts with the output's
 * name and the byte offset.  Set OUT_CHECK_NAME before including it.
 */
#ifndef PRISM_FUZZ_OUT_CHECK_H
#define PRISM_FUZZ_OUT_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json_check.h"
#include "escape.h"

static inline void die(const char *what, size_t at, const char *why)
{
    fprintf(stderr, "%s: the %s output: %s at byte %zu\n", OUT_CHECK_NAME, what, why, at);
    abort();
}

/* Aborts when s[0..n) holds a raw control, bidi or separator character,
 * or invalid UTF-8. */
static inline void check_chars(const char *what, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            die(what, i, "a raw C0 control or DEL");
        if (c < 0x80) {
            i++;
            continue;
        }
        unsigned char t[4] = { 0 };
        memcpy(t, p + i, n - i < 4 ? n - i : 4);
        uint32_t cp;
        size_t len = esc_utf8_decode(t, &cp);
        if (!len || len > n - i)
            die(what, i, "invalid UTF-8");
        if (esc_cp_unsafe(cp))
            die(what, i, "a raw C1, bidi control or line/paragraph separator");
        i += len;
    }
}

typedef struct memout {
    char *buf;
    size_t len;
    FILE *f;
} memout;

static inline bool mem_open(memout *m)
{
    m->buf = NULL;
    m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    return m->f != NULL;
}

/* Closes m; checks its characters, and that it is JSON when json and
 * written whole (ok); frees it. */
static inline void mem_done(memout *m, const char *what, bool json, bool ok)
{
    fclose(m->f);
    check_chars(what, m->buf, m->len);
    size_t where;
    if (json && ok && !json_valid(m->buf, m->len, &where, NULL))
        die(what, where, "not JSON");
    free(m->buf);
}

#endif

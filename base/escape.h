/*
 * escape.h - text from a profile made safe for a terminal.
 *
 * Names, thread names, host, argv, config and INFO strings come from the
 * program that was profiled (or a foreign trace): they may hold escape
 * sequences, C0/C1 controls, bidi overrides or invalid UTF-8.  Every text
 * writer (analyze, compare, dump, the CSV and folded exports; folded turns
 * C0 controls into spaces first, ';' and line breaks being its syntax) and
 * the explorer's drawing (ui_print, ui_width, tv_fit, flame_label) pass
 * them through here.  The result never holds a byte
 * a terminal interprets:
 *
 *   C0 controls and DEL           \x1b   (two hex digits, lower case)
 *   C1 controls U+0080..U+009F    \u0085
 *   bidi controls and separators  \u202e (U+061C, U+200E, U+200F,
 *                                 U+2028..U+202E, U+2066..U+2069)
 *   invalid UTF-8                 \xff   (each byte that starts no valid
 *                                 sequence: overlong, surrogate, > U+10FFFF,
 *                                 cut short)
 *
 * Everything else, printable ASCII and valid UTF-8, is copied unchanged, so
 * ordinary names print as before.  A backslash is not escaped.  The JSON
 * writer (jsonw.c, every JSON output) escapes the same characters in
 * JSON's syntax, \u001b, \u007f, \u009b, \u202e, so that they read back;
 * esc_cp_unsafe is the one list of code points for both.
 *
 * Header-only (static inline) so that every tool linking a subset of tui/
 * (prism-top, the Python extension, the fuzz replay) has it without a
 * build change.
 */
#ifndef PRISM_TUI_ESCAPE_H
#define PRISM_TUI_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Room for the longest form of one character ("\u202e", 4 UTF-8 bytes)
 * and its NUL. */
#define ESC_CHAR_MAX 12

/* Bytes needed by esc_str() for any string of n bytes, NUL included. */
#define ESC_CAP(n) (4 * (size_t)(n) + 1)

/* ---- the API ----
 *
 * esc_char(s, rep, escaped): one character of s (not at its NUL): its safe
 *   form in rep (NUL-terminated, at most ESC_CHAR_MAX bytes with the NUL);
 *   returns how many bytes of s it took (1..4); *escaped (may be NULL) tells
 *   whether rep is an escape rather than the character itself.
 * esc_clean(s): whether s needs no escaping (NULL: true).
 * esc_str(s, buf, cap): s escaped into buf (cap >= 1), NUL-terminated; an
 *   escape is never cut, what does not fit is left off; returns buf (s NULL:
 *   ""). ESC_CAP(strlen(s)) bytes always suffice.
 * esc_fputs(s, f): s escaped onto f (s NULL: nothing).
 */

/* The code point of a valid UTF-8 sequence at p and its length, or 0 when p
 * starts no valid sequence (overlong, surrogate, past U+10FFFF, cut short). */
static inline size_t esc_utf8_decode(const unsigned char *p, uint32_t *cp)
{
    unsigned char b = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;    /* bounds of the second byte */
    if (b >= 0xc2 && b <= 0xdf) {
        len = 2;
        *cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
        len = 3;
        *cp = b & 0x0f;
        if (b == 0xe0)
            lo = 0xa0;                      /* overlong */
        else if (b == 0xed)
            hi = 0x9f;                      /* surrogates */
    } else if (b >= 0xf0 && b <= 0xf4) {
        len = 4;
        *cp = b & 0x07;
        if (b == 0xf0)
            lo = 0x90;                      /* overlong */
        else if (b == 0xf4)
            hi = 0x8f;                      /* past U+10FFFF */
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;                       /* also stops at the NUL */
        *cp = (*cp << 6) | (p[i] & 0x3f);
    }
    return len;
}

/* Code points a terminal acts on, that reorder or break the line, or
 * that take no column (a name holding them would misalign every column
 * after it, or read like another name). */
static inline bool esc_cp_unsafe(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f)              /* C1 controls */
        || cp == 0x061c                            /* arabic letter mark */
        || (cp >= 0x200b && cp <= 0x200f)          /* zero width space..RLM */
        || (cp >= 0x2028 && cp <= 0x202e)          /* line/para sep, LRE..RLO */
        || (cp >= 0x2060 && cp <= 0x2069)          /* word joiner, invisibles, LRI..PDI */
        || cp == 0xfeff || cp == 0x180e || cp == 0x00ad   /* BOM, MVS, soft hyphen */
        || (cp >= 0x0300 && cp <= 0x036f)          /* combining marks */
        || (cp >= 0x1ab0 && cp <= 0x1aff) || (cp >= 0x1dc0 && cp <= 0x1dff)
        || (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0xfe00 && cp <= 0xfe0f)
        || (cp >= 0xfe20 && cp <= 0xfe2f);         /* ... and variation selectors */
}

static inline size_t esc_char(const char *s, char rep[ESC_CHAR_MAX], bool *escaped)
{
    const unsigned char *p = (const unsigned char *)s;
    bool esc = false;
    size_t len = 1;
    if (*p < 0x20 || *p == 0x7f) {
        snprintf(rep, ESC_CHAR_MAX, "\\x%02x", *p);
        esc = true;
    } else if (*p < 0x80) {
        rep[0] = (char)*p;
        rep[1] = '\0';
    } else {
        uint32_t cp = 0;
        len = esc_utf8_decode(p, &cp);
        if (!len) {
            len = 1;
            snprintf(rep, ESC_CHAR_MAX, "\\x%02x", *p);
            esc = true;
        } else if (esc_cp_unsafe(cp)) {
            snprintf(rep, ESC_CHAR_MAX, "\\u%04x", (unsigned)cp);
            esc = true;
        } else {
            memcpy(rep, p, len);
            rep[len] = '\0';
        }
    }
    if (escaped)
        *escaped = esc;
    return len;
}

static inline bool esc_clean(const char *s)
{
    if (!s)
        return true;
    char rep[ESC_CHAR_MAX];
    bool esc;
    while (*s) {
        s += esc_char(s, rep, &esc);
        if (esc)
            return false;
    }
    return true;
}

static inline const char *esc_str(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    char rep[ESC_CHAR_MAX];
    while (s && *s) {
        s += esc_char(s, rep, NULL);
        size_t n = strlen(rep);
        if (o + n >= cap)
            break;
        memcpy(buf + o, rep, n);
        o += n;
    }
    buf[o] = '\0';
    return buf;
}

static inline void esc_fputs(const char *s, FILE *f)
{
    char rep[ESC_CHAR_MAX];
    while (s && *s) {
        s += esc_char(s, rep, NULL);
        fputs(rep, f);
    }
}

#endif

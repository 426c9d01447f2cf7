/*
 * namefit.c - names in a column that stay told apart (namefit.h).
 */
#include <string.h>

#include "escape.h"
#include "namefit.h"
#include "treeview.h"

#define NF_CAP ESC_CAP(PRISM_MAX_STRING_BYTES)
#define NF_MIN_SHARED 3         /* a shorter shared start is not worth "…" */

bool nf_sep(char c)
{
    return c == '.' || c == '/' || c == ':' || c == ' ';
}

size_t nf_common(const char *name, const char *other)
{
    if (!name || !other)
        return 0;
    size_t l = 0;
    while (name[l] && name[l] == other[l])
        l++;
    if (!other[l] && name[l] && nf_sep(name[l]))
        l++;                            /* "a.b" under "a.b.c": "a.b." */
    if (!name[l] && l > 0)              /* never all of it */
        l--;
    while (l > 0 && !nf_sep(name[l - 1]))
        l--;                            /* whole words */
    return l >= NF_MIN_SHARED ? l : 0;
}

/* The length of name's first word, its separator included. */
static size_t first_word(const char *s)
{
    size_t l = 0;
    while (s[l] && !nf_sep(s[l]))
        l++;
    return s[l] ? l + 1 : l;
}

void nf_shared(const char *const *names, size_t n, size_t *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = 0;
        if (!names[i])
            continue;
        size_t w = first_word(names[i]), best = (size_t)-1;
        for (size_t j = 0; j < n; j++) {
            if (j == i || !names[j] || strncmp(names[i], names[j], w) != 0 ||
                !strcmp(names[i], names[j]))
                continue;               /* other words, or the same name */
            size_t c = nf_common(names[i], names[j]);
            if (c < best)
                best = c;
        }
        out[i] = best == (size_t)-1 ? 0 : best;
    }
}

/* s escaped into out (cap NF_CAP); returns its columns. */
static int escaped(char *out, const char *s)
{
    return tv_fit(out, NF_CAP, s, 1 << 30, false);
}

int nf_need(const char *name, size_t shared)
{
    char buf[NF_CAP];
    if (!name)
        return 0;
    if (shared > strlen(name))
        shared = 0;
    return escaped(buf, name + shared) + (shared ? 1 : 0);
}

/* Columns of an escaped string: its code points. */
static int cols_of(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* The '(' of s's trailing " (...)" ("(backward)", a Python frame's
 * "(modules/module.py:1789)"), or NULL. */
static char *tail_group(char *s)
{
    size_t n = strlen(s);
    char *open = n && s[n - 1] == ')' ? strrchr(s, '(') : NULL;
    return open && open > s && open[-1] == ' ' ? open : NULL;
}

/* The start of s's leaf: its last word before its trailing " (...)" and
 * not in parentheses ("linear1" of "5.linear1 (backward)", "inner" of
 * "Module._call_impl.<locals>.inner (modules/module.py:1789)"). */
static const char *leaf_of(char *s)
{
    const char *leaf = s, *end = tail_group(s);
    for (const char *p = s; *p && (!end || p < end);) {
        while (*p && nf_sep(*p))
            p++;
        if (*p && *p != '(')
            leaf = p;
        while (*p && !nf_sep(*p))
            p++;
    }
    return leaf;
}

/* Shorten the words of s (escaped) from the left to their first letter
 * until it takes at most `width` columns: not a number, not the leaf (the
 * last word not in parentheses), not a word in parentheses.  Returns its
 * columns. */
static int shorten(char *s, int width)
{
    int cols = cols_of(s);
    size_t leaf = (size_t)(leaf_of(s) - s);
    for (char *p = s; *p && cols > width;) {
        while (*p && nf_sep(*p))
            p++;
        char *q = p;
        bool digits = true;
        for (; *q && !nf_sep(*q); q++)
            if (*q < '0' || *q > '9')
                digits = false;
        if (!*q || (size_t)(p - s) >= leaf)
            break;                      /* the leaf and what follows stay */
        if (p >= s + leaf)
            break;
        char *keep = p + 1;             /* the word's first code point */
        while (*keep && ((unsigned char)*keep & 0xc0) == 0x80)
            keep++;
        if (*p != '(' && !digits && keep < q) {
            char end = *q;
            *q = '\0';
            cols -= cols_of(keep);
            *q = end;
            size_t gone = (size_t)(q - keep);
            memmove(keep, q, strlen(q) + 1);
            q = keep;
            leaf -= gone;
        }
        p = q;
    }
    /* then the folders in the trailing group: "(m/module.py:1789)" */
    char *g = cols > width ? tail_group(s) : NULL;
    for (char *p = g ? g + 1 : NULL; p && *p && cols > width;) {
        char *q = p;
        while (*q && !nf_sep(*q))
            q++;
        if (*q != '/')
            break;                      /* the file and its line stay */
        char *keep = p + 1;
        while (*keep && ((unsigned char)*keep & 0xc0) == 0x80)
            keep++;
        if (keep < q) {
            char end = *q;
            *q = '\0';
            cols -= cols_of(keep);
            *q = end;
            memmove(keep, q, strlen(q) + 1);
            q = keep;
        }
        p = q + 1;
    }
    return cols;
}

int nf_fit(char *out, size_t cap, const char *name, size_t shared, int width, bool utf8)
{
    char rest[NF_CAP];
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!name || width <= 0)
        return 0;
    if (escaped(rest, name) <= width)
        return tv_fit(out, cap, name, width, utf8);
    const char *ell = utf8 ? "\u2026" : "~";
    if (shared > strlen(name))
        shared = 0;
    if (width < 4)                      /* no room to be clever */
        return tv_fit_mid(out, cap, name, width, utf8);
    int cols = escaped(rest, name + shared);
    int room = width - (shared ? 1 : 0);
    if (cols > room)                    /* then, if that is not enough, its middle */
        shorten(rest, room);
    size_t at = 0;
    if (shared && strlen(ell) < cap) {
        memcpy(out, ell, strlen(ell) + 1);
        at = strlen(ell);
    }
    return (shared ? 1 : 0) + tv_fit_mid(out + at, cap - at, rest, room, utf8);
}

/*
 * namefit.c - names in a column that stay told apart (namefit.h).
 */
#include <string.h>

#include "escape.h"
#include "namefit.h"
#include "treeview.h"

#define NF_CAP ESC_CAP(PRISM_MAX_STRING_BYTES)
#define NF_MIN_SHARED 3         /* a shorter shared start is not worth "…" */

static size_t foldable(const char *name, size_t shared);

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
    shared = shared > strlen(name) ? 0 : foldable(name, shared);
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

/* From p on, the folders ("dir/") of s shorten to their first letter,
 * from the left, while s (of `cols` columns) takes more than `width`; the
 * first word not followed by '/' (the file) and what follows stay.
 * Returns the columns left. */
static int shorten_dirs(char *p, int cols, int width)
{
    while (p && *p && cols > width) {
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

/* Shorten s (escaped) until it takes at most `width` columns: first the
 * folders in its trailing group ("(m/module.py:1789)": a Python frame's
 * file keeps its name), then its words from the left to their first
 * letter: not a number, not the leaf (the last word not in parentheses),
 * not a word in parentheses.  Returns its columns. */
static int shorten(char *s, int width)
{
    int cols = cols_of(s);
    char *g = tail_group(s);
    if (g)
        cols = shorten_dirs(g + 1, cols, width);
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
    return cols;
}

/* ---- torch.profiler's Python frames and built-ins ---- */

/* A torch.profiler Python frame (with_stack), "FILE(LINE): FUNCTION" as
 * in "torch/autograd/__init__.py(255): backward": the '(' of its
 * "(LINE): ", or NULL. */
static const char *kineto_line(const char *s)
{
    for (const char *p = strchr(s, '('); p; p = strchr(p + 1, '(')) {
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (p > s && q > p + 1 && q[0] == ')' && q[1] == ':' && q[2] == ' ' && q[3])
            return p;
    }
    return NULL;
}

/* The shared start a name may fold: in a torch.profiler Python frame its
 * folders at most, so that the file keeps its name. */
static size_t foldable(const char *name, size_t shared)
{
    const char *ln = shared ? kineto_line(name) : NULL;
    if (!ln)
        return shared;
    size_t dirs = 0;
    for (const char *p = name; p < ln; p++)
        if (*p == '/')
            dirs = (size_t)(p - name) + 1;
    if (shared > dirs)
        shared = dirs;
    return shared >= NF_MIN_SHARED ? shared : 0;
}

/* a, b and c (escaped) one after the other into out, whole code points
 * while they fit in cap; returns the columns written. */
static int put(char *out, size_t cap, const char *a, const char *b, const char *c)
{
    const char *part[3] = { a, b, c };
    size_t o = 0;
    int cols = 0;
    for (int i = 0; i < 3; i++)
        for (const char *p = part[i]; *p;) {
            size_t len = 1;
            while (p[len] && ((unsigned char)p[len] & 0xc0) == 0x80)
                len++;
            if (o + len + 1 > cap)
                goto done;
            memcpy(out + o, p, len);
            o += len;
            p += len;
            cols++;
        }
done:
    out[o] = '\0';
    return cols;
}

/* A torch.profiler Python frame s (escaped, what is left after a folded
 * start shown as `lead`) in `width` columns: its folders shorten to their
 * first letter from the left ("t/a/__init__.py(255): backward"); then they
 * go into an ellipsis, the file keeping its whole name
 * ("…__init__.py(255): backward"); then the file goes too ("…backward"),
 * and only a function too long for that is cut, at its end ("…backw…"). */
static int fit_kineto(char *out, size_t cap, char *s, const char *lead, int width, bool utf8)
{
    const char *ell = utf8 ? "\u2026" : "~";
    int lc = lead[0] ? 1 : 0;
    int cols = shorten_dirs(s, cols_of(s), width - lc);
    if (cols <= width - lc)
        return put(out, cap, lead, s, "");
    const char *ln = kineto_line(s), *file = s;
    for (const char *p = s; ln && p < ln; p++)
        if (*p == '/')
            file = p + 1;
    const char *fn = ln ? strstr(ln, "): ") : NULL;
    if (!fn)
        return tv_fit_mid(out, cap, s, width, utf8);
    fn += 3;
    if (file > s && cols_of(file) <= width - 1)
        return put(out, cap, ell, file, "");
    char cut[NF_CAP];
    tv_fit(cut, sizeof cut, fn, width - 1, utf8);
    return put(out, cap, ell, cut, "");
}

/* A Python built-in as torch.profiler names it: "<built-in method NAME of
 * T object at 0x...>", "<built-in function NAME>", "<method 'NAME' of 'T'
 * objects>", "<function NAME at 0x...>".  The bytes of NAME in s. */
static bool builtin_name(const char *s, size_t *at, size_t *len)
{
    static const char *const heads[] = { "<built-in method ", "<built-in function ",
                                         "<method '", "<function ", "<slot wrapper '" };
    size_t n = strlen(s);
    if (n < 3 || s[0] != '<' || s[n - 1] != '>')
        return false;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        size_t h = strlen(heads[i]);
        if (strncmp(s, heads[i], h) != 0)
            continue;
        size_t l = strcspn(s + h, " '>");
        if (!l)
            return false;
        *at = h;
        *len = l;
        return true;
    }
    return false;
}

/* A built-in s (escaped) in `width` columns: its end goes word by word
 * into an ellipsis, NAME staying ("<built-in method run_backward of
 * torch._C…"); then its start too ("…run_backward…", "…sleep>"); then
 * NAME cut at its end. */
static int fit_builtin(char *out, size_t cap, const char *s, size_t at, size_t len, int width,
                       bool utf8)
{
    const char *ell = utf8 ? "\u2026" : "~";
    char buf[NF_CAP];
    for (size_t cut = strlen(s); cut > at + len;) {
        while (cut > at + len && s[cut - 1] != ' ')
            cut--;                      /* before a word: "... of…" */
        size_t end = cut > at + len ? cut - 1 : at + len;
        memcpy(buf, s, end);
        buf[end] = '\0';
        size_t w = end;                 /* not after "of" or "at" */
        while (w > 0 && buf[w - 1] != ' ')
            w--;
        bool link = end > at + len && (!strcmp(buf + w, "of") || !strcmp(buf + w, "at"));
        if (!link && cols_of(buf) + 1 <= width)
            return put(out, cap, buf, ell, "");
        cut = end;
    }
    memcpy(buf, s + at, len);
    buf[len] = '\0';
    const char *tail = strcmp(s + at + len, ">") == 0 ? ">" : ell;
    if (cols_of(buf) + 2 <= width)
        return put(out, cap, ell, buf, tail);
    return tv_fit(out, cap, buf, width, utf8);
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
    if (width < 4)                      /* no room to be clever */
        return tv_fit_mid(out, cap, name, width, utf8);
    size_t at, len;
    if (builtin_name(rest, &at, &len))
        return fit_builtin(out, cap, rest, at, len, width, utf8);
    shared = shared > strlen(name) ? 0 : foldable(name, shared);
    int cols = escaped(rest, name + shared);
    if (kineto_line(rest))
        return fit_kineto(out, cap, rest, shared ? ell : "", width, utf8);
    int room = width - (shared ? 1 : 0);
    if (cols > room)                    /* then, if that is not enough, its middle */
        shorten(rest, room);
    size_t o = 0;
    if (shared && strlen(ell) < cap) {
        memcpy(out, ell, strlen(ell) + 1);
        o = strlen(ell);
    }
    return (shared ? 1 : 0) + tv_fit_mid(out + o, cap - o, rest, room, utf8);
}

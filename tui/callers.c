/*
 * callers.c - the callers view's model (callers.h): the paths that end in
 * one operation, and middle elision of long paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callers.h"
#include "escape.h"
#include "prism/profile.h"

static int cmp_rows(const void *pa, const void *pb)
{
    const callers_row *a = pa, *b = pb;
    if (a->total_ns != b->total_ns)
        return a->total_ns < b->total_ns ? 1 : -1;
    if (a->calls != b->calls)
        return a->calls < b->calls ? 1 : -1;
    return a->path_hash < b->path_hash ? -1 : a->path_hash > b->path_hash;
}

void callers_free(callers *c)
{
    free(c->rows);
    c->rows = NULL;
    c->n = 0;
}

int callers_build(callers *c, const prism_analysis *a, const char *name)
{
    callers_free(c);
    c->op_total_ns = 0;
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    const prism_tree *t = a ? prism_analysis_tree(a) : NULL;
    if (!name || !t || !t->count)
        return 0;
    size_t nops = 0;
    const prism_op *ops = prism_analysis_ops(a, &nops);
    for (size_t i = 0; ops && i < nops; i++)
        if (ops[i].name && !strcmp(ops[i].name, name)) {
            c->op_total_ns = ops[i].total_ns;
            break;
        }
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->nodes[i].name && !strcmp(t->nodes[i].name, name))
            n++;
    if (!n)
        return 0;
    c->rows = malloc(n * sizeof *c->rows);
    if (!c->rows)
        return -1;
    uint64_t sum = 0;
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *nd = &t->nodes[i];
        if (!nd->name || strcmp(nd->name, name))
            continue;
        c->rows[c->n++] = (callers_row){ .node = (uint32_t)i, .path_hash = nd->path_hash,
                                         .total_ns = nd->total_ns, .calls = nd->calls };
        sum = sum + nd->total_ns < sum ? UINT64_MAX : sum + nd->total_ns;
    }
    if (!c->op_total_ns)                /* not among the operations: the paths' sum */
        c->op_total_ns = sum;
    for (size_t i = 0; i < c->n; i++)
        c->rows[i].share = c->op_total_ns ? (double)c->rows[i].total_ns / (double)c->op_total_ns : 0;
    qsort(c->rows, c->n, sizeof *c->rows, cmp_rows);
    return 0;
}

size_t callers_find(const callers *c, uint64_t path_hash)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].path_hash == path_hash)
            return i;
    return (size_t)-1;
}

char *callers_path(char *out, size_t cap, const prism_tree *t, uint32_t node)
{
    const char *parts[64];
    int k = 0;
    size_t o = 0;
    if (!cap)
        return out;
    out[0] = '\0';
    for (uint32_t q = node; t && q < t->count && k < 64; q = t->nodes[q].parent)
        parts[k++] = t->nodes[q].name;
    char safe[1024];
    while (k-- > 0 && o + 1 < cap) {
        const char *p = parts[k] ? esc_str(parts[k], safe, sizeof safe) : "?";
        int m = snprintf(out + o, cap - o, "%s%s", o ? "/" : "", p);
        if (m < 0)
            break;
        o += (size_t)m < cap - o ? (size_t)m : cap - o - 1;
    }
    return out;
}

/* Bytes of the UTF-8 character at p (escaped text: valid UTF-8 only). */
static size_t clen(const unsigned char *p)
{
    return *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 1;
}

static int columns(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p += clen(p))
        w++;
    return w;
}

/* The byte offset after the first `n` characters of s. */
static size_t skip_chars(const char *s, int n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (; n > 0 && *p; n--)
        p += clen(p);
    return (size_t)(p - (const unsigned char *)s);
}

int callers_fit_mid(char *out, size_t cap, const char *s, int width, bool utf8)
{
    if (!cap)
        return 0;
    out[0] = '\0';
    if (!s || width <= 0)
        return 0;
    char safe[ESC_CAP(PRISM_MAX_STRING_BYTES)];
    if (!esc_clean(s))
        s = esc_str(s, safe, sizeof safe);
    int w = columns(s);
    const char *dots = utf8 ? "\u2026" : "~";
    if (w <= width) {
        snprintf(out, cap, "%s", s);
        return columns(out);
    }
    int head = width / 2, tail = width - 1 - head;
    size_t hb = skip_chars(s, head);
    const char *t = s + skip_chars(s, w - tail);
    snprintf(out, cap, "%.*s%s%s", (int)hb, s, dots, t);
    return columns(out);
}

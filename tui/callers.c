/*
 * callers.c - the callers view's model (callers.h): the paths that end in
 * one operation, and middle elision of long paths.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
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
    pb_qsort(c->rows, c->n, sizeof *c->rows, cmp_rows);
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

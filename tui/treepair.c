/*
 * treepair.c - compare mode's paired Tree rows (see treepair.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "treepair.h"

static bool grow(tp_row **a, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    tp_row *p = realloc(*a, c * sizeof *p);
    if (!p)
        return false;
    *a = p;
    *cap = c;
    return true;
}

/* The node of side tv for path_hash when it shows under `parent` there. */
static uint32_t counterpart(treeview *tv, uint64_t hash, uint32_t parent)
{
    uint32_t n = tv_find(tv, hash);
    if (n == PRISM_NO_NODE || !tv_shown(tv, n) || tv->nodes[n].parent != parent)
        return PRISM_NO_NODE;
    return n;
}

typedef struct sort_ctx {
    tp_delta_fn delta;
    void *ctx;
} sort_ctx;

static int by_delta(const void *pa, const void *pb, void *arg)
{
    const tp_row *a = pa, *b = pb;
    const sort_ctx *c = arg;
    double x = fabs(c->delta(a->hash, c->ctx)), y = fabs(c->delta(b->hash, c->ctx));
    if (x != y)
        return x < y ? 1 : -1;
    return (a->seq > b->seq) - (a->seq < b->seq);       /* else as they came */
}

/* Push the children of the pair r (r NULL: the roots) onto the stack, the
 * first child on top. */
static bool push_children(tp_list *l, treeview *side[2], const tp_row *r, tp_order order,
                          sort_ctx *sc)
{
    uint32_t p0 = r ? r->node[0] : PRISM_NO_NODE, p1 = r ? r->node[1] : PRISM_NO_NODE;
    size_t n0 = 0, n1 = 0;
    const uint32_t *k0 = (r && p0 == PRISM_NO_NODE) ? NULL : tv_children(side[0], p0, &n0);
    const uint32_t *k1 = (r && p1 == PRISM_NO_NODE) ? NULL : tv_children(side[1], p1, &n1);
    if (!k0)
        n0 = 0;
    if (!k1)
        n1 = 0;
    size_t base = l->sp;
    if (!grow(&l->stack, &l->scap, base + n0 + n1))
        return false;
    size_t m = 0;
    tp_row *u = l->stack + base;        /* the union, in order */
    for (size_t i = 0; i < n0; i++) {
        const prism_node *nd = &side[0]->nodes[k0[i]];
        u[m] = (tp_row){ { k0[i], counterpart(side[1], nd->path_hash, p1) }, nd->path_hash,
                         nd->name, nd->depth, (uint32_t)m };
        m++;
    }
    for (size_t i = 0; i < n1; i++) {
        const prism_node *nd = &side[1]->nodes[k1[i]];
        if (counterpart(side[0], nd->path_hash, p0) == PRISM_NO_NODE)
        {
            u[m] = (tp_row){ { PRISM_NO_NODE, k1[i] }, nd->path_hash, nd->name, nd->depth,
                             (uint32_t)m };
            m++;
        }
    }
    if (order == TP_DELTA && sc->delta && m > 1)
        qsort_r(u, m, sizeof *u, by_delta, sc);
    for (size_t i = 0, j = m; i < j--; i++) {  /* the first child on top */
        tp_row t = u[i];
        u[i] = u[j];
        u[j] = t;
    }
    l->sp = base + m;
    return true;
}

static bool open_row(treeview *side[2], const tp_row *r)
{
    int k = r->node[0] != PRISM_NO_NODE ? 0 : 1;
    uint32_t n = r->node[k];
    bool kids = tv_has_children(side[0], r->node[0]) || tv_has_children(side[1], r->node[1]);
    return kids && tv_expanded(side[k], n);
}

size_t tp_build(tp_list *l, treeview *side[2], tp_order order, tp_delta_fn delta, void *ctx)
{
    sort_ctx sc = { delta, ctx };
    l->n = 0;
    l->sp = 0;
    l->oom = false;
    if (!push_children(l, side, NULL, order, &sc)) {
        l->oom = true;
        return 0;
    }
    while (l->sp) {
        tp_row r = l->stack[--l->sp];
        if (!grow(&l->rows, &l->cap, l->n + 1)) {
            l->oom = true;
            return l->n;
        }
        l->rows[l->n++] = r;
        if (open_row(side, &r) && !push_children(l, side, &r, order, &sc)) {
            l->oom = true;
            return l->n;
        }
    }
    return l->n;
}

size_t tp_find(const tp_list *l, uint64_t path_hash)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->rows[i].hash == path_hash)
            return i;
    return TV_NONE;
}

void tp_free(tp_list *l)
{
    free(l->rows);
    free(l->stack);
    memset(l, 0, sizeof *l);
}

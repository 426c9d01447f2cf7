/*
 * pane_ops_cmp.c - the Ops pane in compare mode: both sides list the
 * operations of both profiles in one order, so that the same operation is
 * on the same line of each side.  The order is the base's (by the sort
 * key, reversed with r), then the operations only the new profile has (by
 * the same key on the new side); sorted by share change, all of them by
 * the change.  A sort or reverse on one side applies to both.  A side
 * lists an operation it lacks as an absent row.  Each side computes the
 * same order from the two analyses (u->side_a), with the filter and
 * diff-only applied to the name and the change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pane_ops.h"

typedef struct mrow {
    const char *name;
    const prism_op *op[2];              /* base, new: NULL when absent      */
    uint32_t here;                      /* index into this side's ops       */
} mrow;

typedef struct mctx {
    int by;
    bool rev;
} mctx;

static int by_name(const void *a, const void *b, void *ctx)
{
    const prism_op *ops = ctx;
    return strcmp(ops[*(const uint32_t *)a].name, ops[*(const uint32_t *)b].name);
}

static double dshare(const mrow *r)
{
    return (r->op[1] ? r->op[1]->share : 0) - (r->op[0] ? r->op[0]->share : 0);
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
    const mctx *m = ctx;
    const mrow *a = pa, *b = pb;
    int r = 0;
    if (m->by == BY_DSHARE) {
        double da = fabs(dshare(a)), db = fabs(dshare(b));
        r = da != db ? (da < db ? 1 : -1) : 0;
    } else if (!a->op[0] != !b->op[0]) {    /* the base's operations first */
        return a->op[0] ? -1 : 1;
    } else {
        int k = a->op[0] ? 0 : 1;
        uint64_t x = ops_metric(a->op[k], m->by), y = ops_metric(b->op[k], m->by);
        r = x != y ? (x < y ? 1 : -1) : 0;
    }
    if (!r)
        r = strcmp(a->name, b->name);
    return m->rev ? -r : r;
}

/* The indices of ops sorted by name (the caller frees); NULL on failure. */
static uint32_t *name_index(const prism_op *ops, size_t n)
{
    uint32_t *ix = malloc((n ? n : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (size_t i = 0; i < n; i++)
        ix[i] = (uint32_t)i;
    if (n > 1)
        qsort_r(ix, n, sizeof *ix, by_name, (void *)ops);
    return ix;
}

int ops_compare_order(ui *u, ops_st *s)
{
    if (!u->cmp || !u->side_a[0] || !u->side_a[1])
        return -1;
    size_t n[2];
    const prism_op *ops[2] = { prism_analysis_ops(u->side_a[0], &n[0]),
                               prism_analysis_ops(u->side_a[1], &n[1]) };
    if (!ops[0])
        n[0] = 0;
    if (!ops[1])
        n[1] = 0;
    int me = u->side;
    uint32_t *ix[2] = { name_index(ops[0], n[0]), name_index(ops[1], n[1]) };
    mrow *rows = malloc((n[0] + n[1] + 1) * sizeof *rows);
    uint32_t *order = malloc((n[0] + n[1] + 1) * sizeof *order);
    const char **absent = malloc((n[0] + n[1] + 1) * sizeof *absent);
    if (!ix[0] || !ix[1] || !rows || !order || !absent) {
        free(ix[0]); free(ix[1]); free(rows); free(order); free(absent);
        return -1;
    }
    size_t nr = 0, i = 0, j = 0;
    while (i < n[0] || j < n[1]) {              /* merge the two name orders */
        const prism_op *a = i < n[0] ? &ops[0][ix[0][i]] : NULL;
        const prism_op *b = j < n[1] ? &ops[1][ix[1][j]] : NULL;
        int c = !a ? 1 : !b ? -1 : strcmp(a->name, b->name);
        mrow r = { c <= 0 ? a->name : b->name, { c <= 0 ? a : NULL, c >= 0 ? b : NULL }, 0 };
        uint32_t mine = me == 0 ? (c <= 0 ? ix[0][i] : UINT32_MAX) : (c >= 0 ? ix[1][j] : UINT32_MAX);
        i += c <= 0;
        j += c >= 0;
        r.here = mine;
        if (!ui_filter_matches(u, r.name))
            continue;
        if (s->diff_only && r.op[0] && r.op[1] && s->dl && mine != UINT32_MAX &&
            !dl_changed(&s->dl[mine]))
            continue;                           /* present on both sides, unchanged */
        rows[nr++] = r;
    }
    mctx m = { s->by, s->rev };
    if (nr > 1)
        qsort_r(rows, nr, sizeof *rows, cmp_rows, &m);
    size_t na = 0;
    for (size_t k = 0; k < nr; k++) {
        if (rows[k].here != UINT32_MAX) {
            order[k] = rows[k].here;
        } else {
            order[k] = OPS_ABSENT + (uint32_t)na;
            absent[na++] = rows[k].name;        /* borrowed from the other analysis */
        }
    }
    free(s->order);
    free(s->absent);
    s->order = order;
    s->absent = absent;
    s->nabsent = na;
    s->nops = nr;
    free(ix[0]);
    free(ix[1]);
    free(rows);
    return 0;
}

const prism_op *ops_other(const ui *u, const char *name)
{
    if (!u->cmp || !name)
        return NULL;
    size_t n;
    const prism_op *ops = prism_analysis_ops(u->side_a[1 - u->side], &n);
    for (size_t i = 0; ops && i < n; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

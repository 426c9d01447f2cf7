/*
 * delta.c - compare mode's deltas as pure functions (see delta.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "delta.h"
#include "ui.h"

dl_kind dl_kind_of(const prism_delta *d)
{
    if (!d)
        return DL_NONE;
    if (d->base_node == PRISM_NO_NODE)
        return d->new_node == PRISM_NO_NODE ? DL_NONE : DL_NEW;
    if (d->new_node == PRISM_NO_NODE)
        return DL_GONE;
    if (!d->significant)
        return DL_SAME;
    return d->median_pct > 0 ? DL_SLOWER : d->median_pct < 0 ? DL_FASTER : DL_SAME;
}

bool dl_changed(const prism_delta *d)
{
    dl_kind k = dl_kind_of(d);
    return k != DL_NONE && k != DL_SAME;
}

int dl_direction(const prism_delta *d)
{
    switch (dl_kind_of(d)) {
    case DL_SLOWER: case DL_NEW: return 1;
    case DL_FASTER: case DL_GONE: return -1;
    default: return 0;
    }
}

bool dl_strong(const prism_delta *d)
{
    dl_kind k = dl_kind_of(d);
    return k == DL_NEW || k == DL_GONE ||
           ((k == DL_SLOWER || k == DL_FASTER) && fabs(d->delta_pct) > DL_STRONG_PCT);
}

void dl_fmt_ns(char *buf, size_t cap, double ns)
{
    fmt_ns_signed(buf, cap, ns);        /* "+12.3 ms": one style everywhere */
}

void dl_fmt_pct(char *buf, size_t cap, double pct)
{
    if (!isfinite(pct))
        snprintf(buf, cap, "n/a");
    else if (fabs(pct) >= 99.95)
        snprintf(buf, cap, "%+.0f%%", pct);
    else
        snprintf(buf, cap, "%+.1f%%", pct);
}

void dl_fmt_pp(char *buf, size_t cap, double pp)
{
    if (!isfinite(pp))
        snprintf(buf, cap, "n/a");
    else if (fabs(pp) < 0.05)
        snprintf(buf, cap, "0.0pp");
    else
        snprintf(buf, cap, "%+.1fpp", pp);
}

/* The first of the candidates that fits in width columns. */
static int first_fit(char *buf, size_t cap, const char *const *cand, int n, int width)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(cand[i]);
        if (len <= width && (size_t)len < cap) {
            memcpy(buf, cand[i], (size_t)len + 1);
            return len;
        }
    }
    return 0;
}

int dl_format(char *buf, size_t cap, const prism_delta *d, int width)
{
    char ns[32], pct[32], both[80], tag[48];
    if (!cap)
        return 0;
    buf[0] = '\0';
    dl_kind k = dl_kind_of(d);
    if (k == DL_NONE || width <= 0)
        return 0;
    dl_fmt_ns(ns, sizeof ns, d->delta_ns);
    if (k == DL_NEW || k == DL_GONE) {
        const char *name = k == DL_NEW ? "new" : "gone";
        snprintf(tag, sizeof tag, "%s %s", name, ns);
        const char *cand[] = { tag, name };
        return first_fit(buf, cap, cand, 2, width);
    }
    dl_fmt_pct(pct, sizeof pct, d->delta_pct);
    snprintf(both, sizeof both, "%s %s", ns, pct);
    const char *cand[] = { both, pct, ns };
    return first_fit(buf, cap, cand, 3, width);
}

uint32_t dl_nearest(const prism_analysis *here, const prism_analysis *other, uint64_t path_hash)
{
    if (!here)
        return PRISM_NO_NODE;
    uint32_t n = prism_analysis_find(here, path_hash);
    if (n != PRISM_NO_NODE || !other)
        return n;
    const prism_tree *t = prism_analysis_tree(other);
    uint32_t q = prism_analysis_find(other, path_hash);
    for (size_t guard = 0; q != PRISM_NO_NODE && q < t->count && guard <= t->count; guard++) {
        q = t->nodes[q].parent;
        if (q == PRISM_NO_NODE || q >= t->count)
            break;
        n = prism_analysis_find(here, t->nodes[q].path_hash);
        if (n != PRISM_NO_NODE)
            return n;
    }
    return PRISM_NO_NODE;
}

/* ---- operations by name ------------------------------------------------ */

static int by_str(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    return strcmp(a ? a : "", b ? b : "");
}

static int by_op_name(const void *x, const void *y, void *ctx)
{
    const prism_op *o = ctx;
    const char *a = o[*(const uint32_t *)x].name, *b = o[*(const uint32_t *)y].name;
    return strcmp(a ? a : "", b ? b : "");
}

static const prism_op *find_op(const prism_op *other, const uint32_t *idx, size_t n,
                               const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const char *m = other[idx[mid]].name;
        int c = strcmp(m ? m : "", name ? name : "");
        if (c < 0)
            lo = mid + 1;
        else if (c > 0)
            hi = mid;
        else
            return &other[idx[mid]];
    }
    return NULL;
}

int dl_ops(const prism_op *ops, size_t n, const prism_op *other, size_t nother, int side,
           const prism_compare *c, uint64_t base_total_ns, prism_delta *out)
{
    uint32_t *idx = malloc((nother ? nother : 1) * sizeof *idx);
    size_t nchanged = 0, cc = c ? c->count : 0;
    const char **changed = malloc((cc ? cc : 1) * sizeof *changed);
    if (!idx || !changed) {
        free(idx);
        free(changed);
        return -1;
    }
    for (size_t i = 0; i < nother; i++)
        idx[i] = (uint32_t)i;
    if (nother > 1)
        qsort_r(idx, nother, sizeof *idx, by_op_name, (void *)other);
    for (size_t i = 0; i < cc; i++)
        if (dl_changed(&c->deltas[i]))
            changed[nchanged++] = c->deltas[i].name;
    if (nchanged > 1)
        pb_qsort(changed, nchanged, sizeof *changed, by_str);
    double floor = 0.01 * (double)base_total_ns;
    for (size_t i = 0; i < n; i++) {
        const prism_op *o = find_op(other, idx, nother, ops[i].name);
        const prism_op *b = side == 0 ? &ops[i] : o, *w = side == 0 ? o : &ops[i];
        prism_delta *d = &out[i];
        memset(d, 0, sizeof *d);
        d->name = ops[i].name;
        d->base_node = b ? 0 : PRISM_NO_NODE;
        d->new_node = w ? 0 : PRISM_NO_NODE;
        d->base_ns = b ? (double)b->total_ns : 0.0;
        d->new_ns = w ? (double)w->total_ns : 0.0;
        d->delta_ns = d->new_ns - d->base_ns;
        d->delta_pct = d->base_ns > 0 ? 100.0 * d->delta_ns / d->base_ns : 0.0;
        d->speedup = d->base_ns > 0 && d->new_ns > 0 ? d->base_ns / d->new_ns : 0.0;
        d->median_pct = d->delta_pct;
        d->base_share = b ? b->share : 0.0;
        d->new_share = w ? w->share : 0.0;
        d->share_delta = 100.0 * (d->new_share - d->base_share);
        d->p_value = -1.0;
        const char *key = ops[i].name;
        d->significant = b && w && fabs(d->delta_ns) > floor && nchanged &&
                         bsearch(&key, changed, nchanged, sizeof *changed, by_str);
    }
    free(idx);
    free(changed);
    return 0;
}

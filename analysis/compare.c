/*
 * compare.c - two refreshed analyses matched by call path.
 *
 * Every path of either all-threads tree becomes one prism_delta: totals on
 * both sides, the change, the speedup, and whether the change stands out
 * from step-to-step noise (Welch's t-test on the node's per-step totals,
 * p < 0.01, and a change above 1 % of the base profile's total).  Paths
 * present on one side only count as appeared or vanished.  Bottlenecks are
 * matched by (type, path_hash).
 *
 * Public getters only.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"

#define SIGNIFICANT_P 0.01
#define SIGNIFICANT_SHARE 0.01

/* ---- path hash -> node (open addressing) ------------------------------ */

typedef struct hmap {
    uint64_t *keys;
    uint32_t *vals;             /* PRISM_NO_NODE = empty slot */
    size_t mask;
} hmap;

static size_t hslot(uint64_t k, size_t mask)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & mask;
}

static bool hmap_build(hmap *m, const prism_tree *t)
{
    size_t cap = 16;
    while (cap < 2 * t->count)
        cap *= 2;
    m->mask = cap - 1;
    m->keys = malloc(cap * sizeof *m->keys);
    m->vals = malloc(cap * sizeof *m->vals);
    if (!m->keys || !m->vals)
        return false;
    for (size_t i = 0; i < cap; i++)
        m->vals[i] = PRISM_NO_NODE;
    for (size_t i = 0; i < t->count; i++) {
        uint64_t k = t->nodes[i].path_hash;
        size_t s = hslot(k, m->mask);
        while (m->vals[s] != PRISM_NO_NODE && m->keys[s] != k)
            s = (s + 1) & m->mask;
        if (m->vals[s] == PRISM_NO_NODE) {     /* first node of a path wins */
            m->keys[s] = k;
            m->vals[s] = (uint32_t)i;
        }
    }
    return true;
}

static uint32_t hmap_get(const hmap *m, uint64_t k)
{
    for (size_t s = hslot(k, m->mask); m->vals[s] != PRISM_NO_NODE; s = (s + 1) & m->mask)
        if (m->keys[s] == k)
            return m->vals[s];
    return PRISM_NO_NODE;
}

static void hmap_free(hmap *m)
{
    free(m->keys);
    free(m->vals);
}

/* ---- path strings ----------------------------------------------------- */

/*
 * "root/child/leaf" into out[256].  A path longer than 255 bytes keeps its
 * end (the leaf is what matters) behind "...", cut at a UTF-8 character
 * boundary.  Written backwards from the leaf, so the length is bounded
 * whatever the depth.
 */
static void path_of(const prism_tree *t, uint32_t leaf, char out[256])
{
    char buf[256];
    size_t pos = sizeof buf - 1, guard = 0;
    bool cut = false;
    buf[pos] = '\0';
    for (uint32_t n = leaf; n < t->count; n = t->nodes[n].parent) {
        if (++guard > t->count)                 /* a cycle: never in a sane tree */
            break;
        const char *name = t->nodes[n].name ? t->nodes[n].name : "?";
        size_t len = strlen(name);
        if (n != leaf && pos > 0)
            buf[--pos] = '/';
        if (len >= pos && (len > pos || t->nodes[n].parent != PRISM_NO_NODE)) {
            memcpy(buf, name + (len - pos), pos);   /* the tail that fits */
            pos = 0;
            cut = true;
            break;
        }
        pos -= len;
        memcpy(buf + pos, name, len);
    }
    const char *s = buf + pos;
    if (cut) {
        s = buf + 3;                            /* room for "..." */
        while (((unsigned char)*s & 0xc0) == 0x80)
            s++;
        memcpy(out, "...", 3);
        memcpy(out + 3, s, strlen(s) + 1);
        return;
    }
    memcpy(out, s, strlen(s) + 1);
}

/* ---- deltas ----------------------------------------------------------- */

static int cmp_delta(const void *x, const void *y)
{
    const prism_delta *a = x, *b = y;
    double da = fabs(a->delta_ns), db = fabs(b->delta_ns);
    if (da != db)
        return da > db ? -1 : 1;
    double ta = a->base_ns + a->new_ns, tb = b->base_ns + b->new_ns;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return strcmp(a->path, b->path);
}

typedef struct side {
    const prism_analysis *base, *cur;
    const prism_tree *tb, *tc;
    double noise_floor;         /* |delta| above this can be significant */
} side;

static void fill_delta(prism_delta *d, side *x, uint32_t bn, uint32_t cn)
{
    const prism_tree *tb = x->tb, *tc = x->tc;
    const prism_node *b = bn != PRISM_NO_NODE ? &tb->nodes[bn] : NULL;
    const prism_node *c = cn != PRISM_NO_NODE ? &tc->nodes[cn] : NULL;
    const prism_node *any = b ? b : c;
    d->name = any->name;
    d->path_hash = any->path_hash;
    path_of(b ? tb : tc, b ? bn : cn, d->path);
    d->base_node = bn;
    d->new_node = cn;
    d->base_ns = b ? (double)b->total_ns : 0.0;
    d->new_ns = c ? (double)c->total_ns : 0.0;
    d->delta_ns = d->new_ns - d->base_ns;
    d->delta_pct = d->base_ns > 0 ? 100.0 * d->delta_ns / d->base_ns : 0.0;
    d->speedup = d->base_ns > 0 && d->new_ns > 0 ? d->base_ns / d->new_ns : 0.0;
    d->p_value = -1.0;
    uint64_t nb, nc;
    double mb, vb, mc, vc;
    if (b && c && prism_analysis_node_step_moments(x->base, bn, &nb, &mb, &vb) &&
        prism_analysis_node_step_moments(x->cur, cn, &nc, &mc, &vc))
        d->p_value = prism_welch_p_moments((double)nb, mb, vb, (double)nc, mc, vc);
    d->significant = d->p_value >= 0 && d->p_value < SIGNIFICANT_P &&
                     fabs(d->delta_ns) > x->noise_floor;
}

/* ---- bottlenecks on one side only ------------------------------------- */

static bool has_bn(const prism_bottleneck *v, size_t n, const prism_bottleneck *b)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].type == b->type && v[i].path_hash == b->path_hash)
            return true;
    return false;
}

/* Those of x[] that y[] lacks, into *out (allocated). */
static bool bn_only(const prism_bottleneck *x, size_t nx, const prism_bottleneck *y, size_t ny,
                    const prism_bottleneck ***out, size_t *n)
{
    *out = calloc(nx ? nx : 1, sizeof **out);
    if (!*out)
        return false;
    *n = 0;
    for (size_t i = 0; i < nx; i++)
        if (!has_bn(y, ny, &x[i]))
            (*out)[(*n)++] = &x[i];
    return true;
}

/* ---- entry ------------------------------------------------------------ */

prism_compare *prism_compare_new(const prism_analysis *base, const prism_analysis *cur)
{
    if (!base || !cur)
        return NULL;
    const prism_tree *tb = prism_analysis_tree(base), *tc = prism_analysis_tree(cur);
    static const prism_tree empty = { .first_root = PRISM_NO_NODE };
    if (!tb)
        tb = &empty;
    if (!tc)
        tc = &empty;
    prism_compare *cmp = calloc(1, sizeof *cmp);
    hmap mb = { 0 }, mc = { 0 };
    side x = { .base = base, .cur = cur, .tb = tb, .tc = tc,
               .noise_floor = SIGNIFICANT_SHARE * (double)tb->total_ns };
    if (!cmp || !hmap_build(&mb, tb) || !hmap_build(&mc, tc))
        goto fail;
    cmp->deltas = calloc(tb->count + tc->count ? tb->count + tc->count : 1, sizeof *cmp->deltas);
    if (!cmp->deltas)
        goto fail;

    for (size_t i = 0; i < tb->count; i++) {
        uint64_t h = tb->nodes[i].path_hash;
        if (hmap_get(&mb, h) != i)              /* a duplicate path: counted once */
            continue;
        uint32_t cn = hmap_get(&mc, h);
        if (cn == PRISM_NO_NODE)
            cmp->vanished++;
        fill_delta(&cmp->deltas[cmp->count++], &x, (uint32_t)i, cn);
    }
    for (size_t i = 0; i < tc->count; i++) {
        uint64_t h = tc->nodes[i].path_hash;
        if (hmap_get(&mc, h) != i || hmap_get(&mb, h) != PRISM_NO_NODE)
            continue;
        cmp->appeared++;
        fill_delta(&cmp->deltas[cmp->count++], &x, PRISM_NO_NODE, (uint32_t)i);
    }
    qsort(cmp->deltas, cmp->count, sizeof *cmp->deltas, cmp_delta);

    size_t nbb = 0, nbc = 0;
    const prism_bottleneck *bb = prism_analysis_bottlenecks(base, &nbb);
    const prism_bottleneck *bc = prism_analysis_bottlenecks(cur, &nbc);
    if (!bb)
        nbb = 0;
    if (!bc)
        nbc = 0;
    if (!bn_only(bc, nbc, bb, nbb, &cmp->bn_new, &cmp->nbn_new) ||
        !bn_only(bb, nbb, bc, nbc, &cmp->bn_gone, &cmp->nbn_gone))
        goto fail;
    hmap_free(&mb);
    hmap_free(&mc);
    return cmp;
fail:
    hmap_free(&mb);
    hmap_free(&mc);
    prism_compare_free(cmp);
    return NULL;
}

void prism_compare_free(prism_compare *c)
{
    if (!c)
        return;
    free(c->deltas);
    free(c->bn_new);
    free(c->bn_gone);
    free(c);
}

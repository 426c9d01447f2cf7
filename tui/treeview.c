/*
 * treeview.c - the flattened, sorted, partly expanded view of a call tree
 * behind the Tree pane (see treeview.h).  No curses here.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "treeview.h"

/* ---- tree and caches ---------------------------------------------------- */

void tv_init(treeview *tv)
{
    memset(tv, 0, sizeof *tv);
    tv->level = 1;
}

static void drop_arrays(treeview *tv)
{
    free(tv->kid_off);
    free(tv->kid_n);
    free(tv->pos);
    free(tv->kids);
    free(tv->stack);
    free(tv->roots);
    free(tv->rows);
    free(tv->hash);
    free(tv->meta);
    free(tv->key);
    free(tv->shown);
    tv->shown = NULL;
    tv->kid_off = tv->kid_n = tv->pos = tv->kids = tv->stack = tv->roots = tv->rows = NULL;
    tv->meta = NULL;
    tv->hash = tv->key = NULL;
    tv->nroots = tv->nrows = tv->count = tv->kids_used = 0;
}

void tv_free(treeview *tv)
{
    drop_arrays(tv);
    pb_map_free(&tv->flip);
    pb_map_free(&tv->saved_flip);
    pb_map_free(&tv->by_hash);
}

static int cmp_nodes(const void *pa, const void *pb, void *ctx)
{
    const treeview *tv = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (tv->key[a] != tv->key[b])
        return tv->key[a] < tv->key[b] ? 1 : -1;
    const prism_node *x = &tv->nodes[a], *y = &tv->nodes[b];
    int c = strcasecmp(x->name, y->name);
    if (!c)
        c = strcmp(x->name, y->name);
    return c ? c : (a > b) - (a < b);
}

static int cmp_sorted(const void *pa, const void *pb, void *ctx)
{
    const treeview *tv = ctx;
    int c = cmp_nodes(pa, pb, ctx);
    return tv->reverse ? -c : c;
}

static void sort_list(treeview *tv, uint32_t *list, size_t n)
{
    if (n > 1)
        qsort_r(list, n, sizeof *list, cmp_sorted, tv);
    for (size_t i = 0; i < n; i++)
        tv->pos[list[i]] = (uint32_t)i;
}

/* Forget sorted children; sort the roots again. */
static void reset_order(treeview *tv)
{
    if (!tv->count)
        return;
    for (size_t i = 0; i < tv->count; i++) {
        const prism_node *n = &tv->nodes[i];
        tv->key[i] = tv->sort == TV_SORT_SELF    ? n->self_ns
                     : tv->sort == TV_SORT_CALLS ? (n->flags & PRISM_NODE_SAMPLED ? 0 : n->calls)
                     : tv->sort == TV_SORT_NAME  ? 0
                                                 : n->total_ns;
    }
    memset(tv->kid_off, 0xff, tv->count * sizeof *tv->kid_off);
    tv->kids_used = 0;
    sort_list(tv, tv->roots, tv->nroots);
    tv->dirty = true;
    tv->gen++;
}

static bool ensure_kids(treeview *tv, uint32_t node)
{
    if (tv->kid_off[node] != UINT32_MAX)
        return true;
    size_t off = tv->kids_used, n = 0;
    for (uint32_t c = tv->nodes[node].first_child; c != PRISM_NO_NODE && c < tv->count &&
                                                   off + n < tv->count;
         c = tv->nodes[c].next_sibling)
        if (!tv->shown || tv->shown[c])
            tv->kids[off + n++] = c;
    sort_list(tv, tv->kids + off, n);
    tv->kid_off[node] = (uint32_t)off;
    tv->kid_n[node] = (uint32_t)n;
    tv->kids_used += n;
    return true;
}

/* shown[n] = keep(n) or a descendant's; children follow their parents
 * in the node array, so one pass from the end carries it up. */
static bool apply_filter(treeview *tv)
{
    tv->shown = calloc(tv->count, 1);
    if (!tv->shown)
        return false;
    for (size_t i = tv->count; i-- > 0;) {
        const prism_node *n = &tv->nodes[i];
        if (!tv->shown[i] && tv->keep(n, tv->keep_ctx))
            tv->shown[i] = 1;
        if (tv->shown[i] && n->parent < i)
            tv->shown[n->parent] = 1;
    }
    return true;
}

bool tv_set_tree(treeview *tv, const prism_tree *t, bool force)
{
    const prism_node *nodes = t ? t->nodes : NULL;
    size_t count = t && t->nodes ? t->count : 0;
    if (!force && t == tv->tree && nodes == tv->nodes && count == tv->count && !tv->oom &&
        !tv->refilter)
        return false;
    tv->refilter = false;
    drop_arrays(tv);
    pb_map_clear(&tv->by_hash);
    tv->by_hash_ok = false;
    tv->tree = t;
    tv->nodes = nodes;
    tv->max_depth = 0;
    tv->dirty = true;
    tv->gen++;
    tv->oom = false;
    if (!count || count >= UINT32_MAX)
        return true;
    size_t sz = count * sizeof(uint32_t);
    tv->kid_off = malloc(sz);
    tv->kid_n = malloc(sz);
    tv->pos = malloc(sz);
    tv->kids = malloc(sz);
    tv->stack = malloc(sz);
    tv->roots = malloc(sz);
    tv->rows = malloc(sz);
    tv->meta = malloc(sz);
    tv->hash = malloc(count * sizeof *tv->hash);
    tv->key = malloc(count * sizeof *tv->key);
    if (!tv->kid_off || !tv->kid_n || !tv->pos || !tv->kids || !tv->stack || !tv->roots ||
        !tv->rows || !tv->meta || !tv->hash || !tv->key) {
        drop_arrays(tv);
        tv->oom = true;
        return true;
    }
    tv->count = count;
    if (tv->keep && !apply_filter(tv)) {
        drop_arrays(tv);
        tv->oom = true;
        return true;
    }
    for (uint32_t r = t->first_root; r != PRISM_NO_NODE && r < count && tv->nroots < count;
         r = nodes[r].next_sibling)
        if (!tv->shown || tv->shown[r])
            tv->roots[tv->nroots++] = r;
    for (size_t i = 0; i < count; i++) {
        uint32_t d = nodes[i].depth < UINT32_MAX / 2 ? nodes[i].depth : UINT32_MAX / 2;
        tv->hash[i] = nodes[i].path_hash;
        tv->meta[i] = d << 1 | (nodes[i].first_child != PRISM_NO_NODE && !tv->shown);
        if (d > tv->max_depth)
            tv->max_depth = d;
    }
    for (size_t i = 0; tv->shown && i < count; i++)     /* children that show */
        if (tv->shown[i] && nodes[i].parent < count)
            tv->meta[nodes[i].parent] |= 1;
    reset_order(tv);
    return true;
}

void tv_set_filter(treeview *tv, tv_keep_fn keep, void *ctx)
{
    tv->keep = keep;
    tv->keep_ctx = ctx;
    tv->refilter = true;
    tv->dirty = true;
    tv->gen++;
}

bool tv_shown(const treeview *tv, uint32_t node)
{
    return node < tv->count && (!tv->shown || tv->shown[node]);
}

const char *tv_sort_name(tv_sort s)
{
    static const char *const names[] = { "total", "self", "calls", "name" };
    return s < TV_SORT_COUNT ? names[s] : "?";
}

void tv_set_sort(treeview *tv, tv_sort s)
{
    tv->sort = s < TV_SORT_COUNT ? s : TV_SORT_TOTAL;
    reset_order(tv);
}

void tv_set_reverse(treeview *tv, bool reverse)
{
    tv->reverse = reverse;
    reset_order(tv);
}

bool tv_descending(const treeview *tv)
{
    return (tv->sort != TV_SORT_NAME) != tv->reverse;
}

/* ---- expansion ----------------------------------------------------------- */

void tv_expansion_save(treeview *tv)
{
    if (tv->saved)
        return;
    pb_map_free(&tv->saved_flip);
    tv->saved_flip = tv->flip;
    memset(&tv->flip, 0, sizeof tv->flip);
    tv->saved_level = tv->level;
    tv->level = TV_ALL;
    tv->saved = true;
    tv->dirty = true;
    tv->gen++;
}

void tv_expansion_restore(treeview *tv)
{
    if (!tv->saved)
        return;
    pb_map_free(&tv->flip);
    tv->flip = tv->saved_flip;
    memset(&tv->saved_flip, 0, sizeof tv->saved_flip);
    tv->level = tv->saved_level;
    tv->saved = false;
    tv->dirty = true;
    tv->gen++;
}

bool tv_copy_view(treeview *dst, const treeview *src)
{
    if (dst->sort != src->sort || dst->reverse != src->reverse) {
        dst->sort = src->sort;
        dst->reverse = src->reverse;
        reset_order(dst);
    }
    dst->level = src->level;
    dst->dirty = true;
    dst->gen++;
    pb_map_clear(&dst->flip);
    uint64_t k, v;
    for (size_t it = 0; pb_map_next(&src->flip, &it, &k, &v);)
        if (!pb_map_put(&dst->flip, k, v)) {
            dst->oom = true;
            return false;
        }
    return true;
}

bool tv_has_children(const treeview *tv, uint32_t node)
{
    return node < tv->count && (tv->meta[node] & 1);
}

bool tv_expanded(const treeview *tv, uint32_t node)
{
    if (node >= tv->count)
        return false;
    uint64_t v = 0;
    bool flipped = pb_map_get(&tv->flip, tv->hash[node], &v) && v;
    return (tv->meta[node] >> 1 < tv->level) != flipped;
}

void tv_set_expanded(treeview *tv, uint32_t node, bool open)
{
    if (node >= tv->count || tv_expanded(tv, node) == open)
        return;
    bool by_default = tv->meta[node] >> 1 < tv->level;
    if (!pb_map_put(&tv->flip, tv->hash[node], open != by_default))
        tv->oom = true;
    tv->dirty = true;
    tv->gen++;
}

void tv_set_level(treeview *tv, uint32_t level)
{
    tv->level = level;
    pb_map_clear(&tv->flip);
    tv->dirty = true;
    tv->gen++;
}

uint32_t tv_level(const treeview *tv)
{
    return tv->level > tv->max_depth + 1 ? tv->max_depth + 1 : tv->level;
}

/* ---- rows ------------------------------------------------------------------ */

void tv_rebuild(treeview *tv)
{
    if (!tv->dirty)
        return;
    tv->dirty = false;
    tv->nrows = 0;
    size_t sp = 0;
    for (size_t i = tv->nroots; i-- > 0;)
        tv->stack[sp++] = tv->roots[i];
    while (sp && tv->nrows < tv->count) {
        uint32_t n = tv->stack[--sp];
        tv->rows[tv->nrows++] = n;
        if (!tv_has_children(tv, n) || !tv_expanded(tv, n) || !ensure_kids(tv, n))
            continue;
        for (size_t i = tv->kid_n[n]; i-- > 0 && sp < tv->count;)
            tv->stack[sp++] = tv->kids[tv->kid_off[n] + i];
    }
}

uint32_t tv_find(treeview *tv, uint64_t path_hash)
{
    if (!tv->by_hash_ok) {
        pb_map_clear(&tv->by_hash);
        pb_map_reserve(&tv->by_hash, tv->count);
        for (size_t i = tv->count; i-- > 0;)      /* the first one wins */
            if (!pb_map_put(&tv->by_hash, tv->hash[i], (uint32_t)i)) {
                pb_map_clear(&tv->by_hash);
                break;
            }
        tv->by_hash_ok = tv->by_hash.count > 0;
    }
    uint64_t v;
    if (tv->by_hash_ok && pb_map_get(&tv->by_hash, path_hash, &v))
        return (uint32_t)v;
    for (size_t i = 0; !tv->by_hash_ok && i < tv->count; i++)   /* no memory: scan */
        if (tv->hash[i] == path_hash)
            return (uint32_t)i;
    return PRISM_NO_NODE;
}

bool tv_reveal(treeview *tv, uint32_t node)
{
    bool changed = false;
    if (node >= tv->count)
        return false;
    for (uint32_t p = tv->nodes[node].parent; p != PRISM_NO_NODE && p < tv->count;
         p = tv->nodes[p].parent)
        if (!tv_expanded(tv, p)) {
            tv_set_expanded(tv, p, true);
            changed = true;
        }
    return changed;
}

size_t tv_row_of(treeview *tv, uint32_t node, bool reveal)
{
    if (node >= tv->count)
        return TV_NONE;
    for (size_t guard = 0; !tv_shown(tv, node) && guard < tv->count; guard++) {
        node = tv->nodes[node].parent;          /* filtered out: its ancestor */
        if (node >= tv->count)
            return TV_NONE;
    }
    if (reveal)
        tv_reveal(tv, node);
    tv_rebuild(tv);
    uint32_t shown = node;      /* the topmost closed ancestor is what shows */
    for (uint32_t p = tv->nodes[node].parent; p != PRISM_NO_NODE && p < tv->count;
         p = tv->nodes[p].parent)
        if (!tv_expanded(tv, p))
            shown = p;
    for (size_t i = 0; i < tv->nrows; i++)
        if (tv->rows[i] == shown)
            return i;
    return TV_NONE;
}

const uint32_t *tv_children(treeview *tv, uint32_t node, size_t *n)
{
    *n = 0;
    if (node == PRISM_NO_NODE) {
        *n = tv->nroots;
        return tv->roots;
    }
    if (!tv_has_children(tv, node) || !ensure_kids(tv, node))
        return NULL;
    *n = tv->kid_n[node];
    return tv->kids + tv->kid_off[node];
}

/* ---- search order: pre-order over the whole tree ------------------------- */

static const uint32_t *siblings(treeview *tv, uint32_t node, size_t *n)
{
    return tv_children(tv, tv->nodes[node].parent, n);
}

static uint32_t last_below(treeview *tv, uint32_t n)
{
    size_t k;
    const uint32_t *kids;
    while ((kids = tv_children(tv, n, &k)) && k)
        n = kids[k - 1];
    return n;
}

static uint32_t pre_next(treeview *tv, uint32_t n)
{
    size_t k;
    const uint32_t *kids;
    if (n == PRISM_NO_NODE || ((kids = tv_children(tv, n, &k)) && k))
        return n == PRISM_NO_NODE ? tv->roots[0] : kids[0];
    for (; n != PRISM_NO_NODE; n = tv->nodes[n].parent) {
        const uint32_t *sib = siblings(tv, n, &k);
        if (sib && tv->pos[n] + 1 < k)
            return sib[tv->pos[n] + 1];
    }
    return tv->roots[0];
}

static uint32_t pre_prev(treeview *tv, uint32_t n)
{
    size_t k;
    if (n == PRISM_NO_NODE)
        return last_below(tv, tv->roots[tv->nroots - 1]);
    const uint32_t *sib = siblings(tv, n, &k);
    if (sib && tv->pos[n] > 0)
        return last_below(tv, sib[tv->pos[n] - 1]);
    if (tv->nodes[n].parent != PRISM_NO_NODE)
        return tv->nodes[n].parent;
    return last_below(tv, tv->roots[tv->nroots - 1]);
}

uint32_t tv_next_match(treeview *tv, uint32_t from, int dir, tv_match_fn m, void *ctx)
{
    if (!tv->nroots || !m || (from != PRISM_NO_NODE && from >= tv->count))
        return PRISM_NO_NODE;
    while (from != PRISM_NO_NODE && !tv_shown(tv, from))       /* filtered out */
        from = tv->nodes[from].parent < tv->count ? tv->nodes[from].parent : PRISM_NO_NODE;
    uint32_t cur = from;
    for (size_t i = 0; i < tv->count; i++) {
        cur = dir >= 0 ? pre_next(tv, cur) : pre_prev(tv, cur);
        if (m(tv->nodes[cur].name, ctx))
            return cur;
    }
    return PRISM_NO_NODE;
}

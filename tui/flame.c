/*
 * flame.c - flame-graph geometry, navigation, search hits and labels as
 * pure functions (no curses); the rules are in flame.h.
 */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "escape.h"
#include "flame.h"
#include "namefit.h"

typedef struct kid {
    const char *name;
    uint64_t hash, total;
    uint32_t node;
} kid;

static bool digit(char c)
{
    return c >= '0' && c <= '9';
}

int flame_name_cmp(const char *a, const char *b)
{
    const char *p = a ? a : "", *q = b ? b : "";
    while (*p && *q) {
        if (digit(*p) && digit(*q)) {        /* numbers by value */
            while (*p == '0' && digit(p[1]))
                p++;
            while (*q == '0' && digit(q[1]))
                q++;
            size_t np = 0, nq = 0;
            while (digit(p[np]))
                np++;
            while (digit(q[nq]))
                nq++;
            if (np != nq)
                return np < nq ? -1 : 1;
            int c = memcmp(p, q, np);
            if (c)
                return c < 0 ? -1 : 1;
            p += np;
            q += nq;
        } else {
            if (*p != *q)
                return (unsigned char)*p < (unsigned char)*q ? -1 : 1;
            p++;
            q++;
        }
    }
    if (*p || *q)
        return *p ? 1 : -1;
    int c = strcmp(a ? a : "", b ? b : "");   /* "a01" vs "a1": still total */
    return c < 0 ? -1 : c > 0;
}

static int kid_cmp(const void *pa, const void *pb)
{
    const kid *a = pa, *b = pb;
    int c = flame_name_cmp(a->name, b->name);
    if (c)
        return c;
    return a->hash < b->hash ? -1 : a->hash > b->hash;
}

/* Column of time offset ns: round(ns * W / T), exact in 128 bits. */
static int col_of(uint64_t ns, uint64_t T, int W)
{
    if (!T)
        return 0;
    unsigned __int128 v = (unsigned __int128)ns * (unsigned)W + T / 2;
    return (int)(v / T);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static int push(flame *f, const flame_cell *c)
{
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        flame_cell *n = realloc(f->cells, cap * sizeof *n);
        if (!n)
            return -1;
        f->cells = n;
        f->cap = cap;
    }
    f->cells[f->count++] = *c;
    return 0;
}

/* The children of every node sorted by name, as one array: node i's at
 * kids[off[i] .. off[i + 1]), the roots' at kids[off[n] .. off[n + 1]).
 * Built once per tree from the parent links (O(n log n)); a layout then
 * only walks the children of the cells it shows. */
static int order_build(flame *f, const prism_tree *t)
{
    size_t n = t->count;
    free(f->kids);
    free(f->off);
    f->order_nodes = NULL;
    f->kids = malloc((n ? n : 1) * sizeof *f->kids);
    f->off = calloc(n + 2, sizeof *f->off);
    size_t *pos = malloc((n + 1) * sizeof *pos);
    kid *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!f->kids || !f->off || !pos || !tmp) {
        free(pos);
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t p = t->nodes[i].parent;
        if (p == PRISM_NO_NODE || p < n)
            f->off[(p == PRISM_NO_NODE ? n : p) + 1]++;
    }
    for (size_t s = 0; s <= n; s++) {
        f->off[s + 1] += f->off[s];
        pos[s] = f->off[s];
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t p = t->nodes[i].parent;
        if (p == PRISM_NO_NODE || p < n) {
            const prism_node *nd = &t->nodes[i];
            tmp[pos[p == PRISM_NO_NODE ? n : p]++] =
                (kid){ nd->name, nd->path_hash, nd->total_ns, (uint32_t)i };
        }
    }
    for (size_t s = 0; s <= n; s++)
        if (f->off[s + 1] - f->off[s] > 1)
            pb_qsort(tmp + f->off[s], f->off[s + 1] - f->off[s], sizeof *tmp, kid_cmp);
    for (size_t i = 0; i < f->off[n + 1]; i++)
        f->kids[i] = tmp[i].node;
    free(pos);
    free(tmp);
    f->order_nodes = t->nodes;
    f->order_count = n;
    f->order_total = t->total_ns;
    return 0;
}

void flame_forget_order(flame *f)
{
    f->order_nodes = NULL;
}

/* Lay the children of node (the roots for PRISM_NO_NODE) into [t0, t1)
 * on `row`, under cell `parent`. */
static int lay(flame *f, const prism_tree *t, uint32_t node, size_t parent, int row,
               uint64_t t0, uint64_t t1)
{
    size_t slot = node == PRISM_NO_NODE ? t->count : node;
    uint64_t cum = t0;
    for (size_t i = f->off[slot]; i < f->off[slot + 1] && cum < t1; i++) {
        uint32_t k = f->kids[i];
        uint64_t tot = t->nodes[k].total_ns;
        uint64_t s = cum, e = min_u64(sat_add(cum, tot), t1);
        cum = sat_add(cum, tot);
        int x0 = col_of(s, f->base_ns, f->width), x1 = col_of(e, f->base_ns, f->width);
        if (x1 - x0 < 1)
            continue;
        flame_cell c = { k, row, x0, x1 - x0, s, e, parent, FLAME_NONE, 0 };
        if (push(f, &c) < 0)
            return -1;
        if (parent != FLAME_NONE) {
            if (f->cells[parent].first_child == FLAME_NONE)
                f->cells[parent].first_child = f->count - 1;
            f->cells[parent].nchildren++;
        }
    }
    return 0;
}

int flame_build(flame *f, const prism_tree *t, uint32_t zoom, int width, int max_rows)
{
    f->count = 0;
    f->rows = 0;
    f->width = width > 0 ? width : 0;
    f->max_rows = max_rows > 0 ? max_rows : 0;
    f->base_ns = 0;
    if (!t || !t->nodes || zoom >= t->count)
        zoom = PRISM_NO_NODE;
    f->zoom = zoom;
    if (!t || !t->count || !f->width || !f->max_rows)
        return 0;
    if ((f->order_nodes != t->nodes || f->order_count != t->count ||
         f->order_total != t->total_ns) && order_build(f, t) < 0)
        return -1;
    int rc = 0;
    if (zoom != PRISM_NO_NODE) {
        f->base_ns = t->nodes[zoom].total_ns;
        flame_cell c = { zoom, 0, 0, f->width, 0, f->base_ns, FLAME_NONE, FLAME_NONE, 0 };
        rc = push(f, &c);
    } else {
        uint64_t T = 0;
        for (size_t i = f->off[t->count]; i < f->off[t->count + 1]; i++)
            T = sat_add(T, t->nodes[f->kids[i]].total_ns);
        f->base_ns = T;
        rc = lay(f, t, PRISM_NO_NODE, FLAME_NONE, 0, 0, T);
    }
    /* breadth first: rows come out in order, each left to right */
    for (size_t i = 0; rc == 0 && i < f->count; i++) {
        flame_cell c = f->cells[i];
        if (c.row + 1 < f->max_rows)
            rc = lay(f, t, c.node, i, c.row + 1, c.t0, c.t1);
    }
    if (rc < 0) {
        f->count = 0;
        return -1;
    }
    f->rows = f->count ? f->cells[f->count - 1].row + 1 : 0;
    return 0;
}

void flame_free(flame *f)
{
    free(f->cells);
    free(f->kids);
    free(f->off);
    memset(f, 0, sizeof *f);
    f->zoom = PRISM_NO_NODE;
}

size_t flame_find(const flame *f, uint32_t node)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->cells[i].node == node)
            return i;
    return FLAME_NONE;
}

size_t flame_parent(const flame *f, size_t c)
{
    return c < f->count ? f->cells[c].parent : FLAME_NONE;
}

size_t flame_first_child(const flame *f, size_t c)
{
    return c < f->count ? f->cells[c].first_child : FLAME_NONE;
}

size_t flame_widest_child(const flame *f, size_t c)
{
    if (c >= f->count || f->cells[c].first_child == FLAME_NONE)
        return FLAME_NONE;
    size_t best = f->cells[c].first_child;
    for (size_t i = best + 1; i < best + f->cells[c].nchildren && i < f->count; i++)
        if (f->cells[i].w > f->cells[best].w)
            best = i;
    return best;
}

size_t flame_left(const flame *f, size_t c)
{
    if (c >= f->count || c == 0 || f->cells[c - 1].row != f->cells[c].row)
        return FLAME_NONE;
    return c - 1;
}

size_t flame_right(const flame *f, size_t c)
{
    if (c + 1 >= f->count || f->cells[c + 1].row != f->cells[c].row)
        return FLAME_NONE;
    return c + 1;
}

size_t flame_at(const flame *f, int row, int col)
{
    for (size_t i = 0; i < f->count; i++) {
        const flame_cell *c = &f->cells[i];
        if (c->row == row && col >= c->x && col < c->x + c->w)
            return i;
        if (c->row > row)
            break;
    }
    return FLAME_NONE;
}

int flame_search(const flame *f, const prism_tree *t, flame_match_fn match, void *ctx,
                 flame_hits *h)
{
    free(h->cells);
    memset(h, 0, sizeof *h);
    if (!match || !t || !t->count)
        return 0;
    if (f->count) {
        h->cells = malloc(f->count * sizeof *h->cells);
        if (!h->cells)
            return -1;
        for (size_t i = 0; i < f->count; i++)
            if (match(t->nodes[f->cells[i].node].name, ctx))
                h->cells[h->count++] = i;
    }
    /* a node is covered when it or an ancestor matches; children follow
     * parents, so one pass in index order sees the parent first */
    bool *cov = calloc(t->count, sizeof *cov);
    if (!cov) {
        flame_hits_free(h);
        return -1;
    }
    for (size_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        bool up = n->parent < i && cov[n->parent];
        bool m = match(n->name, ctx);
        cov[i] = m || up;
        if (m) {
            h->nodes++;
            if (!up)
                h->matched_ns = sat_add(h->matched_ns, n->total_ns);
        }
    }
    free(cov);
    h->share = t->total_ns ? (double)h->matched_ns / (double)t->total_ns : 0.0;
    return 0;
}

void flame_hits_free(flame_hits *h)
{
    free(h->cells);
    memset(h, 0, sizeof *h);
}

size_t flame_hit_next(const flame_hits *h, size_t c, int dir)
{
    if (!h->count)
        return FLAME_NONE;
    if (dir >= 0) {
        if (c != FLAME_NONE)
            for (size_t i = 0; i < h->count; i++)
                if (h->cells[i] > c)
                    return h->cells[i];
        return h->cells[0];
    }
    if (c != FLAME_NONE)
        for (size_t i = h->count; i-- > 0;)
            if (h->cells[i] < c)
                return h->cells[i];
    return h->cells[h->count - 1];
}

const uint32_t *flame_children(const flame *f, uint32_t node, size_t *n)
{
    *n = 0;
    if (!f->kids || !f->off || (node != PRISM_NO_NODE && node >= f->order_count))
        return NULL;
    size_t slot = node == PRISM_NO_NODE ? f->order_count : node;
    *n = f->off[slot + 1] - f->off[slot];
    return *n ? f->kids + f->off[slot] : NULL;
}

flame_list flame_list_of(const flame *f, const prism_tree *t, uint32_t sel, uint32_t z)
{
    uint32_t n = sel != PRISM_NO_NODE ? sel : z;
    flame_list l = { t, n, NULL, 0, -1 };
    l.kids = flame_children(f, n, &l.n);
    if (!l.n && n != PRISM_NO_NODE && n != z && n < f->order_count) {
        l.owner = t->nodes[n].parent;
        l.kids = flame_children(f, l.owner, &l.n);
        for (size_t i = 0; i < l.n && i < (size_t)1 << 30 && l.mark < 0; i++)
            if (l.kids[i] == n)
                l.mark = (int)i;
    }
    return l;
}

int flame_shared(const flame *f, const prism_tree *t, size_t *out)
{
    if (!f->count)
        return 0;
    memset(out, 0, f->count * sizeof *out);
    const char **names = malloc(f->count * sizeof *names);
    size_t *row = malloc(f->count * sizeof *row);
    if (!names || !row) {
        free(names);
        free(row);
        return -1;
    }
    for (size_t i = 0; i < f->count; i++)
        names[i] = t->nodes[f->cells[i].node].name;
    for (size_t a = 0, b; a < f->count; a = b) {
        for (b = a; b < f->count && f->cells[b].row == f->cells[a].row;)
            b++;
        nf_shared(names + a, b - a, row);
        for (size_t i = a; i < b; i++) {
            uint32_t p = t->nodes[f->cells[i].node].parent;
            size_t up = p != PRISM_NO_NODE ? nf_common(names[i], t->nodes[p].name) : 0;
            out[i] = up > row[i - a] ? up : row[i - a];
        }
    }
    free(names);
    free(row);
    return 0;
}

int flame_side_cols(const flame *f, const prism_tree *t, const size_t *shared)
{
    int need = 0;
    for (size_t i = 0; i < f->count && f->base_ns; i++) {
        const flame_cell *c = &f->cells[i];
        uint64_t span = c->t1 - c->t0;
        if (span < f->base_ns / FLAME_READ_SHARE || !span)
            continue;                   /* the list below names the small */
        int lab = nf_need(t->nodes[c->node].name, shared ? shared[i] : 0);
        lab = (lab < FLAME_READ_COLS ? lab : FLAME_READ_COLS) + 1;
        /* cols * span / base >= lab */
        unsigned __int128 cols = ((unsigned __int128)lab * f->base_ns + span - 1) / span;
        int w = cols > FLAME_SIDE_MAX ? FLAME_SIDE_MAX : (int)cols;
        need = w > need ? w : need;
    }
    return need;
}

/* Bytes of the code point starting at p (1 for stray continuation bytes). */
static size_t cp_len(const unsigned char *p)
{
    size_t len = 1;
    while (p[len] && (p[len] & 0xc0) == 0x80 && (*p & 0xc0) == 0xc0 && len < 4)
        len++;
    return len;
}

int flame_label(char *out, size_t cap, const char *name, int cols, bool utf8)
{
    if (!cap)
        return 0;
    out[0] = '\0';
    if (cols < 2 || !name)
        return 0;
    char safe[ESC_CAP(PRISM_MAX_STRING_BYTES)];
    if (!esc_clean(name))
        name = esc_str(name, safe, sizeof safe);    /* fit what will be shown */
    int width = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p += cp_len(p))
        width++;
    const char *ell = utf8 ? "\u2026" : "~";
    size_t elen = strlen(ell);
    int keep = width <= cols ? width : cols - 1;
    size_t o = 0;
    int used = 0;
    const unsigned char *p = (const unsigned char *)name;
    for (; used < keep && *p; used++) {
        size_t len = cp_len(p);
        if (o + len + (keep < width ? elen : 0) + 1 > cap)
            break;
        memcpy(out + o, p, len);
        o += len;
        p += len;
    }
    if (keep < width && o + elen + 1 <= cap) {
        memcpy(out + o, ell, elen);
        o += elen;
        used++;
    }
    out[o] = '\0';
    return used;
}

int flame_color(const char *name, int n)
{
    if (n <= 0)
        return 0;
    uint32_t h = 2166136261u;
    for (const char *p = name ? name : ""; *p && *p != '.'; p++) {
        h ^= (unsigned char)*p;
        h *= 16777619u;
    }
    return (int)(h % (uint32_t)n);
}

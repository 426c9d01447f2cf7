/*
 * job_wait.c - pass 2 of a rank summary (job_summary.c): each step's time
 * spent waiting for the other ranks, from a second read of the region
 * events.
 *
 * Two kinds of waiting intervals:
 *   - on the training thread, the calls of its deepest waiting paths (the
 *     kept paths classified waiting with no waiting path below them);
 *   - on any other thread, the outermost calls of a collective waited in
 *     there (job_summary.c names them: a collective's name, classified
 *     waiting on that thread): torch.profiler records gloo's all-reduce on
 *     the process group's own thread, while the training thread, blocked
 *     at the end of its backward pass, shows no event of its own.  Such a
 *     collective also overlaps the training thread's work (DDP reduces
 *     early buckets while the backward pass goes on): that overlap counts
 *     as waiting on every rank alike, which underestimates every rank's
 *     work by about the same and leaves the straggler standing out.
 * The intervals are merged (a wait on two threads at once counts once)
 * and clipped to the steps they overlap.  Memory: a stack for the training
 * thread, a depth per other thread, the ids of the few names that matter,
 * and the intervals (at most MAX_INTERVALS; past them, waits are lost,
 * never invented).
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"
#include "job_internal.h"

#define NO_REGION UINT32_MAX
/* Distinct string ids pass 2 binds to kept names; a hostile file that
 * interns one name under more ids than this loses (never invents) wait. */
#define MAX_NAME_IDS 65536u
#define MAX_INTERVALS (1u << 24)
#define MAX_SIDE_THREADS 4096u

typedef struct wframe {
    uint64_t start;
    uint32_t region;            /* the kept path open here, or NO_REGION */
} wframe;

/* Another thread: how deep it is, and the collective open on it. */
typedef struct side {
    uint64_t depth;
    uint64_t open_depth;        /* 0: none open                           */
    uint64_t start;
} side;

typedef struct ival {
    uint64_t a, b;
} ival;

typedef struct pass2 {
    const job_wait_in *in;
    prism_rank_summary *s;
    pb_map name_of_hash;        /* XXH3 of a kept name -> a region with it */
    pb_map name_of_id;          /* string id -> a region with its name      */
    pb_map region_of_path;      /* path hash -> kept region                 */
    pb_map side_hash;           /* XXH3 of a collective's name -> 1         */
    pb_map side_id;             /* string id of one -> 1                    */
    pb_map side_of;             /* stream -> index into sides               */
    side *sides;
    size_t nsides, capsides;
    uint32_t unknown_name;      /* the region named "(unknown)", or none    */
    wframe stack[MAX_STACK];
    uint32_t depth;
    uint64_t lost;              /* frames past the stack: only counted      */
    ival *iv;
    size_t niv, capiv;
    bool nomem;
} pass2;

static void add_interval(pass2 *p, uint64_t a, uint64_t b)
{
    if (b <= a || p->niv >= MAX_INTERVALS)
        return;
    if (p->niv == p->capiv) {
        size_t cap = p->capiv ? 2 * p->capiv : 1024;
        ival *v = realloc(p->iv, cap * sizeof *v);
        if (!v) {
            p->nomem = true;
            return;
        }
        p->iv = v;
        p->capiv = cap;
    }
    p->iv[p->niv++] = (ival){ a, b };
}

/* The string callback: remember only ids whose name a kept path or a
 * collective on another thread uses. */
static void p2_string(void *ctx, uint32_t id, const char *str, size_t len)
{
    pass2 *p = ctx;
    uint64_t r;
    len = strnlen(str, len);            /* the analysis names stop at a NUL */
    uint64_t h = XXH3_64bits(str, len);
    if (p->side_id.count < MAX_NAME_IDS && pb_map_get(&p->side_hash, h, &r) &&
        !pb_map_put(&p->side_id, id, 1))
        p->nomem = true;
    if (p->name_of_id.count >= MAX_NAME_IDS || !pb_map_get(&p->name_of_hash, h, &r))
        return;
    const char *name = p->s->regions[r].name;
    if (strlen(name) == len && !memcmp(name, str, len) && !pb_map_put(&p->name_of_id, id, r))
        p->nomem = true;
}

/* The kept region for a child named like region `named` under `parent`
 * (NO_REGION: at the top level), hashed as the analysis hashes paths. */
static uint32_t p2_child(const pass2 *p, uint32_t parent, uint32_t named)
{
    const prism_rank_region *rg = p->s->regions;
    uint64_t seed = parent == NO_REGION ? 0 : rg[parent].path_hash, r;
    const char *name = rg[named].name;
    uint64_t h = XXH3_64bits_withSeed(name, strlen(name), seed);
    if (!pb_map_get(&p->region_of_path, h, &r) || rg[r].parent_hash != seed ||
        strcmp(rg[r].name, name))
        return NO_REGION;
    return (uint32_t)r;
}

static void p2_push(pass2 *p, uint32_t id, uint64_t ts)
{
    if (p->depth >= MAX_STACK) {
        p->lost++;
        return;
    }
    uint32_t parent = p->depth ? p->stack[p->depth - 1].region : NO_REGION, region = NO_REGION;
    uint64_t named;
    /* A path under one not kept is not kept either (the set is closed
     * under parent).  Name id 0 is what the analysis calls "(unknown)":
     * the frames it invents after damage.  An id whose string never came
     * (the analysis says "(unnamed)") matches nothing here: damage loses
     * wait, it never adds any. */
    bool known = id ? pb_map_get(&p->name_of_id, id, &named)
                    : (named = p->unknown_name) != NO_REGION;
    if ((!p->depth || parent != NO_REGION) && known)
        region = p2_child(p, parent, (uint32_t)named);
    p->stack[p->depth++] = (wframe){ ts, region };
}

/* count: false for frames dropped to match the writer's depth (their end
 * is unknown: nothing is credited, as the analysis credits nothing). */
static void p2_pop(pass2 *p, uint64_t ts, bool count)
{
    if (p->lost) {
        p->lost--;
        return;
    }
    wframe f = p->stack[--p->depth];
    if (count && f.region != NO_REGION && p->in->deepest[f.region])
        add_interval(p, f.start, ts);
}

/* As tree.c: the writer's depth before a chunk is the truth after lost or
 * damaged chunks; frames we hold too many are dropped, missing ones
 * invented (name 0), beyond the stack only counted. */
static void train_regions(pass2 *p, uint32_t depth, const prism_region_event *ev, size_t n)
{
    uint64_t have = p->depth + p->lost;
    if (have > depth) {
        uint64_t drop = have - depth, l = drop < p->lost ? drop : p->lost;
        p->lost -= l;
        for (drop -= l; drop && p->depth; drop--)
            p2_pop(p, ev[0].ts, false);
    } else if (have < depth) {
        uint64_t add = depth - have;
        for (; add && p->depth < MAX_STACK; add--)
            p2_push(p, 0, ev[0].ts);
        p->lost += add;
    }
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER)
            p2_push(p, ev[i].name, ev[i].ts);
        else if (p->depth + p->lost)
            p2_pop(p, ev[i].ts, true);      /* an exit without its enter: ignored */
    }
}

static side *side_for(pass2 *p, uint32_t stream)
{
    uint64_t k;
    if (pb_map_get(&p->side_of, stream, &k))
        return &p->sides[k];
    if (p->nsides >= MAX_SIDE_THREADS)
        return NULL;
    if (p->nsides == p->capsides) {
        size_t cap = p->capsides ? 2 * p->capsides : 16;
        side *v = realloc(p->sides, cap * sizeof *v);
        if (!v) {
            p->nomem = true;
            return NULL;
        }
        p->sides = v;
        p->capsides = cap;
    }
    if (!pb_map_put(&p->side_of, stream, p->nsides)) {
        p->nomem = true;
        return NULL;
    }
    p->sides[p->nsides] = (side){ 0, 0, 0 };
    return &p->sides[p->nsides++];
}

/* Another thread: the outermost calls of a collective, by depth alone (a
 * depth that disagrees with the writer's closes nothing: the call open
 * then is dropped, its end unknown). */
static void side_regions(pass2 *p, uint32_t stream, uint32_t depth,
                         const prism_region_event *ev, size_t n)
{
    side *sd = side_for(p, stream);
    if (!sd)
        return;
    if (sd->depth != depth) {
        if (sd->open_depth > depth || sd->depth < depth)
            sd->open_depth = 0;
        sd->depth = depth;
    }
    uint64_t one;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER) {
            sd->depth++;
            if (!sd->open_depth && pb_map_get(&p->side_id, ev[i].name, &one)) {
                sd->open_depth = sd->depth;
                sd->start = ev[i].ts;
            }
        } else if (sd->depth) {
            if (sd->open_depth == sd->depth) {
                add_interval(p, sd->start, ev[i].ts);
                sd->open_depth = 0;
            }
            sd->depth--;
        }
    }
}

static void p2_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    pass2 *p = ctx;
    if (!n)
        return;
    if (stream == p->in->stream)
        train_regions(p, depth, ev, n);
    else if (p->side_hash.count)
        side_regions(p, stream, depth, ev, n);
}

static int by_a(const void *x, const void *y)
{
    const ival *u = x, *v = y;
    return u->a < v->a ? -1 : u->a > v->a;
}

/* Merge the intervals and add each one's overlap with every step it
 * meets (steps by start, `index` = position in s->steps). */
static void credit(pass2 *p)
{
    const prism_step *sp = p->in->spans;
    size_t ns = p->s->nsteps, m = 0;
    pb_qsort(p->iv, p->niv, sizeof *p->iv, by_a);
    for (size_t i = 0; i < p->niv; i++) {
        if (m && p->iv[i].a <= p->iv[m - 1].b) {
            if (p->iv[i].b > p->iv[m - 1].b)
                p->iv[m - 1].b = p->iv[i].b;
        } else {
            p->iv[m++] = p->iv[i];
        }
    }
    size_t k = 0;                       /* first step that may still overlap */
    for (size_t i = 0; i < m; i++) {
        uint64_t a = p->iv[i].a, b = p->iv[i].b;
        while (k < ns && sp[k].end <= a)
            k++;
        for (size_t j = k; j < ns && sp[j].start < b; j++) {
            uint64_t lo = a > sp[j].start ? a : sp[j].start, hi = b < sp[j].end ? b : sp[j].end;
            if (hi > lo) {
                prism_rank_step *st = &p->s->steps[sp[j].index];
                st->wait_ns = an_sat_add(st->wait_ns, hi - lo);
            }
        }
    }
}

static prism_status read_error(prism_reader *r, prism_status st, char *msg, size_t msglen,
                               uint64_t *offset)
{
    const char *m = prism_strerror(st);
    if (r)
        prism_reader_error(r, &m, offset);
    return job_fail(st, m, msg, msglen);
}

static prism_status read_waits(const char *path, pass2 *p, char *msg, size_t msglen,
                               uint64_t *offset)
{
    prism_rank_summary *s = p->s;
    p->unknown_name = NO_REGION;
    for (size_t i = 0; i < s->nregions; i++) {
        const char *name = s->regions[i].name;
        if (!pb_map_put(&p->name_of_hash, XXH3_64bits(name, strlen(name)), i) ||
            !pb_map_put(&p->region_of_path, s->regions[i].path_hash, i))
            return job_fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
        if (!strcmp(name, "(unknown)"))
            p->unknown_name = (uint32_t)i;
    }
    for (size_t i = 0; i < p->in->nside; i++)
        if (!pb_map_put(&p->side_hash, p->in->side_names[i], 1))
            return job_fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    prism_reader_callbacks cb = { .string = p2_string, .regions = p2_regions };
    prism_reader *r = NULL;
    prism_status st = prism_read_file(path, &cb, p, &r);
    if (st != PRISM_OK)
        st = read_error(r, st, msg, msglen, offset);
    else if (p->nomem)
        st = job_fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    prism_reader_free(r);
    if (st == PRISM_OK)
        credit(p);
    /* overlapping steps (damage) can get more than their length */
    for (size_t i = 0; i < s->nsteps; i++)
        if (s->steps[i].wait_ns > s->steps[i].step_ns)
            s->steps[i].wait_ns = s->steps[i].step_ns;
    return st;
}

prism_status an_job_wait_read(const char *path, const job_wait_in *in, prism_rank_summary *s,
                           char *msg, size_t msglen, uint64_t *offset)
{
    pass2 *p = calloc(1, sizeof *p);
    if (!p)
        return job_fail(PRISM_E_NOMEM, "out of memory", msg, msglen);
    p->in = in;
    p->s = s;
    prism_status st = read_waits(path, p, msg, msglen, offset);
    pb_map_free(&p->name_of_hash);
    pb_map_free(&p->name_of_id);
    pb_map_free(&p->region_of_path);
    pb_map_free(&p->side_hash);
    pb_map_free(&p->side_id);
    pb_map_free(&p->side_of);
    free(p->sides);
    free(p->iv);
    free(p);
    return st;
}

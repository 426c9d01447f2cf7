/*
 * job_parse.c - the rank summary reader (docs/SUMMARY.md): yajl's event
 * parser, behind the scanner of job_io.c, fills a prism_rank_summary as the
 * bytes come (job_io.h: sum_parser_*).  It trusts nothing: nesting, counts
 * and size are capped, each value must have the type its key wants, each
 * error carries its byte offset; steps must ascend and a region's parent
 * come before it (else it becomes a root), so the merge always gets a
 * consistent forest.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "errinfo.h"
#include "job_io.h"

/* ---- what each key wants ---- */

enum { R_TOP = 1, R_GPU, R_STEPS, R_STEP, R_REGIONS, R_REGION, R_SKIP };

enum {
    T_VERSION, T_U64, T_U32, T_I64, T_BOOL, T_STR, T_STR_SKIP, T_HEX, T_WAIT,
    T_GPU, T_STEPS, T_REGIONS
};
static const char *const type_words[] = {
    [T_VERSION] = "an integer", [T_U64] = "an integer", [T_U32] = "an integer",
    [T_I64] = "an integer", [T_BOOL] = "true or false", [T_STR] = "a string",
    [T_STR_SKIP] = "a string", [T_HEX] = "a string of 16 hex digits",
    [T_WAIT] = "a wait kind string", [T_GPU] = "an object", [T_STEPS] = "an array",
    [T_REGIONS] = "an array",
};

/* Keys that must be there: of the summary, of a region. */
enum { REQ_VERSION = 1, REQ_STEPS = 2, REQ_REGIONS = 4, REQ_NAME = 1, REQ_HASH = 2 };

typedef struct key_desc {
    const char *name;
    uint8_t len, type, req;
    size_t off;                 /* into the summary (top, gpu) or the region */
} key_desc;

#define SUMF(k, t, f, req) { k, sizeof k - 1, t, req, offsetof(prism_rank_summary, f) }
#define REGF(k, t, f, req) { k, sizeof k - 1, t, req, offsetof(prism_rank_region, f) }

static const key_desc top_keys[] = {
    { "prism_summary", 13, T_VERSION, REQ_VERSION, 0 },
    { "producer", 8, T_STR_SKIP, 0, 0 },
    SUMF("source", T_STR, source, 0), SUMF("rank", T_I64, rank, 0),
    SUMF("host", T_STR, host, 0), SUMF("pid", T_U64, pid, 0),
    SUMF("start_unix_ns", T_U64, start_unix_ns, 0), SUMF("thread", T_STR, thread, 0),
    SUMF("events", T_U64, events, 0), SUMF("dropped", T_U64, dropped, 0),
    SUMF("span_ns", T_U64, span_ns, 0), SUMF("complete", T_BOOL, complete, 0),
    SUMF("steps_total", T_U64, steps_total, 0),
    { "gpu", 3, T_GPU, 0, 0 }, { "steps", 5, T_STEPS, REQ_STEPS, 0 },
    { "regions", 7, T_REGIONS, REQ_REGIONS, 0 }, { NULL, 0, 0, 0, 0 },
};
static const key_desc gpu_keys[] = {
    SUMF("kernel_ns", T_U64, gpu_kernel_ns, 0),
    SUMF("nccl_kernel_ns", T_U64, nccl_kernel_ns, 0),
    SUMF("busy_ns", T_U64, gpu_busy_ns, 0), SUMF("span_ns", T_U64, gpu_span_ns, 0),
    { NULL, 0, 0, 0, 0 },
};
static const key_desc region_keys[] = {
    REGF("name", T_STR, name, REQ_NAME), REGF("path_hash", T_HEX, path_hash, REQ_HASH),
    REGF("parent_hash", T_HEX, parent_hash, 0), REGF("depth", T_U32, depth, 0),
    REGF("calls", T_U64, calls, 0), REGF("total_ns", T_U64, total_ns, 0),
    REGF("self_ns", T_U64, self_ns, 0), REGF("in_step_ns", T_U64, in_step_ns, 0),
    REGF("cpu_known_ns", T_U64, cpu_known_ns, 0), REGF("oncpu_ns", T_U64, oncpu_ns, 0),
    REGF("offcpu_ns", T_U64, offcpu_ns, 0), REGF("gpu_wait_ns", T_U64, gpu_wait_ns, 0),
    REGF("wait", T_WAIT, wait, 0), { NULL, 0, 0, 0, 0 },
};

/* ---- the state ---- */

struct sum_parser {
    yajl_handle y;
    prism_rank_summary *s;
    sum_limits lim;
    uint64_t base;              /* offset of the piece yajl is parsing       */
    uint64_t total;             /* bytes fed                                 */
    unsigned depth;             /* containers open                           */
    uint8_t role[SUM_MAX_DEPTH + 1];
    const key_desc *key;        /* the value's key; NULL: unknown, skipped   */
    unsigned have, rhave;       /* REQ_* of the summary, of the region       */
    uint64_t step[3];
    unsigned nstep;
    prism_rank_region cur;      /* the region being read                     */
    size_t cap_steps, cap_regions;
    uint32_t *tab;              /* path_hash -> region index + 1             */
    size_t tab_mask;
    sum_scan scan;
    bool failed;
    pb_error err;               /* the first error, once failed */
};
typedef sum_parser sread;

bool an_sum_parser_fail(sread *r, prism_status st, uint64_t off, const char *fmt, ...)
{
    if (r->failed)
        return false;
    va_list ap;
    va_start(ap, fmt);
    pb_error_vset(&r->err, st, off, fmt, ap);
    va_end(ap);
    r->failed = true;
    return false;
}

#define fail an_sum_parser_fail

/* The offset of the last byte of the token yajl has just read (none of
 * this piece used: it ended with the piece before). */
static uint64_t tok_end(const sread *r)
{
    size_t used = yajl_get_bytes_consumed(r->y);
    return used ? r->base + used - 1 : r->base ? r->base - 1 : 0;
}

#define BAD(r, ...) fail((r), PRISM_E_NOT_PRISM, tok_end(r), "not a PRISM summary: " __VA_ARGS__)

/* Where a key's value is stored. */
static char *field(sread *r, const key_desc *k)
{
    return (r->role[r->depth] == R_REGION ? (char *)&r->cur : (char *)r->s) + k->off;
}

static bool type_error(sread *r, const key_desc *k)
{
    if (r->role[r->depth] == R_REGION)
        return BAD(r, "expected %s for \"%s\" in \"regions\"[%zu]", type_words[k->type],
                   k->name, r->s->nregions);
    return BAD(r, "expected %s for \"%s\"", type_words[k->type], k->name);
}

static const key_desc *find_key(const key_desc *t, const unsigned char *s, size_t len)
{
    for (; t->name; t++)
        if (t->len == len && !memcmp(t->name, s, len))
            return t;
    return NULL;
}

/* ---- values ---- */

static bool store_number(sread *r, const key_desc *k, const char *s, size_t len)
{
    uint64_t v;
    bool neg;
    uint64_t max = k->type == T_U32 ? UINT32_MAX : k->type == T_I64 ? INT64_MAX : UINT64_MAX;
    if (k->type != T_VERSION && k->type != T_U64 && k->type != T_U32 && k->type != T_I64)
        return type_error(r, k);
    if (!an_sum_uint(s, len, k->type == T_I64, max, &v, &neg))
        return BAD(r, "\"%s\" must be an integer in %s (not %.*s)", k->name,
                   k->type == T_I64 ? "-1..2^63-1" : k->type == T_U32 ? "0..2^32-1"
                                                                       : "0..2^64-1",
                   (int)(len < 32 ? len : 32), s);
    if (k->type == T_VERSION && v == 0)
        return BAD(r, "\"prism_summary\" must be a version from 1");
    if (k->type == T_VERSION && v > PRISM_SUMMARY_VERSION)
        return fail(r, PRISM_E_VERSION, tok_end(r), "a PRISM summary of version %" PRIu64
                    ", written by a newer prism-top: this one reads version %d", v,
                    PRISM_SUMMARY_VERSION);
    char *p = field(r, k);
    uint32_t u32 = (uint32_t)v;
    int64_t i64 = neg ? -(int64_t)v : (int64_t)v;
    if (k->type == T_VERSION)
        r->have |= REQ_VERSION;
    else if (k->type == T_U32)
        memcpy(p, &u32, sizeof u32);
    else if (k->type == T_I64)
        memcpy(p, &i64, sizeof i64);
    else
        memcpy(p, &v, sizeof v);
    return true;
}

static bool store_string(sread *r, const key_desc *k, const unsigned char *s, size_t len)
{
    char *p = field(r, k);
    switch (k->type) {
    case T_STR: case T_STR_SKIP:
        if (!an_sum_text_ok(s, len))
            return BAD(r, "\"%s\" holds U+0000 or a lone surrogate", k->name);
        if (k->type == T_STR_SKIP)
            return true;
        char *copy = malloc(len + 1), *old;
        if (!copy)
            return fail(r, PRISM_E_NOMEM, tok_end(r), "out of memory");
        memcpy(copy, s, len);
        copy[len] = '\0';
        memcpy(&old, p, sizeof old);
        free(old);
        memcpy(p, &copy, sizeof copy);
        return true;
    case T_HEX: {
        uint64_t h;
        if (!an_sum_hex64(s, len, &h))
            return type_error(r, k);
        memcpy(p, &h, sizeof h);
        return true;
    }
    case T_WAIT:
        for (uint32_t w = PRISM_WAIT_NO; w <= PRISM_WAIT_NAME; w++) {
            const char *name = prism_wait_kind_name((prism_wait_kind)w);
            if (strlen(name) == len && !memcmp(name, s, len)) {
                memcpy(p, &w, sizeof w);
                return true;
            }
        }
        return BAD(r, "\"wait\" must be \"work\", \"off_cpu\", \"gpu_collective\" or \"name\"");
    default:
        return type_error(r, k);
    }
}

/* ---- steps and regions ---- */

static bool grow(void *pp, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 64;
    void *p = realloc(*(void **)pp, c * size);
    if (!p)
        return false;
    *(void **)pp = p;
    *cap = c;
    return true;
}

static bool end_step(sread *r)
{
    prism_rank_summary *s = r->s;
    if (r->nstep != 3)
        return BAD(r, "a step must be [index, step_ns, wait_ns] (\"steps\"[%zu])", s->nsteps);
    prism_rank_step st = { r->step[0], r->step[1], r->step[2] };
    if (!st.step_ns || st.wait_ns > st.step_ns)
        return BAD(r, "\"steps\"[%zu] needs 0 < step_ns and wait_ns <= step_ns", s->nsteps);
    if (s->nsteps && st.index <= s->steps[s->nsteps - 1].index)
        return BAD(r, "\"steps\"[%zu]: indices must ascend", s->nsteps);
    if (!grow(&s->steps, &r->cap_steps, s->nsteps, sizeof *s->steps))
        return fail(r, PRISM_E_NOMEM, tok_end(r), "out of memory");
    s->steps[s->nsteps++] = st;
    return true;
}

/* The slot of hash h in the table: its entry, or the empty one ending the
 * probe. */
static uint32_t *slot(sread *r, uint64_t h)
{
    size_t i = (size_t)(h * 0x9e3779b97f4a7c15ull >> 32) & r->tab_mask;
    while (r->tab[i] && r->s->regions[r->tab[i] - 1].path_hash != h)
        i = (i + 1) & r->tab_mask;
    return &r->tab[i];
}

static bool start_region(sread *r)
{
    if (r->s->nregions >= r->lim.regions)
        return fail(r, PRISM_E_LIMIT, tok_end(r), "a PRISM summary with more than %zu regions",
                    r->lim.regions);
    if (!r->tab) {
        size_t n = 16;
        while (n < 2 * r->lim.regions)
            n *= 2;
        r->tab = calloc(n, sizeof *r->tab);
        if (!r->tab)
            return fail(r, PRISM_E_NOMEM, tok_end(r), "out of memory");
        r->tab_mask = n - 1;
    }
    memset(&r->cur, 0, sizeof r->cur);
    r->rhave = 0;
    return true;
}

/* A region ends: required keys, a unique hash, its parent earlier in the
 * list or none (an unknown parent makes it a root); depth follows. */
static bool end_region(sread *r)
{
    prism_rank_summary *s = r->s;
    prism_rank_region *c = &r->cur;
    if (!(r->rhave & REQ_NAME) || !(r->rhave & REQ_HASH))
        return BAD(r, "\"regions\"[%zu] has no \"%s\"", s->nregions,
                   r->rhave & REQ_NAME ? "path_hash" : "name");
    if (!c->path_hash)
        return BAD(r, "\"regions\"[%zu]: path_hash 0 is reserved", s->nregions);
    if (*slot(r, c->path_hash))
        return BAD(r, "\"regions\"[%zu]: path_hash %016" PRIx64 " again", s->nregions,
                   c->path_hash);
    uint32_t parent = c->parent_hash ? *slot(r, c->parent_hash) : 0;
    if (!parent)
        c->parent_hash = 0;
    c->depth = parent ? s->regions[parent - 1].depth + 1 : 0;
    if (!grow(&s->regions, &r->cap_regions, s->nregions, sizeof *s->regions))
        return fail(r, PRISM_E_NOMEM, tok_end(r), "out of memory");
    s->regions[s->nregions++] = *c;
    c->name = NULL;
    *slot(r, c->path_hash) = (uint32_t)s->nregions;
    return true;
}

static void clear_regions(sread *r)
{
    for (size_t i = 0; i < r->s->nregions; i++)
        free(r->s->regions[i].name);
    r->s->nregions = 0;
    if (r->tab)
        memset(r->tab, 0, (r->tab_mask + 1) * sizeof *r->tab);
}

/* ---- yajl callbacks ---- */

static int push(sread *r, int role)
{
    if (r->depth >= SUM_MAX_DEPTH)
        return fail(r, PRISM_E_LIMIT, tok_end(r), "JSON nested deeper than %u levels",
                    SUM_MAX_DEPTH);
    r->role[++r->depth] = (uint8_t)role;
    r->key = NULL;
    return 1;
}

/* A scalar where the format has no place for one: the words for it. */
static int misplaced(sread *r)
{
    switch (r->role[r->depth]) {
    case 0: return BAD(r, "expected a JSON object");
    case R_STEPS: case R_STEP:
        return BAD(r, "expected [index, step_ns, wait_ns] in \"steps\"");
    default: return BAD(r, "expected an object in \"regions\"");
    }
}

static bool keyed(int role)
{
    return role == R_TOP || role == R_GPU || role == R_REGION;
}

/* Inside the value of a key this reader does not know, or that value. */
static bool skipped(const sread *r)
{
    int role = r->role[r->depth];
    return role == R_SKIP || (keyed(role) && !r->key);
}

static int cb_start_map(void *ctx)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (r->depth == 0)
        return push(r, R_TOP);
    if (skipped(r))
        return push(r, R_SKIP);
    if (role == R_REGIONS)
        return start_region(r) && push(r, R_REGION);
    if (!keyed(role))
        return misplaced(r);
    if (r->key->type != T_GPU)
        return type_error(r, r->key);
    prism_rank_summary *s = r->s;
    s->gpu_kernel_ns = s->nccl_kernel_ns = s->gpu_busy_ns = s->gpu_span_ns = 0;
    return push(r, R_GPU);
}

static int cb_start_array(void *ctx)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (r->depth == 0)
        return misplaced(r);
    if (skipped(r))
        return push(r, R_SKIP);
    if (role == R_STEPS) {
        if (r->s->nsteps >= r->lim.steps)
            return fail(r, PRISM_E_LIMIT, tok_end(r), "a PRISM summary with more than %zu steps",
                        r->lim.steps);
        r->nstep = 0;
        return push(r, R_STEP);
    }
    if (!keyed(role))
        return misplaced(r);
    const key_desc *k = r->key;
    if (k->type == T_STEPS) {
        r->s->nsteps = 0;               /* a key given twice: the last counts */
        r->have |= REQ_STEPS;
        return push(r, R_STEPS);
    }
    if (k->type != T_REGIONS)
        return type_error(r, k);
    clear_regions(r);
    r->have |= REQ_REGIONS;
    return push(r, R_REGIONS);
}

static int cb_end(void *ctx)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (role == R_STEP && !end_step(r))
        return 0;
    if (role == R_REGION && !end_region(r))
        return 0;
    if (role == R_TOP) {
        static const char *const need[] = { "\"prism_summary\" key", "\"steps\" array",
                                            "\"regions\" array" };
        for (unsigned i = 0; i < 3; i++)
            if (!(r->have & (1u << i)))
                return BAD(r, "no %s", need[i]);
    }
    r->depth--;
    r->key = NULL;
    return 1;
}

static int cb_key(void *ctx, const unsigned char *s, size_t len)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    const key_desc *t = role == R_TOP ? top_keys : role == R_GPU ? gpu_keys
                      : role == R_REGION ? region_keys : NULL;
    r->key = t ? find_key(t, s, len) : NULL;
    if (r->key && role == R_REGION)
        r->rhave |= r->key->req;
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (skipped(r))
        return 1;
    if (keyed(role))
        return store_number(r, r->key, s, len);
    if (role != R_STEP)
        return misplaced(r);
    if (r->nstep == 3)
        return BAD(r, "a step must be [index, step_ns, wait_ns] (\"steps\"[%zu])", r->s->nsteps);
    bool neg;
    if (!an_sum_uint(s, len, false, UINT64_MAX, &r->step[r->nstep], &neg))
        return BAD(r, "\"steps\" must hold integers in 0..2^64-1 (not %.*s)",
                   (int)(len < 32 ? len : 32), s);
    r->nstep++;
    return 1;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (skipped(r))
        return 1;
    return keyed(role) ? store_string(r, r->key, s, len) : misplaced(r);
}

static int cb_bool(void *ctx, int b)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (skipped(r))
        return 1;
    if (!keyed(role))
        return misplaced(r);
    if (r->key->type != T_BOOL)
        return type_error(r, r->key);
    bool v = b != 0;
    memcpy(field(r, r->key), &v, sizeof v);
    return 1;
}

static int cb_null(void *ctx)
{
    sread *r = ctx;
    int role = r->role[r->depth];
    if (skipped(r))
        return 1;
    return keyed(role) ? type_error(r, r->key) : misplaced(r);
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* ---- feeding ---- */

static bool parse(sread *r, const uint8_t *p, size_t n)
{
    if (!n)
        return true;
    if (yajl_parse(r->y, p, n) == yajl_status_ok)
        return true;
    if (r->failed)
        return false;
    unsigned char *e = yajl_get_error(r->y, 0, p, n);
    char what[120];
    snprintf(what, sizeof what, "%s", e ? (const char *)e : "syntax error");
    if (e)
        yajl_free_error(r->y, e);
    what[strcspn(what, "\n")] = '\0';
    return fail(r, PRISM_E_NOT_PRISM, tok_end(r), "not a PRISM summary: not valid JSON (%s)",
                what);
}

/* p[0..n), the next bytes: scanned for a string or a token past its
 * limit, which stops the feed before yajl buffers it. */
bool an_sum_parser_feed(sread *r, const uint8_t *p, size_t n)
{
    if (r->failed)
        return false;
    bool big = n > r->lim.file - r->total;
    if (big)
        n = (size_t)(r->lim.file - r->total);
    const char *over = NULL;
    size_t upto = an_sum_scan_run(&r->scan, p, n, &over);
    r->base = r->total;
    if (!parse(r, p, upto))
        return false;
    r->total += upto;
    if (over)
        return fail(r, PRISM_E_LIMIT, r->total, "%s", over);
    if (big)
        return fail(r, PRISM_E_LIMIT, r->total, "a PRISM summary larger than %" PRIu64
                    " bytes", r->lim.file);
    return true;
}

sum_parser *an_sum_parser_new(prism_rank_summary *out, const sum_limits *lim)
{
    sread *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    memset(out, 0, sizeof *out);
    out->rank = -1;
    r->s = out;
    r->lim = lim ? *lim : (sum_limits){ SUM_MAX_FILE, SUM_MAX_STEPS, SUM_MAX_REGIONS };
    r->y = yajl_alloc(&callbacks, NULL, r);
    if (!r->y)
        fail(r, PRISM_E_NOMEM, 0, "out of memory");
    return r;
}

static bool fill(char **p, const char *v)
{
    if (!*p)
        *p = strdup(v ? v : "");
    return *p != NULL;
}

/* The end: the document complete, defaults filled; the status, the error
 * in msg and *offset (out zeroed) when it failed. */
prism_status an_sum_parser_end(sread *r, const char *source, char *msg, size_t msglen,
                            uint64_t *offset)
{
    prism_rank_summary *s = r->s;
    if (!r->failed && !r->total)
        fail(r, PRISM_E_EMPTY, 0, "empty file");
    r->base = r->total;
    if (!r->failed && yajl_complete_parse(r->y) != yajl_status_ok)
        fail(r, PRISM_E_NOT_PRISM, r->total, r->depth
             ? "not a PRISM summary: cut off (the JSON ends inside an object)"
             : "not a PRISM summary: no JSON value");
    if (!r->failed && !(fill(&s->source, source) && fill(&s->host, "") && fill(&s->thread, "")))
        fail(r, PRISM_E_NOMEM, r->total, "out of memory");
    free(r->cur.name);
    free(r->tab);
    if (r->y)
        yajl_free(r->y);
    if (offset)
        *offset = r->failed ? r->err.offset : 0;
    if (msg && msglen)
        snprintf(msg, msglen, "%s", r->failed ? r->err.msg : "");
    prism_status st = r->failed ? (prism_status)r->err.code : PRISM_OK;
    free(r);
    if (st != PRISM_OK) {
        prism_rank_summary_free(s);
        memset(s, 0, sizeof *s);
    }
    return st;
}

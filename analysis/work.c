/*
 * work.c - work counters: counters named flops / bytes (see
 * prism_work_stats in prism/analysis.h) summed over the run and credited to
 * the region open on their thread at their timestamp, so the memory_bound
 * rule can judge each region's compute intensity (FLOP per byte).
 *
 * Counters of a flush are written after its regions (FORMAT.md, "Writing"),
 * so when they are read the regions around them are already known: the
 * thread's ring of region transitions says which one was open.  The ring is
 * started when a work counter's *name* arrives (names are written before
 * their first use), so the first flush's samples find their region too.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

enum { WORK_FLOPS = 1, WORK_BYTES = 2, WORK_NONE = 3 };

#define RIDGE_DEFAULT 10.0

/* "flops", "matmul.flops", "hbm_bytes", "GPU/Bytes": the last component. */
static int work_kind(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && !strchr("._/:", s[i - 1]))
        i--;
    size_t n = len - i;
    if (n == 5 && !strncasecmp(s + i, "flops", 5))
        return WORK_FLOPS;
    if (n == 5 && !strncasecmp(s + i, "bytes", 5))
        return WORK_BYTES;
    return WORK_NONE;
}

/* Only the work counters' names are kept: a map entry for every name of a
 * many-names profile (tens of bytes each) would be spent on "neither". */
void an_work_string(prism_analysis *a, uint32_t id, const char *s, size_t len)
{
    int kind = s ? work_kind(s, len) : WORK_NONE;
    uint64_t old;
    if (kind == WORK_NONE) {            /* an id named again: no longer work */
        if (pb_map_get(&a->work_of, id, &old))
            pb_map_put(&a->work_of, id, WORK_NONE);
        return;
    }
    if (!pb_map_put(&a->work_of, id, (uint64_t)kind))
        return;
    if (!a->rings)
        an_gpu_want_rings(a);              /* samples will need their region */
}

static int kind_of(prism_analysis *a, uint32_t id)
{
    uint64_t v;
    if (pb_map_get(&a->work_of, id, &v))
        return (int)v;
    size_t len = 0;                     /* neither, or a name the callback did not see */
    const char *s = a->reader ? prism_reader_string(a->reader, id, &len) : NULL;
    if (!s)
        return WORK_NONE;
    int kind = work_kind(s, len);
    if (kind != WORK_NONE)
        an_work_string(a, id, s, len);
    return kind;
}

void an_work_counters(prism_analysis *a, uint32_t stream, const prism_counter *c, size_t n)
{
    athread *t = NULL;
    for (size_t i = 0; i < n; i++) {
        int kind = kind_of(a, c[i].name);
        if (kind == WORK_NONE)
            continue;
        double v = c[i].is_float ? c[i].v.f : (double)c[i].v.i;
        if (!(v > 0) || !isfinite(v))
            continue;                   /* an amount of work is positive */
        if (!t && !(t = an_tree_thread(a, stream)))
            return;
        a->work.present = true;
        uint32_t node = an_tree_node_at_sample(t, c[i].ts);
        tnode_ext *x = node != PRISM_NO_NODE && node < t->n ? an_ext_get(t, &t->nodes[node])
                                                            : NULL;
        if (kind == WORK_FLOPS) {
            a->work.flops += v;
            if (x)
                x->flops += v;
            else
                a->work.unattributed_flops += v;
        } else {
            a->work.bytes += v;
            if (x)
                x->bytes += v;
            else
                a->work.unattributed_bytes += v;
        }
    }
}

void an_work_refresh(prism_analysis *a)
{
    double r = a->opts.ridge_flop_per_byte;
    a->work.ridge = r > 0 && isfinite(r) ? r : RIDGE_DEFAULT;
    a->work.intensity = a->work.bytes > 0 ? a->work.flops / a->work.bytes : 0;
}

const prism_work_stats *prism_analysis_work(const prism_analysis *a) { return &a->work; }

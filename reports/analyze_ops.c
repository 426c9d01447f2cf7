/*
 * analyze_ops.c - the operator window in `prism-top analyze`: the steps in
 * which every PyTorch operator was recorded as a region (PRISM_STEP_OPS,
 * python/prism/_torch_ops.py), their heaviest operators, the FLOPs the
 * operators counted (work counter "flops") per step and per region, the
 * achieved FLOP/s and, where the program ran on a known GPU, the MFU.
 *
 * Every figure is per window step: an operator's node holds the window's
 * steps only.  The achieved FLOP/s divide the FLOPs of a step by the
 * median timed step (the window's own steps, slowed by the recording, are
 * not timed), and a region's by its mean time a step.  The MFU is against
 * the dense peak (never a sparsity figure) of the device for the dtype
 * that holds most of the FLOPs: from PRISM_PEAK_TFLOPS when the program
 * gave one, else from the table below, and the report says which.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "report.h"
#include "units.h"

#define OPW_ROWS 8
#define OPW_DTYPES 8

typedef struct opw_row {
    uint32_t node;              /* a region's node (all threads), or an op's */
    const char *name;
    double flops, ns;           /* a window step's */
    double share;               /* operators: of all operators' time */
} opw_row;

typedef struct opwin {
    uint64_t steps;             /* in the window */
    uint64_t first, last;       /* their indexes */
    size_t ops;                 /* distinct operator regions */
    double op_ns;               /* all operators' time a step */
    double flops;               /* a step's */
    double step_ns;             /* the median timed step */
    char dtype[16];             /* the dtype holding most FLOPs, "" unknown */
    const char *device;
    double peak;                /* TFLOP/s; 0 unknown */
    char peak_from[160];
    opw_row op[OPW_ROWS], reg[OPW_ROWS];
    size_t nop, nreg;
} opwin;

/* Dense peaks in TFLOP/s from the vendors' data sheets (no sparsity),
 * matched by a substring of torch's device name, first match wins. */
static const struct peak {
    const char *name;
    double bf16, f16, f32;      /* f32: the CUDA cores' (TF32 is not assumed) */
} peaks[] = {
    { "H200", 989.4, 989.4, 66.9 },
    { "H100 PCIe", 756.0, 756.0, 51.2 },
    { "H100", 989.4, 989.4, 66.9 },
    { "B200", 2250.0, 2250.0, 80.0 },
    { "A100", 312.0, 312.0, 19.5 },
    { "L40S", 362.1, 362.1, 91.6 },
    { "L4", 121.0, 121.0, 30.3 },
    { "A10", 125.0, 125.0, 31.2 },
    { "V100", 0, 125.0, 15.7 },
    { "T4", 0, 65.0, 8.1 },
};

/* "aten::mm [2x3, 3x4] f32" -> "f32"; NULL when the name has no dtype. */
static const char *dtype_of(const char *name, size_t *len)
{
    const char *sp = strrchr(name, ' ');
    if (!sp || sp == name || sp[-1] != ']' || !sp[1])
        return NULL;
    *len = strlen(sp + 1);
    return *len < 16 ? sp + 1 : NULL;
}

static void add_row(opw_row *rows, size_t *n, opw_row r, bool by_flops)
{
    double key = by_flops ? r.flops : r.ns;
    size_t i = *n < OPW_ROWS ? (*n)++ : OPW_ROWS;
    if (i == OPW_ROWS) {
        if (key <= (by_flops ? rows[OPW_ROWS - 1].flops : rows[OPW_ROWS - 1].ns))
            return;
        i = OPW_ROWS - 1;
    }
    while (i > 0 && key > (by_flops ? rows[i - 1].flops : rows[i - 1].ns)) {
        rows[i] = rows[i - 1];
        i--;
    }
    rows[i] = r;
}

static void peak_of(const prism_analysis *a, opwin *w)
{
    double given = 0;
    w->device = prism_analysis_torch_device(a, &given);
    if (given > 0) {
        w->peak = given;
        snprintf(w->peak_from, sizeof w->peak_from, "PRISM_PEAK_TFLOPS");
        return;
    }
    if (!w->device || !w->dtype[0])
        return;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
        if (!strstr(w->device, peaks[i].name))
            continue;
        const struct peak *p = &peaks[i];
        w->peak = !strcmp(w->dtype, "bf16") ? p->bf16 : !strcmp(w->dtype, "f16") ? p->f16
                : !strcmp(w->dtype, "f32") ? p->f32 : 0;
        if (w->peak > 0)
            snprintf(w->peak_from, sizeof w->peak_from, "PRISM's table: %s, %s, dense",
                     p->name, w->dtype);
        return;
    }
}

/* The window's figures; false when the file has none. */
static bool opwin_of(const prism_analysis *a, opwin *w)
{
    memset(w, 0, sizeof *w);
    const prism_step_stats *st = prism_analysis_steps(a);
    if (!st->op_steps)
        return false;
    w->steps = st->op_steps;
    w->first = UINT64_MAX;
    for (size_t i = 0; st->series && i < st->nseries; i++)
        if (st->series[i].flags & PRISM_STEP_OPS) {
            if (st->series[i].index < w->first)
                w->first = st->series[i].index;
            if (st->series[i].index > w->last)
                w->last = st->series[i].index;
        }
    w->step_ns = st->p50_ns;
    double ws = (double)w->steps;
    const prism_tree *t = prism_analysis_tree(a);
    struct { char name[16]; double flops; } dt[OPW_DTYPES];
    size_t ndt = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (!prism_analysis_is_op(a, n->name)) {
            if (n->flops > 0)
                add_row(w->reg, &w->nreg, (opw_row){ i, n->name, n->flops / ws,
                        n->steps_seen ? n->step_mean_ns : (double)n->total_ns / ws, 0 }, true);
            continue;
        }
        size_t len;
        const char *d = dtype_of(n->name, &len);
        if (!d || !(n->flops > 0))
            continue;
        size_t k = 0;
        while (k < ndt && (strlen(dt[k].name) != len || memcmp(dt[k].name, d, len)))
            k++;
        if (k == ndt && ndt < OPW_DTYPES) {
            memcpy(dt[k].name, d, len);
            dt[k].name[len] = 0;
            dt[k].flops = 0;
            ndt++;
        }
        if (k < ndt)
            dt[k].flops += n->flops;
    }
    /* FLOPs of the operators whose parent is no operator (an operator's
     * FLOPs are in its own node and its ancestors: count each once) */
    w->flops = 0;
    for (uint32_t i = 0; i < t->count; i++) {
        const prism_node *n = &t->nodes[i];
        if (prism_analysis_is_op(a, n->name) &&
            !(n->parent < t->count && prism_analysis_is_op(a, t->nodes[n->parent].name)))
            w->flops += n->flops;
    }
    size_t best = 0;
    for (size_t k = 1; k < ndt; k++)
        if (dt[k].flops > dt[best].flops)
            best = k;
    if (ndt)
        snprintf(w->dtype, sizeof w->dtype, "%s", dt[best].name);
    if (!(w->flops > 0)) {      /* flop_steps: counted into the regions, no operators */
        w->flops = prism_analysis_work(a)->flops;
        const char *d = prism_analysis_torch_dtype(a);
        if (d && !w->dtype[0])
            snprintf(w->dtype, sizeof w->dtype, "%s", d);
    }
    w->flops /= ws;
    size_t n;
    const prism_op *op = prism_analysis_ops(a, &n);
    for (size_t i = 0; op && i < n; i++) {
        if (!prism_analysis_is_op(a, op[i].name))
            continue;
        w->ops++;
        w->op_ns += (double)op[i].self_ns / ws;
        add_row(w->op, &w->nop, (opw_row){ op[i].node, op[i].name, 0,
                (double)op[i].total_ns / ws, 0 }, false);
    }
    for (size_t i = 0; i < w->nop; i++) {
        w->op[i].share = w->op_ns > 0 ? w->op[i].ns / w->op_ns : 0;
        for (uint32_t k = 0; k < t->count; k++)       /* its FLOPs, every path */
            if (t->nodes[k].name == w->op[i].name ||
                !strcmp(t->nodes[k].name, w->op[i].name))
                w->op[i].flops += t->nodes[k].flops / ws;
    }
    peak_of(a, w);
    return true;
}

static double rate(double flops, double ns)
{
    return ns > 0 ? flops / (ns * 1e-9) : 0;
}

/* 1.43 MFLOP, 2.38 TFLOP: three significant digits and an SI prefix. */
static const char *flop_str(char *b, size_t cap, double v, const char *unit)
{
    static const char pre[] = " kMGTPE";
    int k = 0;
    while (v >= 999.5 && k < 6) {
        v /= 1000;
        k++;
    }
    if (k)
        snprintf(b, cap, "%.3g %c%s", v, pre[k], unit);
    else
        snprintf(b, cap, "%.3g %s", v, unit);
    return b;
}

void analyze_ops_txt(FILE *f, const prism_analysis *a)
{
    opwin w;
    if (!opwin_of(a, &w))
        return;
    char b1[32], b2[32];
    if (w.ops)
        fprintf(f, "Operator window: steps %" PRIu64 "-%" PRIu64 " (%" PRIu64 " step%s, left "
                "out of the step times); %zu operators, every figure a window step's\n",
                w.first, w.last, w.steps, w.steps == 1 ? "" : "s", w.ops);
    else                                /* flop_steps: FLOPs without operator regions */
        fprintf(f, "FLOP count: steps %" PRIu64 "-%" PRIu64 " (%" PRIu64 " step%s, left out of "
                "the step times; no operator regions), every figure a counted step's\n",
                w.first, w.last, w.steps, w.steps == 1 ? "" : "s");
    if (w.flops > 0) {
        char b3[32];
        fmt_ns(b1, sizeof b1, w.step_ns);
        fprintf(f, "  FLOPs a step: %s%s%s; achieved %s over the median step (%s)\n",
                flop_str(b2, sizeof b2, w.flops, "FLOP"), w.dtype[0] ? ", mostly " : "", w.dtype,
                flop_str(b3, sizeof b3, rate(w.flops, w.step_ns), "FLOP/s"), b1);
        if (w.peak > 0 && w.step_ns > 0) {
            fprintf(f, "  MFU: %.1f%% of %.4g TFLOP/s (", 100.0 * rate(w.flops, w.step_ns) /
                    (w.peak * 1e12), w.peak);
            esc_fputs(w.device ? w.device : "the device", f);
            fprintf(f, "; peak from %s)\n", w.peak_from);
        } else if (w.device) {
            fputs("  MFU: unknown (", f);
            esc_fputs(w.device, f);
            fprintf(f, " has no %s peak in PRISM's table; set PRISM_PEAK_TFLOPS)\n",
                    w.dtype[0] ? w.dtype : "known");
        }
    } else {
        fputs("  FLOPs: none counted (no operator with a FLOP formula ran)\n", f);
    }
    if (w.nop) {
        fputs("  Heaviest operators (a step):\n", f);
        for (size_t i = 0; i < w.nop; i++) {
            fmt_ns(b1, sizeof b1, w.op[i].ns);
            fprintf(f, "    %10s %6.1f%%", b1, 100.0 * w.op[i].share);
            fprintf(f, " %12s  ", w.op[i].flops > 0 ? flop_str(b2, sizeof b2, w.op[i].flops,
                                                                 "FLOP") : "");
            esc_fputs(w.op[i].name, f);
            fputc('\n', f);
        }
    }
    if (w.nreg) {
        fputs("  FLOPs by region (a step, inclusive):\n", f);
        for (size_t i = 0; i < w.nreg; i++) {
            char b3[32];
            fmt_ns(b1, sizeof b1, w.reg[i].ns);
            fprintf(f, "    %12s %10s %14s  ", flop_str(b2, sizeof b2, w.reg[i].flops, "FLOP"), b1,
                    flop_str(b3, sizeof b3, rate(w.reg[i].flops, w.reg[i].ns), "FLOP/s"));
            esc_fputs(w.reg[i].name, f);
            fputc('\n', f);
        }
    }
    fputc('\n', f);
}

void analyze_ops_json(pb_json *j, const prism_analysis *a, pb_buf *path)
{
    opwin w;
    pb_json_key(j, "op_window");
    if (!opwin_of(a, &w)) {
        pb_json_null(j);
        return;
    }
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_begin_object(j);
    pb_json_kuint(j, "steps", w.steps);
    pb_json_kuint(j, "first_step", w.first);
    pb_json_kuint(j, "last_step", w.last);
    pb_json_kuint(j, "operators", w.ops);
    pb_json_kdouble(j, "flops_per_step", w.flops);
    pb_json_kstring(j, "dtype", w.dtype[0] ? w.dtype : NULL);
    report_json_kns(j, "step_ns", w.step_ns);
    pb_json_kdouble(j, "achieved_flops", rate(w.flops, w.step_ns));
    pb_json_kstring(j, "device", w.device);
    pb_json_key(j, "peak_tflops");
    w.peak > 0 ? pb_json_double(j, w.peak) : pb_json_null(j);
    pb_json_kstring(j, "peak_from", w.peak > 0 ? w.peak_from : NULL);
    pb_json_key(j, "mfu");
    w.peak > 0 && w.step_ns > 0 ? pb_json_double(j, rate(w.flops, w.step_ns) / (w.peak * 1e12))
                                : pb_json_null(j);
    pb_json_key(j, "heaviest");
    pb_json_begin_array(j);
    for (size_t i = 0; i < w.nop; i++) {
        pb_json_begin_object(j);
        pb_json_kstring(j, "name", w.op[i].name);
        report_json_kns(j, "per_step_ns", w.op[i].ns);
        pb_json_kdouble(j, "share", w.op[i].share);
        pb_json_kdouble(j, "flops_per_step", w.op[i].flops);
        pb_json_end_object(j);
    }
    pb_json_end_array(j);
    pb_json_key(j, "regions");
    pb_json_begin_array(j);
    for (size_t i = 0; i < w.nreg; i++) {
        pb_json_begin_object(j);
        report_path(t, w.reg[i].node, '/', false, path);
        pb_json_kstring(j, "path", pb_buf_str(path));
        pb_json_kdouble(j, "flops_per_step", w.reg[i].flops);
        report_json_kns(j, "per_step_ns", w.reg[i].ns);
        pb_json_kdouble(j, "achieved_flops", rate(w.reg[i].flops, w.reg[i].ns));
        pb_json_end_object(j);
    }
    pb_json_end_array(j);
    pb_json_end_object(j);
}

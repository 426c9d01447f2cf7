/*
 * export.c - the exports (`prism-top export FILE --format F [-o OUT]`): the
 * profile in a format other tools read, and the table of the formats.
 *
 *   chrome-trace  Chrome trace-event JSON of every event (export_trace.c)
 *   speedscope    speedscope's file format, a profile per thread
 *                 (export_speedscope.c)
 *   csv           one row per node of the all-threads call tree
 *   folded        "a;b;c SELF" lines for flamegraph.pl, inferno, speedscope;
 *                 SELF in ns (default), us or ms (--unit)
 *   json          the all-threads and per-thread call trees as nested
 *                 objects, schema "prism.tree/1" (docs/JSON.md)
 *
 * With -o OUT the output is written to OUT.tmp and renamed over OUT when
 * complete, so a failed export leaves no half-written file; without -o (or
 * with "-o -") it goes to stdout.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export_scope.h"
#include "report.h"

/* ---- csv ---- */

/* One field per RFC 4180, escaped first (escape.h: no control, bidi or
 * invalid byte reaches the file, so no line break either): quoted when it
 * holds a comma or a quote. */
static void csv_field(FILE *f, const char *s)
{
    bool quote = strpbrk(s, ",\"") != NULL;
    char rep[ESC_CHAR_MAX];
    if (quote)
        fputc('"', f);
    while (*s) {
        if (*s == '"')
            fputc('"', f);
        s += esc_char(s, rep, NULL);
        fputs(rep, f);
    }
    if (quote)
        fputc('"', f);
}

bool export_csv(FILE *f, const prism_analysis *a)
{
    const prism_tree *t = prism_analysis_tree(a);
    pb_buf path = { 0 };
    fputs("path,name,depth,calls,total_ns,self_ns,min_ns,max_ns,mean_ns,std_ns,share\n", f);
    for (uint32_t n = t->first_root; n != PRISM_NO_NODE; n = report_next(t, n)) {
        const prism_node *p = &t->nodes[n];
        report_path(t, n, '/', false, &path);
        csv_field(f, pb_buf_str(&path));
        fputc(',', f);
        csv_field(f, p->name);
        fprintf(f, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%.3f,%.3f,%.9f\n", p->depth, p->calls, p->total_ns, p->self_ns, p->min_ns,
                p->max_ns, isfinite(p->mean_ns) ? p->mean_ns : 0,
                isfinite(p->std_ns) ? p->std_ns : 0, isfinite(p->share) ? p->share : 0);
    }
    bool ok = !path.oom;
    pb_buf_free(&path);
    return ok;
}

/* ---- folded ---- */

/* round(x / unit) for x in ns, half up, without overflow */
static uint64_t div_round(uint64_t x, uint64_t unit)
{
    return x / unit + (x % unit >= unit - unit / 2 ? 1 : 0);
}

bool export_folded_unit(FILE *f, const prism_analysis *a, uint64_t unit_ns)
{
    const prism_tree *t = prism_analysis_tree(a);
    pb_buf path = { 0 };
    uint64_t sum_ns = 0, written = 0;   /* written: units printed so far */
    for (uint32_t n = t->first_root; n != PRISM_NO_NODE; n = report_next(t, n)) {
        uint64_t self = t->nodes[n].self_ns;
        if (!self)
            continue;
        /* the running total, rounded, minus what was printed: the sum of
         * the lines is the rounded sum of the exact times */
        sum_ns = self > UINT64_MAX - sum_ns ? UINT64_MAX : sum_ns + self;
        uint64_t due = div_round(sum_ns, unit_ns);
        uint64_t v = due > written ? due - written : 0;
        if (!v)
            continue;
        written += v;
        report_path(t, n, ';', true, &path);
        fprintf(f, "%s %" PRIu64 "\n", pb_buf_str(&path), v);
    }
    bool ok = !path.oom;
    pb_buf_free(&path);
    return ok;
}

bool export_folded(FILE *f, const prism_analysis *a)
{
    return export_folded_unit(f, a, 1);
}

/* ---- json ---- */

static void node_fields(pb_json *w, const prism_node *p)
{
    pb_json_kstring(w, "name", p->name);
    pb_json_kuint(w, "calls", p->calls);
    pb_json_kuint(w, "total_ns", p->total_ns);
    pb_json_kuint(w, "self_ns", p->self_ns);
    pb_json_kuint(w, "min_ns", p->min_ns);
    pb_json_kuint(w, "max_ns", p->max_ns);
    report_json_kns(w, "mean_ns", p->mean_ns);
    report_json_kns(w, "std_ns", p->std_ns);
    pb_json_kdouble(w, "share", p->share);
    pb_json_kuint(w, "steps_seen", p->steps_seen);
    report_json_kns(w, "step_mean_ns", p->step_mean_ns);
    report_json_kns(w, "step_std_ns", p->step_std_ns);
    report_json_kns(w, "step_max_ns", p->step_max_ns);
    pb_json_kuint(w, "gpu_ns", p->gpu_ns);
    pb_json_kuint(w, "gpu_launches", p->gpu_launches);
    pb_json_kdouble(w, "flops", p->flops);
    pb_json_kdouble(w, "bytes", p->bytes);
    pb_json_kuint(w, "in_step_ns", p->in_step_ns);
    pb_json_kuint(w, "cpu_known_ns", p->cpu_known_ns);
    pb_json_kuint(w, "oncpu_ns", p->oncpu_ns);
    pb_json_kuint(w, "runq_ns", p->runq_ns);
    pb_json_kuint(w, "offcpu_ns", p->offcpu_ns);
    pb_json_kuint(w, "offcpu_busy_ns", p->offcpu_busy_ns);
    pb_json_kuint(w, "gpu_wait_ns", p->gpu_wait_ns);
    pb_json_kuint(w, "lead_steps", p->lead_steps);
    pb_json_kuint(w, "unrecorded", p->unrecorded);
    if (p->flags & PRISM_NODE_UNATTRIBUTED)      /* `(outside regions)` */
        pb_json_kbool(w, "unattributed", true);
}

/* "roots": the tree as nested objects, walked without recursion. */
static void json_tree(pb_json *w, const prism_tree *t)
{
    pb_json_key(w, "roots");
    pb_json_begin_array(w);
    uint32_t n = t ? t->first_root : PRISM_NO_NODE;
    while (n != PRISM_NO_NODE && n < t->count) {
        const prism_node *p = &t->nodes[n];
        pb_json_begin_object(w);
        node_fields(w, p);
        pb_json_key(w, "children");
        pb_json_begin_array(w);
        if (p->first_child != PRISM_NO_NODE) {
            n = p->first_child;
            continue;
        }
        /* a leaf: close it and every ancestor whose last child it ends */
        for (;;) {
            pb_json_end_array(w);
            pb_json_end_object(w);
            if (t->nodes[n].next_sibling != PRISM_NO_NODE) {
                n = t->nodes[n].next_sibling;
                break;
            }
            n = t->nodes[n].parent;
            if (n == PRISM_NO_NODE)
                break;
        }
    }
    pb_json_end_array(w);
}

bool export_json(FILE *f, const char *path, const prism_analysis *a)
{
    pb_json *w = report_json_begin(f, 1, "prism.tree/1");
    if (!w)
        return false;
    pb_json_kstring(w, "file", path);
    pb_json_kbool(w, "complete", prism_analysis_complete(a));
    report_json_header(w, prism_analysis_header(a));
    const prism_tree *t = prism_analysis_tree(a);
    pb_json_kuint(w, "total_ns", t->total_ns);
    pb_json_kuint(w, "nodes", t->count);
    json_tree(w, t);
    report_json_threads(w, a, "total_ns", json_tree);
    return report_json_end(w);
}

/* ---- the table ---- */

static int write_csv(FILE *out, const rp_export_in *in)
{
    return export_csv(out, in->a) ? EXIT_OK : EXIT_BADINPUT;
}

static int write_folded(FILE *out, const rp_export_in *in)
{
    return export_folded_unit(out, in->a, in->unit_ns ? in->unit_ns : 1) ? EXIT_OK
                                                                         : EXIT_BADINPUT;
}

static int write_json(FILE *out, const rp_export_in *in)
{
    return export_json(out, in->path, in->a) ? EXIT_OK : EXIT_BADINPUT;
}

static const rp_export_format fmt_csv = {
    "csv", NULL,
    "the call tree, one row per call path (all threads):\n"
    "                         path,name,depth,calls,total_ns,self_ns,min_ns,max_ns,\n"
    "                         mean_ns,std_ns,share\n",
    false, false, write_csv,
};
static const rp_export_format fmt_folded = {
    "folded", NULL,
    "folded stacks \"a;b;c SELF\" for flamegraph.pl,\n"
    "                         inferno or speedscope: SELF is the self time in\n"
    "                         --unit (default ns), an integer (tools call it\n"
    "                         samples); stacks that round to 0 are left out\n",
    false, true, write_folded,
};
static const rp_export_format fmt_json = {
    "json", NULL,
    "the call trees as nested objects (prism.tree/1,\n"
    "                         docs/JSON.md)\n",
    false, false, write_json,
};

/* The formats in the order the usage text lists them; a new one: its
 * writer file's rp_export_format, declared here and added to the list. */
extern const rp_export_format rp_export_chrome_trace;  /* export_trace.c      */
extern const rp_export_format rp_export_speedscope;    /* export_speedscope.c */
static const rp_export_format *const formats[] = {
    &rp_export_chrome_trace, &rp_export_speedscope, &fmt_csv, &fmt_folded, &fmt_json,
};
#define NFORMATS (sizeof formats / sizeof formats[0])

const rp_export_format *rp_export_at(size_t i)
{
    return i < NFORMATS ? formats[i] : NULL;
}

const rp_export_format *rp_export_find(const char *name)
{
    for (size_t i = 0; name && i < NFORMATS; i++)
        if (!strcmp(name, formats[i]->name) ||
            (formats[i]->alias && !strcmp(name, formats[i]->alias)))
            return formats[i];
    return NULL;
}

const char *rp_export_names(char *buf, size_t cap, const char *sep)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < NFORMATS && len < cap; i++) {
        int n = snprintf(buf + len, cap - len, "%s%s", i ? sep : "", formats[i]->name);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    return buf;
}

int rp_export_file(const char *path, const rp_export_format *fmt, uint64_t unit_ns,
                   const rp_export_scope *scope, const char *output, FILE *out)
{
    outfile o;
    rp_export_in in = { .path = path, .unit_ns = unit_ns, .scope = scope };
    if (fmt->streams) {                 /* it reads the file (and scope) itself */
        if (outfile_open(&o, output, out))
            return EXIT_BADINPUT;
        int rc = fmt->write(o.f, &in);
        int wrc = outfile_close(&o, rc == EXIT_OK);
        return rc != EXIT_OK ? rc : wrc;
    }
    /* the tree of what the scope keeps: an analysis fed through its filter */
    ex_scan scan = { 0 };
    ex_scope sc = { 0 };
    bool scoped = scope && (scope->steps || scope->threads || scope->min_ns);
    if (scoped)
        ex_scan_file(path, &scan);
    if (!ex_scope_resolve(path, scoped ? scope : NULL, &scan, &sc)) {
        ex_scan_free(&scan);
        return EXIT_BADINPUT;
    }
    ex_scan_free(&scan);
    prism_reader *r;
    prism_analysis *a = ex_analyze(path, &sc, false, &r);
    int rc = EXIT_BADINPUT;
    if (a && !outfile_open(&o, output, out)) {
        in.a = a;
        bool ok = fmt->write(o.f, &in) == EXIT_OK;
        if (!ok)
            fprintf(stderr, "prism-top: %s: out of memory while exporting\n", path);
        rc = outfile_close(&o, ok);
    }
    prism_analysis_free(a);
    prism_reader_free(r);
    ex_scope_free(&sc);
    return rc;
}

/*
 * export.c - `prism-top export FILE --format F [-o OUT]`: the profile in a
 * format other tools read.
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

#include "cli.h"
#include "escape.h"
#include "report.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top export FILE --format FORMAT [-o OUT] [--unit ns|us|ms]\n"
        "Convert a profile for other tools.  FORMAT is one of:\n"
        "\n"
        "  --format chrome-trace  every event as Chrome trace-event JSON: open it in\n"
        "                         ui.perfetto.dev, chrome://tracing or speedscope\n"
        "  --format speedscope    the regions of every thread in speedscope's format\n"
        "                         (www.speedscope.app), the training thread first\n"
        "  --format csv           the call tree, one row per call path (all threads):\n"
        "                         path,name,depth,calls,total_ns,self_ns,min_ns,max_ns,\n"
        "                         mean_ns,std_ns,share\n"
        "  --format folded        folded stacks \"a;b;c SELF\" for flamegraph.pl,\n"
        "                         inferno or speedscope: SELF is the self time in\n"
        "                         --unit (default ns), an integer (tools call it\n"
        "                         samples); stacks that round to 0 are left out\n"
        "  --format json          the call trees as nested objects (prism.tree/1,\n"
        "                         docs/JSON.md)\n"
        "  -o, --output OUT       write to OUT, whole or not at all (default: stdout,\n"
        "                         as with -o -)\n"
        "  --unit ns|us|ms        the unit of folded values (default ns)\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input\n");
}

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
    strbuf path;
    sb_init(&path);
    fputs("path,name,depth,calls,total_ns,self_ns,min_ns,max_ns,mean_ns,std_ns,share\n", f);
    for (uint32_t n = t->first_root; n != PRISM_NO_NODE; n = report_next(t, n)) {
        const prism_node *p = &t->nodes[n];
        report_path(t, n, '/', false, &path);
        csv_field(f, path.s);
        fputc(',', f);
        csv_field(f, p->name);
        fprintf(f, ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%.3f,%.3f,%.9f\n", p->depth, p->calls, p->total_ns, p->self_ns, p->min_ns,
                p->max_ns, isfinite(p->mean_ns) ? p->mean_ns : 0,
                isfinite(p->std_ns) ? p->std_ns : 0, isfinite(p->share) ? p->share : 0);
    }
    bool ok = !path.oom;
    sb_free(&path);
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
    strbuf path;
    sb_init(&path);
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
        fprintf(f, "%s %" PRIu64 "\n", path.s, v);
    }
    bool ok = !path.oom;
    sb_free(&path);
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

/* ---- the command ---- */

int cmd_export(int argc, char **argv, FILE *out)
{
    const char *path = NULL, *output = NULL, *format = NULL, *unit = NULL;
    for (int i = 1; i < argc; i++) {
        int m;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            return EXIT_OK;
        }
        if ((m = opt_value("export", argc, argv, &i, "-o", "--output", &output)) != 0 ||
            (m = opt_value("export", argc, argv, &i, "-f", "--format", &format)) != 0 ||
            (m = opt_value("export", argc, argv, &i, NULL, "--unit", &unit)) != 0) {
            if (m < 0)
                return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top export: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "prism-top export: one file only\n");
            return EXIT_USAGE;
        }
    }
    if (!path || !format) {
        fprintf(stderr, "prism-top export: %s\n", !path ? "which file? (see --help)"
                : "--format is required (chrome-trace, speedscope, csv, folded, json)");
        return EXIT_USAGE;
    }
    enum { CHROME, SPEEDSCOPE, CSV, FOLDED, JSON } kind;
    if (!strcmp(format, "chrome-trace") || !strcmp(format, "chrome"))
        kind = CHROME;
    else if (!strcmp(format, "speedscope"))
        kind = SPEEDSCOPE;
    else if (!strcmp(format, "csv"))
        kind = CSV;
    else if (!strcmp(format, "folded"))
        kind = FOLDED;
    else if (!strcmp(format, "json"))
        kind = JSON;
    else {
        fprintf(stderr, "prism-top export: unknown format '%s' (chrome-trace, speedscope, "
                "csv, folded, json)\n", format);
        return EXIT_USAGE;
    }
    uint64_t unit_ns = 1;
    if (unit) {
        unit_ns = !strcmp(unit, "ns") ? 1 : !strcmp(unit, "us") ? 1000
                : !strcmp(unit, "ms") ? 1000000 : 0;
        if (!unit_ns || kind != FOLDED) {
            fprintf(stderr, "prism-top export: %s\n", kind != FOLDED
                    ? "--unit is for --format folded" : "--unit is ns, us or ms");
            return EXIT_USAGE;
        }
    }
    outfile o;
    if (kind == CHROME || kind == SPEEDSCOPE) {
        if (outfile_open(&o, output, out))
            return EXIT_BADINPUT;
        int rc = kind == CHROME ? export_chrome_trace(path, o.f) : export_speedscope(path, o.f);
        int wrc = outfile_close(&o, rc == EXIT_OK);
        return rc != EXIT_OK ? rc : wrc;
    }
    prism_analysis *a = report_load(path, NULL);
    if (!a)
        return EXIT_BADINPUT;
    if (outfile_open(&o, output, out)) {
        prism_analysis_free(a);
        return EXIT_BADINPUT;
    }
    bool ok = kind == CSV ? export_csv(o.f, a)
            : kind == FOLDED ? export_folded_unit(o.f, a, unit_ns) : export_json(o.f, path, a);
    if (!ok)
        fprintf(stderr, "prism-top: %s: out of memory while exporting\n", path);
    int rc = outfile_close(&o, ok);
    prism_analysis_free(a);
    return rc;
}

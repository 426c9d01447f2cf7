/*
 * export_test.c - prism-top export: the chrome trace is JSON and holds
 * every event of the file (a region one complete event), folded-stack
 * totals equal the call tree's, the
 * CSV has one row per node, the tree JSON parses; awkward names survive
 * every format; a failed export leaves no file behind.  The training
 * thread's time outside regions: a row of the tree formats, events of the
 * chrome trace and speedscope at exactly the gaps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../reports/report.h"
#include "prism/import.h"
#include "json_check.h"
#include "pbuild.h"
#include "report_util.h"

/* Export path as format into dir/name; returns the output text. */
static char *export_to(fx *f, const char *path, const char *format, const char *name)
{
    char out[512], *err;
    path_in(out, f->dir, name);
    const char *argv[] = { "export", path, "--format", format, "-o", out, NULL };
    int rc = run_cmd(cmd_export, argv, NULL, &err);
    if (rc != EXIT_OK)
        fail_msg("export %s failed (%d): %s", format, rc, err);
    assert_string_equal(err, "");
    free(err);
    char tmp[520];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    assert_false(exists(tmp));
    char *text = slurp(out, NULL);
    assert_non_null(text);
    return text;
}

/* ---- what the file holds, counted with the reader ---- */

typedef struct tally {
    uint64_t enters, exits, marks, counters, steps, memory, mem_counters, gpu, threads;
} tally;

static void t_thread(void *ctx, const prism_thread *t) { (void)t; ((tally *)ctx)->threads++; }
static void t_regions(void *ctx, uint32_t s, uint32_t d, const prism_region_event *ev, size_t n)
{
    tally *t = ctx;
    (void)s;
    (void)d;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == PRISM_REGION_ENTER)
            t->enters++;
        else
            t->exits++;
    }
}
static void t_marks(void *ctx, uint32_t s, const prism_mark *m, size_t n)
{
    (void)s;
    (void)m;
    ((tally *)ctx)->marks += n;
}
static void t_counters(void *ctx, uint32_t s, const prism_counter *c, size_t n)
{
    (void)s;
    (void)c;
    ((tally *)ctx)->counters += n;
}
static void t_steps(void *ctx, uint32_t s, const prism_step *p, size_t n)
{
    (void)s;
    (void)p;
    ((tally *)ctx)->steps += n;
}
static void t_memory(void *ctx, const prism_memory_sample *m)
{
    tally *t = ctx;
    t->memory++;
    t->mem_counters += 1 + (m->cpu_permille != PRISM_NO_CPU) + m->ngpu;
}
static void t_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    (void)g;
    ((tally *)ctx)->gpu += n;
}

static tally count_file(const char *path)
{
    tally t = { 0 };
    prism_reader_callbacks cb = {
        .thread = t_thread, .regions = t_regions, .marks = t_marks, .counters = t_counters,
        .steps = t_steps, .memory = t_memory, .gpu = t_gpu,
    };
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, &t, &r), PRISM_OK);
    prism_reader_free(r);
    return t;
}

static void assert_json(const char *text, const char *what)
{
    size_t where;
    if (!json_valid(text, strlen(text), &where, NULL))
        fail_msg("%s: invalid JSON at byte %zu: %.80s", what, where, text + where);
}

/* ---- chrome trace ---- */

static void chrome_trace_holds_every_event(void **state)
{
    fx *f = *state;
    char *j = export_to(f, f->ref, "chrome-trace", "trace.json");
    tally t = count_file(f->ref);
    assert_json(j, "chrome trace");
    assert_true(t.enters > 0 && t.marks > 0 && t.gpu > 0);
    /* a region is one complete event, no cat: {"name":..,"ph":"X","ts":.. */
    assert_int_equal(t.enters, t.exits);
    assert_int_equal(count_str(j, "\"ph\":\"X\",\"ts\":"), t.enters);
    assert_int_equal(count_str(j, "\"ph\":\"B\""), 0);
    assert_int_equal(count_str(j, "\"ph\":\"E\""), 0);
    assert_int_equal(count_str(j, "\"cat\":\"region\""), 0);
    assert_int_equal(count_str(j, "\"cat\":\"mark\""), t.marks);
    assert_int_equal(count_str(j, "\"cat\":\"counter\""), t.counters);
    assert_int_equal(count_str(j, "\"cat\":\"step\""), t.steps);
    assert_int_equal(count_str(j, "\"ph\":\"X\""), t.enters + t.steps + t.gpu);
    assert_int_equal(count_str(j, "\"ph\":\"C\""), t.counters + t.mem_counters);
    /* each thread named; the training thread (main) on track 1, the steps
     * on track 2 right after it, the other threads after both */
    assert_int_equal(count_str(j, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":4242,"),
                     t.threads + 1);
    assert_non_null(strstr(j, "\"tid\":1,\"args\":{\"name\":\"main\"}"));
    assert_non_null(strstr(j, "\"tid\":1,\"args\":{\"sort_index\":1}"));
    assert_non_null(strstr(j, "\"tid\":2,\"args\":{\"name\":\"steps\"}"));
    assert_non_null(strstr(j, "\"tid\":2,\"args\":{\"sort_index\":2}"));
    assert_non_null(strstr(j, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4198546,"
                              "\"args\":{\"name\":\"GPU\"}}"));
    assert_non_null(strstr(j, "\"name\":\"gemm_kernel_128x256\",\"cat\":\"kernel\",\"ph\":\"X\","
                              "\"pid\":4198546,\"tid\":7,"));
    /* microseconds, exact, no trailing zeros: the first region starts at
     * 1000 ns; its track at the end of the event */
    const char *first = strstr(j, "{\"name\":\"step\",\"ph\":\"X\",\"ts\":1,\"dur\":");
    assert_non_null(first);
    assert_non_null(strstr(first, ",\"pid\":4242,\"tid\":1}"));
    assert_true(strstr(first, ",\"pid\":4242,\"tid\":1}") < strchr(first, '\n'));
    assert_non_null(strstr(j, "\"export\":{\"enters\":"));
    free(j);
}

static void chrome_trace_of_hostile_values(void **state)
{
    fx *f = *state;
    char p[512];
    refgen_opts o = refgen_defaults();
    o.extremes = true;
    fixture(path_in(p, f->dir, "extremes.cbor"), &o);
    char *j = export_to(f, p, "chrome-trace", "extremes.json");
    assert_json(j, "chrome trace (extremes)");
    tally t = count_file(p);
    assert_int_equal(count_str(j, "\"ph\":\"X\",\"ts\":"), t.enters);
    assert_non_null(strstr(j, "-9223372036854775808"));
    free(j);
}

static void chrome_trace_of_torn_file_is_balanced(void **state)
{
    fx *f = *state;
    char p[512], q[512];
    size_t len;
    refgen_opts o = refgen_defaults();
    o.footer = false;
    fixture(path_in(p, f->dir, "full.cbor"), &o);
    char *data = slurp(p, &len);
    /* cut inside the region stream, in the middle of a chunk */
    for (size_t cut = len / 3; cut < len; cut += len / 5) {
        path_in(q, f->dir, "torn.cbor");
        FILE *w = fopen(q, "wb");
        assert_non_null(w);
        assert_int_equal(fwrite(data, 1, cut, w), cut);
        assert_int_equal(fclose(w), 0);
        char *j = export_to(f, q, "chrome-trace", "torn.json");
        assert_json(j, "chrome trace (torn)");
        /* each region begun is written once: at its end, or closed at
         * its thread's last time (otherData.export counts both) */
        const char *x = strstr(j, "\"export\":{\"enters\":");
        assert_non_null(x);
        assert_int_equal(count_str(j, "\"ph\":\"X\",\"ts\":"),
                         strtoull(x + strlen("\"export\":{\"enters\":"), NULL, 10));
        assert_non_null(strstr(j, "\"footer\":null"));
        free(j);
    }
    free(data);
}

/* ---- tree exports ---- */

static void folded_totals_equal_tree(void **state)
{
    fx *f = *state;
    char *text = export_to(f, f->ref, "folded", "ref.folded");
    prism_analysis *a = report_load(f->ref, NULL);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    uint64_t sum = 0, self = 0, lines = 0, nonzero = 0;
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = 0;
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        char *end;
        uint64_t v = strtoull(sp + 1, &end, 10);
        assert_true(*end == 0 && v > 0);
        assert_true(sp > line);
        sum += v;
        lines++;
    }
    for (size_t i = 0; i < t->count; i++) {
        self += t->nodes[i].self_ns;
        nonzero += t->nodes[i].self_ns > 0;
    }
    assert_true(t->total_ns > 0);
    assert_int_equal(sum, t->total_ns);
    assert_int_equal(self, t->total_ns);
    assert_int_equal(lines, nonzero);
    prism_analysis_free(a);
    free(text);
}

static void csv_has_a_row_per_node(void **state)
{
    fx *f = *state;
    char *text = export_to(f, f->ref, "csv", "ref.csv");
    prism_analysis *a = report_load(f->ref, NULL);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    assert_int_equal(count_lines(text), t->count + 1);
    static const char header[] = "path,name,depth,calls,total_ns,self_ns,min_ns,max_ns,"
                                 "mean_ns,std_ns,share\n";
    assert_memory_equal(text, header, sizeof header - 1);
    assert_non_null(strstr(text, "\nstep/forward/layer.0/attention,attention,3,20,"));
    /* every row has 11 fields (no name here needs quoting) */
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        size_t commas = 0;
        for (char *c = line; c < nl; c++)
            commas += *c == ',';
        assert_int_equal(commas, 10);
    }
    prism_analysis_free(a);
    free(text);
}

static void tree_json_parses(void **state)
{
    fx *f = *state;
    char *text = export_to(f, f->ref, "json", "tree.json");
    assert_json(text, "tree json");
    prism_analysis *a = report_load(f->ref, NULL);
    assert_non_null(a);
    size_t nodes = prism_analysis_tree(a)->count;
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++)
        nodes += prism_analysis_thread_tree(a, i, NULL, NULL)->count;
    assert_non_null(strstr(text, "\"schema\": \"prism.tree/1\""));
    assert_int_equal(count_str(text, "\"children\": ["), nodes);
    prism_analysis_free(a);
    free(text);
}

/* A hand-built profile whose names need escaping or quoting everywhere. */
static void awkward_profile(const char *path)
{
    static const char *const names[] = {
        "comma, \"quoted\"", "semi;colon\nnewline", "bad\xff utf8 \x01", "plain",
    };
    uint8_t buf[8192];
    size_t n = 0, len;
    prism_header h = { .producer = "test", .host = "h\"ost", .pid = 7, .rank = -1,
                       .clock = "monotonic" };
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_OK);
    n += len;
    prism_enc e;
    assert_int_equal(prism_enc_begin(&e, buf + n, sizeof buf - n, PRISM_CHUNK_STRINGS, 0, 0, 1, 0),
                     PRISM_OK);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(prism_enc_string(&e, names[i], strlen(names[i])), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    assert_int_equal(prism_enc_begin(&e, buf + n, sizeof buf - n, PRISM_CHUNK_THREADS, 0, 1, 0, 0),
                     PRISM_OK);
    prism_thread th = { .stream = 1, .os_tid = 99, .name = "wor\"ker\t1" };
    assert_int_equal(prism_enc_thread(&e, &th), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    assert_int_equal(prism_enc_begin(&e, buf + n, sizeof buf - n, PRISM_CHUNK_REGIONS, 1, 0, 0, 0),
                     PRISM_OK);
    uint64_t ts = 10;
    for (uint32_t id = 1; id <= 3; id++) {      /* 1 > 2 > 3, then 4 beside 1 */
        assert_int_equal(prism_enc_enter(&e, ts, id), PRISM_OK);
        ts += 100;
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(prism_enc_exit(&e, ts), PRISM_OK);
        ts += 50;
    }
    assert_int_equal(prism_enc_enter(&e, ts, 4), PRISM_OK);
    assert_int_equal(prism_enc_exit(&e, ts + 1000), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(buf, 1, n, w), n);
    assert_int_equal(fclose(w), 0);
}

/* Records of an RFC 4180 text (quoted fields may hold line breaks). */
static size_t csv_records(const char *s, size_t *fields_first)
{
    size_t records = 0, fields = 1;
    bool q = false;
    for (; *s; s++) {
        if (*s == '"')
            q = !q;                 /* a doubled quote toggles twice */
        else if (!q && *s == ',')
            fields++;
        else if (!q && *s == '\n') {
            if (records == 1 && fields_first)
                *fields_first = fields;
            records++;
            fields = 1;
        }
    }
    return records;
}

static void awkward_names_survive(void **state)
{
    fx *f = *state;
    char p[512];
    awkward_profile(path_in(p, f->dir, "awkward.cbor"));
    char *j = export_to(f, p, "chrome-trace", "awkward.json");
    assert_json(j, "chrome trace (awkward)");
    assert_non_null(strstr(j, "\"name\":\"comma, \\\"quoted\\\"\""));
    assert_non_null(strstr(j, "\"name\":\"bad\\ufffd utf8 \\u0001\""));
    assert_non_null(strstr(j, "\"name\":\"wor\\\"ker\\t1\""));
    free(j);
    j = export_to(f, p, "json", "awkward-tree.json");
    assert_json(j, "tree json (awkward)");
    free(j);
    const char *argv[] = { "analyze", p, "--format", "json", NULL };
    char *out;
    assert_int_equal(run_cmd(cmd_analyze, argv, &out, NULL), EXIT_OK);
    assert_json(out, "analyze json (awkward)");
    free(out);

    char *csv = export_to(f, p, "csv", "awkward.csv");
    size_t fields = 0;
    assert_int_equal(csv_records(csv, &fields), 4 + 1);
    assert_int_equal(fields, 11);
    assert_non_null(strstr(csv, "\n\"comma, \"\"quoted\"\"\",\"comma, \"\"quoted\"\"\",0,1,"));
    free(csv);

    char *folded = export_to(f, p, "folded", "awkward.folded");
    assert_int_equal(count_lines(folded), 4);
    assert_non_null(strstr(folded, "comma, \"quoted\";semi:colon newline "));
    free(folded);
}

/* ---- failures ---- */

static void failed_export_leaves_no_file(void **state)
{
    fx *f = *state;
    char foreign[512], out[512], tmp[520], *err;
    static const char *const formats[] = { "chrome-trace", "speedscope", "csv", "folded",
                                           "json" };
    write_text(path_in(foreign, f->dir, "foreign.bin"), "\xd9\xd9\xf7garbage");
    path_in(out, f->dir, "out.data");
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    for (size_t i = 0; i < 5; i++) {
        const char *argv[] = { "export", foreign, "--format", formats[i], "-o", out, NULL };
        assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_BADINPUT);
        assert_one_error_line(err, foreign);
        free(err);
        assert_false(exists(out));
        assert_false(exists(tmp));
    }
    /* an existing output stays as it was */
    write_text(out, "keep");
    const char *argv[] = { "export", foreign, "--format", "chrome-trace", "-o", out, NULL };
    assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_BADINPUT);
    free(err);
    char *kept = slurp(out, NULL);
    assert_string_equal(kept, "keep");
    free(kept);
    char missing[512];
    path_in(missing, f->dir, "missing.cbor");
    /* a missing file: the system's words, no byte offset (nothing was read) */
    char want[600];
    snprintf(want, sizeof want, "prism-top: %s: No such file or directory\n", missing);
    for (size_t i = 0; i < 5; i++) {
        const char *argv2[] = { "export", missing, "--format", formats[i], "-o", out, NULL };
        assert_int_equal(run_cmd(cmd_export, argv2, NULL, &err), EXIT_BADINPUT);
        assert_string_equal(err, want);
        free(err);
    }
}

/* An OUT that is not a regular file (here a symlink; /dev/null is the case
 * that matters) is written in place, never replaced by a renamed file. */
static void output_that_is_no_regular_file_is_kept(void **state)
{
    fx *f = *state;
    char target[512], link[512], *err;
    struct stat st;
    write_text(path_in(target, f->dir, "target.folded"), "old");
    assert_int_equal(symlink(target, path_in(link, f->dir, "link.folded")), 0);
    const char *argv[] = { "export", f->ref, "--format", "folded", "-o", link, NULL };
    assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_OK);
    assert_string_equal(err, "");
    free(err);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *text = slurp(target, NULL);
    assert_non_null(strstr(text, "step;forward;layer.0;attention "));
    free(text);
}

static void export_usage_errors(void **state)
{
    fx *f = *state;
    const char *bad[][7] = {
        { "export", f->ref, "-o", "-", NULL },                      /* no format */
        { "export", f->ref, "--format", "folded", "--unit", "s", NULL },
        { "export", f->ref, "--format", "csv", "--unit", "us", NULL },
        { "export", f->ref, "--format", "xml", "-o", "-", NULL },
        { "export", "--format", "csv", "-o", "-", NULL },           /* no file */
        { "export", f->ref, "--format", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err;
        assert_int_equal(run_cmd(cmd_export, bad[i], NULL, &err), EXIT_USAGE);
        assert_int_equal(count_lines(err), 1);
        free(err);
    }
    char *out;
    const char *argv[] = { "export", f->ref, "--format=folded", "--output=-", NULL };
    assert_int_equal(run_cmd(cmd_export, argv, &out, NULL), EXIT_OK);
    assert_non_null(strstr(out, "step;forward;layer.0;attention "));
    free(out);
    /* no -o: stdout, the same bytes as -o - */
    char *out2;
    const char *argv2[] = { "export", f->ref, "--format", "folded", NULL };
    assert_int_equal(run_cmd(cmd_export, argv2, &out2, NULL), EXIT_OK);
    const char *argv3[] = { "export", f->ref, "--format", "folded", "-o", "-", NULL };
    assert_int_equal(run_cmd(cmd_export, argv3, &out, NULL), EXIT_OK);
    assert_string_equal(out, out2);
    free(out);
    free(out2);
}

/* The value of a folded line's stack in text ("a;b VALUE" lines), or -1. */
static long long folded_value(const char *text, const char *stack, size_t len)
{
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        if (!eol)
            break;
        if ((size_t)(eol - p) > len && !memcmp(p, stack, len) && p[len] == ' ')
            return strtoll(p + len + 1, NULL, 10);
        p = eol + 1;
    }
    return -1;
}

/* --unit us: integers whose sum is the rounded sum of the nanoseconds, each
 * within 1 of its own time, none 0. */
static void folded_unit_keeps_the_sum(void **state)
{
    fx *f = *state;
    char *ns, *us;
    const char *a1[] = { "export", f->ref, "--format", "folded", NULL };
    const char *a2[] = { "export", f->ref, "--format", "folded", "--unit", "us", NULL };
    assert_int_equal(run_cmd(cmd_export, a1, &ns, NULL), EXIT_OK);
    assert_int_equal(run_cmd(cmd_export, a2, &us, NULL), EXIT_OK);
    unsigned long long sum_ns = 0, sum_us = 0;
    size_t lines = 0;
    for (const char *p = ns; *p; p = strchr(p, '\n') + 1) {
        const char *sp = memrchr(p, ' ', (size_t)(strchr(p, '\n') - p));
        assert_non_null(sp);
        sum_ns += strtoull(sp + 1, NULL, 10);
    }
    for (const char *p = us; *p; lines++) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        const char *sp = memrchr(p, ' ', (size_t)(eol - p));
        assert_non_null(sp);
        long long v = strtoll(sp + 1, NULL, 10), exact = folded_value(ns, p, (size_t)(sp - p));
        assert_true(v > 0);
        assert_true(exact > 0);
        assert_true(llabs(v * 1000 - exact) <= 1000);
        sum_us += (unsigned long long)v;
        p = eol + 1;
    }
    assert_true(lines > 0);
    assert_int_equal(sum_us, (sum_ns + 500) / 1000);
    free(ns);
    free(us);
}

/* ---- (outside regions) ---- */

/*
 * Thread 1 ("main", steps.thread) in steps k = 0..2 at [1000 k + 10,
 * 1000 k + 990], all sampled, runs "forward" [k+100, k+400] and
 * "backward" [k+500, k+900]: outside regions [k+10, k+100], [k+400,
 * k+500], [k+900, k+990] in each step, 840 ns in all; the last one only
 * when the file is complete (footer).
 */
static void outside_profile(const char *path, bool footer)
{
    static const char *const names[] = { "forward", "backward" };
    pbuild b;
    pb_init(&b, names, 2, 1);
    pb_info_uint(&b, "steps.thread", 1);
    pb_thread(&b, 1, "main");
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t t = 1000 * k;
        pb_enter(&b, 1, t + 100, 1);
        pb_exit(&b, 1, t + 400);
        pb_enter(&b, 1, t + 500, 2);
        pb_exit(&b, 1, t + 900);
        prism_step st = { .start = t + 10, .end = t + 990, .index = k,
                          .flags = PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    if (footer) {
        prism_footer ft = { .end_ts = 3000, .clean = true };
        PB_PUT(&b, PRISM_CHUNK_FOOTER, 0, 0, prism_enc_footer(&b.e, &ft));
    }
    pb_flush(&b);
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    assert_int_equal(fwrite(b.data, 1, b.len, w), b.len);
    assert_int_equal(fclose(w), 0);
    free(b.data);
}

static void outside_regions_in_every_format(void **state)
{
    fx *f = *state;
    char p[512], q[512];
    outside_profile(path_in(p, f->dir, "outside.cbor"), true);
    prism_analysis *a = report_load(p, NULL);
    assert_non_null(a);
    const prism_tree *t = prism_analysis_tree(a);
    uint32_t on = PRISM_NO_NODE;
    for (uint32_t r = t->first_root; r != PRISM_NO_NODE; r = t->nodes[r].next_sibling)
        if (t->nodes[r].flags & PRISM_NODE_UNATTRIBUTED)
            on = r;
    assert_int_not_equal(on, PRISM_NO_NODE);
    assert_int_equal(t->nodes[on].total_ns, 840);
    prism_analysis_free(a);

    /* the tree formats: the node as a row like any root */
    char *csv = export_to(f, p, "csv", "outside.csv");
    assert_non_null(strstr(csv, "\n(outside regions),(outside regions),0,3,840,840,"));
    free(csv);
    char *folded = export_to(f, p, "folded", "outside.folded");
    assert_non_null(strstr(folded, "(outside regions) 840\n"));
    free(folded);
    char *tree = export_to(f, p, "json", "outside-tree.json");
    assert_json(tree, "tree json (outside)");
    assert_non_null(strstr(tree, "\"name\": \"(outside regions)\""));
    assert_non_null(strstr(tree, "\"unattributed\": true"));
    free(tree);

    /* chrome trace: one complete event per gap on the training thread's
     * track, at exactly the gap */
    static const char *const gaps[] = { "\"ts\":0.01,\"dur\":0.09", "\"ts\":0.4,\"dur\":0.1",
                                        "\"ts\":0.9,\"dur\":0.09", "\"ts\":1.01,\"dur\":0.09",
                                        "\"ts\":1.4,\"dur\":0.1", "\"ts\":1.9,\"dur\":0.09",
                                        "\"ts\":2.01,\"dur\":0.09", "\"ts\":2.4,\"dur\":0.1",
                                        "\"ts\":2.9,\"dur\":0.09" };
    char *j = export_to(f, p, "chrome-trace", "outside.json");
    assert_json(j, "chrome trace (outside)");
    assert_int_equal(count_str(j, "\"cat\":\"outside\""), 9);
    char want[256];
    for (size_t i = 0; i < 9; i++) {
        snprintf(want, sizeof want, "{\"name\":\"(outside regions)\",\"cat\":\"outside\","
                 "\"ph\":\"X\",\"pid\":%u,\"tid\":1,%s,\"args\":{\"unattributed\":true}}",
                 0u, gaps[i]);
        if (!strstr(j, want))
            fail_msg("chrome trace: no %s", want);
    }
    assert_non_null(strstr(j, "\"outside_regions\":9,\"too_deep\":0}"));
    free(j);

    /* speedscope: a frame "(outside regions)" opened and closed at each gap */
    char *ss = export_to(f, p, "speedscope", "outside.speedscope.json");
    assert_json(ss, "speedscope (outside)");
    const char *fr = strstr(ss, "{\"name\":\"(outside regions)\"}");
    assert_non_null(fr);
    unsigned idx = 0;
    for (const char *x = strstr(ss, "\"frames\":["); (x = strstr(x + 1, "{\"name\":")) && x < fr;)
        idx++;
    static const unsigned at[][2] = { { 10, 100 },    { 400, 500 },   { 900, 990 },
                                      { 1010, 1100 }, { 1400, 1500 }, { 1900, 1990 },
                                      { 2010, 2100 }, { 2400, 2500 }, { 2900, 2990 } };
    for (size_t i = 0; i < 9; i++) {
        snprintf(want, sizeof want, "{\"type\":\"O\",\"frame\":%u,\"at\":%u},"
                 "{\"type\":\"C\",\"frame\":%u,\"at\":%u}", idx, at[i][0], idx, at[i][1]);
        if (!strstr(ss, want))
            fail_msg("speedscope: no %s", want);
    }
    snprintf(want, sizeof want, "\"frame\":%u,", idx);
    assert_int_equal(count_str(ss, want), 18);
    free(ss);

    /* a file cut short (no footer): no gap after the last region, as the
     * analysis counts it */
    outside_profile(path_in(q, f->dir, "outside-torn.cbor"), false);
    j = export_to(f, q, "chrome-trace", "outside-torn.json");
    assert_int_equal(count_str(j, "\"cat\":\"outside\""), 8);
    assert_null(strstr(j, "\"ts\":2.9,\"dur\":0.09"));
    free(j);
    a = report_load(q, NULL);
    assert_non_null(a);
    t = prism_analysis_tree(a);
    for (uint32_t r = t->first_root; r != PRISM_NO_NODE; r = t->nodes[r].next_sibling)
        if (t->nodes[r].flags & PRISM_NODE_UNATTRIBUTED)
            assert_int_equal(t->nodes[r].total_ns, 750);
    prism_analysis_free(a);
}

/* A trace with no events, {"traceEvents":[]}: every export succeeds with
 * an empty but valid file; speedscope's holds no profile (it sorted its
 * threads with qsort(NULL, 0), undefined: UBSan stopped it, exit 1; issue
 * 32 item 8). */
static void empty_trace_exports(void **state)
{
    fx *f = *state;
    prism_import_register();
    char p[512];
    path_in(p, f->dir, "empty.json");
    write_text(p, "{\"traceEvents\":[]}");
    static const char *const formats[] = { "chrome-trace", "speedscope", "json", "csv", "folded" };
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char name[64];
        snprintf(name, sizeof name, "empty.%s.out", formats[i]);
        char *text = export_to(f, p, formats[i], name);
        if (i < 3)
            assert_json(text, formats[i]);
        if (!strcmp(formats[i], "speedscope")) {
            assert_non_null(strstr(text, "\"shared\":{\"frames\":[]}"));
            assert_non_null(strstr(text, "\"profiles\":[\n]}"));
        }
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(chrome_trace_holds_every_event),
        FX_TEST(chrome_trace_of_hostile_values),
        FX_TEST(chrome_trace_of_torn_file_is_balanced),
        FX_TEST(folded_totals_equal_tree),
        FX_TEST(csv_has_a_row_per_node),
        FX_TEST(tree_json_parses),
        FX_TEST(awkward_names_survive),
        FX_TEST(failed_export_leaves_no_file),
        FX_TEST(output_that_is_no_regular_file_is_kept),
        FX_TEST(export_usage_errors),
        FX_TEST(folded_unit_keeps_the_sum),
        FX_TEST(outside_regions_in_every_format),
        FX_TEST(empty_trace_exports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * analysis_series_test.c - hostile steps (analysis/series.c): steps whose
 * end precedes their start, zero-length steps, steps overlapping an
 * earlier one and repeated indexes are counted in prism_step_stats, left
 * out of (or kept in) the duration statistics as documented, and never
 * cause undefined behaviour (the suite runs under UBSan with make
 * SANITIZE=1): not in the statistics, the leak fit over their memory
 * samples, nor the reports built on them (analyze text and JSON, compare,
 * the chrome-trace export, dump).  A total past 2^64 ns saturates (the
 * fuzzer's overflow: huge but valid durations).
 *
 * The file format cannot carry a step that ends before it starts (the
 * encoder writes its duration as 0, the decoder refuses a wrapping one),
 * so those are handed to the analysis's callbacks directly, as an importer
 * or another reader would; the file-based reports see the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "pbuild.h"
#include "../cli/cli.h"
#include "json_check.h"
#include "report_util.h"

enum { N_WORK = 1 };
static const char *const names[] = { "work" };

static void memory(pbuild *b, uint64_t index)
{
    prism_memory_sample m = { .ts = 20000 + index, .step = index,
                              .rss = (512 + index) << 20, .cpu_permille = 500 };
    pb_memory(b, &m);
}

static void step(pbuild *b, uint64_t start, uint64_t end, uint64_t index)
{
    prism_step s = { start, end, index, 0, PRISM_STEP_SAMPLED };
    pb_step(b, &s);
    memory(b, index);
}

/*
 * In start order:
 *   [1000, 2000)  #0              timed
 *   [2000, 3000)  #1              timed
 *   5000 -> 4000  #2              ends before it starts
 *   [6000, 6000)  #3              zero length
 *   [7000, 9000)  #4              timed
 *   [8000, 8500)  #5              timed, overlaps #4
 *   [10000, 11000) #4 again       timed, a repeated index
 *   2^64-11 -> 0  #7              ends before it starts (by nearly 2^64)
 * Regions run inside the timed ones and inside #2's backwards span.
 */
static const prism_step steps[] = {
    { 1000, 2000, 0, 0, PRISM_STEP_SAMPLED }, { 2000, 3000, 1, 0, PRISM_STEP_SAMPLED },
    { 5000, 4000, 2, 0, PRISM_STEP_SAMPLED }, { 6000, 6000, 3, 0, PRISM_STEP_SAMPLED },
    { 7000, 9000, 4, 0, PRISM_STEP_SAMPLED }, { 8000, 8500, 5, 0, PRISM_STEP_SAMPLED },
    { 10000, 11000, 4, 0, PRISM_STEP_SAMPLED },
    { UINT64_MAX - 10, 0, 7, 0, PRISM_STEP_SAMPLED },
};
#define NSTEPS (sizeof steps / sizeof steps[0])

/* Regions and memory samples; the steps too when in_file (the last one,
 * which the encoder cannot place, left out). */
static void hostile(pbuild *b, bool in_file)
{
    pb_init(b, names, 1, 3);
    pb_thread(b, 1, "main");
    const uint64_t regions[][2] = { { 1100, 1900 }, { 2100, 2900 }, { 4100, 4900 },
                                    { 7100, 8900 }, { 10100, 10900 } };
    for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
        pb_enter(b, 1, regions[i][0], N_WORK);
        pb_exit(b, 1, regions[i][1]);
    }
    for (size_t i = 0; i < NSTEPS; i++) {
        if (in_file && i + 1 < NSTEPS)
            pb_step(b, &steps[i]);
        memory(b, steps[i].index);
    }
}

static void test_hostile_steps_counted(void **state)
{
    (void)state;
    pbuild b;
    hostile(&b, false);
    loaded l = pb_load(&b);
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    cb.steps(l.a, 0, steps, 3);                     /* in two deliveries */
    cb.steps(l.a, 0, steps + 3, NSTEPS - 3);
    prism_analysis_refresh(l.a);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->count, 8);
    assert_int_equal(st->nseries, 8);              /* every step stays in the series */
    assert_int_equal(st->sampled, 8);
    assert_int_equal(st->bad_order, 2);
    assert_int_equal(st->zero_len, 1);
    assert_int_equal(st->overlapping, 1);
    assert_int_equal(st->dup_index, 1);
    /* durations of the 5 timed steps: 1000, 1000, 2000, 500, 1000 */
    assert_int_equal(st->timed, 5);
    assert_int_equal(st->total_ns, 5500);
    assert_true(st->mean_ns == 1100.0);
    assert_true(st->p50_ns == 1000.0);
    assert_true(st->p95_ns == 2000.0);
    assert_true(st->max_ns == 2000.0);
    assert_true(fabs(st->std_ns - sqrt(300000.0)) < 1e-6);
    /* the memory samples of every step, hostile ones included, are fitted */
    const prism_memory_stats *m = prism_analysis_memory(l.a);
    assert_int_equal(m->host.points, 8);
    assert_true(m->host.have_fit);
    /* the work region ran in 4 of the steps (not in #2's backwards span):
     * a backwards step last in start order leaves nothing waiting for it */
    const prism_tree *t = prism_analysis_tree(l.a);
    assert_int_equal(t->count, 1);
    assert_int_equal(t->nodes[0].calls, 5);
    assert_int_equal(t->nodes[0].steps_seen, 4);
    unload(&l);
}

static void test_clean_steps_count_nothing(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 4);
    for (uint64_t i = 0; i < 5; i++)
        step(&b, 1000 * (i + 1), 1000 * (i + 2), i);   /* back to back: no overlap */
    loaded l = pb_load(&b);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->timed, 5);
    assert_int_equal(st->bad_order + st->zero_len + st->overlapping + st->dup_index, 0);
    assert_int_equal(st->total_ns, 5000);
    unload(&l);
}

static void test_total_saturates(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 5);
    step(&b, 0, UINT64_MAX - 1, 0);
    step(&b, 1, UINT64_MAX, 1);
    loaded l = pb_load(&b);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->timed, 2);
    assert_int_equal(st->overlapping, 1);
    assert_true(st->total_ns == UINT64_MAX);
    assert_true(st->max_ns >= 1.8e19);
    unload(&l);
}

/* Every steps-only profile: no steps at all, only hostile ones. */
static void test_only_hostile(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 1, 6);
    step(&b, 9, 3, 0);
    step(&b, 4, 4, 0);
    loaded l = pb_load(&b);
    const prism_step_stats *st = prism_analysis_steps(l.a);
    assert_int_equal(st->count, 2);
    assert_int_equal(st->timed, 0);
    assert_int_equal(st->total_ns, 0);
    assert_true(st->mean_ns == 0 && st->p95_ns == 0 && st->max_ns == 0);
    assert_int_equal(st->dup_index, 1);
    unload(&l);
}

/* The reports over the hostile profile: the counts and sentences appear,
 * JSON stays valid, nothing misbehaves. */
static void test_reports(void **state)
{
    (void)state;
    pbuild b;
    hostile(&b, true);
    pb_flush(&b);
    char dir[64], path[512], out_path[512];
    scratch_dir(dir);
    path_in(path, dir, "hostile.cbor");
    path_in(out_path, dir, "trace.json");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.data, 1, b.len, f), b.len);
    assert_int_equal(fclose(f), 0);
    free(b.data);

    char *out;
    const char *txt[] = { "analyze", path, NULL };
    assert_int_equal(run_cmd(cmd_analyze, txt, &out, NULL), 0);
    /* #2 reached the file as a zero-length step */
    assert_null(strstr(out, "end before"));
    assert_non_null(strstr(out, "  Step problem: 2 steps have zero length: ignored in step "
                                "statistics\n"));
    assert_non_null(strstr(out, "  Step problem: 1 step overlaps an earlier one: kept, shared "
                                "time counted twice\n"));
    assert_non_null(strstr(out, "  Step problem: 1 step repeats an earlier index: kept\n"));
    assert_non_null(strstr(out, "Total time: 5.5 us (sum of step durations)"));
    free(out);

    const char *js[] = { "analyze", path, "--format", "json", NULL };
    assert_int_equal(run_cmd(cmd_analyze, js, &out, NULL), 0);
    size_t where;
    if (!json_valid(out, strlen(out), &where, NULL))
        fail_msg("JSON invalid at byte %zu: %.60s", where, out + where);
    assert_non_null(strstr(out, "\"timed\": 5,"));
    assert_non_null(strstr(out, "\"bad_order\": 0,"));
    assert_non_null(strstr(out, "\"zero_len\": 2,"));
    assert_non_null(strstr(out, "\"overlapping\": 1,"));
    assert_non_null(strstr(out, "\"dup_index\": 1,"));
    assert_non_null(strstr(out, "\"total_ns\": 5500,"));
    free(out);

    const char *cmp[] = { "compare", path, path, NULL };
    assert_int_equal(run_cmd(cmd_compare, cmp, NULL, NULL), 0);
    const char *exp[] = { "export", path, "--format", "chrome-trace", "-o", out_path, NULL };
    assert_int_equal(run_cmd(cmd_export, exp, NULL, NULL), 0);
    char *trace = slurp(out_path, NULL);
    assert_non_null(trace);
    assert_true(json_valid(trace, strlen(trace), &where, NULL));
    free(trace);
    const char *dump[] = { "dump", path, NULL };
    assert_int_equal(run_cmd(cmd_dump, dump, &out, NULL), 0);
    free(out);
    scratch_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_steps_counted),
        cmocka_unit_test(test_clean_steps_count_nothing),
        cmocka_unit_test(test_total_saturates),
        cmocka_unit_test(test_only_hostile),
        cmocka_unit_test(test_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

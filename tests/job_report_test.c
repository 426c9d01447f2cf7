/*
 * job_report_test.c - the job report's writers (reports/analyze_job.c,
 * analyze_job_json.c) on jobs built by hand: names from the files escaped
 * in the text and valid in the JSON, the rank table cut above 64 ranks,
 * figures that do not exist (a rank without steps), no straggler.  The
 * job's figures themselves are tested with the analysis (and end to end in
 * tests/screen/job_cli.sh).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reports.h"
#include "report_util.h"

/* A job of n ranks over s steps, rank r's work 1 ms + r us; the caller
 * sets the rest.  Freed by job_done (not prism_job_free: built here). */
static prism_job *job_make(size_t n, size_t s)
{
    prism_job *j = calloc(1, sizeof *j);
    assert_non_null(j);
    j->nranks = n;
    j->nsteps = s;
    j->ranks = calloc(n, sizeof *j->ranks);
    j->step_index = calloc(s ? s : 1, sizeof *j->step_index);
    j->row = calloc(n + 1, sizeof *j->row);
    j->cell = calloc(n * s + 1, sizeof *j->cell);
    j->ncells = n * s;
    assert_true(j->ranks && j->step_index && j->row && j->cell);
    for (size_t i = 0; i < s; i++)
        j->step_index[i] = i;
    for (size_t r = 0; r < n; r++) {
        prism_job_rank *k = &j->ranks[r];
        k->id = (int64_t)r;
        k->sum.rank = (int64_t)r;
        k->sum.host = (char *)"node";
        k->sum.source = (char *)"rank.cbor";
        k->sum.thread = (char *)"main";
        k->sum.nsteps = s;
        k->step_median_ns = 2e6;
        k->work_median_ns = 1e6 + 1e3 * (double)r;
        k->wait_median_ns = 1e6 - 1e3 * (double)r;
        k->excess_median_ns = 1e3 * (double)r - 1e3 * (double)(n / 2);
        j->row[r] = r * s;
        for (size_t i = 0; i < s; i++)
            j->cell[r * s + i] = (prism_job_cell){ (uint32_t)i, 2e6, k->work_median_ns };
    }
    j->row[n] = n * s;
    j->median_rank = n / 2;
    j->job_step_median_ns = j->job_step_mean_ns = 2e6;
    j->job_step_total_ns = 2e6 * (double)s;
    return j;
}

static void job_done(prism_job *j)
{
    free(j->ranks);
    free(j->step_index);
    free(j->row);
    free(j->cell);
    free(j->stragglers);
    free(j->failed);
    free(j);
}

/* What a writer wrote, NUL-terminated; the caller frees. */
static __attribute__((noinline)) char *text_of(const prism_job *j, int json,
                                                bool steps)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (json)
        assert_true(job_write_json(f, j, steps));
    else
        job_write_txt(f, j);
    fclose(f);
    return buf;
}

static void escaped_names(void **state)
{
    (void)state;
    prism_job *j = job_make(4, 3);
    static const char evil[] = "fwd\033[2J\xe2\x80\xae";
    j->ranks[1].sum.host = (char *)"host\033]0;x\a";
    j->ranks[1].straggler = true;
    j->nstragglers = 1;
    j->stragglers = calloc(1, sizeof *j->stragglers);
    prism_straggler *s = &j->stragglers[0];
    s->index = 1;
    s->rank = 1;
    s->excess_ns = 4.1e6;
    s->excess_pct = 38;
    s->slowed = 3;
    s->steps = 3;
    s->nslowed_index = 3;
    for (int i = 0; i < 3; i++)
        s->slowed_index[i] = (uint64_t)i;
    s->have_cause = true;
    s->cause.name = evil;
    snprintf(s->cause.path, sizeof s->cause.path, "step/%s", evil);
    s->cause.rank_ns = 5.1e6;
    s->cause.median_ns = 1.1e6;
    s->cause.delta_ns = 4e6;
    s->have_wait_region = true;
    s->wait_region.name = "allreduce";
    snprintf(s->wait_region.path, sizeof s->wait_region.path, "allreduce");
    s->wait_region.median_ns = 4e6;
    s->wait_region.rank_ns = 1e5;
    s->wait_region.wait = true;
    j->nfailed = 1;
    j->failed = calloc(1, sizeof *j->failed);
    j->failed[0].source = (char *)"bad\033.cbor";
    snprintf(j->failed[0].message, sizeof j->failed[0].message, "damaged header");
    j->failed[0].offset = 12;
    j->failed[0].status = PRISM_E_HEADER;

    char *t = text_of(j, 0, false);
    assert_null(strchr(t, '\033'));
    assert_null(strstr(t, "\xe2\x80\xae"));
    assert_non_null(strstr(t, "Job: 4 ranks, 3 aligned steps"));
    assert_non_null(strstr(t, "Failed: rank file bad\\x1b.cbor: damaged header at byte 12"));
    assert_non_null(strstr(t, "rank 1 is a straggler: its work per step is +4.10 ms (+38 %) "
                              "over the median of the others in 3 of 3 steps (steps 0, 1, 2)"));
    assert_non_null(strstr(t, "the difference: step/fwd\\x1b[2J\\u202e +4.00 ms per step "
                              "(rank 1: 5.10 ms, median 1.10 ms)"));
    assert_non_null(strstr(t, "the other ranks wait for it: allreduce, 4.00 ms per step "
                              "(median; rank 1: 100.0 us)"));
    assert_non_null(strstr(t, "host\\x1b]0;x\\x07"));
    free(t);
    s->excess_pct = 16957;      /* the others mostly waited: a ratio reads better */
    t = text_of(j, 0, false);
    assert_non_null(strstr(t, "its work per step is +4.10 ms (171x) over the median"));
    free(t);
    s->excess_pct = 38;

    char *js = text_of(j, 1, true);
    assert_null(strchr(js, '\033'));
    assert_null(strstr(js, "\xe2\x80\xae"));         /* bidi escaped too (issue 32) */
    assert_non_null(strstr(js, "\"schema\": \"prism.job/1\""));
    assert_non_null(strstr(js, "\"path\": \"step/fwd\\u001b[2J\\u202e\""));
    assert_non_null(strstr(js, "\"delta_ns\": 4000000"));
    assert_non_null(strstr(js, "\"status\": "));
    assert_non_null(strstr(js, "\"work_ns\": ["));
    free(js);
    job_done(j);
}

/* Ranks numbered by file order (header ranks repeated): a straggler is
 * named by its file and its header's rank too ("rank 1" was header rank
 * 777), in the text and the JSON (issue 32, item 10). */
static void renumbered_straggler(void **state)
{
    (void)state;
    prism_job *j = job_make(3, 3);
    j->ids_from_order = true;
    j->ranks[1].sum.rank = 777;
    j->ranks[1].sum.source = (char *)"job/r777.cbor";
    j->ranks[1].straggler = true;
    j->nstragglers = 1;
    j->stragglers = calloc(1, sizeof *j->stragglers);
    prism_straggler *s = &j->stragglers[0];
    s->index = 1;
    s->rank = 1;
    s->excess_ns = 2e6;
    s->excess_pct = 50;
    s->slowed = s->steps = 3;
    char *t = text_of(j, 0, false);
    assert_non_null(strstr(t, "rank 1 (file job/r777.cbor, header rank 777) is a straggler"));
    free(t);
    char *js = text_of(j, 1, true);
    assert_non_null(strstr(js, "\"header_rank\": 777,\n"));
    assert_non_null(strstr(js, "\"source\": \"job/r777.cbor\""));
    free(js);
    j->ids_from_order = false;          /* header ranks: the number says it all */
    t = text_of(j, 0, false);
    assert_non_null(strstr(t, "  rank 1 is a straggler"));
    free(t);
    job_done(j);
}

static void no_straggler_and_missing_figures(void **state)
{
    (void)state;
    prism_job *j = job_make(3, 2);
    j->ranks[2].work_median_ns = NAN;          /* a rank without steps      */
    j->ranks[2].step_median_ns = NAN;
    j->cell[2 * 2 + 1].work_ns = NAN;
    char *t = text_of(j, 0, false);
    assert_non_null(strstr(t, "Stragglers:\n  No straggler: ranks within"));
    free(t);
    char *js = text_of(j, 1, true);
    assert_non_null(strstr(js, "\"stragglers\": []"));
    assert_non_null(strstr(js, "\"work_median_ns\": null"));
    assert_non_null(strstr(js, "null"));
    assert_null(strstr(js, "nan"));
    free(js);
    char *plain = text_of(j, 1, false);
    assert_null(strstr(plain, "\"index\""));   /* the matrix only on request */
    free(plain);
    job_done(j);
}

static void big_table_is_cut(void **state)
{
    (void)state;
    prism_job *j = job_make(100, 1);
    char *t = text_of(j, 0, false);
    assert_non_null(strstr(t, "\n  ... 76 more\n"));
    /* the slowest by work first: rank 99 is the first row */
    const char *rows = strstr(t, "slowed\n");
    assert_non_null(rows);
    assert_int_equal(strtol(rows + 7, NULL, 10), 99);
    size_t n = 0;
    for (const char *p = rows; (p = strstr(p, "  node ")); p++)
        n++;
    assert_int_equal(n, 24);
    free(t);
    job_done(j);
}

/* Hosts that differ only in the middle, wider than a line: each whole in
 * the rank table at every width (a line of its own when the column cannot
 * grow to it), the figures the same and aligned; the straggler's region
 * whole. */
static void long_hosts_whole(void **state)
{
    (void)state;
    enum { N = 12 };
    prism_job *j = job_make(N, 3);
    static char hosts[N][128], figs_ref[N][256];
    for (size_t r = 0; r < N; r++) {
        snprintf(hosts[r], sizeof hosts[r], "gpu-a100-80gb-rack%02zu-slot3.training-cluster."
                 "datacenter-west.example.internal", r);
        j->ranks[r].sum.host = hosts[r];
    }
    j->ranks[5].straggler = true;
    j->nstragglers = 1;
    j->stragglers = calloc(1, sizeof *j->stragglers);
    prism_straggler *s = &j->stragglers[0];
    s->index = s->rank = 5;
    s->excess_ns = 4.1e6;
    s->slowed = s->steps = 3;
    s->have_cause = true;
    s->cause.name = "encoder.layers.5.self_attn.in_proj_and_scaled_dot_product (backward)";
    snprintf(s->cause.path, sizeof s->cause.path, "TinyTransformer.forward/encoder/layers.5/%s",
             s->cause.name);
    s->cause.delta_ns = 4e6;
    for (size_t w = NWIDTHS; w-- > 0;) {
        set_columns(test_widths[w]);
        char *t = text_of(j, 0, false);
        size_t header = line_cols(t, "   rank host");
        /* the host column starts 16 wide; the rest of a row takes 69 */
        long room = (long)test_width(w) - 69;
        for (size_t r = 0; r < N; r++) {
            char lead[16], figs[256];
            size_t cols;
            bool split;
            snprintf(lead, sizeof lead, "  %6zu%c ", r, r == 5 ? '*' : ' ');
            if (!table_row(t, lead, hosts[r], figs, sizeof figs, &cols, &split)) {
                fprintf(stderr, "%s", t);
                fail_msg("COLUMNS=%s: no whole row for '%s' (above)", width_name(w), hosts[r]);
            }
            assert_int_equal(cols, header);
            assert_int_equal(split, (long)strlen(hosts[r]) > (room > 16 ? room : 16));
            if (w == NWIDTHS - 1)
                snprintf(figs_ref[r], sizeof figs_ref[r], "%s", figs);
            else
                assert_string_equal(figs, figs_ref[r]);
        }
        assert_non_null(strstr(t, "    the difference: TinyTransformer.forward/encoder/layers.5/"
                                  "encoder.layers.5.self_attn.in_proj_and_scaled_dot_product "
                                  "(backward) +4.00 ms per step"));
        free(t);
    }
    set_columns(NULL);
    job_done(j);
}

static void job_args(void **state)
{
    (void)state;
    const char *one[] = { "a.cbor" }, *two[] = { "a.cbor", "b.cbor" }, *dir[] = { "." };
    assert_false(job_args_are_job(one, 1));
    assert_true(job_args_are_job(two, 2));
    assert_true(job_args_are_job(dir, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escaped_names),
        cmocka_unit_test(no_straggler_and_missing_figures),
        cmocka_unit_test(renumbered_straggler),
        cmocka_unit_test(big_table_is_cut),
        cmocka_unit_test(long_hosts_whole),
        cmocka_unit_test(job_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

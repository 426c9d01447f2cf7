/*
 * verdict_busy_test.c - verdicts on a busy machine: a real compute-only
 * program recorded by libcollect beside CPU hogs (busy-loop processes
 * started by the test, at least two and at least as many as the cores, so
 * more processes want to run than there are cores).
 *
 * In a forked child (one session per process) the training thread runs
 * STEPS steps of four regions, each burning its own thread's CPU time
 * (nothing blocks, nothing sleeps): prep, hot_matmul (the planted hot
 * operation, about 60 % of the step), update, log_metrics.  The child reads
 * its own clock around each step and around hot_matmul and writes the
 * sums to a file: the truth.  Preempted, its regions wait in the run queue;
 * they are never blocked.
 *
 * Robust facts only: no off_cpu_wait finding; the first finding is
 * hot_operation on hot_matmul with a share within 5 points of the
 * workload's own clock; its evidence splits the time into running, waiting
 * for a CPU and blocked, and names the contention when its run-queue part
 * is measurable.  A file without CPU samples skips the test.
 *
 * Step boundaries, to the tick: every step of every run, step 0 first
 * (converted by the collector's first 2 ms clock estimate), lasts by
 * PRISM's figures at least as long as the workload's own clock read
 * inside it (just after prism_step_begin, just before prism_step_end).
 *
 * The regression gate (compare --gate) on the same workload, GATE_STEPS
 * steps a run, update 6 ms: the planted +25 % fails on update alone,
 * +5 % and no change pass, with every run beside hogs (three baselines)
 * and against a quiet baseline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"
#include "hogs.h"
#include "collect_util.h"
#include "prism/analysis.h"

#define STEPS 40u
#define GATE_STEPS 120u        /* the gate tests' runs: more steps, less noise */
#define MAX_STEPS GATE_STEPS
#define GATE_TOO_BUSY 0.75     /* run-queue share past which +25 % may go unseen */
#define GATE_NOT_QUIET 0.40     /* a "quiet" run that waited longer was not quiet */
#define GATE_UPDATE_MS 6.0     /* the gate tests' planted region, a call a step */
#define MAX_HOGS 64


static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct child_arg {
    const char *profile, *truth;
    double update_ms;           /* the planted region's CPU time per step */
    unsigned small;             /* small regions after it (0.4 ms each)   */
    unsigned hogs_from, hogs_to;    /* the child runs hogs in steps [from, to) */
    unsigned steps;             /* 0: STEPS                                 */
} child_arg;

static int busy_child(void *arg)
{
    const child_arg *ca = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = ca->profile;
    CHILD_CHECK(prism_init(&c) == 0);
    CHILD_CHECK(prism_recording());
    prism_thread_name("trainer");
    uint32_t prep = prism_name("prep"), hot = prism_name("hot_matmul"),
             upd = prism_name("update"), logm = prism_name("log_metrics");
    CHILD_CHECK(prep && hot && upd && logm);
    unsigned steps = ca->steps ? ca->steps : STEPS;
    uint64_t step_ns = 0, hot_ns = 0, inner[MAX_STEPS];
    pid_t hog[MAX_HOGS];
    size_t nhog = 0;
    for (unsigned s = 0; s < steps; s++) {
        if (s == ca->hogs_from && ca->hogs_to > s)
            nhog = hogs_start(hog, MAX_HOGS);
        if (s == ca->hogs_to) {
            hogs_stop(hog, nhog);
            nhog = 0;
        }
        prism_step_begin();
        uint64_t t0 = mono_ns();
        prism_push_id(prep);
        burn(2.0);
        prism_pop();
        uint64_t h0 = mono_ns();
        prism_push_id(hot);
        burn(8.0);
        prism_pop();
        hot_ns += mono_ns() - h0;
        prism_push_id(upd);
        burn(ca->update_ms);
        prism_pop();
        for (unsigned k = 0; k < ca->small; k++) {
            char nm[24];
            snprintf(nm, sizeof nm, "small_%02u", k);
            prism_push(nm);
            burn(0.4);
            prism_pop();
        }
        prism_push_id(logm);
        burn(1.0);
        prism_pop();
        inner[s] = mono_ns() - t0;
        step_ns += inner[s];
        prism_step_end();
    }
    hogs_stop(hog, nhog);
    prism_shutdown();
    FILE *f = fopen(ca->truth, "w");
    CHILD_CHECK(f != NULL);
    fprintf(f, "%llu %llu\n", (unsigned long long)step_ns, (unsigned long long)hot_ns);
    for (unsigned s = 0; s < steps; s++)
        fprintf(f, "%llu\n", (unsigned long long)inner[s]);
    CHILD_CHECK(fclose(f) == 0);
    return 0;
}

/* Each step by PRISM against the workload's clock inside it (the truth
 * file's lines after the first): none shorter. */
static void check_steps(const char *truth, const prism_analysis *a, unsigned steps)
{
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    unsigned long long x, y, inner[MAX_STEPS];
    assert_int_equal(fscanf(f, "%llu %llu", &x, &y), 2);
    for (unsigned s = 0; s < steps; s++)
        assert_int_equal(fscanf(f, "%llu", &inner[s]), 1);
    fclose(f);
    const prism_step_stats *st = prism_analysis_steps(a);
    assert_int_equal(st->nseries, steps);
    size_t short_steps = 0;
    for (size_t i = 0; i < st->nseries; i++) {
        const prism_step *p = &st->series[i];
        assert_true(p->index < steps);
        uint64_t d = p->end - p->start, own = inner[p->index];
        if (d < own) {
            short_steps++;
            printf("  step %llu: %llu ns by PRISM, %llu ns by the workload's clock inside it "
                   "(%lld ns)\n", (unsigned long long)p->index, (unsigned long long)d,
                   (unsigned long long)own, (long long)d - (long long)own);
        }
    }
    printf("  steps: %zu of %zu shorter than the workload's clock inside them\n", short_steps,
           st->nseries);
    assert_int_equal(short_steps, 0);
}

static void count_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    (void)s;
    *(uint64_t *)ctx += n;
}

static void test_compute_beside_hogs(void **state)
{
    (void)state;
    tdir d;
    char path[512], truth[512];
    tdir_make(&d);
    tdir_file(&d, "busy.cbor", path, sizeof path);
    tdir_file(&d, "truth.txt", truth, sizeof truth);
    pid_t hog[MAX_HOGS];
    size_t nhog = hogs_start(hog, MAX_HOGS);
    child_arg ca = { path, truth, 2.5, 0, 0, 0, STEPS };
    char cerr[8192];
    child c = child_start(busy_child, &ca, false, true);
    int status = child_finish(&c, cerr, sizeof cerr);
    hogs_stop(hog, nhog);               /* before any assertion: never left running */
    assert_child_ok(status, cerr);

    unsigned long long step_ns = 0, hot_ns = 0;
    FILE *f = fopen(truth, "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%llu %llu", &step_ns, &hot_ns), 2);
    fclose(f);
    assert_true(step_ns > 0);
    double want = (double)hot_ns / (double)step_ns;

    uint64_t samples = 0;
    prism_reader_callbacks cb = { .cpu = count_cpu };
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, &samples, &r), PRISM_OK);
    prism_reader_free(r);
    if (!samples) {
        printf("busy: the profile holds no CPU samples: skipped\n");
        tdir_remove(&d);
        skip();
    }
    prism_status err = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!a)
        print_error("analyze %s: %s at %llu\n", path, msg, (unsigned long long)off);
    assert_non_null(a);
    check_steps(truth, a, STEPS);
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    printf("busy: %zu hogs, %u steps, hot_matmul %.1f%% of the step by its own clock, "
           "%llu CPU samples, %zu findings\n", nhog, STEPS, 100.0 * want,
           (unsigned long long)samples, n);
    size_t waits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *region = b[i].node < t->count ? t->nodes[b[i].node].name : "-";
        printf("    %-14s %-6s %-12s %5.1f%%  | %s | %s\n", prism_bottleneck_name(b[i].type),
               prism_severity_name(b[i].severity), region, 100.0 * b[i].share,
               b[i].description, b[i].evidence);
        waits += b[i].type == PRISM_BN_OFF_CPU_WAIT;
    }
    assert_int_equal(waits, 0);
    assert_true(n > 0);
    assert_int_equal(b[0].type, PRISM_BN_HOT_OPERATION);
    assert_true(b[0].node < t->count);
    assert_string_equal(t->nodes[b[0].node].name, "hot_matmul");
    printf("  hot_matmul: %.1f%% vs %.1f%% by the workload's clock\n", 100.0 * b[0].share,
           100.0 * want);
    assert_true(fabs(b[0].share - want) <= 0.05);
    assert_non_null(strstr(b[0].evidence, "waiting for a CPU"));
    const prism_node *hn = &t->nodes[b[0].node];
    if (hn->cpu_known_ns && (double)hn->runq_ns >= 0.1 * (double)hn->cpu_known_ns)
        assert_non_null(strstr(b[0].evidence, "contention"));
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* One recorded run of the workload, analysed; hogs beside it on request. */
static prism_analysis *run_steps(tdir *d, const char *name, double update_ms, bool hogs,
                                 unsigned small, unsigned hogs_from, unsigned hogs_to,
                                 unsigned steps)
{
    char path[512], truth[512], tn[64];
    tdir_file(d, name, path, sizeof path);
    snprintf(tn, sizeof tn, "%s.truth", name);
    tdir_file(d, tn, truth, sizeof truth);
    pid_t hog[MAX_HOGS];
    size_t nhog = hogs ? hogs_start(hog, MAX_HOGS) : 0;
    child_arg ca = { path, truth, update_ms, small, hogs_from, hogs_to, steps };
    char cerr[8192];
    child c = child_start(busy_child, &ca, false, true);
    int status = child_finish(&c, cerr, sizeof cerr);
    hogs_stop(hog, nhog);               /* before any assertion: never left running */
    assert_child_ok(status, cerr);
    prism_status err = PRISM_OK;
    char msg[256];
    uint64_t off = 0;
    prism_analysis *a = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    check_steps(truth, a, steps ? steps : STEPS);
    return a;
}

static prism_analysis *run_hogs(tdir *d, const char *name, double update_ms, bool hogs,
                                unsigned small, unsigned hogs_from, unsigned hogs_to)
{
    return run_steps(d, name, update_ms, hogs, small, hogs_from, hogs_to, 0);
}

static prism_analysis *run_small(tdir *d, const char *name, double update_ms, bool hogs,
                                 unsigned small)
{
    return run_hogs(d, name, update_ms, hogs, small, 0, 0);
}

static prism_analysis *run_once(tdir *d, const char *name, double update_ms, bool hogs)
{
    return run_small(d, name, update_ms, hogs, 12);
}

static size_t print_compare(const char *label, const prism_compare *c)
{
    size_t flagged = 0;
    printf("%s: run factor x%.2f%s, load %.1f%% vs %.1f%%%s\n", label, c->run_factor,
           c->whole_run_shift ? " (whole-run shift)" : "", 100.0 * c->base_runq_share,
           100.0 * c->new_runq_share, c->load_differs ? " (differs)" : "");
    for (size_t i = 0; i < c->count; i++) {
        const prism_delta *d = &c->deltas[i];
        if (d->base_node == PRISM_NO_NODE || d->new_node == PRISM_NO_NODE)
            continue;
        flagged += d->significant;
        char own[64] = "";
        if (d->own)
            snprintf(own, sizeof own, " own %+.1f%% (runq %.0f%% -> %.0f%%)", d->own_pct,
                     100.0 * d->base_runq, 100.0 * d->new_runq);
        printf("  %c %-28s med %+6.1f%% raw %+6.1f%% p %.4f%s\n",
               d->significant ? '*' : d->raw_significant ? '~' : ' ', d->path, d->median_pct,
               d->raw_median_pct, d->p_value, own);

    }
    return flagged;
}

/* A +25 % region, the new run beside hogs: flagged slower, raw and
 * adjusted change both positive. */
static void test_compare_planted_under_load(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *base = run_once(&d, "base.cbor", 2.5, false);
    prism_analysis *cur = run_once(&d, "slow.cbor", 2.5 * 1.25, true);
    if (!prism_analysis_cpu_present(base) || !prism_analysis_cpu_present(cur)) {
        printf("compare: no CPU samples: skipped\n");
        prism_analysis_free(base);
        prism_analysis_free(cur);
        tdir_remove(&d);
        skip();
    }
    prism_compare *c = prism_compare_new(base, cur);
    assert_non_null(c);
    print_compare("planted +25% beside hogs", c);
    const prism_delta *u = NULL;
    for (size_t i = 0; i < c->count; i++)
        if (!strcmp(c->deltas[i].name, "update"))
            u = &c->deltas[i];
    assert_non_null(u);
    if (c->new_runq_share >= 0.5) {
        /* the run beside hogs waited for a CPU half its time or more (the
         * hogs plus a build beside the test: 66 %): own time moves with the
         * load there, compare says so, and the +25 % may read as a wall-time
         * change alone (own +13.5 % under a floor of a quarter of the load's
         * change, once); its direction must be right */
        printf("compare: the run beside hogs waited for a CPU %.0f%% of its time: update "
               "raw-significant, own time %+.1f%%\n", 100.0 * c->new_runq_share, u->own_pct);
        assert_true(u->raw_significant);
        assert_true(!u->own || u->own_pct > 0);
    } else {
        assert_true(u->significant);
    }
    assert_true(u->median_pct > 0);
    assert_true(u->raw_median_pct > 0);
    prism_compare_free(c);
    prism_analysis_free(base);
    prism_analysis_free(cur);
    tdir_remove(&d);
}

/* Two runs of the same program, both beside hogs, 37 regions (33 small
 * ones): at most one flagged (issue 26: identical runs flag <= 1 region in
 * 37).  The hogs keep the load the same in both; the tests below change
 * it between the runs and within one. */
static void test_compare_identical_beside_hogs(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *a = run_small(&d, "one.cbor", 2.5, true, 33);
    prism_analysis *b = run_small(&d, "two.cbor", 2.5, true, 33);
    prism_compare *c = prism_compare_new(a, b);
    assert_non_null(c);
    size_t flagged = print_compare("identical runs beside hogs", c);
    printf("  %zu of %zu regions flagged (want <= 1)\n", flagged, c->count);
    assert_true(c->count >= 37);
    assert_true(flagged <= 1);
    prism_compare_free(c);
    prism_analysis_free(a);
    prism_analysis_free(b);
    tdir_remove(&d);
}

/* The same program twice, the second beside hogs: the hogs slow the
 * regions' wall time, not their own time; at most two of 38 flagged (the
 * samples place a 2-3 ms region's run-queue time roughly, the more so the
 * more the load moved: under heavy load a mid-size region's own time can
 * read 10 % off), and the long region (hot_matmul, 8 ms calls) checked on
 * its own time. */
static void check_load_only(const char *label, prism_analysis *a, prism_analysis *b)
{
    if (!prism_analysis_cpu_present(a) || !prism_analysis_cpu_present(b)) {
        printf("%s: no CPU samples: skipped\n", label);
        prism_analysis_free(a);
        prism_analysis_free(b);
        skip();
    }
    prism_compare *c = prism_compare_new(a, b);
    assert_non_null(c);
    size_t flagged = print_compare(label, c);
    printf("  %zu of %zu regions flagged (want <= 2), %zu on own time\n", flagged, c->count,
           c->own_regions);
    assert_true(c->count >= 37);
    assert_true(flagged <= 2);
    assert_true(c->own_regions >= 1);
    prism_compare_free(c);
    prism_analysis_free(a);
    prism_analysis_free(b);
}

static void test_compare_quiet_against_hogs(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *a = run_small(&d, "quiet.cbor", 2.5, false, 33);
    prism_analysis *b = run_small(&d, "hogs.cbor", 2.5, true, 33);
    check_load_only("a quiet run against one beside hogs", a, b);
    tdir_remove(&d);
}

/* Load that comes and goes within a run: hogs in the middle half of the
 * second run's steps only. */
static void test_compare_hogs_half_way(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *a = run_small(&d, "quiet.cbor", 2.5, false, 33);
    prism_analysis *b = run_hogs(&d, "middle.cbor", 2.5, false, 33, STEPS / 4, 3 * STEPS / 4);
    check_load_only("hogs in the middle half of the second run", a, b);
    tdir_remove(&d);
}

/* ---- the regression gate on the real workload ---- */

/* A run for the gate: GATE_STEPS steps, 12 small regions. */
static prism_analysis *gate_run(tdir *d, const char *name, double update_ms, bool hogs)
{
    return run_steps(d, name, update_ms, hogs, 12, 0, 0, GATE_STEPS);
}

static prism_gate *gate_of(const char *label, prism_analysis *const *base, size_t nbase,
                           prism_analysis *cur)
{
    char msg[256];
    prism_gate *g = prism_gate_new((const prism_analysis *const *)base, nbase, cur, NULL, msg,
                                   sizeof msg);
    assert_non_null(g);
    printf("%s: %s, %zu failed, run x%.2f%s, load %.1f%% vs %.1f%%\n", label,
           g->regressed ? "FAIL" : "pass", g->failed, g->run_factor,
           g->whole_run_shift ? " (shift)" : "", 100.0 * g->load_base, 100.0 * g->load_new);
    for (size_t i = 0; i < g->count; i++)
        if (i < 4 || g->items[i].regressed || !strcmp(g->items[i].path, "update"))
        printf("  %-4s %-12s %+6.1f%% limit %4.1f%% slower in %zu of %zu%s\n",
               g->items[i].regressed ? "FAIL" : "ok",
               g->items[i].is_step ? "(step)" : g->items[i].path, g->items[i].change_pct,
               g->items[i].limit_pct, g->items[i].slower, g->items[i].compared,
               g->items[i].own ? " own" : "");
    return g;
}

static const prism_gate_item *item_of(const prism_gate *g, const char *path)
{
    for (size_t i = 0; i < g->count; i++)
        if (!g->items[i].is_step && !strcmp(g->items[i].path, path))
            return &g->items[i];
    return NULL;
}

static bool failed_on(const prism_gate *g, const char *path)
{
    for (size_t i = 0; i < g->count; i++)
        if (g->items[i].regressed && !g->items[i].is_step && !strcmp(g->items[i].path, path))
            return true;
    return false;
}

/* Every run beside hogs, three baselines (on a busy runner the gate wants
 * several: their spread is the noise): planted +25 % in the region
 * "update" (6 ms calls, a quarter of the step) fails on update alone, +5 %
 * and no change pass.  (In 2.5 ms calls, the samples placed the run-queue
 * wait too roughly at a 65 % run-queue share: +25 % read +13..+26 % and a
 * +5 % once +11 %.) */
static void test_gate_beside_hogs(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *base[3];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "base%d.cbor", i);
        base[i] = gate_run(&d, name, GATE_UPDATE_MS, true);
    }
    prism_analysis *same = gate_run(&d, "same.cbor", GATE_UPDATE_MS, true);
    prism_analysis *plus5 = gate_run(&d, "plus5.cbor", GATE_UPDATE_MS * 1.05, true);
    prism_analysis *plus25 = gate_run(&d, "plus25.cbor", GATE_UPDATE_MS * 1.25, true);
    prism_gate *g = gate_of("gate, same code beside hogs", base, 3, same);
    assert_false(g->regressed);
    prism_gate_free(g);
    g = gate_of("gate, update +5% beside hogs", base, 3, plus5);
    assert_false(g->regressed);
    prism_gate_free(g);
    g = gate_of("gate, update +25% beside hogs", base, 3, plus25);
    if (g->load_base > GATE_TOO_BUSY || g->load_new > GATE_TOO_BUSY) {
        /* a region that waits for a CPU most of its time is no longer
         * timed well enough to find +25 %; the gate must still not fail
         * on anything else */
        printf("gate: the runs waited for a CPU over %.0f%% of their time: the +25%% is "
               "not required to fail\n", 100.0 * GATE_TOO_BUSY);
        assert_true(g->failed == 0 || (g->failed == 1 && failed_on(g, "update")));
    } else {
        assert_true(g->regressed);
        assert_true(failed_on(g, "update"));
        assert_int_equal(g->failed, 1);
    }
    prism_gate_free(g);
    prism_analysis_free(same);
    prism_analysis_free(plus5);
    prism_analysis_free(plus25);
    for (int i = 0; i < 3; i++)
        prism_analysis_free(base[i]);
    tdir_remove(&d);
}

/* One quiet baseline, the new runs beside hogs: the load is not a
 * regression, the planted +25 % is.  (When the machine is busy for the
 * quiet run too, one busy baseline against one busy run once read the
 * +25 % as +5 %: that case wants several baselines, the test above.) */
static void test_gate_quiet_against_hogs(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    prism_analysis *quiet = gate_run(&d, "quiet.cbor", GATE_UPDATE_MS, false);
    prism_analysis *same = gate_run(&d, "same.cbor", GATE_UPDATE_MS, true);
    prism_analysis *plus25 = gate_run(&d, "plus25.cbor", GATE_UPDATE_MS * 1.25, true);
    if (!prism_analysis_cpu_present(quiet) || !prism_analysis_cpu_present(same)) {
        printf("gate: no CPU samples: skipped\n");
        prism_analysis_free(quiet);
        prism_analysis_free(same);
        prism_analysis_free(plus25);
        tdir_remove(&d);
        skip();
    }
    prism_gate *g = gate_of("gate, a quiet baseline, the same code beside hogs", &quiet, 1, same);
    assert_false(g->regressed);
    prism_gate_free(g);
    g = gate_of("gate, a quiet baseline, update +25% beside hogs", &quiet, 1, plus25);
    if (g->load_base > GATE_NOT_QUIET) {
        /* the machine was busy for the "quiet" run too: one busy baseline
         * against a busy run is the case the test above gives three
         * baselines; here only no other failure is required */
        printf("gate: the quiet run waited for a CPU %.0f%% of its time: the +25%% is not "
               "required to fail\n", 100.0 * g->load_base);
        assert_true(g->failed == 0 || (g->failed == 1 && failed_on(g, "update")));
    } else if (g->load_new > GATE_NOT_QUIET) {
        /* a quiet baseline against a run that waited for a CPU most of its
         * time: the per-step times spread so much that +25 % against a 10 %
         * limit may not be significant (it was not, once, at a 50 % share
         * with builds and a browser beside the test's hogs); the change
         * read must be right, and nothing else may fail */
        const prism_gate_item *u = item_of(g, "update");
        printf("gate: the run beside hogs waited for a CPU %.0f%% of its time: update read "
               "%+.1f%%\n", 100.0 * g->load_new, u ? u->change_pct : 0.0);
        assert_non_null(u);
        assert_true(u->change_pct > 15 && u->change_pct < 35);
        assert_true(g->failed == 0 || (g->failed == 1 && failed_on(g, "update")));
    } else {
        assert_true(g->regressed);
        assert_true(failed_on(g, "update"));
    }
    prism_gate_free(g);
    prism_analysis_free(quiet);
    prism_analysis_free(same);
    prism_analysis_free(plus25);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_beside_hogs),
        cmocka_unit_test(test_compare_planted_under_load),
        cmocka_unit_test(test_compare_identical_beside_hogs),
        cmocka_unit_test(test_compare_quiet_against_hogs),
        cmocka_unit_test(test_compare_hogs_half_way),
        cmocka_unit_test(test_gate_beside_hogs),
        cmocka_unit_test(test_gate_quiet_against_hogs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * job_summary_edge_test.c - a rank summary (analysis/job_summary.c) at its
 * edges: regions capped and closed under parent; missing, damaged and
 * cut files; unbalanced and absurdly deep nesting; steps that repeat an
 * index, are not sampled, empty or cut short; no training thread; a torch
 * trace summarised like a profile.  Helpers: job_sim.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "job_sim.h"
#include "prism/import.h"

/* (5) epoch / 13 x 13 x 12 = 2028 leaf paths (2211 in all): at most
 * PRISM_JOB_MAX_REGIONS kept, nearly that many, parents before children,
 * the heaviest leaf among them, and "epoch" (no time in the step: it
 * began before) kept as everyone's ancestor. */
static void test_region_cap(void **state)
{
    (void)state;
    static char nbuf[39][8];
    const char *names[39];
    for (int i = 0; i < 39; i++) {
        snprintf(nbuf[i], sizeof nbuf[i], "%c%d", "abc"[i / 13 % 3], i);
        names[i] = i < 38 ? nbuf[i] : "epoch";
    }
    sim *m = sim_new(names, 39, false);
    enter(m, 39);
    m->now += 1 * US;
    uint64_t start = m->now;
    for (uint32_t a = 0; a < 13; a++) {
        enter(m, 1 + a);
        for (uint32_t b = 0; b < 13; b++) {
            enter(m, 14 + b);
            for (uint32_t c = 0; c < 12; c++)
                leaf(m, 27 + c, ((a * 13 + b) * 12 + c) % 97 * US + US, true);
            leave(m);
        }
        leave(m);
    }
    step(m, start, 0);
    leave(m);
    prism_rank_summary s;
    assert_int_equal(summarise(m, "wide.cbor", &s), PRISM_OK);
    assert_true(s.nregions <= PRISM_JOB_MAX_REGIONS);
    assert_true(s.nregions >= PRISM_JOB_MAX_REGIONS - 16);
    assert_string_equal(s.regions[0].name, "epoch");
    assert_int_equal(s.regions[0].in_step_ns, 0);
    bool heaviest = false;
    for (size_t i = 0; i < s.nregions; i++) {
        const prism_rank_region *r = &s.regions[i];
        if (!r->parent_hash) {
            assert_int_equal(r->depth, 0);
        } else {
            size_t p = 0;
            while (p < i && s.regions[p].path_hash != r->parent_hash)
                p++;
            assert_true(p < i);             /* the parent, and before it */
            assert_int_equal(s.regions[p].depth + 1, r->depth);
        }
        for (size_t j = 0; j < i; j++)
            assert_true(s.regions[j].path_hash != r->path_hash);
        heaviest |= r->depth == 3 && r->total_ns == 97 * US;
    }
    assert_true(heaviest);
    prism_rank_summary_free(&s);
}

/* g_path gives error `want` (PRISM_STATUS_COUNT: any), words, and an
 * empty summary. */
static void fails_cleanly(prism_status want)
{
    prism_rank_summary s;
    char msg[256];
    prism_status st = from_file(&s, msg, sizeof msg);
    assert_int_not_equal(st, PRISM_OK);
    if (want != PRISM_STATUS_COUNT)
        assert_int_equal(st, want);
    assert_true(strlen(msg) > 0);
    assert_true(!s.regions && !s.steps && !s.source && !s.host && !s.thread);
    prism_rank_summary_free(&s);
}

/* (6) A missing file, a foreign one, a cut header; bad arguments. */
static void test_bad_files(void **state)
{
    (void)state;
    snprintf(g_path, sizeof g_path, "%s/absent.cbor", g_dir);
    fails_cleanly(PRISM_E_IO);
    const char junk[] = "this is no profile at all, not even JSON\n";
    write_file("junk.cbor", junk, sizeof junk - 1);
    fails_cleanly(PRISM_STATUS_COUNT);
    uint64_t want[NSTEPS];
    sim *m = plain_loop(false, AR, false, want);
    pb_flush(&m->b);
    write_file("cut.cbor", m->b.data, 12);
    free(m->b.data);
    free(m);
    fails_cleanly(PRISM_STATUS_COUNT);
    prism_rank_summary s;
    char msg[256];
    assert_int_equal(prism_rank_summary_from_file(NULL, &s, msg, sizeof msg, NULL), PRISM_E_ARG);
    assert_int_equal(prism_rank_summary_from_file(g_path, NULL, msg, sizeof msg, NULL),
                     PRISM_E_ARG);
}

/* A chunk damaged in the middle is skipped by both reads: the summary
 * comes, and no step waits longer than it lasted. */
static void test_damaged_chunk(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    sim *m = plain_loop(true, AR, false, want);
    pb_flush(&m->b);
    m->b.data[m->b.len / 2] ^= 0x5a;
    prism_rank_summary s;
    assert_int_equal(summarise(m, "damaged.cbor", &s), PRISM_OK);
    assert_true(s.nsteps > 0 && s.nsteps <= NSTEPS);
    for (size_t i = 0; i < s.nsteps; i++)
        assert_true(s.steps[i].wait_ns <= s.steps[i].step_ns);
    prism_rank_summary_free(&s);
}

/* Exits without enters, recursion past the 256-frame stack inside a
 * waiting region (its end must still be its own exit; an all-reduce at
 * depth 300 is counted by neither read), and chunks whose depth disagrees
 * with what came before (chunks lost: frames invented, then dropped):
 * every step's wait is still exactly its waiting regions' time. */
static void test_unbalanced(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    sim *m = sim_new(loop_names, NNAMES, false);
    leave(m);                               /* an exit before any enter */
    leave(m);
    m->b.depth[1] = 0;
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = m->now;
        want[k] = (1 + k % 3) * MS;
        leaf(m, FWD, 2 * MS, true);
        if (k == 3) {                       /* comm_wait { deep x 300 { allreduce } } */
            enter(m, COMM);
            for (int i = 0; i < 300; i++) {
                enter(m, DEEP);
                m->now += 1 * US;
            }
            leaf(m, AR, 1 * MS, false);     /* past the stack: no path of its own */
            for (int i = 0; i < 300; i++) {
                m->now += 1 * US;
                leave(m);
            }
            leave(m);
            want[k] += 1600 * US;
        }
        if (k == 6) {                       /* a chunk claiming 2 frames more */
            pb_flush(&m->b);
            m->b.depth[1] += 2;
            leaf(m, COMM, 500 * US, false);
            pb_flush(&m->b);
            m->b.depth[1] -= 2;             /* ... and one that drops them */
            want[k] += 500 * US;
        }
        leaf(m, AR, (1 + k % 3) * MS, false);
        leaf(m, OPT, 1 * MS, true);
        step(m, start, k);
    }
    prism_rank_summary s;
    assert_int_equal(summarise(m, "unbalanced.cbor", &s), PRISM_OK);
    waits_are(&s, want, NSTEPS);
    assert_int_equal(region(&s, "allreduce")->depth, 0);      /* one path only */
    size_t comms = 0;
    for (size_t i = 0; i < s.nregions; i++)
        if (!strcmp(s.regions[i].name, "comm_wait")) {
            comms++;
            assert_int_equal(s.regions[i].wait, PRISM_WAIT_NAME);
            assert_true(s.regions[i].depth == 0 || s.regions[i].depth == 2);
        }
    assert_int_equal(comms, 2);             /* top level, under "(unknown)" x 2 */
    prism_rank_summary_free(&s);
}

/* Steps that are no timed sampled step, or repeat an index, are left out
 * (the first of an index kept, the repeat's wait credited nowhere); a
 * wait running past its step's end counts for its part inside the step. */
static void test_step_edges(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    sim *m = plain_loop(false, AR, false, want);
    uint64_t start = m->now;
    leaf(m, AR, 7 * MS, false);
    prism_step dup = { start, m->now, 5, 0, PRISM_STEP_SAMPLED };
    pb_step(&m->b, &dup);
    start = m->now;
    leaf(m, AR, 2 * MS, false);
    prism_step unsampled = { start, m->now, 50, 0, 0 };
    pb_step(&m->b, &unsampled);
    prism_step empty = { m->now, m->now, 60, 0, PRISM_STEP_SAMPLED };
    pb_step(&m->b, &empty);
    start = m->now;
    leaf(m, FWD, 1 * MS, true);
    leaf(m, AR, 3 * MS, false);
    prism_step cut = { start, start + 2 * MS, 100, 0, PRISM_STEP_SAMPLED };
    pb_step(&m->b, &cut);
    prism_rank_summary s;
    assert_int_equal(summarise(m, "edges.cbor", &s), PRISM_OK);
    assert_int_equal(s.steps_total, NSTEPS + 4);
    assert_int_equal(s.nsteps, NSTEPS + 1);
    assert_int_equal(s.steps[5].index, 5);
    assert_int_equal(s.steps[5].step_ns, 4 * MS + want[5]);
    assert_int_equal(s.steps[5].wait_ns, want[5]);
    assert_int_equal(s.steps[NSTEPS].index, 100);
    assert_int_equal(s.steps[NSTEPS].step_ns, 2 * MS);
    /* the wait runs past the step's end: only its part inside counts */
    assert_int_equal(s.steps[NSTEPS].wait_ns, 1 * MS);
    for (size_t i = 0; i < NSTEPS; i++)                 /* the rest as ever */
        assert_int_equal(s.steps[i].wait_ns, want[i]);
    prism_rank_summary_free(&s);
}

/* A wait left open at the end of the file (the rank killed in its
 * all-reduce): the analysis closes it at the last time and names it a
 * wait, the second pass closes nothing and finds no wait interval at all.
 * The steps before it wait nothing, and sorting no intervals (qsort of
 * NULL, 0: undefined; issue 32 item 8) must not happen: under
 * SANITIZE=1, UBSan stops the test there. */
static void test_wait_never_closed(void **state)
{
    (void)state;
    sim *m = sim_new(loop_names, NNAMES, false);
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t start = m->now;
        leaf(m, FWD, 2 * MS, true);
        step(m, start, k);
    }
    uint64_t start = m->now;
    enter(m, COMM);
    m->now += 2 * MS;
    step(m, start, 3);
    prism_rank_summary s;
    assert_int_equal(summarise(m, "open_wait.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "comm_wait")->wait, PRISM_WAIT_NAME);
    assert_int_equal(s.nsteps, 4);
    for (size_t i = 0; i < s.nsteps; i++)
        assert_int_equal(s.steps[i].wait_ns, 0);
    prism_rank_summary_free(&s);
}

/* No steps and nothing naming the training thread: the all-threads tree
 * stands in, no thread is named, and there is no per-step wait. */
static void test_no_training_thread(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, loop_names, NNAMES, 5);
    pb_thread(&b, 1, "a");
    pb_thread(&b, 2, "b");
    for (uint32_t t = 1; t <= 2; t++) {
        uint64_t now = 1 * MS;
        for (int i = 0; i < 5; i++) {
            pb_leaf(&b, t, &now, FWD, 1 * MS);
            pb_leaf(&b, t, &now, AR, 1 * MS);
        }
    }
    pb_flush(&b);
    char msg[256];
    prism_rank_summary s;
    write_file("nosteps.cbor", b.data, b.len);
    free(b.data);
    assert_int_equal(from_file(&s, msg, sizeof msg), PRISM_OK);
    assert_int_equal(s.nsteps, 0);
    assert_int_equal(s.steps_total, 0);
    assert_string_equal(s.thread, "");
    assert_int_equal(s.rank, -1);
    assert_int_equal(region(&s, "allreduce")->calls, 10);     /* both threads */
    assert_int_equal(region(&s, "allreduce")->wait, PRISM_WAIT_NAME);
    prism_rank_summary_free(&s);
}

#define X(name, ts, dur) \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":7,\"tid\":1" \
    ",\"ts\":" #ts ",\"dur\":" #dur "}"

/* (7) A torch trace: steps from ProfilerStep#N, the rank from
 * distributedInfo, an NCCL op waiting by name, per-step wait from the
 * second read through the importer. */
static void test_torch_trace(void **state)
{
    (void)state;
    const char *t = "{\"traceEvents\":[" X("ProfilerStep#4", 0, 100) "," X("forward", 0, 60) ","
                    X("nccl:all_reduce", 60, 30) "," X("ProfilerStep#5", 100, 100) ","
                    X("forward", 100, 50) "," X("nccl:all_reduce", 150, 40) "],"
                    "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8}}";
    char msg[256];
    prism_rank_summary s;
    write_file("rank3.json", t, strlen(t));
    assert_int_equal(from_file(&s, msg, sizeof msg), PRISM_OK);
    assert_int_equal(s.rank, 3);
    assert_int_equal(s.nsteps, 2);
    assert_int_equal(s.steps[0].index, 4);
    assert_int_equal(s.steps[1].index, 5);
    assert_int_equal(s.steps[0].step_ns, 100 * US);
    assert_int_equal(region(&s, "nccl:all_reduce")->wait, PRISM_WAIT_NAME);
    assert_int_equal(region(&s, "forward")->wait, PRISM_WAIT_NO);
    assert_int_equal(s.steps[0].wait_ns, 30 * US);
    assert_int_equal(s.steps[1].wait_ns, 40 * US);
    prism_rank_summary_free(&s);
}

int main(void)
{
    prism_import_register();            /* test_torch_trace reads a trace */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_region_cap),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_damaged_chunk),
        cmocka_unit_test(test_unbalanced),
        cmocka_unit_test(test_step_edges),
        cmocka_unit_test(test_wait_never_closed),
        cmocka_unit_test(test_no_training_thread),
        cmocka_unit_test(test_torch_trace),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

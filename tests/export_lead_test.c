/*
 * export_lead_test.c - the exports' first pass names the training thread
 * of a file that does not say which thread marks its steps (no INFO
 * steps.thread; export_lead.c) as the analysis names it, without the
 * analysis: on refgen profiles of every shape (seeds, 1 to 4 threads,
 * chunk sizes, extreme values, CPU chunks, stalls, no footer), on the same
 * files cut short and with bytes damaged, and on hand-built ones whose
 * answer is worked out here: the thread that leads its steps seen second,
 * a worker process's thread that leads earlier (never the one), steps that
 * arrive after their regions, last to first (one a chunk: put in order
 * lazily, not by an insertion each), and scrambled several to a chunk, no
 * thread early enough, a tie, a stack deeper than the analysis follows,
 * leaves with zero-length children, and a file whose steps come only after
 * the analysis stopped waiting for them.  The Chrome trace then puts that
 * thread first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../reports/export_scope.h"
#include "pbuild.h"
#include "report_util.h"

/* The analysis' answer, as the exports found it before (the lean first
 * pass): *stream, true; false when no thread qualifies. */
static bool analysis_train(const char *path, uint32_t *stream)
{
    prism_reader *r = NULL;
    prism_analysis *a = ex_analyze_lean(path, NULL, &r);
    bool found = false;
    if (a) {
        size_t i = prism_analysis_training_thread(a);
        if (i != SIZE_MAX) {
            prism_analysis_thread_tree(a, i, stream, NULL);
            found = true;
        }
    }
    prism_analysis_free(a);
    prism_reader_free(r);
    return found;
}

/* The scan's answer agrees with the analysis' on path; -1 when the file
 * names its thread or does not read to its end (nothing to compare), else
 * whether a thread was found (its stream in *stream). */
static int agree(const char *path, uint32_t *stream)
{
    ex_scan s;
    ex_scan_file_train(path, &s);
    if (s.step_stream || !s.read) {
        ex_scan_free(&s);
        return -1;
    }
    assert_true(s.train_known);
    uint32_t want = 0;
    bool found = analysis_train(path, &want);
    if (found != s.train_found || (found && want != s.train))
        fail_msg("%s: the scan says %s %u, the analysis %s %u", path,
                 s.train_found ? "thread" : "none", s.train, found ? "thread" : "none", want);
    if (stream && found)
        *stream = want;
    ex_scan_free(&s);
    return found;
}

static void write_bytes(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_refgen_shapes(void **state)
{
    fx *f = *state;
    char path[512];
    path_in(path, f->dir, "shape.cbor");
    unsigned compared = 0, found = 0;
    for (unsigned k = 0; k < 24; k++) {
        refgen_opts o = refgen_defaults();
        o.seed = 1 + k;
        o.threads = 1 + k % 4;
        o.layers = 2 + k % 5;
        o.steps = 12 + k % 7;
        o.chunk_bytes = k % 3 == 0 ? 512 : k % 3 == 1 ? 4096 : 65536;
        o.extremes = k % 5 == 2;
        o.footer = k % 4 != 3;
        o.cpu = k % 3 == 1;
        o.stall_ns = k % 2 ? 250000 : 0;
        fixture(path, &o);
        int r = agree(path, NULL);
        compared += r >= 0;
        found += r > 0;
    }
    assert_int_equal(compared, 24);     /* refgen names no thread */
    assert_true(found >= 20);           /* (its main thread leads its steps) */
}

/* The same profiles cut at many lengths and with bytes overwritten: the
 * reader resynchronises or stops; where it reads to the end, the two agree. */
static void test_damaged(void **state)
{
    fx *f = *state;
    char path[512];
    path_in(path, f->dir, "damaged.cbor");
    unsigned compared = 0;
    for (unsigned k = 0; k < 4; k++) {
        refgen_opts o = refgen_defaults();
        o.seed = 40 + k;
        o.threads = 2 + k % 2;
        o.chunk_bytes = k % 2 ? 1024 : 4096;
        o.steps = 16;
        refgen_out out;
        assert_int_equal(refgen_build(&o, &out), 0);
        for (unsigned cut = 1; cut <= 12; cut++) {
            write_bytes(path, out.data, out.len * cut / 13);
            compared += agree(path, NULL) >= 0;
        }
        uint8_t *bad = malloc(out.len);
        assert_non_null(bad);
        for (unsigned hit = 1; hit <= 16; hit++) {
            memcpy(bad, out.data, out.len);
            size_t at = out.len * hit / 17;
            for (size_t i = 0; i < 24 && at + i < out.len; i++)
                bad[at + i] ^= (uint8_t)(0x5a + 7 * i);
            write_bytes(path, bad, out.len);
            compared += agree(path, NULL) >= 0;
        }
        free(bad);
        free(out.data);
    }
    assert_true(compared >= 64);        /* most of them read to their end */
}

enum { N_LOAD = 1, N_FWD, N_MM, N_WAIT, N_DEEP };
static const char *const names[] = { "load", "forward", "mm", "wait", "deep" };

/* Steps k = 0..n-1 of 10000 ns at base + 10000 k, sampled: in order in
 * one chunk, or last to first one a chunk. */
static void steps(pbuild *b, uint64_t base, unsigned n, bool reverse)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned k = reverse ? n - 1 - i : i;
        prism_step st = { .start = base + 10000u * k, .end = base + 10000u * k + 10000u,
                          .index = k, .flags = PRISM_STEP_SAMPLED };
        pb_step(b, &st);
        if (reverse)
            pb_flush(b);
    }
}

/* A leaf [at, at + len) on stream. */
static void leafcall(pbuild *b, uint32_t stream, uint64_t at, uint64_t len, uint32_t id)
{
    pb_enter(b, stream, at, id);
    pb_exit(b, stream, at + len);
}

static uint32_t hand_built(fx *f, const char *name, void (*build)(pbuild *b))
{
    char path[512];
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 7);
    build(&b);
    pb_write_file(&b, path_in(path, f->dir, name));
    uint32_t stream = 0;
    int r = agree(path, &stream);
    assert_int_not_equal(r, -1);
    return r ? stream : 0;
}

/* "loader" (seen first) fetches at 40 % of each step; "trainer" starts at
 * 1 %; the steps come after all the regions. */
static void build_second(pbuild *b)
{
    pb_thread(b, 1, "loader");
    pb_thread(b, 2, "trainer");
    for (unsigned k = 0; k < 8; k++) {
        uint64_t t = 1000000 + 10000u * k;
        leafcall(b, 1, t + 4000, 500, N_LOAD);
        pb_enter(b, 2, t + 100, N_FWD);
        leafcall(b, 2, t + 200, 3000, N_MM);
        pb_exit(b, 2, t + 9000);
    }
    steps(b, 1000000, 8, false);
}

/* A worker process's thread (from "<profile>.workers/w0.prism") leads at
 * 0.1 % of each step, the trainer at 3 %: a worker never trains. */
static uint32_t worker_case(fx *f)
{
    char path[512], dir[600], wpath[700];
    prism_header h = { .producer = "lead test", .host = "test", .pid = 100, .rank = -1,
                       .clock = "test", .start_unix_ns = 5000000000ull,
                       .start_mono_ns = 1000000000ull };
    pbuild b;
    pb_init_header(&b, &h, names, sizeof names / sizeof names[0], 3);
    pb_thread(&b, 1, "trainer");
    for (unsigned k = 0; k < 8; k++)
        leafcall(&b, 1, 10000u * k + 300, 5000, N_FWD);
    steps(&b, 0, 8, false);
    pb_write_file(&b, path_in(path, f->dir, "w.cbor"));
    snprintf(dir, sizeof dir, "%s.workers", path);
    assert_int_equal(mkdir(dir, 0700), 0);
    prism_kv kv[3] = {
        { "worker.id", { .type = PRISM_VAL_UINT, .v.u = 0 } },
        { "worker.parent_pid", { .type = PRISM_VAL_UINT, .v.u = 100 } },
        { "worker.parent_start_ns", { .type = PRISM_VAL_UINT, .v.u = 5000000000ull } },
    };
    prism_header wh = h;
    wh.pid = 101;
    wh.start_unix_ns += 7;
    wh.config = kv;
    wh.nconfig = 3;
    pb_init_header(&b, &wh, names, sizeof names / sizeof names[0], 3);
    pb_thread(&b, 1, "pt_data_worker");
    for (unsigned k = 0; k < 8; k++)
        leafcall(&b, 1, 10000u * k + 10, 100, N_LOAD);
    snprintf(wpath, sizeof wpath, "%s/w0.prism", dir);
    pb_write_file(&b, wpath);
    uint32_t stream = 0;
    assert_int_equal(agree(path, &stream), 1);
    unlink(wpath);
    rmdir(dir);
    return stream;
}

/* The same with its steps written last to first: a leaf of a step that
 * arrived before the one of the leaf held is taken for damage (steps are
 * numbered as they arrive), so the trainer leads one step of 8: none. */
static void build_reversed(pbuild *b)
{
    pb_thread(b, 1, "trainer");
    for (unsigned k = 0; k < 8; k++)
        leafcall(b, 1, 10000u * k + 300, 5000, N_FWD);
    steps(b, 0, 8, true);
}

/* One step of 10000 ns at 10000 k, sampled, into the open STEPS chunk. */
static void step_k(pbuild *b, unsigned k)
{
    prism_step st = { .start = 10000u * k, .end = 10000u * k + 10000u, .index = k,
                      .flags = PRISM_STEP_SAMPLED };
    pb_step(b, &st);
}

/* Steps out of order, several to a chunk: S0 S1 | the trainer's leaves at
 * 1 % of S0..S7 | S7 S3 | S4 S5 S6 S2 | S8.  A waiting leaf is placed
 * against every step known when more arrive: at S7's chunk the leaves of
 * S2 and S4..S6 fall in no step and are lost, and S7 (numbered before S3,
 * whose lead came first) counts as damage: 3 leads of 9 steps, none. */
static void build_scrambled(pbuild *b)
{
    pb_thread(b, 1, "trainer");
    step_k(b, 0);
    step_k(b, 1);
    pb_flush(b);
    for (unsigned k = 0; k < 8; k++)
        leafcall(b, 1, 10000u * k + 100, 2000, N_FWD);
    pb_flush(b);
    step_k(b, 7);
    step_k(b, 3);
    pb_flush(b);
    step_k(b, 4);
    step_k(b, 5);
    step_k(b, 6);
    step_k(b, 2);
    pb_flush(b);
    step_k(b, 8);
}

/* Every thread starts late in its steps: none qualifies. */
static void build_none(pbuild *b)
{
    pb_thread(b, 1, "a");
    pb_thread(b, 2, "b");
    for (unsigned k = 0; k < 8; k++) {
        uint64_t t = 10000u * k;
        leafcall(b, 1, t + 900, 100, N_LOAD);
        leafcall(b, 2, t + 2000, 100, N_FWD);
    }
    steps(b, 0, 8, false);
}

/* Two threads at the same offset: the first seen. */
static void build_tie(pbuild *b)
{
    pb_thread(b, 2, "two");
    pb_thread(b, 1, "one");
    steps(b, 0, 6, false);
    for (unsigned k = 0; k < 6; k++) {
        leafcall(b, 2, 10000u * k + 100, 50, N_MM);
        leafcall(b, 1, 10000u * k + 100, 50, N_MM);
    }
}

/* 300 nested frames (past the analysis' 256: the deepest it follows is
 * the leaf, at 1.3 %) on "deep", and on "zero" a parent whose only child
 * took no time: a leaf itself, at 0.5 %, so "zero" is the one. */
static void build_deep(pbuild *b)
{
    pb_thread(b, 1, "deep");
    pb_thread(b, 2, "zero");
    for (unsigned k = 0; k < 6; k++) {
        uint64_t t = 10000u * k;
        for (unsigned d = 0; d < 300; d++)
            pb_enter(b, 1, t + 100 + d / 2, N_DEEP);
        leafcall(b, 1, t + 260, 10, N_MM);
        for (unsigned d = 0; d < 300; d++)
            pb_exit(b, 1, t + 9000 + d);
        pb_enter(b, 2, t + 50, N_FWD);
        leafcall(b, 2, t + 60, 0, N_MM);
        pb_exit(b, 2, t + 5000);
    }
    steps(b, 0, 6, false);
}

/* 70 000 leaves before any step: more than the analysis holds waiting, so
 * it stops holding them (and any other) until a step comes.  Then step 0,
 * the regions of steps 0..3 ("late" at 1 %, "early" at 30 %) and steps
 * 1..3 after them. */
static void build_late(pbuild *b)
{
    pb_thread(b, 1, "early");
    pb_thread(b, 2, "late");
    uint64_t t = 0;
    for (unsigned i = 0; i < 70000; i++, t += 100)
        leafcall(b, 1, t, 50, N_LOAD);
    steps(b, t, 1, false);
    for (unsigned k = 0; k < 4; k++) {
        uint64_t s = t + 10000u * k;
        leafcall(b, 2, s + 100, 500, N_FWD);
        leafcall(b, 1, s + 3000, 500, N_LOAD);
    }
    for (unsigned k = 1; k < 4; k++) {
        prism_step st = { .start = t + 10000u * k, .end = t + 10000u * k + 10000u, .index = k,
                          .flags = PRISM_STEP_SAMPLED };
        pb_step(b, &st);
    }
}

static void test_hand_built(void **state)
{
    fx *f = *state;
    assert_int_equal(hand_built(f, "second.cbor", build_second), 2);
    assert_int_equal(worker_case(f), 1);
    assert_int_equal(hand_built(f, "reversed.cbor", build_reversed), 0);
    assert_int_equal(hand_built(f, "scrambled.cbor", build_scrambled), 0);
    assert_int_equal(hand_built(f, "none.cbor", build_none), 0);
    assert_int_equal(hand_built(f, "tie.cbor", build_tie), 2);
    assert_int_equal(hand_built(f, "deep.cbor", build_deep), 2);
    assert_int_equal(hand_built(f, "late.cbor", build_late), 2);
}

/* The export: the thread found is track 1 (tid 1, named "trainer"). */
static void test_export_track(void **state)
{
    fx *f = *state;
    char path[512], out[512];
    pbuild b;
    pb_init(&b, names, sizeof names / sizeof names[0], 7);
    build_second(&b);
    pb_write_file(&b, path_in(path, f->dir, "track.cbor"));
    path_in(out, f->dir, "track.json");
    const char *argv[] = { "export", path, "--format", "chrome-trace", "-o", out, NULL };
    char *err;
    assert_int_equal(run_cmd(cmd_export, argv, NULL, &err), EXIT_OK);
    assert_string_equal(err, "");
    free(err);
    char *text = slurp(out, NULL);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"tid\":1,\"args\":{\"name\":\"trainer\"}"));
    assert_non_null(strstr(text, "(outside regions)"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        FX_TEST(test_refgen_shapes),
        FX_TEST(test_damaged),
        FX_TEST(test_hand_built),
        FX_TEST(test_export_track),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

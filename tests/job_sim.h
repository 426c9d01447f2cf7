/*
 * job_sim.h - what the rank summary tests share (job_summary_test.c,
 * job_summary_edge_test.c): profiles written to a temporary directory by
 * a simulated training thread with exact timings, and CPU samples every
 * ms aligned with its regions so that the analysis credits them exactly.
 */
#ifndef PRISM_TEST_JOB_SIM_H
#define PRISM_TEST_JOB_SIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prism/analysis.h"
#include "prism/job.h"

#define MS 1000000ull
#define US 1000ull

#include "pbuild.h"

static char g_dir[64];
static char g_path[160];        /* the file being summarised */

static inline int group_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/prism-jobsum-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int group_teardown(void **state)
{
    (void)state;
    return rmdir(g_dir);
}

static inline void write_file(const char *name, const void *p, size_t n)
{
    snprintf(g_path, sizeof g_path, "%s/%s", g_dir, name);
    FILE *f = fopen(g_path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* ---- a training thread, simulated ---- */

typedef struct sim {
    pbuild b;
    uint64_t now;
    bool samples;
    uint64_t pass;              /* next sampling pass (every ms)          */
    uint64_t on_done;           /* on-CPU time of the steps written        */
    uint64_t seg[4096][2];      /* on-CPU segments of the step being built */
    size_t nseg;
} sim;

static inline sim *sim_new(const char *const *names, size_t n, bool samples)
{
    sim *s = calloc(1, sizeof *s);
    assert_non_null(s);
    prism_header h = { .producer = "job summary test", .host = "node-7", .pid = 4242,
                       .rank = 5, .clock = "test", .start_unix_ns = 1700000000000000000ull };
    pb_init_header(&s->b, &h, names, n, 3);
    pb_thread(&s->b, 1, "main");
    pb_info_uint(&s->b, "steps.thread", 1);
    s->samples = samples;
    s->now = 1 * MS;
    s->pass = 1 * MS;
    if (samples) {
        pb_info_text(&s->b, "cpu.sampler", "schedstat (simulated)");
        prism_cpu_sample c = { .ts = s->pass, .stream = 1, .flags = PRISM_CPU_HAVE_WAIT };
        pb_cpu(&s->b, &c);
        s->pass += MS;
    }
    return s;
}

static inline void enter(sim *s, uint32_t id) { pb_enter(&s->b, 1, s->now, id); }
static inline void leave(sim *s) { pb_exit(&s->b, 1, s->now); }

/* A leaf of `dur` ns, running on a CPU or blocked. */
static inline void leaf(sim *s, uint32_t id, uint64_t dur, bool on)
{
    enter(s, id);
    if (on) {
        assert_true(s->nseg < 4096);
        s->seg[s->nseg][0] = s->now;
        s->seg[s->nseg++][1] = s->now + dur;
    }
    s->now += dur;
    leave(s);
}

static inline uint64_t on_until(const sim *s, uint64_t ts)
{
    uint64_t sum = s->on_done;
    for (size_t i = 0; i < s->nseg && s->seg[i][0] < ts; i++)
        sum += (ts < s->seg[i][1] ? ts : s->seg[i][1]) - s->seg[i][0];
    return sum;
}

/* The step [start, now): its record, then the sampling passes inside it
 * (the collector writes a flush's CPU chunk after its regions). */
static inline void step(sim *s, uint64_t start, uint64_t index)
{
    prism_step st = { start, s->now, index, 0, PRISM_STEP_SAMPLED };
    pb_step(&s->b, &st);
    for (; s->samples && s->pass <= s->now; s->pass += MS) {
        prism_cpu_sample c = { .ts = s->pass, .stream = 1, .flags = PRISM_CPU_HAVE_WAIT,
                               .oncpu_ns = on_until(s, s->pass) };
        pb_cpu(&s->b, &c);
    }
    for (size_t i = 0; i < s->nseg; i++)
        s->on_done += s->seg[i][1] - s->seg[i][0];
    s->nseg = 0;
}

/* Summarise g_path, then remove it; the message into msg. */
static inline prism_status from_file(prism_rank_summary *out, char *msg, size_t cap)
{
    uint64_t off = 0;
    msg[0] = 0;
    prism_status st = prism_rank_summary_from_file(g_path, out, msg, cap, &off);
    if (st != PRISM_OK)
        print_message("summary of %s: %s at %llu\n", g_path, msg, (unsigned long long)off);
    unlink(g_path);
    return st;
}

/* Write the simulated profile and summarise it. */
static inline prism_status summarise(sim *s, const char *name, prism_rank_summary *out)
{
    char msg[256];
    pb_flush(&s->b);
    write_file(name, s->b.data, s->b.len);
    free(s->b.data);
    free(s);
    return from_file(out, msg, sizeof msg);
}

static inline const prism_rank_region *region(const prism_rank_summary *s, const char *name)
{
    const prism_rank_region *found = NULL;
    for (size_t i = 0; i < s->nregions; i++)
        if (!strcmp(s->regions[i].name, name)) {
            assert_null(found);             /* one path of that name */
            found = &s->regions[i];
        }
    assert_non_null(found);
    return found;
}

/* Every step's wait is exactly want[its index]; never above its time. */
static inline void waits_are(const prism_rank_summary *s, const uint64_t *want, size_t n)
{
    assert_int_equal(s->nsteps, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s->steps[i].index, i);
        assert_int_equal(s->steps[i].wait_ns, want[i]);
        assert_true(s->steps[i].wait_ns <= s->steps[i].step_ns);
    }
}

enum { FWD = 1, AR, OPT, AR_WAIT, BWD, GRAD, COMM, UNPACK, DEEP, SYNC, CUDASYNC, NCCLK, GEMM,
       GLOO };
static const char *const loop_names[] = { "forward", "allreduce", "optimizer",
                                          "allreduce_wait", "backward", "grad",
                                          "comm_wait", "unpack", "deep", "sync_grads",
                                          "cudaStreamSynchronize",
                                          "ncclDevKernel_AllReduce_Sum_f32", "sgemm",
                                          "gloo:all_reduce" };
#define NNAMES (sizeof loop_names / sizeof *loop_names)
#define NSTEPS 12

/* forward 3 ms (on CPU), `wait_id` 1-3 ms (blocked or on CPU), optimizer 1 ms. */
static inline sim *plain_loop(bool samples, uint32_t wait_id, bool wait_on, uint64_t *want)
{
    sim *s = sim_new(loop_names, NNAMES, samples);
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = s->now, ar = (1 + k % 3) * MS;
        leaf(s, FWD, 3 * MS, true);
        leaf(s, wait_id, ar, wait_on);
        leaf(s, OPT, 1 * MS, true);
        step(s, start, k);
        want[k] = ar;
    }
    return s;
}

#endif

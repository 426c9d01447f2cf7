/*
 * job_summary_test.c - a rank's profile reduced to its summary
 * (analysis/job_summary.c), on profiles written here with exact
 * timings: one training thread running steps of forward / a collective /
 * optimizer, the collective blocked off CPU (CPU samples every ms, aligned
 * with the regions, so the analysis credits them exactly) or unmeasured
 * (no samples: its name tells).  Per-step wait must equal the collective's
 * time in that step to the nanosecond; a region measured on CPU is work
 * whatever its name; nested waits count once (the deepest); damage,
 * drops and absurd nesting never crash or overcount; regions are capped
 * and closed under parent; a torch trace is summarised like a profile.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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

static int group_setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/prism-jobsum-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return rmdir(g_dir);
}

static void write_file(const char *name, const void *p, size_t n)
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

static sim *sim_new(const char *const *names, size_t n, bool samples)
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

static void enter(sim *s, uint32_t id) { pb_enter(&s->b, 1, s->now, id); }
static void leave(sim *s) { pb_exit(&s->b, 1, s->now); }

/* A leaf of `dur` ns, running on a CPU or blocked. */
static void leaf(sim *s, uint32_t id, uint64_t dur, bool on)
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

static uint64_t on_until(const sim *s, uint64_t ts)
{
    uint64_t sum = s->on_done;
    for (size_t i = 0; i < s->nseg && s->seg[i][0] < ts; i++)
        sum += (ts < s->seg[i][1] ? ts : s->seg[i][1]) - s->seg[i][0];
    return sum;
}

/* The step [start, now): its record, then the sampling passes inside it
 * (the collector writes a flush's CPU chunk after its regions). */
static void step(sim *s, uint64_t start, uint64_t index)
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
static prism_status from_file(prism_rank_summary *out, char *msg, size_t cap)
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
static prism_status summarise(sim *s, const char *name, prism_rank_summary *out)
{
    char msg[256];
    pb_flush(&s->b);
    write_file(name, s->b.data, s->b.len);
    free(s->b.data);
    free(s);
    return from_file(out, msg, sizeof msg);
}

static const prism_rank_region *region(const prism_rank_summary *s, const char *name)
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
static void waits_are(const prism_rank_summary *s, const uint64_t *want, size_t n)
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
static sim *plain_loop(bool samples, uint32_t wait_id, bool wait_on, uint64_t *want)
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

/* ---- tests ---- */

/* (1) A blocked all-reduce, measured: off_cpu, and each step's wait is
 * its time in that step; the header's facts come along. */
static void test_offcpu_measured(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    prism_rank_summary s;
    assert_int_equal(summarise(plain_loop(true, AR, false, want), "offcpu.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "allreduce")->wait, PRISM_WAIT_OFFCPU);
    assert_int_equal(region(&s, "forward")->wait, PRISM_WAIT_NO);
    assert_int_equal(region(&s, "optimizer")->wait, PRISM_WAIT_NO);
    assert_true(region(&s, "allreduce")->offcpu_ns > 0);
    waits_are(&s, want, NSTEPS);
    for (size_t i = 0; i < NSTEPS; i++)
        assert_int_equal(s.steps[i].step_ns, 4 * MS + want[i]);
    assert_int_equal(s.rank, 5);
    assert_string_equal(s.host, "node-7");
    assert_int_equal(s.pid, 4242);
    assert_int_equal(s.start_unix_ns, 1700000000000000000ull);
    assert_string_equal(s.thread, "main");
    assert_string_equal(s.source, g_path);
    assert_int_equal(s.steps_total, NSTEPS);
    assert_false(s.complete);               /* no footer written */
    assert_true(s.events > 0);
    assert_int_equal(region(&s, "forward")->depth, 0);
    assert_int_equal(region(&s, "forward")->parent_hash, 0);
    assert_int_equal(region(&s, "forward")->calls, NSTEPS);
    prism_rank_summary_free(&s);
    assert_null(s.regions);
    prism_rank_summary_free(&s);            /* twice: harmless */
}

/* (1b) Blocked where the step's work begins (the batch is fetched there):
 * the rank's own stall, not a wait for the others, even named like a
 * collective; blocked later in the step it is one. */
static void test_own_stall_is_work(void **state)
{
    (void)state;
    sim *sm = sim_new(loop_names, NNAMES, true);
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = sm->now;
        leaf(sm, UNPACK, 2 * MS, false);    /* blocked first: the batch     */
        leaf(sm, FWD, 3 * MS, true);
        leaf(sm, AR, 1 * MS, false);        /* blocked after the work       */
        step(sm, start, k);
    }
    prism_rank_summary s;
    assert_int_equal(summarise(sm, "own.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "unpack")->wait, PRISM_WAIT_NO);
    assert_int_equal(region(&s, "allreduce")->wait, PRISM_WAIT_OFFCPU);
    for (size_t i = 0; i < s.nsteps; i++)
        assert_int_equal(s.steps[i].wait_ns, 1 * MS);
    prism_rank_summary_free(&s);
}

/* (2b) A torch.profiler trace of DDP over gloo: the all-reduce is recorded
 * on the process group's own thread, while the training thread, blocked
 * at the end of its backward pass, has no event there.  The collective on
 * the other thread is the step's wait; where it overlaps a wait of the
 * training thread the time counts once. */
static void test_collective_on_other_thread(void **state)
{
    (void)state;
    sim *m = sim_new(loop_names, NNAMES, false);
    pb_thread(&m->b, 2, "pg");
    uint64_t want[NSTEPS];
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = m->now, g = (2 + k % 3) * MS;
        leaf(m, FWD, 3 * MS, true);
        pb_enter(&m->b, 2, m->now, GLOO);       /* gloo's thread, g ms     */
        leaf(m, BWD, 1 * MS, true);             /* work under it: waiting  */
        leaf(m, AR, 1 * MS, false);             /* named, inside: once     */
        m->now += g - 2 * MS;                   /* the rest: no event here */
        pb_exit(&m->b, 2, m->now);
        leaf(m, OPT, 1 * MS, true);
        step(m, start, k);
        want[k] = g;
    }
    prism_rank_summary s;
    assert_int_equal(summarise(m, "gloo.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "allreduce")->wait, PRISM_WAIT_NAME);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);
}

/* (2) No CPU samples: the name tells, and only the collective's. */
static void test_name_without_samples(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    prism_rank_summary s;
    assert_int_equal(summarise(plain_loop(false, AR, false, want), "names.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "allreduce")->wait, PRISM_WAIT_NAME);
    assert_int_equal(region(&s, "forward")->wait, PRISM_WAIT_NO);
    assert_int_equal(region(&s, "optimizer")->wait, PRISM_WAIT_NO);
    assert_int_equal(region(&s, "allreduce")->cpu_known_ns, 0);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);
}

/* (3) Measured on a CPU, a collective's name is work: no wait at all. */
static void test_measured_beats_name(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    prism_rank_summary s;
    assert_int_equal(summarise(plain_loop(true, AR_WAIT, true, want), "oncpu.cbor", &s), PRISM_OK);
    const prism_rank_region *r = region(&s, "allreduce_wait");
    assert_int_equal(r->wait, PRISM_WAIT_NO);
    assert_true(r->cpu_known_ns >= r->total_ns / 2 && r->oncpu_ns > r->offcpu_ns);
    memset(want, 0, sizeof want);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);
}

/* (4) backward { grad, comm_wait { allreduce, unpack } }: comm_wait and
 * allreduce both wait by name; only the deepest, allreduce, counts. */
static void test_deepest_only(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    prism_rank_summary s;
    sim *m = sim_new(loop_names, NNAMES, false);
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = m->now;
        leaf(m, FWD, 2 * MS, true);
        enter(m, BWD);
        leaf(m, GRAD, 2 * MS, true);
        enter(m, COMM);
        want[k] = (1 + k % 2) * MS + 17 * US;
        leaf(m, AR, want[k], false);
        leaf(m, UNPACK, 1 * MS, true);
        leave(m);
        leave(m);
        leaf(m, OPT, 1 * MS, true);
        step(m, start, k);
    }
    assert_int_equal(summarise(m, "nested.cbor", &s), PRISM_OK);
    const prism_rank_region *comm = region(&s, "comm_wait"), *ar = region(&s, "allreduce"),
                            *bwd = region(&s, "backward");
    assert_int_equal(comm->wait, PRISM_WAIT_NAME);
    assert_int_equal(ar->wait, PRISM_WAIT_NAME);
    assert_int_equal(bwd->wait, PRISM_WAIT_NO);
    assert_int_equal(region(&s, "unpack")->wait, PRISM_WAIT_NO);
    assert_int_equal(ar->parent_hash, comm->path_hash);
    assert_int_equal(comm->parent_hash, bwd->path_hash);
    assert_int_equal(ar->depth, 2);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);
}

static void gpu_put(sim *s, const prism_gpu_record *g)
{
    PB_PUT(&s->b, PRISM_CHUNK_GPU, 0, g->start, prism_enc_gpu(&s->b.e, g));
}

/* forward, then sync_grads: 2 ms blocked in cudaStreamSynchronize while
 * the GPU runs sgemm 3 ms and an NCCL kernel `nccl` ns; optimizer. */
static sim *gpu_loop(uint64_t nccl, uint64_t *want)
{
    sim *m = sim_new(loop_names, NNAMES, false);
    /* a first record before any region: the analysis follows region
     * transitions from then on, so the syncs find their region */
    prism_gpu_record first = { .type = PRISM_GPU_KERNEL, .start = 1, .end = 2, .stream = 7,
                               .name = GEMM };
    gpu_put(m, &first);
    for (uint64_t k = 0; k < NSTEPS; k++) {
        uint64_t start = m->now;
        leaf(m, FWD, 3 * MS, true);
        uint64_t at = m->now;
        leaf(m, SYNC, 2 * MS, false);
        leaf(m, OPT, 1 * MS, true);
        step(m, start, k);
        prism_gpu_record g[] = {
            { .type = PRISM_GPU_KERNEL, .start = at - 3 * MS, .end = at, .stream = 7,
              .correlation = 3 * k + 1, .name = GEMM },
            { .type = PRISM_GPU_KERNEL, .start = at, .end = at + nccl, .stream = 8,
              .correlation = 3 * k + 2, .name = NCCLK },
            { .type = PRISM_GPU_API, .start = at + 10 * US, .end = at + 2 * MS - 10 * US,
              .stream = 1, .correlation = 3 * k + 3, .name = CUDASYNC },
        };
        for (size_t i = 0; i < 3; i++)
            gpu_put(m, &g[i]);
        want[k] = 2 * MS;
    }
    return m;
}

/* A region blocked on the GPU while NCCL kernels hold >= 10 % of the
 * kernel time waits for the other ranks (gpu_collective); with NCCL a
 * sliver of it, the same wait is the rank's own GPU work. */
static void test_gpu_collective(void **state)
{
    (void)state;
    uint64_t want[NSTEPS];
    prism_rank_summary s;
    assert_int_equal(summarise(gpu_loop(1 * MS, want), "gpu.cbor", &s), PRISM_OK);
    const prism_rank_region *r = region(&s, "sync_grads");
    assert_true(r->gpu_wait_ns >= r->total_ns / 2);
    assert_int_equal(r->wait, PRISM_WAIT_GPU);
    assert_int_equal(region(&s, "forward")->wait, PRISM_WAIT_NO);
    assert_int_equal(s.nccl_kernel_ns, NSTEPS * 1 * MS);
    assert_int_equal(s.gpu_kernel_ns, NSTEPS * 4 * MS + 1);
    assert_true(s.gpu_busy_ns > 0 && s.gpu_span_ns >= s.gpu_busy_ns);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);

    assert_int_equal(summarise(gpu_loop(200 * US, want), "gpu2.cbor", &s), PRISM_OK);
    assert_int_equal(region(&s, "sync_grads")->wait, PRISM_WAIT_NO);   /* 6 % NCCL */
    memset(want, 0, sizeof want);
    waits_are(&s, want, NSTEPS);
    prism_rank_summary_free(&s);
}

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offcpu_measured),
        cmocka_unit_test(test_own_stall_is_work),
        cmocka_unit_test(test_name_without_samples),
        cmocka_unit_test(test_collective_on_other_thread),
        cmocka_unit_test(test_measured_beats_name),
        cmocka_unit_test(test_deepest_only),
        cmocka_unit_test(test_gpu_collective),
        cmocka_unit_test(test_region_cap),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_damaged_chunk),
        cmocka_unit_test(test_unbalanced),
        cmocka_unit_test(test_step_edges),
        cmocka_unit_test(test_no_training_thread),
        cmocka_unit_test(test_torch_trace),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

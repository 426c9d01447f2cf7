/*
 * job_summary_test.c - a rank's profile reduced to its summary
 * (analysis/job_summary.c), on profiles written here with exact
 * timings: one training thread running steps of forward / a collective /
 * optimizer, the collective blocked off CPU (CPU samples every ms, aligned
 * with the regions, so the analysis credits them exactly) or unmeasured
 * (no samples: its name tells).  Per-step wait must equal the collective's
 * time in that step to the nanosecond; a region measured on CPU is work
 * whatever its name; a block where the step's work begins is the rank's
 * own; nested waits count once (the deepest); a collective on another
 * thread counts; GPU waits count with NCCL kernels.  The edges (damage,
 * caps, odd steps, traces): job_summary_edge_test.c; helpers: job_sim.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "job_sim.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offcpu_measured),
        cmocka_unit_test(test_own_stall_is_work),
        cmocka_unit_test(test_collective_on_other_thread),
        cmocka_unit_test(test_name_without_samples),
        cmocka_unit_test(test_measured_beats_name),
        cmocka_unit_test(test_deepest_only),
        cmocka_unit_test(test_gpu_collective),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

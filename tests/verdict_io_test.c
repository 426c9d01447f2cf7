/*
 * verdict_io_test.c - the io_wait finding on a program of the test's own,
 * recorded by libcollect (format 1.3 system readings and CPU samples), on
 * a quiet machine and beside CPU hogs.
 *
 * Each step of the workload computes 8 ms of its own CPU time
 * ("forward"), saves an 8 MiB checkpoint with fsync ("save_checkpoint":
 * blocked on the storage device) and naps 3 ms ("nap": a sleep, no I/O).
 * Its own clocks are the truth: /proc/self/io before and after (bytes it
 * moved to the disk), and in save_checkpoint its wall time less its thread
 * CPU time and its run-queue wait (schedstat): the time it was blocked.
 *
 * Facts, quiet and loaded: the run's disk writes are at least what the
 * program measured; no off_cpu_wait names save_checkpoint (a wait found
 * there is io_wait, with the disk traffic in its evidence); nap is never
 * io_wait (its name says nothing of storage, however much the process
 * writes meanwhile).  Where the program's own clocks say the saves kept it
 * blocked for at least 15 % of its step time and for no less than half
 * their run-queue wait, io_wait names save_checkpoint, quiet or loaded.
 *
 * The same program reading its batch from the disk instead (the page cache
 * dropped before each read, "load_batch"): its reads are counted, and the
 * input stall found there is data_loading (never io_wait or off_cpu_wait)
 * with storage advice, and it is found where the reads kept the program
 * that blocked (as above).  A file system that counts no storage bytes
 * (tmpfs) or a profile without CPU samples skips, saying so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <time.h>

#include "burn.h"
#include "collect_util.h"
#include "hogs.h"
#include "prism/analysis.h"

#define STEPS 16u
#define CKPT (8u << 20)

typedef struct truth {
    bool io;                    /* /proc/self/io readable */
    uint64_t wrote;             /* write_bytes over the steps (read_bytes
                                   when loading) */
    double save_off_ms;         /* save_checkpoint's wall less its CPU time and
                                   its run-queue wait: blocked */
    double save_runq_ms;        /* ... its run-queue wait */
    double step_ms;             /* all steps' wall time */
} truth;

typedef struct run_args {
    char profile[300], data[300], truth[300];
    bool load;                  /* read the batch from disk ("load_batch")
                                   instead of saving a checkpoint */
} run_args;

static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* This thread's run-queue wait so far (schedstat's second field), ms; 0
 * where the kernel does not say. */
static double runq_ms(void)
{
    char buf[128];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    unsigned long long run, wait;
    if (n <= 0 || (buf[n] = '\0', sscanf(buf, "%llu %llu", &run, &wait) != 2))
        return 0;
    return (double)wait / 1e6;
}

/* write_bytes, or read_bytes, of /proc/self/io */
static bool io_bytes(uint64_t *out, bool rd)
{
    uint64_t r, w;
    if (!proc_io(&r, &w))
        return false;
    *out = rd ? r : w;
    return true;
}

static int io_child(void *arg)
{
    const run_args *ra = arg;
    static char block[CKPT];
    memset(block, 'c', sizeof block);
    prism_config c;
    prism_config_default(&c);
    c.output = ra->profile;
    CHILD_CHECK(prism_init(&c) == 0);
    prism_thread_name("trainer");
    truth t = { 0 };
    uint64_t w0 = 0, w1 = 0;
    if (ra->load) {                     /* the data set, on the disk */
        int fd = open(ra->data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        CHILD_CHECK(fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block);
        CHILD_CHECK(fsync(fd) == 0 && close(fd) == 0);
    }
    t.io = io_bytes(&w0, ra->load);
    for (unsigned s = 0; s < STEPS; s++) {
        double s0 = wall_ms();
        prism_step_begin();
        prism_push("forward");
        burn(8.0);
        prism_pop();
        prism_push(ra->load ? "load_batch" : "save_checkpoint");
        double a = wall_ms(), ac = thread_cpu_ms(), aq = runq_ms();
        if (ra->load) {                 /* from the disk: the page cache dropped */
            int fd = open(ra->data, O_RDONLY | O_CLOEXEC);
            CHILD_CHECK(fd >= 0);
            CHILD_CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
            CHILD_CHECK(read(fd, block, sizeof block) == (ssize_t)sizeof block);
            close(fd);
        } else {
            int fd = open(ra->data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            CHILD_CHECK(fd >= 0);
            CHILD_CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
            CHILD_CHECK(fsync(fd) == 0);
            close(fd);
        }
        double q = runq_ms() - aq;
        t.save_off_ms += (wall_ms() - a) - (thread_cpu_ms() - ac) - q;
        t.save_runq_ms += q;
        prism_pop();
        prism_push("nap");
        struct timespec ts = { 0, 3000000 };
        while (nanosleep(&ts, &ts) != 0)
            ;
        prism_pop();
        prism_step_end();
        t.step_ms += wall_ms() - s0;
    }
    if (t.io && io_bytes(&w1, ra->load))
        t.wrote = w1 - w0;
    else
        t.io = false;
    prism_shutdown();
    FILE *f = fopen(ra->truth, "w");
    CHILD_CHECK(f && fwrite(&t, sizeof t, 1, f) == 1 && fclose(f) == 0);
    return 0;
}

static const prism_bottleneck *find(const prism_analysis *a, prism_bottleneck_type type,
                                    const char *name)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *tree = prism_analysis_tree(a);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == type && b[i].node < tree->count &&
            !strcmp(tree->nodes[b[i].node].name, name))
            return &b[i];
    return NULL;
}

static bool has_cpu_samples(const prism_analysis *a)
{
    const prism_tree *t = prism_analysis_tree(a);
    for (size_t i = 0; i < t->count; i++)
        if (t->nodes[i].cpu_known_ns)
            return true;
    return false;
}

/* A wait the finding must see, by the program's own clocks: blocked at
 * least 15 % of the step time (three times the findings' 5 % floor: under
 * load the samples' split of off-CPU time between blocked and run queue
 * has read a third of the blocked time), and no less than half its
 * run-queue wait there (the analysis counts a region that mostly waited
 * for a CPU as contention, not a wait). */
static bool clearly_blocked(const truth *t)
{
    return t->save_off_ms >= 0.15 * t->step_ms && t->save_off_ms >= 0.5 * t->save_runq_ms;
}

/* Run the workload (beside hogs when loaded) in a child; its truth and
 * its profile's analysis into *t and the result. */
static prism_analysis *run(tdir *d, bool load, bool loaded, truth *t)
{
    tdir_make(d);
    run_args ra = { .load = load };
    tdir_file(d, "io.cbor", ra.profile, sizeof ra.profile);
    tdir_file(d, "data.bin", ra.data, sizeof ra.data);
    tdir_file(d, "truth.bin", ra.truth, sizeof ra.truth);
    pid_t hog[16];
    size_t nhog = loaded ? hogs_start(hog, 16) : 0;
    child_run_ok(io_child, &ra);
    hogs_stop(hog, nhog);
    FILE *f = fopen(ra.truth, "r");
    assert_non_null(f);
    assert_int_equal(fread(t, sizeof *t, 1, f), 1);
    fclose(f);
    prism_status err;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(ra.profile, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    return a;
}

static void check(bool loaded)
{
    tdir d;
    truth t;
    prism_analysis *a = run(&d, false, loaded, &t);
    const prism_system_stats *s = prism_analysis_system(a);
    const prism_bottleneck *io = find(a, PRISM_BN_IO_WAIT, "save_checkpoint");
    printf("verdict_io (%s): the program wrote %.1f MB, blocked in save_checkpoint %.1f%% of "
           "its step time (run queue %.1f%%); profile: %zu readings, written %.1f MB, %.2f MB a step; io_wait %s%s\n",
           loaded ? "beside hogs" : "quiet", (double)t.wrote / (1 << 20),
           t.step_ms > 0 ? 100.0 * t.save_off_ms / t.step_ms : 0.0,
           t.step_ms > 0 ? 100.0 * t.save_runq_ms / t.step_ms : 0.0, s->count,
           s->io_write_bytes == PRISM_NO_VALUE ? -1.0 : (double)s->io_write_bytes / (1 << 20),
           s->step_io_write_bytes / (1 << 20), io ? "on save_checkpoint: " : "none",
           io ? io->evidence : "");
    if (!t.io || t.wrote < (uint64_t)STEPS * (CKPT / 2) || !has_cpu_samples(a)) {
        printf("verdict_io: %s: skipped\n", !t.io || t.wrote < (uint64_t)STEPS * (CKPT / 2)
                                               ? "this file system counts no storage writes"
                                               : "no CPU samples");
        prism_analysis_free(a);
        tdir_remove(&d);
        skip();
    }
    assert_true(s->count >= 2);
    assert_true(s->io_write_bytes != PRISM_NO_VALUE && s->io_write_bytes >= t.wrote);
    assert_null(find(a, PRISM_BN_OFF_CPU_WAIT, "save_checkpoint"));
    assert_null(find(a, PRISM_BN_IO_WAIT, "nap"));
    if (io)
        assert_non_null(strstr(io->evidence, "the process's disk traffic: "));
    /* the nap waits beside the checkpoint; the process's disk figures are
     * no evidence of its wait */
    const prism_bottleneck *nap = find(a, PRISM_BN_OFF_CPU_WAIT, "nap");
    if (nap)
        assert_null(strstr(nap->evidence, "disk"));
    if (!io) {                          /* what the analysis saw there */
        const prism_tree *tr = prism_analysis_tree(a);
        for (size_t i = 0; i < tr->count; i++)
            if (!strcmp(tr->nodes[i].name, "save_checkpoint"))
                printf("verdict_io: save_checkpoint: total %.1f ms, samples cover %.1f ms: on "
                       "CPU %.1f, run queue %.1f, blocked %.1f ms; step time %.1f ms\n",
                       tr->nodes[i].total_ns / 1e6, tr->nodes[i].cpu_known_ns / 1e6,
                       tr->nodes[i].oncpu_ns / 1e6, tr->nodes[i].runq_ns / 1e6,
                       tr->nodes[i].offcpu_ns / 1e6, t.step_ms);
    }
    if (clearly_blocked(&t))
        assert_non_null(io);
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* The batch read from disk: an input stall (data_loading, never io_wait)
 * whose advice is about storage, where one is found. */
static void check_load(bool loaded)
{
    tdir d;
    truth t;
    prism_analysis *a = run(&d, true, loaded, &t);
    const prism_system_stats *s = prism_analysis_system(a);
    const prism_bottleneck *dl = find(a, PRISM_BN_DATA_LOADING, "load_batch");
    printf("verdict_io load (%s): the program read %.1f MB, blocked in load_batch %.1f%% of its "
           "step time; profile: read %.1f MB; data_loading %s%s\n",
           loaded ? "beside hogs" : "quiet", (double)t.wrote / (1 << 20),
           t.step_ms > 0 ? 100.0 * t.save_off_ms / t.step_ms : 0.0,
           s->io_read_bytes == PRISM_NO_VALUE ? -1.0 : (double)s->io_read_bytes / (1 << 20),
           dl ? "on load_batch: " : "none", dl ? dl->recommendation : "");
    if (!t.io || t.wrote < (uint64_t)STEPS * (CKPT / 2)) {
        printf("verdict_io: this file system counts no storage reads: skipped\n");
        prism_analysis_free(a);
        tdir_remove(&d);
        skip();
    }
    assert_true(s->io_read_bytes != PRISM_NO_VALUE && s->io_read_bytes >= t.wrote);
    assert_null(find(a, PRISM_BN_IO_WAIT, "load_batch"));
    assert_null(find(a, PRISM_BN_OFF_CPU_WAIT, "load_batch"));
    if (clearly_blocked(&t))
        assert_non_null(dl);
    if (dl)
        assert_non_null(strstr(dl->recommendation, "read from disk"));
    prism_analysis_free(a);
    tdir_remove(&d);
}

static void test_load_quiet(void **state)
{
    (void)state;
    check_load(false);
}

static void test_load_beside_hogs(void **state)
{
    (void)state;
    check_load(true);
}

static void test_quiet(void **state)
{
    (void)state;
    check(false);
}

static void test_beside_hogs(void **state)
{
    (void)state;
    check(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quiet),
        cmocka_unit_test(test_beside_hogs),
        cmocka_unit_test(test_load_quiet),
        cmocka_unit_test(test_load_beside_hogs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

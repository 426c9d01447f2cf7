/*
 * collect_sys_test.c - the system readings of MEMORY samples (format 1.3,
 * libcollect/sysread.c) on a real session, against what the program
 * measured of itself: its own /proc/self/io before and after, its
 * getrusage CPU time, and a child process's own /proc/self/io.
 *
 * The child (one session per process) waits until the live profile holds
 * a system reading (inotify, no sleeping), so everything it does after
 * lies between two readings; then it writes and reads back a file with
 * fsync and the page cache dropped, burns CPU, and forks a grandchild that
 * writes a file of its own and stays alive until the session has ended
 * (its last reading sees it).  The parent reads the profile back:
 *   - the run's disk writes and reads are at least what the program and its
 *     child measured (the profile's own writes come on top);
 *   - the process CPU over the readings is at least 80 % of the CPU time it
 *     burnt (same clock underneath, tick rounding aside);
 *   - MemTotal and the memory share are known; energy is unknown or rising;
 *   - a session with memory sampling off has no readings;
 *   - prism_system_read, two readings around the program's own write and
 *     CPU work, without a session: their difference holds them.
 * Where the file system does not count storage bytes (tmpfs), the I/O
 * checks say so and check only that the figures are known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/resource.h>

#include "collect_util.h"
#include "prism/analysis.h"

#define MB (1024u * 1024u)

typedef struct truth {
    uint64_t wrote, read, kid_wrote, cpu_ns;
    bool io;                    /* /proc/self/io readable (task I/O accounting) */
} truth;

typedef struct scene {
    char profile[300], data[300], kid_data[300], truth[300];
    bool memory;                /* collect_memory */
} scene;

static uint64_t cpu_ns(void)
{
    struct rusage ru;
    CHILD_CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
           ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

/* n MB into path, fsync'd; then, with read_back, the page cache dropped
 * and the file read again (from the disk). */
static void disk_work(const char *path, unsigned n, bool read_back)
{
    static char block[MB];
    memset(block, 'x', sizeof block);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHILD_CHECK(fd >= 0);
    for (unsigned i = 0; i < n; i++)
        CHILD_CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
    CHILD_CHECK(fsync(fd) == 0);
    if (read_back) {
        CHILD_CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
        for (unsigned i = 0; i < n; i++)
            CHILD_CHECK(pread(fd, block, sizeof block, (off_t)i * MB) == (ssize_t)sizeof block);
    }
    close(fd);
}

/* The number of MEMORY samples with system readings in the profile. */
typedef struct nsys {
    size_t n;
} nsys;

static void ns_memory(void *ctx, const prism_memory_sample *m)
{
    ((nsys *)ctx)->n += m->have_sys != 0;
}

static size_t readings_in(const char *path)
{
    nsys x = { 0 };
    prism_reader_callbacks cb = { .memory = ns_memory };
    prism_reader *r = NULL;
    prism_read_file(path, &cb, &x, &r);
    prism_reader_free(r);
    return x.n;
}

static bool has_reading(const char *path, void *arg)
{
    (void)arg;
    return readings_in(path) > 0;
}

/* In the child: block until the live profile holds a system reading. */
static void child_wait_reading(const char *path)
{
    child_wait_file(path, has_reading, NULL);
}

static int scene_child(void *arg)
{
    const scene *sc = arg;
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.output = sc->profile;
    cfg.collect_memory = sc->memory;
    cfg.flush_interval_ms = 20;
    CHILD_CHECK(prism_init(&cfg) == 0);
    prism_step_begin();                 /* the file appears at the first flush */
    prism_step_end();
    if (sc->memory)
        child_wait_reading(sc->profile);
    truth t = { 0, 0, 0, 0, false };
    uint64_t r0, w0, r1, w1;
    bool io = proc_io(&r0, &w0);
    uint64_t c0 = cpu_ns();
    for (int s = 0; s < 4; s++) {
        prism_step_begin();
        disk_work(sc->data, 2, true);
        volatile uint64_t x = 0;
        for (uint64_t i = 0; i < 20000000u; i++)
            x = x + i;
        prism_step_end();
    }
    t.cpu_ns = cpu_ns() - c0;
    if (io && proc_io(&r1, &w1)) {
        t.io = true;
        t.wrote = w1 - w0;
        t.read = r1 - r0;
    }
    /* a grandchild writes, reports what it measured, and lives on until
     * the session has ended */
    int up[2], hold[2];
    CHILD_CHECK(pipe(up) == 0 && pipe(hold) == 0);
    pid_t kid = fork();
    CHILD_CHECK(kid >= 0);
    if (kid == 0) {
        uint64_t kr0 = 0, kw0 = 0, kr1 = 0, kw1 = 0;
        bool ok = proc_io(&kr0, &kw0);
        disk_work(sc->kid_data, 3, false);
        uint64_t d = ok && proc_io(&kr1, &kw1) ? kw1 - kw0 : 0;
        char c;
        if (write(up[1], &d, sizeof d) != (ssize_t)sizeof d || read(hold[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    CHILD_CHECK(read(up[0], &t.kid_wrote, sizeof t.kid_wrote) == (ssize_t)sizeof t.kid_wrote);
    prism_shutdown();                   /* its last reading: the grandchild still lives */
    CHILD_CHECK(write(hold[1], "x", 1) == 1);
    int st;
    CHILD_CHECK(waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    FILE *f = fopen(sc->truth, "w");
    CHILD_CHECK(f && fwrite(&t, sizeof t, 1, f) == 1 && fclose(f) == 0);
    return 0;
}

static void scene_run(scene *sc, tdir *d, bool memory, truth *t)
{
    tdir_make(d);
    tdir_file(d, "sys.cbor", sc->profile, sizeof sc->profile);
    tdir_file(d, "data.bin", sc->data, sizeof sc->data);
    tdir_file(d, "kid.bin", sc->kid_data, sizeof sc->kid_data);
    tdir_file(d, "truth.bin", sc->truth, sizeof sc->truth);
    sc->memory = memory;
    child_run_ok(scene_child, sc);
    FILE *f = fopen(sc->truth, "r");
    assert_non_null(f);
    assert_int_equal(fread(t, sizeof *t, 1, f), 1);
    fclose(f);
}

static void test_readings_against_the_program(void **state)
{
    (void)state;
    scene sc;
    tdir d;
    truth t;
    scene_run(&sc, &d, true, &t);
    prism_status err;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(sc.profile, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    const prism_system_stats *s = prism_analysis_system(a);
    printf("collect_sys: %zu readings over %.3f s; program wrote %.1f MB, read %.1f MB, its "
           "child wrote %.1f MB, burnt %.3f s CPU; profile: written %.1f MB, read %.1f MB, CPU "
           "%.1f %% user + %.1f %% system\n",
           s->count, (double)s->span_ns / 1e9, (double)t.wrote / MB, (double)t.read / MB,
           (double)t.kid_wrote / MB, (double)t.cpu_ns / 1e9, (double)s->io_write_bytes / MB,
           (double)s->io_read_bytes / MB, s->cpu_user_pct, s->cpu_sys_pct);
    assert_true(s->count >= 2);
    if (t.io)                           /* else the kernel keeps no task I/O accounting */
        assert_true(s->io_write_bytes != PRISM_NO_VALUE && s->io_read_bytes != PRISM_NO_VALUE);
    if (t.wrote == 0)
        printf("collect_sys: this file system counts no storage writes (tmpfs?): I/O "
               "figures checked only for being known\n");
    if (t.io) {
        assert_true(s->io_write_bytes >= t.wrote + t.kid_wrote);
        assert_true(s->io_read_bytes >= t.read);
    }
    assert_true(s->net_rx_bytes != PRISM_NO_VALUE && s->net_tx_bytes != PRISM_NO_VALUE);
    assert_true(s->cpu_user_pct >= 0 && s->cpu_sys_pct >= 0);
    double cpu = (s->cpu_user_pct + s->cpu_sys_pct) / 100.0 * (double)s->span_ns;
    assert_true(cpu >= 0.8 * (double)t.cpu_ns);
    assert_true(s->mem_total != PRISM_NO_VALUE && s->mem_total > 0);
    assert_true(s->mem_peak_pct > 0 && s->mem_peak_pct <= 100);
    assert_true(s->mem_mean_pct > 0 && s->mem_mean_pct <= s->mem_peak_pct);
    assert_true(s->steps >= 1);
    for (size_t i = 1; i < s->count; i++) {     /* running sums never fall */
        const prism_sys_point *p = &s->samples[i - 1], *q = &s->samples[i];
        assert_true(q->ts >= p->ts);
        assert_true(q->io_write_bytes >= p->io_write_bytes);
        assert_true(q->io_read_bytes >= p->io_read_bytes);
        assert_true(q->cpu_energy_uj == PRISM_NO_VALUE || p->cpu_energy_uj == PRISM_NO_VALUE ||
                    q->cpu_energy_uj >= p->cpu_energy_uj);
    }
    prism_analysis_free(a);
    tdir_remove(&d);
}

/* prism_system_read: the same sources, raw, with or without a session;
 * the program's own write between two readings is in their difference. */
static void test_system_read(void **state)
{
    (void)state;
    assert_int_equal(prism_system_read(NULL), -1);
    tdir d;
    tdir_make(&d);
    char path[300];
    tdir_file(&d, "w.bin", path, sizeof path);
    prism_system_reading a, b;
    assert_int_equal(prism_system_read(&a), 0);
    uint64_t r0 = 0, w0 = 0, r1 = 0, w1 = 0;
    bool io = proc_io(&r0, &w0);
    disk_work(path, 2, false);
    io = io && proc_io(&r1, &w1);
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 10000000u; i++)
        x = x + i;
    assert_int_equal(prism_system_read(&b), 0);
    assert_true(b.mono_ns >= a.mono_ns && a.mono_ns > 0);
    assert_true(a.rss != PRISM_NO_VALUE && a.rss > 0);
    assert_true(a.mem_total != PRISM_NO_VALUE && a.mem_total >= a.rss);
    assert_true(b.cpu_user_ns + b.cpu_sys_ns > a.cpu_user_ns + a.cpu_sys_ns);
    assert_true(a.net_rx_bytes != PRISM_NO_VALUE && b.net_rx_bytes >= a.net_rx_bytes);
    if (io) {
        assert_true(a.io_write_bytes != PRISM_NO_VALUE);
        assert_true(b.io_write_bytes - a.io_write_bytes >= w1 - w0);
    }
    tdir_remove(&d);
}

static void test_memory_off_no_readings(void **state)
{
    (void)state;
    scene sc;
    tdir d;
    truth t;
    scene_run(&sc, &d, false, &t);
    assert_int_equal(readings_in(sc.profile), 0);
    prism_status err;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(sc.profile, NULL, &err, msg, sizeof msg, &off);
    assert_non_null(a);
    assert_int_equal(prism_analysis_system(a)->count, 0);
    assert_true(prism_analysis_system(a)->io_read_bytes == PRISM_NO_VALUE);
    prism_analysis_free(a);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readings_against_the_program),
        cmocka_unit_test(test_memory_off_no_readings),
        cmocka_unit_test(test_system_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

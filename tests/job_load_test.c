/*
 * job_load_test.c - the files of a job (analysis/job_load.c): the command
 * line expanded (a directory's profiles, traces and summaries in natural
 * name order, hidden files, other files and subdirectories left out; plain
 * arguments kept whatever they hold; a missing or empty directory an
 * error); the loader on 1 and 4 threads giving the same job; summaries
 * written and read back giving the job the profiles give; a damaged and a
 * missing file reported, in file order, while the rest load; progress;
 * cancel.  Rank profiles are built with tests/pbuild.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/job_io.h"
#include "pbuild.h"

#define MS 1000000ull
#define NRANKS 8

static char g_dir[64];

/* ---- files ---- */

static void path_of(char *buf, size_t cap, const char *sub, const char *name)
{
    snprintf(buf, cap, "%s%s%s/%s", g_dir, sub[0] ? "/" : "", sub, name);
}

static void put_file(const char *sub, const char *name, const void *p, size_t n)
{
    char path[256];
    path_of(path, sizeof path, sub, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void put_text(const char *sub, const char *name, const char *text)
{
    put_file(sub, name, text, strlen(text));
}

/* A rank's profile: 6 steps of forward, allreduce, optimizer on the
 * training thread; `slow` ns more forward per step. */
static void put_rank(const char *sub, const char *name, int64_t rank, uint64_t slow)
{
    static const char *const names[] = { "forward", "allreduce", "optimizer" };
    pbuild *b = malloc(sizeof *b);
    assert_non_null(b);
    prism_header h = { .producer = "job load test", .host = "node", .pid = 100,
                       .rank = rank, .clock = "test" };
    pb_init_header(b, &h, names, 3, (uint64_t)rank + 7);
    pb_thread(b, 1, "main");
    pb_info_uint(b, "steps.thread", 1);
    uint64_t now = MS;
    for (uint64_t k = 0; k < 6; k++) {
        uint64_t start = now;
        pb_leaf(b, 1, &now, 1, 3 * MS + slow);
        pb_leaf(b, 1, &now, 2, 1 * MS);
        pb_leaf(b, 1, &now, 3, 1 * MS);
        prism_step st = { start, now, k, 0, PRISM_STEP_SAMPLED };
        pb_step(b, &st);
    }
    pb_flush(b);
    put_file(sub, name, b->data, b->len);
    free(b->data);
    free(b);
}

static void rm_rf(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/job_load_testXXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    rm_rf(g_dir);
    return 0;
}

static void mkdir_in(const char *sub)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, sub);
    assert_int_equal(mkdir(path, 0755), 0);
}

static char **expand1(const char *arg, size_t *n, prism_status want, char *msg)
{
    char **paths = (char **)1;
    const char *args[] = { arg };
    assert_int_equal(prism_job_expand(args, 1, &paths, n, msg, 256), want);
    return paths;
}

/* ---- expand ---- */

static void test_expand_dir(void **state)
{
    (void)state;
    mkdir_in("e");
    mkdir_in("e/sub");
    put_rank("e", "rank10.cbor", 10, 0);
    put_rank("e", "rank2.cbor", 2, 0);
    put_rank("e", "rank9.cbor", 9, 0);
    put_rank("e", ".hidden.cbor", 1, 0);
    put_rank("e/sub", "rank3.cbor", 3, 0);
    put_text("e", "notes.txt", "hello, not a profile\n");
    put_text("e", "trace.json", "{\"traceEvents\": []}\n");
    put_text("e", "r1.sum", "{\"prism_summary\": 1, \"steps\": [], \"regions\": []}\n");
    char dir[128], msg[256];
    snprintf(dir, sizeof dir, "%s/e/", g_dir);     /* the slash kept as given */
    size_t n;
    char **p = expand1(dir, &n, PRISM_OK, msg);
    static const char *const want[] = { "r1.sum", "rank2.cbor", "rank9.cbor", "rank10.cbor",
                                        "trace.json" };
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++) {
        char full[256];
        snprintf(full, sizeof full, "%s%s", dir, want[i]);
        assert_string_equal(p[i], full);
    }
    prism_job_paths_free(p, n);

    /* files as given, whatever they hold, in argument order; a directory
     * among them in place */
    char a0[256], a1[256], a2[256], a3[256];
    path_of(a0, sizeof a0, "e", "notes.txt");
    path_of(a1, sizeof a1, "", "missing.cbor");
    snprintf(a2, sizeof a2, "%s/e/sub", g_dir);
    path_of(a3, sizeof a3, "e", ".hidden.cbor");
    const char *args[] = { a0, a1, a2, a3 };
    assert_int_equal(prism_job_expand(args, 4, &p, &n, msg, sizeof msg), PRISM_OK);
    assert_int_equal(n, 4);
    assert_string_equal(p[0], a0);
    assert_string_equal(p[1], a1);
    assert_non_null(strstr(p[2], "/e/sub/rank3.cbor"));
    assert_string_equal(p[3], a3);
    prism_job_paths_free(p, n);
}

static void test_expand_errors(void **state)
{
    (void)state;
    char dir[128], msg[256];
    size_t n = 9;
    snprintf(dir, sizeof dir, "%s/nowhere/", g_dir);
    char **p = expand1(dir, &n, PRISM_E_IO, msg);
    assert_null(p);
    assert_int_equal(n, 0);
    assert_non_null(strstr(msg, "cannot read directory"));
    assert_non_null(strstr(msg, "nowhere"));

    mkdir_in("empty");
    put_text("empty", "readme.txt", "nothing\n");
    snprintf(dir, sizeof dir, "%s/empty", g_dir);
    p = expand1(dir, &n, PRISM_E_NOT_PRISM, msg);
    assert_null(p);
    char want[160];
    snprintf(want, sizeof want, "no profiles in %s", dir);
    assert_string_equal(msg, want);
}

/* ---- loading ---- */

/* NRANKS rank files in sub/, rank 5 slow; their paths (expanded). */
static char **rank_dir(const char *sub, size_t *n)
{
    mkdir_in(sub);
    for (int r = 0; r < NRANKS; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank%d.cbor", r);
        put_rank(sub, name, r, r == 5 ? 2 * MS : 0);
    }
    char dir[128], msg[256];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, sub);
    char **p = expand1(dir, n, PRISM_OK, msg);
    assert_int_equal(*n, NRANKS);
    return p;
}

static prism_job *load(char **paths, size_t n, unsigned threads)
{
    prism_job_loader *l = prism_job_loader_start((const char *const *)paths, n, threads);
    assert_non_null(l);
    prism_job *j = prism_job_loader_finish(l, NULL);
    assert_non_null(j);
    return j;
}

static bool same_cells(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void jobs_equal(const prism_job *a, const prism_job *b)
{
    assert_int_equal(a->nranks, b->nranks);
    assert_int_equal(a->nsteps, b->nsteps);
    assert_int_equal(a->nfailed, b->nfailed);
    assert_int_equal(a->nstragglers, b->nstragglers);
    for (size_t r = 0; r < a->nranks; r++) {
        assert_int_equal(a->ranks[r].id, b->ranks[r].id);
        assert_true(an_sum_equal(&a->ranks[r].sum, &b->ranks[r].sum));
        for (size_t s = 0; s < a->nsteps; s++) {
            assert_true(same_cells(prism_job_step(a, r, s), prism_job_step(b, r, s)));
            assert_true(same_cells(prism_job_work(a, r, s), prism_job_work(b, r, s)));
        }
    }
    for (size_t i = 0; i < a->nstragglers; i++)
        assert_int_equal(a->stragglers[i].rank, b->stragglers[i].rank);
}

static void test_threads_same_job(void **state)
{
    (void)state;
    size_t n;
    char **p = rank_dir("t", &n);
    prism_job *one = load(p, n, 1), *four = load(p, n, 4), *all = load(p, n, 0);
    assert_int_equal(one->nranks, NRANKS);
    assert_int_equal(one->nfailed, 0);
    assert_int_equal(one->nsteps, 6);
    for (size_t r = 0; r < NRANKS; r++)
        assert_int_equal(one->ranks[r].id, (int64_t)r);
    /* the planted rank is found, the same way whatever the threads */
    assert_int_equal(one->nstragglers, 1);
    assert_int_equal(one->stragglers[0].rank, 5);
    jobs_equal(one, four);
    jobs_equal(one, all);
    prism_job_free(one);
    prism_job_free(four);
    prism_job_free(all);
    prism_job_paths_free(p, n);
}

/* Summaries written beside the profiles, read back as a job: the same job. */
static void test_summaries_same_job(void **state)
{
    (void)state;
    size_t n;
    char **p = rank_dir("s", &n);
    mkdir_in("sums");
    char **sp = calloc(n, sizeof *sp);
    assert_non_null(sp);
    for (size_t i = 0; i < n; i++) {
        prism_rank_summary s;
        char msg[256], name[32], path[256];
        uint64_t off;
        assert_int_equal(prism_rank_summary_from_file(p[i], &s, msg, sizeof msg, &off), PRISM_OK);
        snprintf(name, sizeof name, "r%zu.sum", i);
        path_of(path, sizeof path, "sums", name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        assert_true(prism_rank_summary_write(f, &s));
        fclose(f);
        prism_rank_summary_free(&s);
        sp[i] = strdup(path);
    }
    prism_job *direct = load(p, n, 2), *merged = load(sp, n, 2);
    jobs_equal(direct, merged);
    /* and through prism_job_open on the directory */
    char dir[128], msg[256];
    snprintf(dir, sizeof dir, "%s/sums", g_dir);
    const char *args[] = { dir };
    prism_job *opened = prism_job_open(args, 1, 3, NULL, msg, sizeof msg);
    assert_non_null(opened);
    jobs_equal(direct, opened);
    prism_job_free(opened);
    prism_job_free(direct);
    prism_job_free(merged);
    prism_job_paths_free(sp, n);
    prism_job_paths_free(p, n);
}

/* A damaged and a missing file: failures in file order; the rest load. */
static void test_failures(void **state)
{
    (void)state;
    mkdir_in("f");
    put_rank("f", "a0.cbor", 0, 0);
    static const uint8_t junk[] = { 0xd9, 0xd9, 0xf7, 0xa1, 0x65, 'm', 'a', 'g', 'i', 'c', 0xff };
    put_file("f", "a1.cbor", junk, sizeof junk);
    put_rank("f", "a3.cbor", 3, 0);
    put_text("f", "a4.sum", "{\"prism_summary\": 1, \"steps\": {}}");
    char p0[256], p1[256], p2[256], p3[256], p4[256];
    path_of(p0, sizeof p0, "f", "a0.cbor");
    path_of(p1, sizeof p1, "f", "a1.cbor");
    path_of(p2, sizeof p2, "f", "a2-missing.cbor");
    path_of(p3, sizeof p3, "f", "a3.cbor");
    path_of(p4, sizeof p4, "f", "a4.sum");
    char *paths[] = { p0, p1, p2, p3, p4 };
    for (unsigned threads = 1; threads <= 4; threads += 3) {
        prism_job_loader *l = prism_job_loader_start((const char *const *)paths, 5, threads);
        assert_non_null(l);
        /* spin (no sleep) until every file is done; the counters are atomics */
        prism_job_progress pr;
        while (!(pr = prism_job_loader_progress(l)).finished)
            sched_yield();
        assert_int_equal(pr.total, 5);
        assert_int_equal(pr.done, 5);
        assert_int_equal(pr.failed, 3);
        assert_true(pr.bytes_done == pr.bytes_total && pr.bytes_total > 0);
        prism_job *j = prism_job_loader_finish(l, NULL);
        assert_non_null(j);
        assert_int_equal(j->nranks, 2);
        assert_int_equal(j->nfailed, 3);
        assert_string_equal(j->failed[0].source, p1);
        assert_string_equal(j->failed[1].source, p2);
        assert_string_equal(j->failed[2].source, p4);
        assert_int_equal(j->failed[1].status, PRISM_E_IO);
        assert_non_null(strstr(j->failed[1].message, "No such file or directory"));
        assert_int_equal(j->failed[2].status, PRISM_E_NOT_PRISM);
        assert_int_equal(j->failed[2].offset, 30);
        assert_non_null(strstr(j->failed[2].message, "expected an array for \"steps\""));
        for (size_t i = 0; i < 3; i++)
            assert_true(j->failed[i].message[0] != '\0');
        prism_job_free(j);
    }
}

/* Cancelled: finish returns NULL and frees everything (ASan watches). */
static void test_cancel(void **state)
{
    (void)state;
    size_t n;
    char **p = rank_dir("c", &n);
    for (unsigned threads = 1; threads <= 2; threads++) {
        prism_job_loader *l = prism_job_loader_start((const char *const *)p, n, threads);
        assert_non_null(l);
        prism_job_loader_cancel(l);
        prism_job_progress pr = prism_job_loader_progress(l);
        assert_true(pr.done <= n);
        assert_null(prism_job_loader_finish(l, NULL));
    }
    /* cancelled after it finished: still NULL */
    prism_job_loader *l = prism_job_loader_start((const char *const *)p, n, 2);
    while (!prism_job_loader_progress(l).finished)
        sched_yield();
    prism_job_loader_cancel(l);
    assert_null(prism_job_loader_finish(l, NULL));
    prism_job_paths_free(p, n);
}

static void test_no_files(void **state)
{
    (void)state;
    prism_job_loader *l = prism_job_loader_start(NULL, 0, 0);
    assert_non_null(l);
    assert_true(prism_job_loader_progress(l).finished);
    prism_job *j = prism_job_loader_finish(l, NULL);
    assert_non_null(j);
    assert_int_equal(j->nranks, 0);
    prism_job_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand_dir),
        cmocka_unit_test(test_expand_errors),
        cmocka_unit_test(test_threads_same_job),
        cmocka_unit_test(test_summaries_same_job),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_no_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

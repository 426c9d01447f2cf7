/*
 * workers_view_test.c - the explorer's view of worker processes: the
 * Timeline's worker lanes (analysis/timeline_workers.c), the Summary's
 * words (present/workers.c), the thread label of the Tree and the Flame
 * (tui/draw.c) and the profile as the explorer loads it (tui/source.c).
 *
 * Hand-built files (the format's encoder) pin the exact times, names and
 * the lane cap: worker files whose string ids mean other names than the
 * profile's, clocks started after and before the profile's, files of
 * another session and one that is no profile.  A real session
 * (tests/workers_scenario.h: a process forking worker processes that call
 * prism_init_worker) checks what libcollect writes: each worker's spans
 * lie inside the parent's region that forked it and waited for it, a file
 * of another run is never shown, the cache, a file added or torn.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "collect_util.h"
#include "pbuild.h"
#include "prism/timeline.h"
#include "source.h"
#include "ui.h"
#include "workers.h"
#include "workers_scenario.h"

#define MAIN_PID 100u
#define MAIN_START 5000000000ull        /* start_unix_ns */
#define MAIN_MONO 1000000000ull         /* start_mono_ns */

/* ---- hand-built files ---------------------------------------------------- */

/* A file's header: the profile's (wid < 0), or worker wid's of session
 * (ppid, pstart); then its strings. */
static void begin_file(pbuild *b, uint64_t pid, uint64_t mono, int wid, uint64_t ppid,
                       uint64_t pstart, const char *const *names, size_t n)
{
    prism_kv kv[3] = {
        { "worker.id", { .type = PRISM_VAL_UINT, .v.u = (uint64_t)(wid < 0 ? 0 : wid) } },
        { "worker.parent_pid", { .type = PRISM_VAL_UINT, .v.u = ppid } },
        { "worker.parent_start_ns", { .type = PRISM_VAL_UINT, .v.u = pstart } },
    };
    prism_header h = { .producer = "workers test", .host = "test", .pid = pid, .rank = -1,
                       .clock = "test", .start_unix_ns = wid < 0 ? MAIN_START : MAIN_START + 7,
                       .start_mono_ns = mono, .config = kv, .nconfig = wid < 0 ? 0 : 3 };
    pb_init_header(b, &h, names, n, 1);
}

static void save_file(pbuild *b, const char *path)
{
    pb_flush(b);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
    fclose(f);
    free(b->data);
    b->data = NULL;
}

static void in_dir(const tdir *d, const char *name, char *out)
{
    tdir_file(d, name, out, 512);
}

/* Remove "<dir>/p.prism.workers" and its files, then the directory. */
static void remove_all(tdir *d)
{
    char w[512], f[1024];
    in_dir(d, "p.prism.workers", w);
    DIR *dir = opendir(w);
    struct dirent *e;
    while (dir && (e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(f, sizeof f, "%s/%s", w, e->d_name);
            unlink(f);
        }
    if (dir)
        closedir(dir);
    rmdir(w);
    tdir_remove(d);
}

/* The lane named name (NULL: none). */
static const prism_lane *lane_named(const prism_timeline *t, const char *name)
{
    for (size_t i = 0; i < prism_timeline_lane_count(t); i++) {
        const prism_lane *l = prism_timeline_lane(t, i);
        if (l->name && !strcmp(l->name, name))
            return l;
    }
    return NULL;
}

/* The span of lane l named name at depth (NULL: none). */
static const prism_span *span_named(const prism_lane *l, const char *name, uint32_t depth)
{
    for (size_t i = 0; l && i < l->nspans; i++)
        if (!strcmp(l->spans[i].name, name) && l->spans[i].depth == depth)
            return &l->spans[i];
    return NULL;
}

/*
 * The profile: thread "main", "step" [0, 1000].  Worker 0 (pid 201, its
 * clock started 500 ns after the profile's; string 1 is "collate" there,
 * "step" in the profile): "batch" [10, 60] holding "collate" [20, 30].
 * Worker 1 (pid 202, started 200 ns before; an unnamed thread): "batch"
 * [300, 400].  Files of another start, of another pid, and one that is no
 * profile: never lanes.
 */
static void hand_session(tdir *d, char *path)
{
    static const char *const mn[] = { "step", "forward" }, *const wn[] = { "collate", "batch" },
                             *const sn[] = { "stray" };
    char w[512], f[600];
    pbuild b;
    tdir_make(d);
    in_dir(d, "p.prism", path);
    in_dir(d, "p.prism.workers", w);
    assert_int_equal(mkdir(w, 0777), 0);
    begin_file(&b, MAIN_PID, MAIN_MONO, -1, 0, 0, mn, 2);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 0, 1);
    pb_exit(&b, 1, 1000);
    save_file(&b, path);
    begin_file(&b, 201, MAIN_MONO + 500, 0, MAIN_PID, MAIN_START, wn, 2);
    pb_thread(&b, 1, "loader");
    pb_enter(&b, 1, 10, 2);
    pb_enter(&b, 1, 20, 1);
    pb_exit(&b, 1, 30);
    pb_exit(&b, 1, 60);
    snprintf(f, sizeof f, "%s/w0-201.prism", w);
    save_file(&b, f);
    begin_file(&b, 202, MAIN_MONO - 200, 1, MAIN_PID, MAIN_START, wn, 2);
    pb_thread(&b, 1, "");
    pb_enter(&b, 1, 300, 2);
    pb_exit(&b, 1, 400);
    snprintf(f, sizeof f, "%s/w1-202.prism", w);
    save_file(&b, f);
    for (int k = 0; k < 2; k++) {       /* another start; another process */
        begin_file(&b, 203u + (unsigned)k, MAIN_MONO, 2 + k, MAIN_PID + (unsigned)k,
                   MAIN_START + 1u - (unsigned)k, sn, 1);
        pb_thread(&b, 1, "stray");
        pb_enter(&b, 1, 0, 1);
        pb_exit(&b, 1, 1000);
        snprintf(f, sizeof f, "%s/w%d-%d.prism", w, 2 + k, 203 + k);
        save_file(&b, f);
    }
    snprintf(f, sizeof f, "%s/wjunk.prism", w);
    FILE *j = fopen(f, "w");
    assert_non_null(j);
    fputs("not a profile at all\n", j);
    fclose(j);
}

static void check_hand_lanes(const prism_timeline *t)
{
    assert_int_equal(prism_timeline_lane_count(t), 3);
    assert_int_equal(prism_timeline_lanes_left_out(t), 0);
    const prism_lane *m = prism_timeline_lane(t, 0), *w0 = prism_timeline_lane(t, 1),
                     *w1 = prism_timeline_lane(t, 2);
    assert_string_equal(m->name, "main");
    assert_false(m->is_worker);
    assert_non_null(span_named(m, "step", 0));
    assert_string_equal(w0->name, "worker 0: loader");
    assert_true(w0->is_worker);
    assert_int_equal(w0->worker_id, 0);
    assert_int_equal(w0->pid, 201);
    assert_int_equal(w0->nspans, 2);
    const prism_span *s = span_named(w0, "batch", 0), *c = span_named(w0, "collate", 1);
    assert_non_null(s);
    assert_non_null(c);
    assert_int_equal(s->start, 510);
    assert_int_equal(s->end, 560);
    assert_int_equal(c->start, 520);
    assert_int_equal(c->end, 530);
    assert_string_equal(w1->name, "worker 1: thread");
    assert_int_equal(w1->worker_id, 1);
    assert_int_equal(w1->pid, 202);
    assert_int_equal(w1->nspans, 1);
    assert_int_equal(w1->spans[0].start, 100);
    assert_int_equal(w1->spans[0].end, 200);
    assert_string_equal(w1->spans[0].name, "batch");
}

static void test_hand_lanes(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    hand_session(&d, path);
    prism_timeline *t = prism_timeline_new(0);
    assert_non_null(t);
    assert_int_equal(prism_timeline_load(t, path, 0, 1000), PRISM_OK);
    check_hand_lanes(t);
    prism_timeline_use_index(t, false);         /* read whole: the same */
    assert_int_equal(prism_timeline_load(t, path, 0, 1000), PRISM_OK);
    check_hand_lanes(t);
    prism_timeline_use_index(t, true);
    /* [0, 400]: worker 0's spans (from 510) are out of it */
    assert_int_equal(prism_timeline_load(t, path, 0, 400), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), 2);
    assert_null(lane_named(t, "worker 0: loader"));
    assert_non_null(lane_named(t, "worker 1: thread"));
    /* [540, 1000]: worker 0's batch reaches into it, its collate not */
    assert_int_equal(prism_timeline_load(t, path, 540, 1000), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), 2);
    const prism_lane *w0 = lane_named(t, "worker 0: loader");
    assert_non_null(w0);
    assert_int_equal(w0->nspans, 1);
    assert_int_equal(w0->spans[0].start, 510);
    prism_timeline_free(t);
    remove_all(&d);
}

/* 40 worker files of 7 threads: the lanes past PRISM_TIMELINE_MAX_LANES
 * are counted, the profile's own lane kept first. */
static void test_lane_cap(void **state)
{
    (void)state;
    static const char *const names[] = { "step", "batch" };
    tdir d;
    char path[512], w[512], f[600];
    pbuild b;
    tdir_make(&d);
    in_dir(&d, "p.prism", path);
    in_dir(&d, "p.prism.workers", w);
    assert_int_equal(mkdir(w, 0777), 0);
    begin_file(&b, MAIN_PID, MAIN_MONO, -1, 0, 0, names, 2);
    pb_thread(&b, 1, "main");
    pb_enter(&b, 1, 0, 1);
    pb_exit(&b, 1, 1000);
    save_file(&b, path);
    for (int k = 0; k < 40; k++) {
        begin_file(&b, 300u + (unsigned)k, MAIN_MONO + 300, k, MAIN_PID, MAIN_START, names, 2);
        for (uint32_t s = 1; s <= 7; s++) {
            pb_thread(&b, s, "loader");
            pb_enter(&b, s, 10, 2);
            pb_exit(&b, s, 20);
        }
        snprintf(f, sizeof f, "%s/w%d-%d.prism", w, k, 300 + k);
        save_file(&b, f);
    }
    prism_timeline *t = prism_timeline_new(0);
    assert_non_null(t);
    assert_int_equal(prism_timeline_load(t, path, 0, 1000), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), PRISM_TIMELINE_MAX_LANES);
    assert_int_equal(prism_timeline_lanes_left_out(t), 1 + 40 * 7 - PRISM_TIMELINE_MAX_LANES);
    assert_false(prism_timeline_lane(t, 0)->is_worker);
    for (size_t i = 1; i < prism_timeline_lane_count(t); i++) {
        const prism_lane *l = prism_timeline_lane(t, i);
        assert_true(l->is_worker);
        assert_int_equal(l->spans[0].start, 310);
        assert_int_equal(l->spans[0].end, 320);
        if (i > 1)                      /* by worker, then process and stream */
            assert_true(l->worker_id > prism_timeline_lane(t, i - 1)->worker_id ||
                        (l->worker_id == prism_timeline_lane(t, i - 1)->worker_id &&
                         l->stream > prism_timeline_lane(t, i - 1)->stream));
    }
    prism_timeline_free(t);
    remove_all(&d);
}

/* ---- a real session ------------------------------------------------------ */

static tdir real_dir;
static char real_path[512];

static int run_scenario(void *arg)
{
    (void)arg;
    ws_opts o = { .output = real_path, .steps = 2, .workers = 2, .batches = 3, .stray = true };
    return ws_run(&o);
}

static int real_setup(void **state)
{
    (void)state;
    tdir_make(&real_dir);
    in_dir(&real_dir, "p.prism", real_path);
    child_run_ok(run_scenario, NULL);
    return 0;
}

static int real_teardown(void **state)
{
    (void)state;
    remove_all(&real_dir);
    return 0;
}

/* The main lane's spans named name, in start order: their count. */
static size_t spans_of(const prism_lane *l, const char *name, const prism_span **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; l && i < l->nspans; i++)
        if (!strcmp(l->spans[i].name, name) && n < cap)
            out[n++] = &l->spans[i];
    return n;
}

/* Which of the parent's waits holds all of worker lane l: its index. */
static size_t held_by(const prism_lane *l, const prism_span *const *waits, size_t nw)
{
    for (size_t k = 0; k < nw; k++) {
        bool all = true;
        for (size_t i = 0; i < l->nspans; i++)
            all = all && l->spans[i].start >= waits[k]->start && l->spans[i].end <= waits[k]->end;
        if (all)
            return k;
    }
    fail_msg("a span of %s is in none of the parent's waits", l->name);
    return nw;
}

static void check_worker_lane(const prism_lane *l)
{
    size_t batch = 0, item = 0, coll = 0;
    assert_true(l->is_worker);
    assert_true(!strcmp(l->name, "worker 0: DataLoader") || !strcmp(l->name, "worker 1: DataLoader"));
    assert_int_equal(l->worker_id, l->name[7] - '0');
    for (size_t i = 0; i < l->nspans; i++) {
        const prism_span *s = &l->spans[i];
        batch += !strcmp(s->name, "DataLoader batch") && s->depth == 0;
        item += !strcmp(s->name, "ToyDataset.__getitem__") && s->depth == 1;
        coll += !strcmp(s->name, "collate (default_collate)") && s->depth == 1;
    }
    assert_int_equal(batch, 3);
    assert_int_equal(item, 6);
    assert_int_equal(coll, 3);
    assert_int_equal(l->nspans, 12);
}

static void test_real_lanes(void **state)
{
    (void)state;
    prism_timeline *t = prism_timeline_new(0);
    assert_non_null(t);
    assert_int_equal(prism_timeline_load(t, real_path, 0, UINT64_MAX / 4), PRISM_OK);
    const prism_lane *m = prism_timeline_lane(t, 0);
    assert_string_equal(m->name, "main");
    assert_false(m->is_worker);
    const prism_span *waits[4];
    assert_int_equal(spans_of(m, "wait for batches", waits, 4), 2);
    size_t nworker = 0, per_wait[2] = { 0, 0 };
    uint64_t pid_of[2][2] = { { 0, 0 }, { 0, 0 } };
    for (size_t i = 0; i < prism_timeline_lane_count(t); i++) {
        const prism_lane *l = prism_timeline_lane(t, i);
        assert_null(strstr(l->name ? l->name : "", "Stray"));
        assert_null(span_named(l, "stray region", 0));
        if (!l->is_worker) {
            assert_int_equal(nworker, 0);       /* the profile's lanes first */
            continue;
        }
        nworker++;
        check_worker_lane(l);
        size_t k = held_by(l, waits, 2);        /* times on the parent's clock */
        pid_of[k][l->worker_id] = l->pid;
        per_wait[k]++;
    }
    assert_int_equal(nworker, 4);
    assert_int_equal(per_wait[0], 2);
    assert_int_equal(per_wait[1], 2);
    /* the window of each wait: that round's two worker processes (the
     * waits copied: a load frees the spans of the one before) */
    uint64_t wa[2] = { waits[0]->start, waits[1]->start }, wz[2] = { waits[0]->end, waits[1]->end };
    assert_true(wz[0] < wa[1]);                 /* the first ended before the next began */
    for (size_t k = 0; k < 2; k++) {
        uint64_t a = wa[k], z = wz[k];
        uint64_t reads = prism_timeline_reads(t);
        assert_int_equal(prism_timeline_load(t, real_path, a, z), PRISM_OK);
        assert_int_equal(prism_timeline_reads(t), reads + 1);
        assert_int_equal(prism_timeline_load(t, real_path, a, z), PRISM_OK);
        assert_int_equal(prism_timeline_reads(t), reads + 1);     /* cached */
        size_t n = 0;
        for (size_t i = 0; i < prism_timeline_lane_count(t); i++) {
            const prism_lane *l = prism_timeline_lane(t, i);
            if (!l->is_worker)
                continue;
            n++;
            assert_int_equal(l->pid, pid_of[k][l->worker_id]);
        }
        assert_int_equal(n, 2);
    }
    prism_timeline_free(t);
}

/* The explorer's load: worker threads, the Summary's words, the label. */
static void test_real_source(void **state)
{
    (void)state;
    source s;
    assert_int_equal(source_open(&s, real_path, SRC_NO_FOLLOW, NULL), 0);
    assert_int_equal(source_load_all(&s), 0);
    assert_true(s.workers_read);
    const prism_worker_stats *ws = prism_analysis_workers(s.a);
    assert_int_equal(ws->threads, 4);
    assert_int_equal(ws->workers, 2);
    assert_int_equal(ws->processes, 4);
    /* the same region in every worker file is one path of the all-threads tree */
    const prism_tree *t = prism_analysis_tree(s.a);
    size_t batch_roots = 0;
    uint64_t batch_calls = 0, per_thread = 0;
    for (uint32_t r = t->first_root; r < t->count; r = t->nodes[r].next_sibling)
        if (!strcmp(t->nodes[r].name, "DataLoader batch")) {
            batch_roots++;
            batch_calls = t->nodes[r].calls;
        }
    for (size_t i = 0; i < prism_analysis_thread_count(s.a); i++) {
        const prism_tree *tt = prism_analysis_thread_tree(s.a, i, NULL, NULL);
        for (uint32_t r = tt->first_root; r < tt->count; r = tt->nodes[r].next_sibling)
            if (!strcmp(tt->nodes[r].name, "DataLoader batch"))
                per_thread += tt->nodes[r].calls;
    }
    assert_int_equal(batch_roots, 1);
    assert_int_equal(batch_calls, per_thread);
    const prism_reader_stats *rs = prism_analysis_reader_stats(s.a);
    assert_int_equal(rs->workers, 4);
    assert_int_equal(rs->workers_other, 1);
    assert_int_equal(rs->workers_damaged, 0);
    workers_words w;
    workers_words_of(s.a, rs, &w);
    assert_int_equal(w.nparts, 3);
    assert_string_equal(w.parts[0], "2 DataLoader workers (4 processes):");
    assert_int_equal(w.nnotes, 1);
    assert_string_equal(w.notes[0], "1 file of another run left");
    size_t seen = 0;
    for (size_t i = 0; i < prism_analysis_thread_count(s.a); i++) {
        char lab[200], want[200];
        uint32_t wid;
        uint64_t pid;
        const char *name;
        prism_analysis_thread_tree(s.a, i, NULL, &name);
        ui_thread_label(s.a, i, true, lab, sizeof lab);
        if (!prism_analysis_thread_worker(s.a, i, &wid, &pid)) {
            assert_null(strstr(lab, "worker"));
            continue;
        }
        seen++;
        snprintf(want, sizeof want, "thread worker %u: DataLoader (worker, pid %llu)",
                 (unsigned)wid, (unsigned long long)pid);
        assert_string_equal(lab, want);
        ui_thread_label(s.a, i, false, lab, sizeof lab);
        snprintf(want, sizeof want, "thread %s (worker)", name);
        assert_string_equal(lab, want);
    }
    assert_int_equal(seen, 4);
    source_close(&s);
}

static void copy_file(const char *from, const char *to)
{
    char buf[65536];
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    assert_non_null(a);
    assert_non_null(b);
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        assert_int_equal(fwrite(buf, 1, n, b), n);
    fclose(a);
    fclose(b);
}

/* A worker file added: one lane more, at once (file times are coarse);
 * one torn: what it holds, the load still good, the Summary's note.  Runs
 * last: it changes the session's files. */
static void test_real_changes(void **state)
{
    (void)state;
    char w[512], first[1024] = "", f[1024];
    in_dir(&real_dir, "p.prism.workers", w);
    DIR *dir = opendir(w);
    assert_non_null(dir);
    struct dirent *e;
    while ((e = readdir(dir)) && !first[0])
        if (!strncmp(e->d_name, "w0-", 3))
            snprintf(first, sizeof first, "%s/%s", w, e->d_name);
    closedir(dir);
    assert_true(first[0]);
    prism_timeline *t = prism_timeline_new(0);
    assert_non_null(t);
    assert_int_equal(prism_timeline_load(t, real_path, 0, UINT64_MAX / 4), PRISM_OK);
    size_t lanes = prism_timeline_lane_count(t);
    snprintf(f, sizeof f, "%s/w0-copy.prism", w);
    copy_file(first, f);
    assert_int_equal(prism_timeline_load(t, real_path, 0, UINT64_MAX / 4), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), lanes + 1);
    /* torn: its last chunk (the footer) cut short; its regions stay */
    struct stat sb;
    assert_int_equal(stat(f, &sb), 0);
    assert_int_equal(truncate(f, sb.st_size - 1), 0);
    assert_int_equal(prism_timeline_load(t, real_path, 0, UINT64_MAX / 4), PRISM_OK);
    assert_int_equal(prism_timeline_lane_count(t), lanes + 1);
    prism_timeline_free(t);
    source s;
    assert_int_equal(source_open(&s, real_path, SRC_NO_FOLLOW, NULL), 0);
    assert_int_equal(source_load_all(&s), 0);
    const prism_reader_stats *rs = prism_analysis_reader_stats(s.a);
    assert_int_equal(rs->workers, 5);
    assert_int_equal(rs->workers_damaged, 1);
    workers_words ww;
    workers_words_of(s.a, rs, &ww);
    assert_int_equal(ww.nnotes, 2);
    assert_string_equal(ww.notes[0], "1 worker file damaged (what it held is shown)");
    source_close(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_lanes),
        cmocka_unit_test(test_lane_cap),
        cmocka_unit_test(test_real_lanes),
        cmocka_unit_test(test_real_source),
        cmocka_unit_test(test_real_changes),    /* last: changes the session's files */
    };
    return cmocka_run_group_tests(tests, real_setup, real_teardown);
}

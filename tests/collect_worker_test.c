/*
 * collect_worker_test.c - worker processes (prism_init_worker) and the
 * readers' merge of their files (prism_reader_add_workers, through
 * prism_read_file and prism_analyze_file).
 *
 * The test process forks a "parent" child that records (one session per
 * process), interns a name, enters a region around everything, then forks
 * its workers.  Each worker starts a worker session writing
 * <profile>.workers/w<id>-<pid>.prism, records regions under the inherited
 * name and names of its own, and exits through prism_shutdown; the parent
 * waits for them, leaves its region and shuts down.  The test reads the
 * profile back:
 *
 *   merged        both workers' threads, marked is_worker with their index
 *                 and pid (the reader's callbacks and the analysis), every
 *                 region by its right name (the inherited one, the names
 *                 each worker interned under the same raw id), exact
 *                 counts, every time inside the parent's region
 *   another       a worker file of another session (the parent's pid, a
 *                 different start) in the folder: counted in workers_other,
 *                 its thread and names not merged
 *   truncated     a worker file cut short: merged as far as it goes,
 *                 counted in workers_damaged; the rest of the read intact
 *   SIGTERM       a worker with a SIGTERM handler of its own (installed
 *                 before prism_init_worker), terminated by the parent:
 *                 writes its footer, then its handler runs (with the
 *                 signal's sender: it _exit()s with a code saying whether
 *                 that was its parent); a worker without one dies by the
 *                 signal after its footer.  Every region recorded before
 *                 the signal is in the merged profile.
 *
 * Synchronisation by pipes and waitpid only; every process arms an alarm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sched.h>
#include <sys/syscall.h>

#include "collect_util.h"
#include "prism/analysis.h"
#include "writer_probe.h"

/* A forked child copies the parent's heap, not its threads: what only the
 * parent's writer thread points to looks leaked when a worker exits
 * (collect_kill_test.c says more).  And a worker's session takes the place
 * of the inherited one, so what that one held (its writer's state, the
 * parent's thread records) is out of reach in the worker: allocated by
 * the parent, before the fork.  Exported, so that the sanitizer's runtime
 * finds it (the build hides symbols by default). */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
    return "leak:pc_writer_main\nleak:parent_main\nleak:_dlerror_run\n";
}

#define NWORKERS 2u
#define OWN_TERM_EXIT 42        /* the worker's SIGTERM handler, sender = parent */
#define OWN_TERM_OTHER 43       /* ... sender not its parent                      */

/* Regions each worker records per iteration: "shared name" around its own
 * name, then "fresh name" (interned by both workers after the fork). */
static uint32_t iters_of(uint32_t id, uint32_t base)
{
    return base + 7u * id;      /* different counts: no mix-up goes unseen */
}

typedef struct scen {
    char path[512];             /* the profile                               */
    char folder[600];           /* path.workers                              */
    uint32_t base;              /* iterations of worker 0                     */
    uint32_t batches;           /* > 1: the workers' regions in that many chunks */
    bool foreign;               /* also a worker of another session           */
    bool sigterm;               /* the SIGTERM scenario                       */
} scen;

/* ---- the processes ------------------------------------------------------ */

/* In the parent, before fork(): the writer is idle in poll() with nothing
 * due (no malloc in flight in another thread: ASan's allocator has no fork
 * handlers).  The file has grown past its header once flushed. */
static void wait_writer_idle(void)
{
    while (probe_writer_syscall() != SYS_ppoll
#ifdef SYS_poll
           && probe_writer_syscall() != SYS_poll
#endif
          )
        sched_yield();
}

static void worker_config(const scen *sc, uint64_t id, char *out, size_t n, prism_config *c)
{
    prism_config_default(c);
    snprintf(out, n, "%s/w%llu-%ld.prism", sc->folder, (unsigned long long)id, (long)getpid());
    c->output = out;
    c->collect_memory = false;
    c->policy = PRISM_POLICY_WAIT;              /* exact counts */
    if (sc->batches > 1)
        c->flush_interval_ms = 5;               /* each batch's chunk soon */
}

/* REGIONS chunks in the file at path so far (in a child: no cmocka). */
static void count_regions_chunk(void *ctx, const prism_chunk_info *c)
{
    if (c->status == PRISM_CHUNK_OK && c->kind == PRISM_CHUNK_REGIONS)
        (*(uint64_t *)ctx)++;
}

static uint64_t regions_chunks_now(const char *path)
{
    uint64_t n = 0;
    prism_reader_callbacks cb = { .chunk = count_regions_chunk };
    prism_reader *r = NULL;
    prism_read_file(path, &cb, &n, &r);
    prism_reader_free(r);
    return n;
}

static bool has_chunks(const char *path, void *want)
{
    return regions_chunks_now(path) >= *(const uint64_t *)want;
}

/* In a worker: block until its file holds `want` REGIONS chunks, re-read
 * each time the writer writes to it (inotify; the periodic flush writes). */
static void wait_regions_chunks(const char *path, uint64_t want)
{
    child_wait_file(path, has_chunks, &want);
}

/* batches > 1: the regions in that many REGIONS chunks of the file at out
 * (each batch flushed before the next one starts). */
static void worker_regions(uint64_t id, uint32_t shared, uint32_t n, uint32_t batches,
                           const char *out)
{
    char own[64];
    snprintf(own, sizeof own, "worker %llu own", (unsigned long long)id);
    uint32_t mine = prism_name(own), fresh = prism_name("fresh name");
    CHILD_CHECK(mine && fresh && mine != shared);
    uint32_t per = batches > 1 ? n / batches : n;
    for (uint32_t k = 0; k < n; k++) {
        if (batches > 1 && k && k % per == 0 && k / per < batches)
            wait_regions_chunks(out, k / per);
        prism_push_id(shared);
        prism_push_id(mine);
        prism_pop();
        prism_pop();
        prism_push_id(fresh);
        prism_pop();
    }
}

/* A worker: its session, its regions, exit through prism_shutdown. */
static void worker_main(const scen *sc, const prism_worker_of *w, uint32_t shared)
{
    char out[700];
    prism_config c;
    alarm(CHILD_ALARM_S);
    CHILD_CHECK(!prism_recording());            /* the parent's copy never records */
    worker_config(sc, w->id, out, sizeof out, &c);
    CHILD_CHECK(prism_init_worker(&c, w) == 0);
    CHILD_CHECK(prism_recording());
    CHILD_CHECK(prism_session_start_ns() != 0 && prism_session_start_ns() != w->parent_start_ns);
    prism_thread_name("loader");
    worker_regions(w->id, shared, iters_of((uint32_t)w->id, sc->base), sc->batches, out);
    prism_shutdown();
    exit(0);
}

static void on_term(int sig, siginfo_t *info, void *uctx)
{
    (void)sig, (void)uctx;
    _exit(info && info->si_pid == getppid() ? OWN_TERM_EXIT : OWN_TERM_OTHER);
}

/* A worker the parent terminates: own_handler: a SIGTERM handler of its
 * own, installed before its session starts.  It records, says so on
 * ready, then waits for the signal. */
static void term_worker_main(const scen *sc, const prism_worker_of *w, uint32_t shared,
                             bool own_handler, int ready)
{
    char out[700];
    prism_config c;
    alarm(CHILD_ALARM_S);
    if (own_handler) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_term;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        CHILD_CHECK(sigaction(SIGTERM, &sa, NULL) == 0);
    }
    worker_config(sc, w->id, out, sizeof out, &c);
    CHILD_CHECK(prism_init_worker(&c, w) == 0);
    prism_thread_name("loader");
    worker_regions(w->id, shared, iters_of((uint32_t)w->id, sc->base), sc->batches, out);
    char b = 'r';
    CHILD_CHECK(write(ready, &b, 1) == 1);
    for (;;)
        pause();
}

static int wait_for(pid_t pid)
{
    int st = 0;
    pid_t r;
    do
        r = waitpid(pid, &st, 0);
    while (r < 0 && errno == EINTR);
    CHILD_CHECK(r == pid);
    return st;
}

static int parent_main(void *arg)
{
    const scen *sc = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = sc->path;
    c.collect_memory = false;
    c.cpu_interval_ms = 0;
    c.flush_interval_ms = 60000;                /* the writer sleeps between forks */
    CHILD_CHECK(prism_init(&c) == 0);
    uint32_t shared = prism_name("shared name");
    uint32_t span = prism_name("parent span");
    CHILD_CHECK(shared && span);
    prism_thread_name("trainer");
    prism_push_id(span);
    uint64_t start = prism_session_start_ns();
    CHILD_CHECK(start != 0);
    CHILD_CHECK(mkdir(sc->folder, 0700) == 0);
    pid_t pids[NWORKERS + 1];
    int ready[2] = { -1, -1 };
    if (sc->sigterm)
        CHILD_CHECK(pipe(ready) == 0);
    size_t n = NWORKERS + (sc->foreign ? 1 : 0);
    for (size_t i = 0; i < n; i++) {
        /* worker NWORKERS, when foreign: the parent's pid, another start */
        prism_worker_of w = { (uint64_t)getpid(), i < NWORKERS ? start : start + 1, i };
        wait_writer_idle();
        fflush(NULL);
        pids[i] = fork();
        CHILD_CHECK(pids[i] >= 0);
        if (pids[i] == 0) {
            if (sc->sigterm) {
                close(ready[0]);
                term_worker_main(sc, &w, shared, i == 0, ready[1]);
            }
            worker_main(sc, &w, shared);
        }
    }
    if (sc->sigterm) {
        close(ready[1]);
        for (size_t i = 0; i < n; i++) {       /* every worker has recorded */
            char b;
            ssize_t r;
            do
                r = read(ready[0], &b, 1);
            while (r < 0 && errno == EINTR);
            CHILD_CHECK(r == 1);
        }
        for (size_t i = 0; i < n; i++)
            CHILD_CHECK(kill(pids[i], SIGTERM) == 0);
        int st = wait_for(pids[0]);             /* its own handler, after the footer */
        if (!WIFEXITED(st) || WEXITSTATUS(st) != OWN_TERM_EXIT)
            fprintf(stderr, "worker 0 (own SIGTERM handler): status %#x\n", (unsigned)st);
        CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == OWN_TERM_EXIT);
        st = wait_for(pids[1]);                 /* the default: killed by it */
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGTERM)
            fprintf(stderr, "worker 1 (default SIGTERM): status %#x\n", (unsigned)st);
        CHILD_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    } else {
        for (size_t i = 0; i < n; i++) {
            int st = wait_for(pids[i]);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                fprintf(stderr, "worker %zu: status %#x\n", i, (unsigned)st);
            CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
    }
    CHILD_CHECK(prism_recording());
    prism_pop();
    prism_shutdown();
    return 0;
}

/* ---- reading back ------------------------------------------------------- */

#define WR_STREAMS 8u
#define WR_NAMES 8u

typedef struct wstream {
    uint32_t stream;
    bool named, is_worker;
    uint32_t worker_id;
    uint64_t pid;
    char name[96];
    uint32_t ids[WR_NAMES];     /* enters by name id */
    uint64_t count[WR_NAMES];
    size_t nids;
    uint64_t enters, exits, min_ts, max_ts;
} wstream;

typedef struct wread {
    prism_reader *r;
    prism_status status;
    prism_reader_stats st;
    wstream s[WR_STREAMS];
    size_t n;
    bool overflow;
} wread;

static wstream *wr_at(wread *w, uint32_t stream)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->s[i].stream == stream)
            return &w->s[i];
    if (w->n == WR_STREAMS) {
        w->overflow = true;
        return NULL;
    }
    wstream *s = &w->s[w->n++];
    s->stream = stream;
    s->min_ts = UINT64_MAX;
    return s;
}

static void wr_thread(void *ctx, const prism_thread *t)
{
    wstream *s = wr_at(ctx, t->stream);
    if (!s)
        return;
    s->named = true;
    s->is_worker = t->is_worker;
    s->worker_id = t->worker_id;
    s->pid = t->pid;
    snprintf(s->name, sizeof s->name, "%s", t->name ? t->name : "");
}

static void wr_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    wread *w = ctx;
    wstream *s = wr_at(w, stream);
    (void)depth;
    if (!s)
        return;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].ts < s->min_ts)
            s->min_ts = ev[i].ts;
        if (ev[i].ts > s->max_ts)
            s->max_ts = ev[i].ts;
        if (ev[i].kind != PRISM_REGION_ENTER) {
            s->exits++;
            continue;
        }
        s->enters++;
        size_t k = 0;
        while (k < s->nids && s->ids[k] != ev[i].name)
            k++;
        if (k == s->nids) {
            if (k == WR_NAMES) {
                w->overflow = true;
                continue;
            }
            s->ids[s->nids++] = ev[i].name;
        }
        s->count[k]++;
    }
}

/* Fill the stack below this frame with non-zero bytes: a field a callback
 * argument leaves uninitialised (prism_thread.is_worker of the profile's
 * own threads) then reads as garbage, not as a lucky 0. */
static __attribute__((noinline)) void poison_stack(void)
{
    volatile unsigned char buf[1u << 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = 0xa5;
}

static wread *wr_read(const char *path)
{
    wread *w = calloc(1, sizeof *w);
    assert_non_null(w);
    poison_stack();
    prism_reader_callbacks cb = { .thread = wr_thread, .regions = wr_regions };
    w->status = prism_read_file(path, &cb, w, &w->r);
    assert_non_null(w->r);
    w->st = *prism_reader_stats_get(w->r);
    assert_false(w->overflow);
    return w;
}

static void wr_free(wread *w)
{
    prism_reader_free(w->r);
    free(w);
}

/* Enters of the region named name on stream s. */
static uint64_t wr_count(const wread *w, const wstream *s, const char *name)
{
    uint64_t n = 0;
    for (size_t k = 0; k < s->nids; k++) {
        size_t len;
        const char *t = prism_reader_string(w->r, s->ids[k], &len);
        if (t && len == strlen(name) && !memcmp(t, name, len))
            n += s->count[k];
    }
    return n;
}

/* Enters on s whose name the reader does not know. */
static uint64_t wr_unnamed(const wread *w, const wstream *s)
{
    uint64_t n = 0;
    for (size_t k = 0; k < s->nids; k++)
        if (!prism_reader_string(w->r, s->ids[k], NULL))
            n += s->count[k];
    return n;
}

static const wstream *wr_worker(const wread *w, uint32_t id)
{
    const wstream *found = NULL;
    for (size_t i = 0; i < w->n; i++)
        if (w->s[i].is_worker && w->s[i].worker_id == id) {
            assert_null(found);                 /* one thread per worker */
            found = &w->s[i];
        }
    return found;
}

static const wstream *wr_own(const wread *w)
{
    const wstream *found = NULL;
    for (size_t i = 0; i < w->n; i++)
        if (!w->s[i].is_worker) {
            assert_null(found);                 /* the parent's one thread */
            found = &w->s[i];
        }
    assert_non_null(found);                     /* the profile's own: not a worker's */
    return found;
}

/* The worker files' pids by worker index, from their names. */
static void worker_pids(const scen *sc, uint64_t pids[NWORKERS + 1], size_t *nfiles)
{
    DIR *d = opendir(sc->folder);
    assert_non_null(d);
    struct dirent *e;
    *nfiles = 0;
    memset(pids, 0, (NWORKERS + 1) * sizeof pids[0]);
    while ((e = readdir(d))) {
        unsigned id;
        long pid;
        if (sscanf(e->d_name, "w%u-%ld.prism", &id, &pid) != 2)
            continue;
        assert_true(id <= NWORKERS);
        assert_int_equal(pids[id], 0);
        pids[id] = (uint64_t)pid;
        (*nfiles)++;
    }
    closedir(d);
}

static void scen_init(scen *sc, tdir *d, uint32_t base)
{
    memset(sc, 0, sizeof *sc);
    tdir_make(d);
    tdir_file(d, "run.prism", sc->path, sizeof sc->path);
    snprintf(sc->folder, sizeof sc->folder, "%s.workers", sc->path);
    sc->base = base;
}

static void scen_remove(scen *sc, tdir *d)
{
    DIR *dir = opendir(sc->folder);
    if (dir) {
        struct dirent *e;
        char p[1024];
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "%s/%s", sc->folder, e->d_name);
            unlink(p);
        }
        closedir(dir);
        rmdir(sc->folder);
    }
    tdir_remove(d);
}

/* Worker i of the merged read: marked, named, its pid, its exact regions
 * by name, all inside the parent's region. */
static void assert_worker(const wread *w, const scen *sc, uint32_t i, uint64_t pid)
{
    const wstream *own = wr_own(w);
    const wstream *s = wr_worker(w, i);
    assert_non_null(s);
    assert_true(s->named);
    assert_int_equal(s->pid, pid);
    char want[64];
    snprintf(want, sizeof want, "worker %u: loader", i);
    assert_string_equal(s->name, want);
    uint32_t n = iters_of(i, sc->base);
    snprintf(want, sizeof want, "worker %u own", i);
    assert_int_equal(wr_count(w, s, "shared name"), n);        /* interned in the parent */
    assert_int_equal(wr_count(w, s, want), n);
    assert_int_equal(wr_count(w, s, "fresh name"), n);
    snprintf(want, sizeof want, "worker %u own", 1 - i);
    assert_int_equal(wr_count(w, s, want), 0);
    assert_int_equal(wr_count(w, s, "parent span"), 0);
    assert_int_equal(wr_unnamed(w, s), 0);
    assert_int_equal(s->enters, 3u * n);
    assert_int_equal(s->exits, 3u * n);
    /* on the profile's clock, inside the parent's region */
    assert_true(own->min_ts <= s->min_ts);
    assert_true(s->max_ts <= own->max_ts);
}

static void assert_parent(const wread *w)
{
    const wstream *own = wr_own(w);
    assert_string_equal(own->name, "trainer");
    assert_int_equal(own->pid, 0);
    assert_int_equal(own->enters, 1);
    assert_int_equal(wr_count(w, own, "parent span"), 1);
    assert_true(own->min_ts < own->max_ts);
}

/* The middle of the chunk that holds the middle of the file at path. */
typedef struct cut {
    uint64_t half, at;
} cut;

static void cut_chunk(void *ctx, const prism_chunk_info *c)
{
    cut *k = ctx;
    if (!k->at && c->status == PRISM_CHUNK_OK && c->offset + c->length > k->half)
        k->at = c->offset + c->length / 2;
}

static uint64_t mid_chunk_cut(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    cut k = { (uint64_t)st.st_size / 2, 0 };
    prism_reader_callbacks cb = { .chunk = cut_chunk };
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, &k, &r), PRISM_OK);
    prism_reader_free(r);
    assert_true(k.at > 0 && k.at < (uint64_t)st.st_size);
    return k.at;
}

/* ---- the tests ---------------------------------------------------------- */

static void test_workers_merged(void **state)
{
    (void)state;
    tdir d;
    scen sc;
    scen_init(&sc, &d, 50);
    sc.foreign = true;
    child_run_ok(parent_main, &sc);
    uint64_t pids[NWORKERS + 1];
    size_t nfiles;
    worker_pids(&sc, pids, &nfiles);
    assert_int_equal(nfiles, NWORKERS + 1);

    wread *w = wr_read(sc.path);
    assert_int_equal(w->status, PRISM_OK);
    assert_int_equal(w->st.workers, NWORKERS);
    assert_int_equal(w->st.workers_damaged, 0);
    assert_int_equal(w->st.workers_other, 1);               /* the foreign one */
    assert_true(w->st.worker_records > 0);
    assert_parent(w);
    for (uint32_t i = 0; i < NWORKERS; i++)
        assert_worker(w, &sc, i, pids[i]);
    assert_null(wr_worker(w, NWORKERS));                    /* not merged */
    for (size_t i = 0; i < w->n; i++)
        assert_true(w->s[i].pid != pids[NWORKERS]);
    assert_int_equal(w->n, 1 + NWORKERS);
    wr_free(w);

    /* the analysis: the same threads, the workers marked */
    prism_status st;
    char msg[256];
    uint64_t off;
    poison_stack();
    prism_analysis *a = prism_analyze_file(sc.path, NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    assert_int_equal(prism_analysis_thread_count(a), 1 + NWORKERS);
    unsigned seen = 0;
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        const char *name;
        uint32_t stream, wid = UINT32_MAX;
        uint64_t pid = 0;
        assert_non_null(prism_analysis_thread_tree(a, i, &stream, &name));
        if (!strcmp(name, "trainer")) {
            assert_false(prism_analysis_thread_worker(a, i, &wid, &pid));
            continue;
        }
        assert_true(prism_analysis_thread_worker(a, i, &wid, &pid));
        assert_true(wid < NWORKERS);
        assert_int_equal(pid, pids[wid]);
        seen |= 1u << wid;
    }
    assert_int_equal(seen, (1u << NWORKERS) - 1);
    prism_analysis_free(a);

    /* each worker file read alone: sound, with its footer */
    for (uint32_t i = 0; i <= NWORKERS; i++) {
        char f[800];
        snprintf(f, sizeof f, "%s/w%u-%llu.prism", sc.folder, i, (unsigned long long)pids[i]);
        psum *p = psum_read_sound(f, false);
        assert_int_equal(p->footers, 1);
        assert_true(p->footer.clean);
        const prism_value *v = psum_config(p, "worker.id");
        assert_non_null(v);
        assert_int_equal(v->v.u, i);
        psum_free(p);
    }
    scen_remove(&sc, &d);
}

static void test_truncated_worker_file(void **state)
{
    (void)state;
    tdir d;
    scen sc;
    scen_init(&sc, &d, 3000);
    sc.batches = 4;                             /* four REGIONS chunks a worker */
    child_run_ok(parent_main, &sc);
    uint64_t pids[NWORKERS + 1];
    size_t nfiles;
    worker_pids(&sc, pids, &nfiles);
    assert_int_equal(nfiles, NWORKERS);

    wread *w = wr_read(sc.path);
    assert_int_equal(w->st.workers, NWORKERS);
    assert_int_equal(w->st.workers_damaged, 0);
    uint64_t full = wr_worker(w, 1)->enters;
    assert_int_equal(full, 3u * iters_of(1, sc.base));
    wr_free(w);

    /* worker 1's file cut in the middle of a chunk, past its first ones */
    char f[800];
    snprintf(f, sizeof f, "%s/w1-%llu.prism", sc.folder, (unsigned long long)pids[1]);
    assert_int_equal(truncate(f, (off_t)mid_chunk_cut(f)), 0);

    w = wr_read(sc.path);
    assert_int_equal(w->status, PRISM_OK);                  /* the profile reads */
    assert_int_equal(w->st.damaged, 0);
    assert_int_equal(w->st.workers, NWORKERS);
    assert_int_equal(w->st.workers_damaged, 1);
    assert_int_equal(w->st.workers_other, 0);
    assert_parent(w);
    assert_worker(w, &sc, 0, pids[0]);                      /* untouched */
    const wstream *s = wr_worker(w, 1);
    assert_non_null(s);
    assert_int_equal(s->pid, pids[1]);
    assert_true(s->enters > 0);                             /* as far as it goes */
    assert_true(s->enters < full);
    assert_int_equal(wr_unnamed(w, s), 0);
    assert_true(wr_count(w, s, "shared name") > 0);
    assert_true(s->max_ts <= wr_own(w)->max_ts);
    wr_free(w);
    scen_remove(&sc, &d);
}

static void test_sigterm_footer_then_own_handler(void **state)
{
    (void)state;
    tdir d;
    scen sc;
    scen_init(&sc, &d, 2000);
    sc.sigterm = true;
    char err[8192];
    child c = child_start(parent_main, &sc, false, true);
    assert_child_ok(child_finish(&c, err, sizeof err), err);
    uint64_t pids[NWORKERS + 1];
    size_t nfiles;
    worker_pids(&sc, pids, &nfiles);
    assert_int_equal(nfiles, NWORKERS);
    for (uint32_t i = 0; i < NWORKERS; i++) {
        char f[800];
        snprintf(f, sizeof f, "%s/w%u-%llu.prism", sc.folder, i, (unsigned long long)pids[i]);
        psum *p = psum_read_sound(f, false);
        assert_int_equal(p->footers, 1);                    /* written before the end */
        assert_false(p->footer.clean);                      /* by the signal */
        psum_free(p);
    }
    wread *w = wr_read(sc.path);
    assert_int_equal(w->st.workers, NWORKERS);
    assert_int_equal(w->st.workers_damaged, 0);
    assert_parent(w);
    for (uint32_t i = 0; i < NWORKERS; i++)
        assert_worker(w, &sc, i, pids[i]);                  /* nothing lost */
    wr_free(w);
    scen_remove(&sc, &d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workers_merged),
        cmocka_unit_test(test_truncated_worker_file),
        cmocka_unit_test(test_sigterm_footer_then_own_handler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

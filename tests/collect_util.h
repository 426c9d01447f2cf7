/*
 * collect_util.h - helpers shared by the libcollect tests (header-only,
 * every function static).
 *
 * One session per process: a test that records runs the scenario in a
 * forked child and reads the child's profile in the parent.
 *
 *   child     fork a child that runs a function and exits with its result;
 *             optionally capture its stderr and get a "ready" pipe the child
 *             writes a byte to when it reaches a point.  Every child arms
 *             alarm(CHILD_ALARM_S) on itself, and the parent arms an alarm
 *             while it waits, so a stuck test dies instead of hanging.
 *   tdir      a mkdtemp directory, removed with its files.
 *   psum      a profile read back into per-stream and process-wide facts
 *             (counts, nesting, timestamp order, sequence numbers, drops,
 *             steps, memory samples, CPU samples, footers) for the tests
 *             to assert on.
 *
 * Include after <cmocka.h>.  Children never call cmocka: CHILD_CHECK
 * prints the failed condition on stderr and exits with status 3.
 */
#ifndef PRISM_COLLECT_UTIL_H
#define PRISM_COLLECT_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prism/collect.h"
#include "prism/profile.h"

#define CHILD_ALARM_S 30u       /* a child kills itself after this long    */
#define PARENT_ALARM_S 90u      /* the test process, while it waits        */

#define CHILD_CHECK(c) do { \
        if (!(c)) { \
            fprintf(stderr, "child check failed: %s:%d: %s\n", __FILE__, __LINE__, #c); \
            fflush(stderr); \
            _exit(3); \
        } \
    } while (0)

/* ---- children ----------------------------------------------------------- */

typedef int (*child_fn)(void *arg);

/* In a child: the write end of the ready pipe (-1 when none). */
static int child_ready_fd = -1;

/* In a child: tell the parent it reached the agreed point. */
static inline void child_ready(void)
{
    char c = 'r';
    if (child_ready_fd >= 0)
        CHILD_CHECK(write(child_ready_fd, &c, 1) == 1);
}

typedef struct child {
    pid_t pid;
    int ready_rd;               /* read end of the ready pipe, or -1        */
    int err_rd;                 /* read end of the child's stderr, or -1    */
} child;

/*
 * Fork a child running fn(arg); its return value becomes the exit status
 * (through exit(), so atexit hooks run).  want_ready: a ready pipe;
 * capture_err: the child's stderr goes to a pipe.
 */
static inline child child_start(child_fn fn, void *arg, bool want_ready, bool capture_err)
{
    int rp[2] = { -1, -1 }, ep[2] = { -1, -1 };
    if (want_ready)
        assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
    if (capture_err)
        assert_int_equal(pipe2(ep, O_CLOEXEC), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(CHILD_ALARM_S);
        if (want_ready) {
            close(rp[0]);
            child_ready_fd = rp[1];
        }
        if (capture_err) {
            close(ep[0]);
            if (dup2(ep[1], STDERR_FILENO) < 0)
                _exit(4);
            close(ep[1]);
        }
        exit(fn(arg));
    }
    if (want_ready)
        close(rp[1]);
    if (capture_err)
        close(ep[1]);
    return (child){ pid, rp[0], ep[0] };
}

/* Block until the child says it is ready: true, or false when it ended
 * (or closed the pipe) first. */
static inline bool child_wait_ready(child *c)
{
    char b;
    ssize_t n;
    alarm(PARENT_ALARM_S);
    do
        n = read(c->ready_rd, &b, 1);
    while (n < 0 && errno == EINTR);
    alarm(0);
    return n == 1;
}

static inline int child_finish(child *c, char *err, size_t cap);

/* child_wait_ready, failing the test (with the child's status and stderr)
 * when the child ended first. */
static inline void child_expect_ready(child *c)
{
    if (child_wait_ready(c))
        return;
    char err[8192];
    int status = child_finish(c, err, sizeof err);
    print_error("child ended before it was ready: status %#x; stderr:\n%s\n",
                (unsigned)status, err);
    fail();
}

/* Wait for the child; returns the waitpid status.  err (cap bytes, may be
 * NULL) receives its captured stderr, NUL-terminated. */
static inline int child_finish(child *c, char *err, size_t cap)
{
    alarm(PARENT_ALARM_S);
    size_t len = 0;
    if (c->err_rd >= 0) {
        char buf[4096];
        for (;;) {
            ssize_t n = read(c->err_rd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            for (ssize_t i = 0; i < n && err && len + 1 < cap; i++)
                err[len++] = buf[i];
        }
        close(c->err_rd);
        c->err_rd = -1;
    }
    if (err && cap)
        err[len] = '\0';
    int status = 0;
    pid_t w;
    do
        w = waitpid(c->pid, &status, 0);
    while (w < 0 && errno == EINTR);
    alarm(0);
    assert_int_equal(w, c->pid);
    if (c->ready_rd >= 0) {
        close(c->ready_rd);
        c->ready_rd = -1;
    }
    return status;
}

/* Fail the test unless the child exited with status 0. */
static inline void assert_child_ok(int status, const char *err)
{
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        print_error("child %s %d; stderr:\n%s\n", WIFEXITED(status) ? "exited" : "killed by",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                    err ? err : "(not captured)");
        fail();
    }
}

/* Run fn(arg) in a child to completion; assert it exited 0. */
static inline void child_run_ok(child_fn fn, void *arg)
{
    char err[8192];
    child c = child_start(fn, arg, false, true);
    assert_child_ok(child_finish(&c, err, sizeof err), err);
}

/* Lines of s containing needle. */
static inline size_t count_lines_with(const char *s, const char *needle)
{
    size_t n = 0;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        char line[4096];
        size_t l = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, s, l);
        line[l] = '\0';
        if (strstr(line, needle))
            n++;
        s += len + (eol ? 1 : 0);
    }
    return n;
}

static inline size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (*s == '\n')
            n++;
    return n;
}

/* ---- temporary directories ------------------------------------------- */

typedef struct tdir {
    char path[256];
} tdir;

static inline void tdir_make(tdir *d)
{
    const char *base = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/prism-test-XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(d->path));
}

/* d/name into out. */
static inline void tdir_file(const tdir *d, const char *name, char *out, size_t n)
{
    int w = snprintf(out, n, "%s/%s", d->path, name);
    assert_true(w > 0 && (size_t)w < n);
}

static inline size_t tdir_count(const tdir *d)
{
    DIR *dir = opendir(d->path);
    assert_non_null(dir);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(dir);
    return n;
}

/* Remove the directory and the files in it (no subdirectories expected). */
static inline void tdir_remove(tdir *d)
{
    DIR *dir = opendir(d->path);
    if (!dir)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(dir))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", d->path, e->d_name);
        unlink(p);
    }
    closedir(dir);
    rmdir(d->path);
}

/* ---- a profile read back ------------------------------------------------ */

#define PS_STREAMS 256u         /* stream ids the summary can hold          */
#define PS_NAMES 64u            /* (depth, name) histogram bounds           */
#define PS_DEPTHS 8u

typedef struct ps_stream {
    bool seen;
    uint64_t enters, exits, marks, counters, counters_i, counters_f;
    uint64_t dropped;           /* maximum DROPPED total (CPU)              */
    uint32_t depth;             /* running nesting depth (clamped at 0)     */
    uint32_t max_depth;
    uint64_t exits_at_zero;     /* exits with no open region                */
    uint64_t depth_mismatch;    /* batches whose depth differs from ours    */
    uint64_t back[3];           /* timestamps going backwards: R, M, C      */
    uint64_t last[3];
    uint64_t max_ts;
    int64_t last_int;           /* the previous integer counter value       */
    uint64_t int_not_increasing;
    uint64_t next_seq;          /* the next sequence number expected        */
    uint64_t seq_disorder;      /* chunks whose seq is not the next one     */
    uint64_t chunks_regions;
    uint64_t by_depth[PS_DEPTHS][PS_NAMES]; /* enters by (depth, name id)   */
    char name[64];              /* last THREADS name                        */
    uint64_t os_tid;
    bool named;
    uint64_t cpu;               /* CPU samples of the thread                */
    uint64_t cpu_first_ts, cpu_last_ts;
    uint64_t cpu_on, cpu_wait;  /* the last sample's values                 */
    uint64_t cpu_back;          /* values going backwards                   */
    uint64_t cpu_after_exit;    /* samples after an EXITED one              */
    bool cpu_exited;
} ps_stream;

typedef struct psum {
    prism_reader *r;            /* kept: owns the header and the strings    */
    prism_status status;        /* prism_read_file's result                 */
    prism_reader_stats st;
    ps_stream s[PS_STREAMS];
    bool bad_stream;            /* a stream id >= PS_STREAMS                */
    prism_step *steps;
    size_t nsteps, csteps;
    prism_memory_sample *mem;
    size_t nmem, cmem;
    bool keep_regions;          /* store every region event (small files)   */
    prism_region_event *ev;     /* with keep_regions: all streams, in order */
    size_t nev, cev;
    size_t footers;
    prism_footer footer;
    uint64_t chunks;            /* good chunks                              */
    uint64_t chunks_after_footer;
    uint64_t events;            /* region events + marks + counters         */
    uint64_t cpu;               /* CPU samples                              */
    uint64_t cpu_chunks;
    uint64_t cpu_ts_back;       /* CPU samples earlier than the one before  */
    uint64_t cpu_max_ts;
} psum;

static inline void *ps_grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    size_t c = *cap ? *cap * 2 : 256;
    void *q = realloc(p, c * size);
    assert_non_null(q);
    *cap = c;
    return q;
}

static inline ps_stream *ps_at(psum *p, uint32_t stream)
{
    if (stream >= PS_STREAMS) {
        p->bad_stream = true;
        return &p->s[0];
    }
    p->s[stream].seen = true;
    return &p->s[stream];
}

static inline void ps_ts(ps_stream *s, int kind, uint64_t ts)
{
    if (ts < s->last[kind])
        s->back[kind]++;
    s->last[kind] = ts;
    if (ts > s->max_ts)
        s->max_ts = ts;
}

static inline void ps_thread(void *ctx, const prism_thread *t)
{
    ps_stream *s = ps_at(ctx, t->stream);
    snprintf(s->name, sizeof s->name, "%s", t->name ? t->name : "");
    s->os_tid = t->os_tid;
    s->named = true;
}

static inline void ps_regions(void *ctx, uint32_t stream, uint32_t depth,
                              const prism_region_event *ev, size_t n)
{
    psum *p = ctx;
    ps_stream *s = ps_at(p, stream);
    if (depth != s->depth)
        s->depth_mismatch++;
    for (size_t i = 0; i < n; i++) {
        ps_ts(s, 0, ev[i].ts);
        if (ev[i].kind == PRISM_REGION_ENTER) {
            if (s->depth < PS_DEPTHS && ev[i].name < PS_NAMES)
                s->by_depth[s->depth][ev[i].name]++;
            s->enters++;
            s->depth++;
            if (s->depth > s->max_depth)
                s->max_depth = s->depth;
        } else {
            s->exits++;
            if (s->depth)
                s->depth--;
            else
                s->exits_at_zero++;
        }
        if (p->keep_regions) {
            p->ev = ps_grow(p->ev, &p->cev, p->nev, sizeof *p->ev);
            p->ev[p->nev++] = ev[i];
        }
    }
    p->events += n;
}

static inline void ps_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    psum *p = ctx;
    ps_stream *s = ps_at(p, stream);
    for (size_t i = 0; i < n; i++)
        ps_ts(s, 1, m[i].ts);
    s->marks += n;
    p->events += n;
}

static inline void ps_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    psum *p = ctx;
    ps_stream *s = ps_at(p, stream);
    for (size_t i = 0; i < n; i++) {
        ps_ts(s, 2, c[i].ts);
        if (c[i].is_float) {
            s->counters_f++;
        } else {
            if (s->counters_i && c[i].v.i <= s->last_int)
                s->int_not_increasing++;
            s->last_int = c[i].v.i;
            s->counters_i++;
        }
    }
    s->counters += n;
    p->events += n;
}

static inline void ps_steps(void *ctx, uint32_t stream, const prism_step *st, size_t n)
{
    psum *p = ctx;
    (void)stream;
    for (size_t i = 0; i < n; i++) {
        p->steps = ps_grow(p->steps, &p->csteps, p->nsteps, sizeof *p->steps);
        p->steps[p->nsteps++] = st[i];
    }
}

static inline void ps_memory(void *ctx, const prism_memory_sample *m)
{
    psum *p = ctx;
    p->mem = ps_grow(p->mem, &p->cmem, p->nmem, sizeof *p->mem);
    p->mem[p->nmem++] = *m;
}

static inline void ps_dropped(void *ctx, const prism_dropped *d)
{
    ps_stream *s = ps_at(ctx, d->stream);
    if (d->source == PRISM_SOURCE_CPU && d->total > s->dropped)
        s->dropped = d->total;
}

static inline void ps_cpu(void *ctx, const prism_cpu_sample *c, size_t n)
{
    psum *p = ctx;
    for (size_t i = 0; i < n; i++) {
        ps_stream *s = ps_at(p, c[i].stream);
        if (c[i].ts < p->cpu_max_ts)
            p->cpu_ts_back++;
        else
            p->cpu_max_ts = c[i].ts;
        if (s->cpu && (c[i].oncpu_ns < s->cpu_on || c[i].wait_ns < s->cpu_wait))
            s->cpu_back++;
        if (s->cpu_exited)
            s->cpu_after_exit++;
        if (!s->cpu)
            s->cpu_first_ts = c[i].ts;
        s->cpu_last_ts = c[i].ts;
        s->cpu_on = c[i].oncpu_ns;
        s->cpu_wait = c[i].wait_ns;
        s->cpu_exited = (c[i].flags & PRISM_CPU_EXITED) != 0;
        s->cpu++;
    }
    p->cpu += n;
}

static inline void ps_footer(void *ctx, const prism_footer *f)
{
    psum *p = ctx;
    p->footers++;
    p->footer = *f;
}

static inline void ps_chunk(void *ctx, const prism_chunk_info *c)
{
    psum *p = ctx;
    if (c->status != PRISM_CHUNK_OK)
        return;
    if (p->footers && c->kind != PRISM_CHUNK_FOOTER)
        p->chunks_after_footer++;
    p->chunks++;
    ps_stream *s = ps_at(p, c->stream);
    if (c->seq != s->next_seq)
        s->seq_disorder++;
    s->next_seq = c->seq + 1;
    if (c->kind == PRISM_CHUNK_REGIONS)
        s->chunks_regions++;
    if (c->kind == PRISM_CHUNK_CPU)
        p->cpu_chunks++;
}

/* Read path into a new summary (psum_free frees it; it is too large for a
 * stack).  keep_regions: store every region event as well. */
static inline psum *psum_read(const char *path, bool keep_regions)
{
    psum *p = calloc(1, sizeof *p);
    assert_non_null(p);
    p->keep_regions = keep_regions;
    prism_reader_callbacks cb = {
        .thread = ps_thread, .regions = ps_regions, .marks = ps_marks,
        .counters = ps_counters, .steps = ps_steps, .memory = ps_memory,
        .dropped = ps_dropped, .footer = ps_footer, .cpu = ps_cpu, .chunk = ps_chunk,
    };
    p->status = prism_read_file(path, &cb, p, &p->r);
    assert_non_null(p->r);
    p->st = *prism_reader_stats_get(p->r);
    assert_false(p->bad_stream);
    return p;
}

static inline void psum_free(psum *p)
{
    if (!p)
        return;
    prism_reader_free(p->r);
    free(p->steps);
    free(p->mem);
    free(p->ev);
    free(p);
}

/* The id of a string in the file, 0 when absent. */
static inline uint32_t psum_id(const psum *p, const char *name)
{
    for (uint32_t id = 1; id < PRISM_MAX_STRINGS; id++) {
        size_t len;
        const char *s = prism_reader_string(p->r, id, &len);
        if (!s)
            return 0;
        if (len == strlen(name) && !memcmp(s, name, len))
            return id;
    }
    return 0;
}

/* The stream whose last THREADS name is name; 0 when none. */
static inline uint32_t psum_stream_named(const psum *p, const char *name)
{
    for (uint32_t i = 1; i < PS_STREAMS; i++)
        if (p->s[i].named && !strcmp(p->s[i].name, name))
            return i;
    return 0;
}

/* A header config value by key, NULL when absent. */
static inline const prism_value *psum_config(const psum *p, const char *key)
{
    const prism_header *h = prism_reader_header(p->r);
    if (!h)
        return NULL;
    for (size_t i = 0; i < h->nconfig; i++)
        if (!strcmp(h->config[i].key, key))
            return &h->config[i].value;
    return NULL;
}

/*
 * What every profile must satisfy: it reads without error or damage, every
 * good chunk is in sequence on its stream, each thread's timestamps never go
 * backwards (per record kind, across chunks), the writer's nesting depth
 * agrees with the reader's, CPU samples come in time order and each
 * thread's never go backwards nor follow its EXITED one.  With a footer:
 * exactly one, the last chunk, and its counts agree with what was read.
 */
static inline void psum_assert_sound(const psum *p)
{
    assert_int_equal(p->status, PRISM_OK);
    assert_int_equal(p->st.damaged, 0);
    assert_int_equal(p->st.malformed, 0);
    assert_int_equal(p->st.unknown, 0);
    assert_int_equal(p->st.seq_gaps, 0);
    assert_non_null(prism_reader_header(p->r));
    for (uint32_t i = 0; i < PS_STREAMS; i++) {
        const ps_stream *s = &p->s[i];
        assert_int_equal(s->seq_disorder, 0);
        assert_int_equal(s->back[0], 0);
        assert_int_equal(s->back[1], 0);
        assert_int_equal(s->back[2], 0);
        assert_int_equal(s->depth_mismatch, 0);
        assert_int_equal(s->cpu_back, 0);
        assert_int_equal(s->cpu_after_exit, 0);
    }
    assert_int_equal(p->cpu_ts_back, 0);
    assert_true(p->footers <= 1);
    if (p->footers) {
        assert_true(p->st.footer);
        assert_int_equal(p->chunks_after_footer, 0);
        assert_int_equal(p->st.torn_bytes, 0);
        assert_int_equal(p->footer.events, p->events + p->cpu);
        assert_true(p->cpu_max_ts <= p->footer.end_ts);
        assert_int_equal(p->footer.chunks, p->chunks - 1);
        uint64_t dropped = 0;
        for (uint32_t i = 0; i < PS_STREAMS; i++) {
            dropped += p->s[i].dropped;
            assert_true(p->s[i].max_ts <= p->footer.end_ts);
        }
        assert_int_equal(p->footer.dropped, dropped);
    }
}

/* psum_read, then psum_assert_sound. */
static inline psum *psum_read_sound(const char *path, bool keep_regions)
{
    psum *p = psum_read(path, keep_regions);
    psum_assert_sound(p);
    return p;
}

/* Run fn(arg) in a child to completion (it must exit 0), then read back the
 * profile it wrote at path (psum_read_sound). */
static inline psum *psum_from_child(child_fn fn, void *arg, const char *path, bool keep_regions)
{
    child_run_ok(fn, arg);
    return psum_read_sound(path, keep_regions);
}

/* ---- waiting for the writer -------------------------------------------- */

static inline uint64_t regions_chunks_in(const char *path)
{
    psum *p = calloc(1, sizeof *p);
    assert_non_null(p);
    prism_reader_callbacks cb = { .chunk = ps_chunk };
    p->status = prism_read_file(path, &cb, p, &p->r);
    uint64_t n = 0;
    for (uint32_t i = 1; i < PS_STREAMS; i++)
        n += p->s[i].chunks_regions;
    psum_free(p);
    return n;
}

/* read_bytes and write_bytes of this process's /proc/self/io (storage
 * bytes); false where the kernel keeps no task I/O accounting. */
static inline bool proc_io(uint64_t *rd, uint64_t *wr)
{
    char buf[1024];
    int fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *r = strstr(buf, "\nread_bytes: "), *w = strstr(buf, "\nwrite_bytes: ");
    if (!r || !w)
        return false;
    *rd = strtoull(r + 13, NULL, 10);
    *wr = strtoull(w + 14, NULL, 10);
    return true;
}

/*
 * Block until path holds at least one REGIONS chunk: re-read it each time
 * it is modified (inotify), no polling.  False when nothing changed for
 * 20 s (the child is stuck or gone).
 */
static inline bool wait_for_regions(const char *path)
{
    int in = inotify_init1(IN_CLOEXEC);
    assert_true(in >= 0);
    assert_true(inotify_add_watch(in, path, IN_MODIFY) >= 0);
    bool ok = false;
    for (;;) {
        if (regions_chunks_in(path) > 0) {
            ok = true;
            break;
        }
        struct pollfd pf = { in, POLLIN, 0 };
        int r = poll(&pf, 1, 20000);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        char buf[4096];
        if (read(in, buf, sizeof buf) < 0 && errno != EINTR)
            break;
    }
    close(in);
    return ok;
}

/*
 * In a child: block until done(path, arg) says the live file at path has
 * what it waits for, re-asking each time the file is modified (inotify),
 * never polling; a child stuck 20 s with nothing written fails its check.
 */
static inline void child_wait_file(const char *path, bool (*done)(const char *, void *),
                                   void *arg)
{
    int in = inotify_init1(IN_CLOEXEC);
    CHILD_CHECK(in >= 0);
    CHILD_CHECK(inotify_add_watch(in, path, IN_MODIFY) >= 0);
    while (!done(path, arg)) {
        struct pollfd pf = { in, POLLIN, 0 };
        int r = poll(&pf, 1, 20000);
        CHILD_CHECK(r > 0 || (r < 0 && errno == EINTR));
        char buf[4096];
        if (r > 0)
            CHILD_CHECK(read(in, buf, sizeof buf) > 0);
    }
    close(in);
}

#endif

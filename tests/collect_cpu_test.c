/*
 * collect_cpu_test.c - per-thread on-CPU sampling (libcollect/cpusample.c).
 *
 * Sessions (each in a forked child, the profile read back):
 *   - a thread that appears mid-run gets samples; a busy thread's on-CPU
 *     time matches what it measured itself (loosely: within 50 %); a thread
 *     blocked in a pipe read gains next to no on-CPU time while blocked;
 *     a thread that exits ends with one EXITED sample and is never sampled
 *     again, and every thread's cumulative values never go backwards;
 *   - cpu_interval_ms 0 (PRISM_CPU_INTERVAL_MS=0) writes no CPU chunk and
 *     says why; the default writes them, a 1.1 file.
 * The sampler itself, on a hand-made session:
 *   - a schedstat fd of a thread that has exited reads as gone;
 *   - a record whose TID now names another thread keeps its own values
 *     and ends EXITED, while the thread holding the number gets a stream
 *     of its own, from its own baseline;
 *   - a thread found dead ends with what it read of itself as it exited;
 *   - samples beyond what the sampler keeps between flushes are counted.
 *
 * Threads are ordered with pipes; the children wait for the writer by
 * re-reading the live profile when it changes (inotify), never by sleeping.
 * Time limits come from collect_util.h's alarms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "collect_util.h"
#include "../libcollect/cpusample.h"

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Run on a CPU until this thread has used `ns` of CPU time. */
static void burn(uint64_t ns)
{
    volatile uint64_t x = 0;
    uint64_t end = thread_cpu_ns() + ns;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x + (uint64_t)i;
}

static void put1(int fd)
{
    char c = 1;
    CHILD_CHECK(write(fd, &c, 1) == 1);
}

static void get1(int fd)
{
    char c;
    ssize_t n;
    do
        n = read(fd, &c, 1);
    while (n < 0 && errno == EINTR);
    CHILD_CHECK(n == 1);
}

/* ---- what a profile says about one thread's CPU samples ---------------- */

#define MAXS 8192u

typedef struct seen_mark {
    uint32_t stream, name;
    uint64_t ts;
} seen_mark;

typedef struct seen_ctr {
    uint32_t name;
    int64_t v;
} seen_ctr;

typedef struct seen {
    /* looked for */
    const char *thread, *mark;
    /* found */
    uint32_t stream;            /* the thread's stream, 0: not yet named */
    uint64_t mark_ts;           /* the thread's mark, 0: not yet */
    prism_cpu_sample s[MAXS];   /* every CPU sample, all streams */
    size_t n;
    char sampler[128];          /* INFO cpu.sampler */
    uint32_t minor;
    struct { char name[64]; uint32_t stream; } names[16];
    size_t nnames;
    seen_mark marks[16];
    size_t nmarks;
    seen_ctr ctrs[16];
    size_t nctrs;
} seen;

static void sn_header(void *ctx, const prism_header *h) { ((seen *)ctx)->minor = h->version_minor; }

static void sn_thread(void *ctx, const prism_thread *t)
{
    seen *x = ctx;
    if (x->nnames < 16) {
        snprintf(x->names[x->nnames].name, sizeof x->names[0].name, "%s", t->name);
        x->names[x->nnames++].stream = t->stream;
    }
    if (x->thread && !strcmp(t->name, x->thread))
        x->stream = t->stream;
}

static void sn_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    seen *x = ctx;
    for (size_t i = 0; i < n && x->nmarks < 16; i++)
        x->marks[x->nmarks++] = (seen_mark){ stream, m[i].name, m[i].ts };
}

static void sn_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    seen *x = ctx;
    (void)stream;
    for (size_t i = 0; i < n && x->nctrs < 16; i++)
        x->ctrs[x->nctrs++] = (seen_ctr){ c[i].name, c[i].v.i };
}

static void sn_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    seen *x = ctx;
    for (size_t i = 0; i < n && x->n < MAXS; i++)
        x->s[x->n++] = s[i];
}

static void sn_info(void *ctx, const char *key, const prism_value *v)
{
    seen *x = ctx;
    if (!strcmp(key, "cpu.sampler") && v->type == PRISM_VAL_TEXT)
        snprintf(x->sampler, sizeof x->sampler, "%s", v->v.s);
}

/* Read path into x (cleared first, its `thread` and `mark` kept). */
static prism_status seen_read(const char *path, seen *x)
{
    const char *thread = x->thread, *mark = x->mark;
    memset(x, 0, sizeof *x);
    x->thread = thread;
    x->mark = mark;
    prism_reader_callbacks cb = {
        .header = sn_header, .thread = sn_thread, .marks = sn_marks,
        .counters = sn_counters, .cpu = sn_cpu, .info = sn_info,
    };
    prism_reader *r = NULL;
    prism_status st = prism_read_file(path, &cb, x, &r);
    if (r && x->mark) {
        for (size_t i = 0; i < x->nmarks; i++) {
            size_t len;
            const char *nm = prism_reader_string(r, x->marks[i].name, &len);
            if (nm && x->marks[i].stream == x->stream && len == strlen(x->mark) &&
                !memcmp(nm, x->mark, len))
                x->mark_ts = x->marks[i].ts;
        }
    }
    prism_reader_free(r);
    return st;
}

/* Samples of `stream` after time `after`. */
static size_t samples_after(const seen *x, uint32_t stream, uint64_t after)
{
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        k += x->s[i].stream == stream && x->s[i].ts > after;
    return k;
}

/*
 * In a child: block until the live profile at path holds `want` CPU samples
 * of thread `thread` (by THREADS name) after its mark `mark` (NULL: after
 * any time), re-reading the file each time it changes.  False after 20 s
 * without a change.
 */
static bool child_wait_samples(const char *path, const char *thread, const char *mark,
                               size_t want)
{
    static seen x;
    int in = inotify_init1(IN_CLOEXEC);
    CHILD_CHECK(in >= 0);
    CHILD_CHECK(inotify_add_watch(in, path, IN_MODIFY) >= 0);
    bool ok = false;
    unsigned looks = 0;
    for (;;) {
        x.thread = thread;
        x.mark = mark;
        seen_read(path, &x);
        if (x.stream && (!mark || x.mark_ts) &&
            samples_after(&x, x.stream, mark ? x.mark_ts : 0) >= want) {
            ok = true;
            break;
        }
        /* a short timeout: the sampler writes nothing while no thread
         * changes, and this thread's own reading of the file is what makes
         * it change; each look costs it CPU time, so its next sample comes */
        struct pollfd pf = { in, POLLIN, 0 };
        int r = poll(&pf, 1, 10);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || ++looks > 6000)
            break;
        if (r == 0)
            continue;
        char buf[4096];
        if (read(in, buf, sizeof buf) < 0 && errno != EINTR)
            break;
    }
    close(in);
    return ok;
}

/* ---- a session with threads that come, work, block and go -------------- */

typedef struct run {
    char path[512];
    int to_main[2], to_sleeper[2];
} run;

static void *busy_main(void *arg)
{
    (void)arg;
    prism_thread_name("busy");
    PRISM_ZONE("busy.work");
    uint64_t t0 = thread_cpu_ns();
    burn(40000000);                             /* 40 ms on a CPU */
    uint64_t used = thread_cpu_ns();
    prism_counter_i(prism_name("busy.cpu_ns"), (int64_t)used);
    prism_counter_i(prism_name("busy.burnt_ns"), (int64_t)(used - t0));
    return NULL;
}

static void *sleeper_main(void *arg)
{
    run *r = arg;
    prism_thread_name("sleeper");
    burn(2000000);
    prism_mark_name("blocked");
    put1(r->to_main[1]);                        /* about to block */
    get1(r->to_sleeper[0]);                     /* off the CPU until released */
    prism_mark_name("woken");
    return NULL;
}

static int threads_child(void *arg)
{
    run *r = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = r->path;
    c.collect_memory = false;
    c.cpu_interval_ms = 2;
    c.flush_interval_ms = 10;
    CHILD_CHECK(prism_init(&c) == 0);
    prism_thread_name("main");
    prism_push("main.work");
    /* the run is under way: the main thread has been sampled */
    CHILD_CHECK(child_wait_samples(r->path, "main", NULL, 3));
    pthread_t busy, sleeper;
    CHILD_CHECK(pthread_create(&busy, NULL, busy_main, NULL) == 0);
    CHILD_CHECK(pthread_join(busy, NULL) == 0);
    CHILD_CHECK(pthread_create(&sleeper, NULL, sleeper_main, r) == 0);
    get1(r->to_main[0]);
    /* the sleeper is blocked: let the sampler pass over it a while (its
     * unchanged readings are held back, so count the main thread's) */
    prism_mark_name("asleep");
    CHILD_CHECK(child_wait_samples(r->path, "main", "asleep", 5));
    prism_mark_name("release");
    put1(r->to_sleeper[1]);
    CHILD_CHECK(pthread_join(sleeper, NULL) == 0);
    /* sampled on after the others exited: the pass that takes the
     * sleeper's last sample is at the latest the second after this mark */
    prism_mark_name("joined");
    CHILD_CHECK(child_wait_samples(r->path, "main", "joined", 3));
    prism_pop();
    prism_shutdown();
    return 0;
}

static uint32_t stream_named(const seen *x, const char *name)
{
    for (size_t i = 0; i < x->nnames; i++)
        if (!strcmp(x->names[i].name, name))
            return x->names[i].stream;
    return 0;
}

static uint64_t mark_ts(const psum *p, const seen *x, const char *name)
{
    uint32_t id = psum_id(p, name);
    for (size_t i = 0; i < x->nmarks; i++)
        if (x->marks[i].name == id)
            return x->marks[i].ts;
    fail_msg("no mark %s", name);
    return 0;
}

static int64_t counter(const psum *p, const seen *x, const char *name)
{
    uint32_t id = psum_id(p, name);
    for (size_t i = 0; i < x->nctrs; i++)
        if (x->ctrs[i].name == id)
            return x->ctrs[i].v;
    fail_msg("no counter %s", name);
    return 0;
}

/* The samples of one stream, in order: first, last, count. */
typedef struct span {
    const prism_cpu_sample *first, *last;
    size_t n;
} span;

static span stream_span(const seen *x, uint32_t stream, uint64_t from, uint64_t to)
{
    span sp = { NULL, NULL, 0 };
    for (size_t i = 0; i < x->n; i++) {
        const prism_cpu_sample *s = &x->s[i];
        if (s->stream != stream || s->ts < from || s->ts > to)
            continue;
        if (!sp.first)
            sp.first = s;
        sp.last = s;
        sp.n++;
    }
    return sp;
}

static void test_threads_come_work_block_go(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    static run r;
    tdir_file(&d, "threads.cbor", r.path, sizeof r.path);
    assert_int_equal(pipe(r.to_main), 0);
    assert_int_equal(pipe(r.to_sleeper), 0);
    psum *p = psum_from_child(threads_child, &r, r.path, false);
    static seen x;
    assert_int_equal(seen_read(r.path, &x), PRISM_OK);
    assert_int_equal(x.minor, 1);
    assert_true(!strncmp(x.sampler, "schedstat 2 ms", 14) ||
                !strncmp(x.sampler, "thread-clock 2 ms", 17));
    bool wait_known = !strncmp(x.sampler, "schedstat", 9);
    uint32_t m = stream_named(&x, "main"), b = stream_named(&x, "busy"),
             sl = stream_named(&x, "sleeper");
    assert_true(m && b && sl && m != b && b != sl);
    assert_true(p->cpu_chunks > 0);
    assert_int_equal(p->cpu, x.n);

    /* the busy thread appeared mid-run, was sampled, ended EXITED */
    span all_m = stream_span(&x, m, 0, UINT64_MAX), all_b = stream_span(&x, b, 0, UINT64_MAX);
    assert_true(all_m.n >= 3 && all_b.n >= 2);
    assert_true(all_b.first->ts > all_m.first->ts);
    assert_true(p->s[b].cpu_exited);
    assert_true(all_b.last->flags & PRISM_CPU_EXITED);
    assert_int_equal(!!(all_b.last->flags & PRISM_CPU_HAVE_WAIT), wait_known);
    /* ... and its on-CPU time is what it measured itself, loosely */
    double own = (double)counter(p, &x, "busy.cpu_ns");
    double burnt = (double)counter(p, &x, "busy.burnt_ns");
    assert_true(burnt >= 40e6);
    double got = (double)all_b.last->oncpu_ns;
    if (got < 0.5 * own || got > 1.5 * own)
        fail_msg("busy thread: sampled %.0f ns on-CPU, measured %.0f ns", got, own);

    /* the sleeper, blocked: next to no on-CPU time between its samples */
    uint64_t blocked = mark_ts(p, &x, "blocked"), release = mark_ts(p, &x, "release");
    assert_true(blocked < release);
    span bl = stream_span(&x, sl, blocked + 1, release);
    uint64_t asleep = mark_ts(p, &x, "asleep");
    assert_true(blocked < asleep && asleep < release);
    assert_true(stream_span(&x, m, asleep + 1, release).n >= 5);
    /* its readings did not change while it was blocked: held back, and
     * written at flushes and just before the pass that saw it run again */
    assert_true(bl.n >= 1);
    uint64_t grew = bl.last->oncpu_ns - bl.first->oncpu_ns;
    if (grew > 1000000)
        fail_msg("blocked thread gained %llu ns on-CPU in %llu ns", (unsigned long long)grew,
                 (unsigned long long)(bl.last->ts - bl.first->ts));
    span all_s = stream_span(&x, sl, 0, UINT64_MAX);
    assert_true(all_s.last->flags & PRISM_CPU_EXITED);
    assert_true(all_s.last->oncpu_ns >= 2000000);                /* it burnt 2 ms */

    /* the main thread is sampled after the others exited; only the last
     * sample of a thread says EXITED (psum: none after it, none backwards) */
    assert_true(samples_after(&x, m, all_s.last->ts) >= 1);
    assert_false(p->s[m].cpu_exited);
    for (size_t i = 0; i < x.n; i++)
        if (x.s[i].flags & PRISM_CPU_EXITED)
            assert_true(&x.s[i] == all_b.last || &x.s[i] == all_s.last);
    psum_free(p);
    close(r.to_main[0]);
    close(r.to_main[1]);
    close(r.to_sleeper[0]);
    close(r.to_sleeper[1]);
    tdir_remove(&d);
}

/* ---- on and off --------------------------------------------------------- */

static int env_child(void *arg)
{
    const char *path = arg;
    setenv("PRISM_OUTPUT", path, 1);
    setenv("PRISM_COLLECT_MEMORY", "0", 1);
    CHILD_CHECK(prism_init(NULL) == 0);
    for (int i = 0; i < 100; i++) {
        PRISM_ZONE("work");
        burn(100000);
    }
    prism_shutdown();
    return 0;
}

static void test_interval_zero_writes_no_cpu_chunks(void **state)
{
    (void)state;
    prism_config c;
    prism_config_default(&c);
    assert_int_equal(c.cpu_interval_ms, 5);
    tdir d;
    tdir_make(&d);
    char off[512], on[512];
    tdir_file(&d, "off.cbor", off, sizeof off);
    tdir_file(&d, "on.cbor", on, sizeof on);
    static seen x;

    assert_int_equal(setenv("PRISM_CPU_INTERVAL_MS", "0", 1), 0);
    psum *p = psum_from_child(env_child, off, off, false);
    unsetenv("PRISM_CPU_INTERVAL_MS");
    assert_int_equal(p->cpu_chunks, 0);
    assert_int_equal(p->cpu, 0);
    assert_true(p->events >= 200);
    const prism_value *v = psum_config(p, "cpu_interval_ms");
    assert_non_null(v);
    assert_int_equal(v->v.u, 0);
    assert_int_equal(seen_read(off, &x), PRISM_OK);
    assert_int_equal(x.minor, 1);   /* 1.1 all the same: any run may drop (UNRECORDED) */
    assert_string_equal(x.sampler, "off: cpu_interval_ms is 0");
    psum_free(p);

    p = psum_from_child(env_child, on, on, false);    /* the default: on */
    assert_true(p->cpu_chunks > 0);
    v = psum_config(p, "cpu_interval_ms");
    assert_non_null(v);
    assert_int_equal(v->v.u, 5);
    assert_int_equal(seen_read(on, &x), PRISM_OK);
    assert_int_equal(x.minor, 1);
    assert_true(strstr(x.sampler, " 5 ms") != NULL);
    psum_free(p);
    tdir_remove(&d);
}

/* ---- the sampler on a hand-made session --------------------------------- */

typedef struct helper {
    pthread_t th;
    uint64_t burn_ns;
    _Atomic uint64_t tid;
    int ready[2], go[2];
} helper;

static void *helper_main(void *arg)
{
    helper *h = arg;
    atomic_store(&h->tid, (uint64_t)syscall(SYS_gettid));
    burn(h->burn_ns);
    put1(h->ready[1]);
    get1(h->go[0]);
    return NULL;
}

/* The state letter of this process's thread tid (R, S, ...), or 0. */
static char task_state(uint64_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%llu/stat", (unsigned long long)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* A thread that burns burn_ns, then waits off the CPU until helper_end.
 * Returns once it is blocked there: between its `ready` and its read of
 * `go` it still runs a little, and on a busy machine a pass could fall in
 * between and see its reading move afterwards. */
static void helper_start(helper *h, uint64_t burn_ns)
{
    memset(h, 0, sizeof *h);
    h->burn_ns = burn_ns;
    assert_int_equal(pipe(h->ready), 0);
    assert_int_equal(pipe(h->go), 0);
    assert_int_equal(pthread_create(&h->th, NULL, helper_main, h), 0);
    get1(h->ready[0]);
    while (task_state(atomic_load(&h->tid)) != 'S')
        sched_yield();
}

static void helper_end(helper *h)
{
    put1(h->go[1]);
    assert_int_equal(pthread_join(h->th, NULL), 0);
    for (int i = 0; i < 2; i++) {
        close(h->ready[i]);
        close(h->go[i]);
    }
}

/* A thread record for h, as buffers.c would make it (its clock included). */
static prism__thread *record(session *s, helper *h, uint32_t stream)
{
    prism__thread *th = calloc(1, sizeof *th);
    assert_non_null(th);
    th->stream = stream;
    th->os_tid = atomic_load(&h->tid);
    th->cpu.clock_ok = pthread_getcpuclockid(h->th, &th->cpu.clock) == 0;
    th->next = s->threads;
    s->threads = th;
    return th;
}

/* The samples of a stream in the sampler's buffer. */
static size_t recs_of(cpu_sampler *c, uint32_t stream, cpu_rec *out, size_t max)
{
    const cpu_rec *r;
    size_t n = pc_cpu_records(c, &r), k = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].stream == stream && k < max)
            out[k++] = r[i];
    return k;
}

static void test_stale_schedstat_fd_reads_as_gone(void **state)
{
    (void)state;
    helper h;
    helper_start(&h, 1000000);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu/schedstat",
             (unsigned long long)atomic_load(&h.tid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        helper_end(&h);
        skip();                                 /* no schedstat here */
    }
    cpu_reading r;
    assert_int_equal(pc_cpu_read_stat(fd, &r), CPU_READ_OK);
    assert_true(r.ok && r.have_wait && r.on >= 1000000);
    helper_end(&h);                             /* the thread is gone */
    memset(&r, 0, sizeof r);
    assert_int_equal(pc_cpu_read_stat(fd, &r), CPU_READ_GONE);
    assert_false(r.ok);
    close(fd);
    assert_int_equal(pc_cpu_read_stat(-1, &r), CPU_READ_ERROR);
}

static void test_reused_tid_and_exit(void **state)
{
    (void)state;
    static session s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    s.cfg.cpu_interval_ms = 1;
    cpu_sampler *c = pc_cpu_new(&s);
    assert_non_null(c);
    const char *status = pc_cpu_status_changed(c);
    assert_non_null(status);
    assert_true(!strcmp(status, "schedstat 1 ms") || !strcmp(status, "thread-clock 1 ms"));
    assert_null(pc_cpu_status_changed(c));        /* once */
    assert_int_equal(pc_cpu_period_ns(c), 1000000);

    helper h1, h2, h3;
    helper_start(&h1, 20000000);
    prism__thread *a = record(&s, &h1, 1);
    pc_cpu_pass(c);
    cpu_rec ra[4];
    assert_int_equal(recs_of(c, 1, ra, 4), 1);
    assert_true(ra[0].on >= 20000000 && !(ra[0].flags & PRISM_CPU_EXITED));
    pc_cpu_drained(c);

    /* h1 exits; its number now names h2 (as when the kernel reuses a TID),
     * before the sampler has seen h1 go: a's samples must stay h1's */
    helper_end(&h1);
    helper_start(&h2, 1000000);
    a->os_tid = atomic_load(&h2.tid);
    prism__thread *b = record(&s, &h2, 2);
    pc_cpu_pass(c);
    cpu_rec rb[4];
    assert_int_equal(recs_of(c, 1, ra + 1, 3), 1);
    assert_true(ra[1].flags & PRISM_CPU_EXITED);
    assert_int_equal(ra[1].on, ra[0].on);       /* h1's last, not h2's */
    assert_true(pc_cpu_release(c, a));
    assert_int_equal(recs_of(c, 2, rb, 4), 1);  /* h2: its own stream ... */
    assert_true(rb[0].on < ra[0].on);           /* ... from its own baseline */
    assert_false(rb[0].flags & PRISM_CPU_EXITED);
    assert_false(pc_cpu_release(c, b));
    pc_cpu_drained(c);

    /* a thread that marked itself dead with its own last reading, before
     * any pass saw it: one EXITED sample with that reading */
    helper_start(&h3, 3000000);
    prism__thread *t3 = record(&s, &h3, 3);
    pthread_mutex_lock(&s.lock);
    t3->cpu.last = (cpu_reading){ 123456789, 42, true, true };
    t3->dead = true;
    pthread_mutex_unlock(&s.lock);
    assert_false(pc_cpu_release(c, t3));           /* its last sample is due */
    pc_cpu_pass(c);
    cpu_rec r3[4];
    assert_int_equal(recs_of(c, 3, r3, 4), 1);
    assert_true(r3[0].flags & PRISM_CPU_EXITED);
    assert_true(r3[0].on >= 123456789);
    assert_true(pc_cpu_release(c, t3));
    assert_int_equal(recs_of(c, 1, ra, 4), 0);  /* a is never read again */
    /* h2 sits idle: its unchanged reading is held back, not written */
    assert_int_equal(recs_of(c, 2, rb + 1, 3), 0);
    pc_cpu_drained(c);
    assert_false(pc_cpu_pass(c));               /* nothing changed */
    assert_int_equal(recs_of(c, 3, r3, 4), 0);
    assert_int_equal(recs_of(c, 2, rb + 1, 3), 0);
    pc_cpu_release_held(c);                     /* the end: written once */
    assert_int_equal(recs_of(c, 2, rb + 1, 3), 1);
    assert_int_equal(rb[1].on, rb[0].on);
    assert_true(rb[1].ticks > rb[0].ticks);
    pc_cpu_drained(c);
    pc_cpu_release_held(c);
    assert_int_equal(recs_of(c, 2, rb + 1, 3), 0);
    assert_int_equal(pc_cpu_dropped(c), 0);

    pc_cpu_free(c);
    helper_end(&h2);
    helper_end(&h3);
    while (s.threads) {
        prism__thread *n = s.threads->next;
        free(s.threads);
        s.threads = n;
    }
    pthread_mutex_destroy(&s.lock);
}

static void test_samples_beyond_the_bound_are_counted(void **state)
{
    (void)state;
    static session s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.lock, NULL);
    s.cfg.cpu_interval_ms = 5;
    cpu_sampler *c = pc_cpu_new(&s);
    assert_non_null(c);
    helper h;
    helper_start(&h, 1000000);
    prism__thread *th = record(&s, &h, 1);
    size_t kept = 0;
    for (unsigned i = 0; kept == i; i++) {      /* until one is not kept */
        th->cpu.on = 0;                         /* as if it changed every pass */
        pc_cpu_pass(c);
        const cpu_rec *r;
        kept = pc_cpu_records(c, &r);
        assert_true(i < (1u << 20));
    }
    assert_int_equal(pc_cpu_dropped(c), 1);
    const cpu_rec *r;
    assert_int_equal(pc_cpu_records(c, &r), kept);
    assert_true(kept >= 4096);                  /* a flush's worth, and more */
    for (size_t i = 1; i < kept; i++)
        assert_true(r[i].on >= r[i - 1].on && r[i].ticks >= r[i - 1].ticks);
    pc_cpu_drained(c);                             /* a flush: room again */
    th->cpu.on = 0;
    pc_cpu_pass(c);
    assert_int_equal(pc_cpu_records(c, &r), 1);
    assert_int_equal(pc_cpu_dropped(c), 1);        /* cumulative */
    pc_cpu_free(c);
    helper_end(&h);
    free(s.threads);
    pthread_mutex_destroy(&s.lock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_come_work_block_go),
        cmocka_unit_test(test_interval_zero_writes_no_cpu_chunks),
        cmocka_unit_test(test_stale_schedstat_fd_reads_as_gone),
        cmocka_unit_test(test_reused_tid_and_exit),
        cmocka_unit_test(test_samples_beyond_the_bound_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

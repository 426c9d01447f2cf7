/*
 * collect_drop_test.c - buffers that run out lose whole regions, never
 * halves, and say how many and where.
 *
 * Every scenario runs in a forked child (one session per process).
 *
 *   whole regions   K = 1, 4, 16, 64 threads each run ITERS iterations of a
 *                   3-level nest (outer > middle > inner, then outer >
 *                   sibling: 10^6 regions a thread) and a mark now and
 *                   then, with 64-event buffers and 1 MB for all of them.
 *                   The file must hold exactly the program's call paths;
 *                   every region a positive duration inside its parent's
 *                   and within the run; per thread, regions written +
 *                   regions dropped = regions produced (records likewise);
 *                   and each recorded region's recorded descendants plus
 *                   those counted as not recorded under it (UNRECORDED) are
 *                   the descendants it has, exactly.
 *   no system call  a thread that keeps dropping (its writer blocked on a
 *                   FIFO nobody reads yet, the two-buffer budget used up)
 *                   runs DRY_ITERS more iterations while every system call
 *                   it makes is counted (syscall_count.h): none.
 *   fork            a fork while the thread drops inside an open region: the
 *                   child records nothing and writes nothing to the file;
 *                   the parent's region closes with the count of all that
 *                   was dropped under it.
 *   wait            policy wait, the writer blocked: one bounded wait (a
 *                   second), then whole regions dropped, counted under the
 *                   region they ran in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/mman.h>

#include "collect_util.h"
#include "writer_probe.h"
#include "syscall_count.h"

#define ITERS 250000u           /* x 4 regions: 10^6 regions a thread      */
#define MARK_EVERY 64u          /* a mark every MARK_EVERY iterations       */
#define DRY_WARM 100000u        /* iterations that surely exhaust 2 buffers */
#define DRY_ITERS 100000u       /* iterations counted for system calls      */
#define MAXK 64u

/* ---- the program ------------------------------------------------------ */

typedef struct names {
    uint32_t outer, middle, inner, sibling, tick;
} names;

static names names_get(void)
{
    names n = { prism_name("outer"), prism_name("middle"), prism_name("inner"),
                prism_name("sibling"), prism_name("tick") };
    CHILD_CHECK(n.outer && n.middle && n.inner && n.sibling && n.tick);
    return n;
}

/* A leaf's work: until the clock the library reads has moved on by 16
 * ticks, so that its recorded duration is positive however coarse the
 * conversion to ns (up to 16 ns a tick). */
static void work(void)
{
    uint64_t t = prism__now();
    while (prism__now() - t < 16)
        ;
}

/* One iteration: 4 regions, 8 records (and a mark every MARK_EVERY). */
static void nest(const names *n, uint64_t i)
{
    prism_push_id(n->outer);
    prism_push_id(n->middle);
    prism_push_id(n->inner);
    work();
    prism_pop();
    prism_pop();
    prism_push_id(n->sibling);
    work();
    prism_pop();
    prism_pop();
    if (i % MARK_EVERY == 0)
        prism_mark_id(n->tick);
}

static uint64_t marks_in(uint64_t iters)
{
    return (iters + MARK_EVERY - 1) / MARK_EVERY;
}

/* ---- reading it back -------------------------------------------------- */

#define PATHS 16u

typedef struct frame {
    uint32_t name;
    uint64_t start, child_end;
    uint64_t desc;              /* recorded regions inside it               */
    uint64_t unrec;             /* regions counted as not recorded inside   */
} frame;

typedef struct dstream {
    frame st[8];
    uint32_t depth;
    uint64_t paths[PATHS];      /* name ids, 8 bits a level                 */
    size_t npaths;
    uint64_t bad_path;          /* deeper than 3, or more distinct paths    */
    uint64_t exits_at_zero, not_positive, outside_parent, after_end;
    uint64_t unrec_records, unrec_nested, unrec_top;
    uint64_t unrec_bad_depth;   /* its depth is not the stream's            */
    uint64_t unrec_bad_parent;  /* under a region that has no such children */
    uint64_t miscount;          /* recorded + unrecorded != descendants     */
    uint64_t outers_closed;
    uint64_t first_ts, last_end;
    bool have_ts;
    bool have_regions;          /* DROPPED said how many regions            */
    uint64_t drop_regions;
} dstream;

typedef struct dread {
    psum p;                     /* first: the psum callbacks take it        */
    dstream s[PS_STREAMS];
    names ids;                  /* the ids in the file                      */
} dread;

static uint64_t path_key(const dstream *s)
{
    uint64_t k = 0;
    for (uint32_t i = 0; i < s->depth; i++)
        k = k << 8 | s->st[i].name;
    return k;
}

static void note_path(dstream *s)
{
    uint64_t k = path_key(s);
    for (size_t i = 0; i < s->npaths; i++)
        if (s->paths[i] == k)
            return;
    if (s->npaths == PATHS) {
        s->bad_path++;
        return;
    }
    s->paths[s->npaths++] = k;
}

#define UNKNOWN UINT64_MAX

/* Descendants each region of the nest has (UNKNOWN: not the nest's). */
static uint64_t descendants(const dread *r, uint32_t name)
{
    return name == r->ids.outer ? 3 : name == r->ids.middle ? 1
         : name == r->ids.inner || name == r->ids.sibling ? 0 : UNKNOWN;
}

static void dr_close(dread *r, dstream *s, uint64_t ts)
{
    if (!s->depth) {
        s->exits_at_zero++;
        return;
    }
    frame f = s->st[--s->depth];
    if (ts <= f.start)
        s->not_positive++;
    if (f.child_end > ts)
        s->outside_parent++;
    uint64_t want = descendants(r, f.name);
    if (want != UNKNOWN && f.desc + f.unrec != want)
        s->miscount++;
    if (f.name == r->ids.outer)
        s->outers_closed++;
    if (ts > s->last_end)
        s->last_end = ts;
    if (s->depth) {
        frame *par = &s->st[s->depth - 1];
        if (ts > par->child_end)
            par->child_end = ts;
        if (f.start < par->start)
            s->outside_parent++;
        par->desc += f.desc + 1;
        par->unrec += f.unrec;
    }
}

static void dr_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    dread *r = ctx;
    ps_regions(&r->p, stream, depth, ev, n);
    dstream *s = &r->s[stream < PS_STREAMS ? stream : 0];
    if (n && !s->have_ts) {
        s->first_ts = ev[0].ts;
        s->have_ts = true;
    }
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind != PRISM_REGION_ENTER) {
            dr_close(r, s, ev[i].ts);
            continue;
        }
        if (s->depth == 8 || ev[i].name > 255) {
            s->bad_path++;
            continue;
        }
        s->st[s->depth++] = (frame){ ev[i].name, ev[i].ts, 0, 0, 0 };
        note_path(s);
    }
}

static void dr_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    dread *r = ctx;
    dstream *s = &r->s[stream < PS_STREAMS ? stream : 0];
    for (size_t i = 0; i < n; i++) {
        s->unrec_records++;
        if (u[i].depth != s->depth) {
            s->unrec_bad_depth++;
            continue;
        }
        if (!u[i].depth) {
            s->unrec_top += u[i].regions;
            continue;
        }
        frame *par = &s->st[u[i].depth - 1];
        if (!descendants(r, par->name))
            s->unrec_bad_parent++;
        par->unrec += u[i].regions;
        s->unrec_nested += u[i].regions;
    }
}

/* The nest's names as the file defines them (before any region). */
static void dr_string(void *ctx, uint32_t id, const char *str, size_t len)
{
    dread *r = ctx;
    static const char *const nm[] = { "outer", "middle", "inner", "sibling", "tick" };
    uint32_t *slot[] = { &r->ids.outer, &r->ids.middle, &r->ids.inner, &r->ids.sibling,
                         &r->ids.tick };
    for (size_t i = 0; i < 5; i++)
        if (len == strlen(nm[i]) && !memcmp(str, nm[i], len))
            *slot[i] = id;
}

static void dr_dropped(void *ctx, const prism_dropped *d)
{
    dread *r = ctx;
    ps_dropped(&r->p, d);
    if (d->source != PRISM_SOURCE_CPU || d->stream >= PS_STREAMS)
        return;
    dstream *s = &r->s[d->stream];
    s->have_regions |= d->have_regions;
    if (d->regions > s->drop_regions)
        s->drop_regions = d->regions;
}

/* Read path: psum's facts (sound: psum_assert_sound) and the nesting
 * checks above.  dr_free frees it. */
static dread *dr_read(const char *path)
{
    dread *r = calloc(1, sizeof *r);
    assert_non_null(r);
    prism_reader_callbacks cb = {
        .string = dr_string, .thread = ps_thread, .regions = dr_regions, .marks = ps_marks,
        .counters = ps_counters, .steps = ps_steps, .memory = ps_memory,
        .dropped = dr_dropped, .footer = ps_footer, .cpu = ps_cpu, .chunk = ps_chunk,
        .unrecorded = dr_unrecorded,
    };
    r->p.status = prism_read_file(path, &cb, r, &r->p.r);
    assert_non_null(r->p.r);
    r->p.st = *prism_reader_stats_get(r->p.r);
    assert_false(r->p.bad_stream);
    psum_assert_sound(&r->p);
    return r;
}

static void dr_free(dread *r)
{
    prism_reader_free(r->p.r);
    free(r->p.steps);
    free(r->p.mem);
    free(r->p.ev);
    free(r);
}

/*
 * A thread that ran `iters` iterations of nest(): nothing in the file it
 * did not do, nothing it did unaccounted for.  *dropped: its regions not
 * recorded; returns the program's paths it has (bits 0..3).
 */
static unsigned assert_thread(const dread *r, uint32_t st, uint64_t iters, uint64_t *dropped)
{
    const dstream *s = &r->s[st];
    const ps_stream *ps = &r->p.s[st];
    const names *n = &r->ids;
    assert_true(n->outer && n->middle && n->inner && n->sibling);
    /* every path is one of the program's (and all of them are there) */
    uint64_t want[4] = { n->outer, (uint64_t)n->outer << 8 | n->middle,
                         ((uint64_t)n->outer << 8 | n->middle) << 8 | n->inner,
                         (uint64_t)n->outer << 8 | n->sibling };
    assert_int_equal(s->bad_path, 0);
    unsigned seen = 0;
    for (size_t i = 0; i < s->npaths; i++) {
        bool known = false;
        for (unsigned j = 0; j < 4; j++)
            if (s->paths[i] == want[j]) {
                known = true;
                seen |= 1u << j;
            }
        if (!known)
            print_error("stream %u: a path the program never ran: %#llx\n", st,
                        (unsigned long long)s->paths[i]);
        assert_true(known);
    }
    /* nesting and time */
    assert_int_equal(s->depth, 0);
    assert_int_equal(s->exits_at_zero, 0);
    assert_int_equal(s->not_positive, 0);
    assert_int_equal(s->outside_parent, 0);
    assert_true(r->p.footers == 1 && s->last_end <= r->p.footer.end_ts);
    assert_true(s->first_ts <= s->last_end);
    /* written + dropped = produced: regions and records */
    assert_true(s->have_regions || ps->dropped == 0);
    assert_int_equal(ps->enters, ps->exits);
    assert_int_equal(ps->enters + s->drop_regions, 4 * iters);
    assert_int_equal(ps->enters + ps->exits + ps->marks + ps->dropped, 8 * iters + marks_in(iters));
    /* where: each recorded region's descendants are recorded or counted
     * under it; the rest are whole iterations dropped at the top */
    assert_int_equal(s->unrec_bad_depth, 0);
    assert_int_equal(s->unrec_bad_parent, 0);
    assert_int_equal(s->miscount, 0);
    assert_int_equal(s->drop_regions - s->unrec_nested, 4 * (iters - s->outers_closed));
    assert_true(s->unrec_top <= s->drop_regions - s->unrec_nested);
    *dropped = s->drop_regions;
    return seen;
}

/* ---- K threads, tiny buffers ------------------------------------------- */

typedef struct kscen {
    unsigned k;
    char path[512];
} kscen;

typedef struct kworker {
    unsigned idx;
    pthread_barrier_t *start;
} kworker;

static void *k_worker(void *arg)
{
    kworker *w = arg;
    char name[32];
    snprintf(name, sizeof name, "dropper-%u", w->idx);
    prism_thread_name(name);
    names n = names_get();
    pthread_barrier_wait(w->start);
    for (uint64_t i = 0; i < ITERS; i++)
        nest(&n, i);
    return NULL;
}

static int k_child(void *arg)
{
    const kscen *sc = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = sc->path;
    c.collect_memory = false;
    c.cpu_interval_ms = 0;
    c.policy = PRISM_POLICY_DROP;
    c.buffer_events = 64;
    c.buffer_mb = 1;
    CHILD_CHECK(prism_init(&c) == 0);
    pthread_barrier_t start;
    CHILD_CHECK(pthread_barrier_init(&start, NULL, sc->k) == 0);
    pthread_t th[MAXK];
    kworker w[MAXK];
    for (unsigned i = 0; i < sc->k; i++) {
        w[i] = (kworker){ i, &start };
        CHILD_CHECK(pthread_create(&th[i], NULL, k_worker, &w[i]) == 0);
    }
    for (unsigned i = 0; i < sc->k; i++)
        CHILD_CHECK(pthread_join(th[i], NULL) == 0);
    pthread_barrier_destroy(&start);
    prism_shutdown();
    return 0;
}

static void test_whole_regions(void **state)
{
    const unsigned k = *(const unsigned *)*state;
    tdir d;
    tdir_make(&d);
    kscen sc = { k, "" };
    tdir_file(&d, "drop.cbor", sc.path, sizeof sc.path);
    child_run_ok(k_child, &sc);
    dread *r = dr_read(sc.path);
    uint64_t dropped_all = 0;
    unsigned paths = 0;                 /* a thread may have recorded nothing */
    for (unsigned i = 0; i < k; i++) {
        char name[32];
        snprintf(name, sizeof name, "dropper-%u", i);
        uint32_t st = psum_stream_named(&r->p, name);
        assert_int_not_equal(st, 0);
        uint64_t dropped;
        paths |= assert_thread(r, st, ITERS, &dropped);
        dropped_all += dropped;
    }
    assert_int_equal(paths, 15);        /* the program's paths, all of them */
    print_message("    k=%u: %llu of %llu regions not recorded (whole)\n", k,
                  (unsigned long long)dropped_all, (unsigned long long)4 * ITERS * k);
    dr_free(r);
    tdir_remove(&d);
}

/* ---- a writer blocked on a FIFO: drops for sure ------------------------ */

/* Results a child leaves for the parent (a shared mapping). */
typedef struct shared {
    int sc_mode;                /* 1: system calls were counted             */
    uint64_t calls, clock_calls;
    long first_nr;
    uint64_t iters;             /* nest() iterations of the dropping thread */
} shared;

static shared *shared_new(void)
{
    void *p = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    assert_true(p != MAP_FAILED);
    memset(p, 0, sizeof(shared));
    return p;
}

typedef struct fifo_scen {
    char fifo[512], path[512];
    shared *out;
} fifo_scen;

/* Two 1 MB buffers for the process; the writer flushes when woken. */
static void start_blocked(const char *fifo, prism_policy policy)
{
    prism_config c;
    prism_config_default(&c);
    c.output = fifo;
    c.collect_memory = false;
    c.cpu_interval_ms = 0;
    c.flush_interval_ms = 60000;
    c.policy = policy;
    c.buffer_events = 65536;
    c.buffer_mb = 1;
    CHILD_CHECK(prism_init(&c) == 0);   /* opens the FIFO: the parent has it */
}


/* Until the writer waits on the FIFO nobody reads (in write(), or in poll() for room): from then on
 * no buffer comes back to the pool. */
static void wait_writer_blocked(void)
{
    while (!probe_writer_stalled())
        sched_yield();
}

typedef struct dry_arg {
    sc_counter *sc;
    shared *out;
} dry_arg;

static void *dry_worker(void *arg)
{
    dry_arg *a = arg;
    prism_thread_name("dry");
    names n = names_get();
    uint64_t i = 0;
    for (; i < DRY_WARM; i++)          /* uses up the budget, blocks the writer */
        nest(&n, i);
    wait_writer_blocked();
    bool counted = sc_attach(a->sc);
    atomic_store(&a->sc->counting, 1);
    for (uint64_t end = i + DRY_ITERS; i < end; i++)
        nest(&n, i);
    atomic_store(&a->sc->counting, 0);
    a->out->sc_mode = counted;
    a->out->iters = i;
    return NULL;
}

static int dry_child(void *arg)
{
    fifo_scen *f = arg;
    start_blocked(f->fifo, PRISM_POLICY_DROP);
    sc_counter sc;
    CHILD_CHECK(sc_start(&sc));
    dry_arg a = { &sc, f->out };
    pthread_t th;
    CHILD_CHECK(pthread_create(&th, NULL, dry_worker, &a) == 0);
    CHILD_CHECK(pthread_join(th, NULL) == 0);
    sc_stop(&sc);
    f->out->calls = atomic_load(&sc.calls);
    f->out->clock_calls = atomic_load(&sc.clock_calls);
    f->out->first_nr = atomic_load(&sc.first_nr);
    child_ready();                      /* the parent drains the FIFO now */
    prism_shutdown();
    return 0;
}

/* Run fn in a child writing its profile into f->fifo; once it is ready,
 * copy the FIFO into f->path; wait for it. */
static void run_fifo_child(child_fn fn, fifo_scen *f)
{
    assert_int_equal(mkfifo(f->fifo, 0600), 0);
    /* the reader first: the child's open of a FIFO without one fails
     * (ENXIO, never a wait), and a child that starts first would win */
    int rd = open(f->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    assert_true(rd >= 0);
    (void)fcntl(rd, F_SETPIPE_SZ, 4096);        /* smaller is sooner; not needed */
    child c = child_start(fn, f, true, true);
    child_expect_ready(&c);
    assert_int_equal(fcntl(rd, F_SETFL, 0), 0);
    int out = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(out >= 0);
    alarm(PARENT_ALARM_S);
    char buf[65536];
    for (;;) {
        ssize_t n = read(rd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n >= 0);
        if (n == 0)
            break;
        assert_int_equal(write(out, buf, (size_t)n), n);
    }
    alarm(0);
    close(out);
    close(rd);
    char err[8192];
    assert_child_ok(child_finish(&c, err, sizeof err), err);
}

static void fifo_scen_make(fifo_scen *f, const tdir *d)
{
    tdir_file(d, "profile.fifo", f->fifo, sizeof f->fifo);
    tdir_file(d, "profile.cbor", f->path, sizeof f->path);
    f->out = shared_new();
}

static void test_drop_path_makes_no_system_call(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fifo_scen f;
    fifo_scen_make(&f, &d);
    run_fifo_child(dry_child, &f);
    dread *r = dr_read(f.path);
    uint32_t st = psum_stream_named(&r->p, "dry");
    assert_int_not_equal(st, 0);
    uint64_t dropped;
    assert_int_equal(f.out->iters, DRY_WARM + DRY_ITERS);
    assert_thread(r, st, f.out->iters, &dropped);
    assert_true(dropped >= 4 * DRY_ITERS);      /* the counted loop dropped it all */
    if (f.out->sc_mode) {
        if (f.out->calls)
            print_error("%llu system calls while dropping (the first: %ld)\n",
                        (unsigned long long)f.out->calls, f.out->first_nr);
        assert_int_equal(f.out->calls, 0);
        print_message("    %u iterations dropped: 0 system calls (%llu clock reads)\n",
                      DRY_ITERS, (unsigned long long)f.out->clock_calls);
    } else {
        print_message("    seccomp user notification unavailable: calls not counted\n");
    }
    dr_free(r);
    munmap(f.out, sizeof *f.out);
    tdir_remove(&d);
}

/* ---- fork while dropping ------------------------------------------------ */

static void fork_grandchild(void)
{
    alarm(CHILD_ALARM_S);
    CHILD_CHECK(!prism_recording());
    CHILD_CHECK(prism_name("grandchild-name") == 0);
    prism_thread_name("grandchild");
    names n = { 1, 2, 3, 4, 5 };        /* the parent's ids: nothing records them */
    for (uint64_t i = 0; i < 1000; i++)
        nest(&n, i);
    prism_push("grandchild-only");
    prism_counter_i(1, 7);
    prism_pop();
    prism_pop();                        /* "held", entered by the parent */
    prism_pop();                        /* one too many */
    prism_shutdown();
    /* not exit(): the leak checker of a sanitized build would count what
     * the parent's writer thread, blocked mid-flush, holds on its stack */
    _exit(0);
}

static int fork_child(void *arg)
{
    fifo_scen *f = arg;
    start_blocked(f->fifo, PRISM_POLICY_DROP);
    names n = names_get();
    uint32_t held = prism_name("held");
    CHILD_CHECK(held);
    prism_push_id(held);                /* recorded: the buffer is empty */
    uint64_t i = 0;
    for (; i < DRY_WARM; i++)
        nest(&n, i);
    wait_writer_blocked();              /* dropping for good, not in malloc */
    for (uint64_t end = i + 1000; i < end; i++)
        nest(&n, i);                    /* dropped: counted under "held" */
    fflush(NULL);
    pid_t g = fork();
    CHILD_CHECK(g >= 0);
    if (g == 0)
        fork_grandchild();
    int st;
    CHILD_CHECK(waitpid(g, &st, 0) == g);
    CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHILD_CHECK(prism_recording());
    prism_pop();                        /* "held": its count, then its exit */
    f->out->iters = i;
    child_ready();
    prism_shutdown();
    return 0;
}

static void test_fork_while_dropping(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fifo_scen f;
    fifo_scen_make(&f, &d);
    run_fifo_child(fork_child, &f);
    dread *r = dr_read(f.path);
    assert_int_equal(tdir_count(&d), 2);        /* the FIFO and the copy */
    assert_int_equal(psum_id(&r->p, "grandchild-name"), 0);
    assert_int_equal(psum_id(&r->p, "grandchild-only"), 0);
    assert_int_equal(psum_stream_named(&r->p, "grandchild"), 0);
    uint32_t held = psum_id(&r->p, "held");
    assert_int_not_equal(held, 0);
    /* one stream: "held" once, around every recorded iteration, and what
     * was not recorded counted under it */
    uint32_t st = 0;
    for (uint32_t i = 1; i < PS_STREAMS; i++)
        if (r->p.s[i].enters) {
            assert_int_equal(st, 0);
            st = i;
        }
    assert_int_not_equal(st, 0);
    const dstream *s = &r->s[st];
    const ps_stream *ps = &r->p.s[st];
    assert_int_equal(ps->by_depth[0][held], 1);
    assert_int_equal(s->depth, 0);
    assert_int_equal(s->exits_at_zero, 0);
    assert_int_equal(s->miscount, 0);
    assert_int_equal(s->unrec_bad_depth, 0);
    assert_int_equal(s->unrec_top, 0);
    assert_int_equal(ps->enters, ps->exits);
    uint64_t produced = 4 * f.out->iters;      /* under "held" */
    assert_int_equal(ps->enters - 1 + s->drop_regions, produced);
    assert_int_equal(s->unrec_nested, s->drop_regions);     /* all under "held" */
    assert_true(s->drop_regions >= 4 * 1000);
    dr_free(r);
    munmap(f.out, sizeof *f.out);
    tdir_remove(&d);
}

/* ---- WAIT: a bounded wait, then whole regions dropped --------------------- */

static int wait_child(void *arg)
{
    fifo_scen *f = arg;
    start_blocked(f->fifo, PRISM_POLICY_WAIT);
    names n = names_get();
    uint32_t held = prism_name("held");
    CHILD_CHECK(held);
    prism_push_id(held);
    uint64_t i = 0;
    for (; i < DRY_WARM; i++)           /* waits once (1 s at most), then drops */
        nest(&n, i);
    prism_pop();
    f->out->iters = i;
    child_ready();
    prism_shutdown();
    return 0;
}

static void test_wait_policy_then_whole_regions(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    fifo_scen f;
    fifo_scen_make(&f, &d);
    run_fifo_child(wait_child, &f);
    dread *r = dr_read(f.path);
    uint32_t held = psum_id(&r->p, "held");
    assert_int_not_equal(held, 0);
    uint32_t st = 0;
    for (uint32_t i = 1; i < PS_STREAMS; i++)
        if (r->p.s[i].enters)
            st = i;
    assert_int_not_equal(st, 0);
    const dstream *s = &r->s[st];
    const ps_stream *ps = &r->p.s[st];
    assert_int_equal(ps->by_depth[0][held], 1);         /* closed, after it all */
    assert_int_equal(s->depth, 0);
    assert_int_equal(s->exits_at_zero, 0);
    assert_int_equal(s->not_positive, 0);
    assert_int_equal(s->outside_parent, 0);
    assert_int_equal(s->miscount, 0);
    assert_int_equal(s->unrec_bad_depth, 0);
    assert_int_equal(s->unrec_bad_parent, 0);
    assert_true(s->drop_regions > 0);
    assert_int_equal(ps->enters - 1 + s->drop_regions, 4 * f.out->iters);
    assert_int_equal(s->unrec_nested, s->drop_regions);     /* all under "held" */
    dr_free(r);
    munmap(f.out, sizeof *f.out);
    tdir_remove(&d);
}

static const unsigned ks[] = { 1, 4, 16, 64 };

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_prestate(test_whole_regions, (void *)&ks[0]),
        cmocka_unit_test_prestate(test_whole_regions, (void *)&ks[1]),
        cmocka_unit_test_prestate(test_whole_regions, (void *)&ks[2]),
        cmocka_unit_test_prestate(test_whole_regions, (void *)&ks[3]),
        cmocka_unit_test(test_drop_path_makes_no_system_call),
        cmocka_unit_test(test_fork_while_dropping),
        cmocka_unit_test(test_wait_policy_then_whole_regions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

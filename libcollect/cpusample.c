/*
 * cpusample.c - per-thread on-CPU sampling (cpusample.h).
 *
 * Sources.  /proc/self/task/TID/schedstat holds a thread's cumulative
 * on-CPU ns, run-queue wait ns and timeslice count; the writer opens it once
 * per thread and pread()s it every pass, just after reading the thread's
 * CPU clock (which brings the file's on-CPU count, else updated at ticks
 * only, up to date).  Where that file does not work (probed at start on the
 * writer's own), the thread's CPU clock, taken by the thread itself when it
 * registers, gives on-CPU time only.  Both count the same scheduler runtime,
 * so a thread's values never go backwards.
 *
 * Exit and TID reuse.  Only the writer thread frees a thread record
 * (writer.c, once pc_cpu_release agrees), so the records a pass lists under the
 * session lock stay valid while it reads them outside the lock.  An exiting
 * thread marks itself dead under the lock before it finishes exiting, so a
 * record still alive after a read (checked under the lock) was alive during
 * it, and its TID was not reused meanwhile.  Reads that name a thread by its
 * TID need that check: the first open of its schedstat file and every clock
 * read.  An open schedstat fd is tied to its task, not to the number: once
 * the thread is gone it fails (ESRCH), whoever has the TID by then.
 *
 * A thread's last sample, flagged EXITED, is taken at the first pass that
 * sees it gone, with the largest of what the writer can still read, what
 * the thread read of itself as it exited, and its previous sample.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpusample.h"

#define MAX_RECORDS (1u << 16)  /* kept between two flushes: 2 MiB          */
#define FD_SHARE 4u             /* hold at most a quarter of RLIMIT_NOFILE  */
#define FD_MAX 4096u
#define READ_SPREAD_NS 50000.0  /* a reading and its date: 50 us apart at most */

/* cpu_thread.src: where a thread's samples come from */
enum { SRC_NEW = 0, SRC_STAT, SRC_CLOCK, SRC_GONE, SRC_NONE, SRC_DONE };

enum { READ_NOTHING = 3 };      /* read_thread: a thread without a source */

typedef struct entry {
    prism__thread *th;
    cpu_reading last;           /* the thread's own reading at exit */
    cpu_reading r;              /* this pass's */
    bool dead;                  /* as seen under the lock */
    bool check;                 /* read by TID, or gone: look again */
    bool have, gone;
    uint32_t state;             /* PRISM_CPU_RUNNING etc. when read */
    uint64_t ticks;             /* when its reading was taken */
} entry;

struct cpu_sampler {
    session *s;
    uint64_t period_ns;         /* 0: off */
    int mode;
    char status[200];
    bool status_new;
    cpu_rec *rec;
    size_t nrec, cap;
    uint64_t dropped;
    entry *ent;                 /* a pass's threads */
    size_t ecap;
    size_t fds, fd_max;
};

static void set_status(cpu_sampler *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_status(cpu_sampler *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->status, sizeof c->status, fmt, ap);
    va_end(ap);
    c->status_new = true;
}

static void stat_path(char *buf, size_t n, uint64_t tid)
{
    snprintf(buf, n, "/proc/self/task/%" PRIu64 "/schedstat", tid);
}

static uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* A decimal number at *p after blanks (spaces, tabs), *p moved past it;
 * false when there is none or it overflows. */
static bool parse_u64(const char **p, uint64_t *v)
{
    const char *q = *p;
    while (*q == ' ' || *q == '\t')
        q++;
    if (*q < '0' || *q > '9')
        return false;
    uint64_t x = 0;
    for (; *q >= '0' && *q <= '9'; q++) {
        if (x > (UINT64_MAX - 9) / 10)
            return false;
        x = x * 10 + (uint64_t)(*q - '0');
    }
    *v = x;
    *p = q;
    return true;
}

/* "on wait slices\n": the three numbers, false when there are not three. */
static bool parse3(const char *p, uint64_t v[3])
{
    for (int i = 0; i < 3; i++)
        if (!parse_u64(&p, &v[i]))
            return false;
    return *p == '\n' || *p == '\0';
}

static int read3(int fd, uint64_t v[3])
{
    char buf[96];
    ssize_t n;
    do
        n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == ESRCH ? CPU_READ_GONE : CPU_READ_ERROR;
    buf[n] = '\0';
    return parse3(buf, v) ? CPU_READ_OK : CPU_READ_GONE;
}

int pc_cpu_read_stat(int fd, cpu_reading *r)
{
    uint64_t v[3];
    int rc = read3(fd, v);
    if (rc == CPU_READ_OK)
        *r = (cpu_reading){ v[0], v[1], true, true };
    return rc;
}

void pc_cpu_read_self(session *s, uint64_t os_tid, cpu_reading *r)
{
    memset(r, 0, sizeof *r);
    int mode = atomic_load_explicit(&s->cpu_mode, memory_order_relaxed);
    if (mode == CPU_MODE_OFF)
        return;
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) {
        r->on = ts_ns(&t);      /* exact; schedstat's lags by up to a tick */
        r->ok = true;
    }
    if (mode != CPU_MODE_STAT)
        return;
    char path[64];
    stat_path(path, sizeof path, os_tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    cpu_reading x;
    if (pc_cpu_read_stat(fd, &x) == CPU_READ_OK) {
        r->wait = x.wait;       /* current: it only grows while runnable */
        r->have_wait = r->ok = true;
        if (x.on > r->on)
            r->on = x.on;
    }
    close(fd);
}

cpu_sampler *pc_cpu_new(session *s)
{
    atomic_store(&s->cpu_mode, CPU_MODE_OFF);
    cpu_sampler *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->s = s;
    uint32_t ms = s->cfg.cpu_interval_ms;
    if (!ms) {
        set_status(c, "off: cpu_interval_ms is 0");
        return c;
    }
    c->fd_max = FD_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur / FD_SHARE < c->fd_max)
        c->fd_max = (size_t)(rl.rlim_cur / FD_SHARE);
    /* schedstat works when the writer's own file reads, with timeslices:
     * a kernel without scheduler statistics shows "0 0 0" */
    char path[64];
    stat_path(path, sizeof path, (uint64_t)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint64_t v[3];
    clockid_t id;
    struct timespec t;
    if (fd >= 0 && read3(fd, v) == CPU_READ_OK && v[2] > 0)
        c->mode = CPU_MODE_STAT;
    else if (pthread_getcpuclockid(pthread_self(), &id) == 0 && clock_gettime(id, &t) == 0)
        c->mode = CPU_MODE_CLOCK;
    if (fd >= 0)
        close(fd);
    if (c->mode == CPU_MODE_OFF) {
        set_status(c, "off: neither /proc/self/task/TID/schedstat nor a thread CPU clock "
                      "can be read");
        return c;
    }
    c->period_ns = (uint64_t)ms * 1000000u;
    set_status(c, "%s %" PRIu32 " ms", c->mode == CPU_MODE_STAT ? "schedstat" : "thread-clock",
               ms);
    atomic_store(&s->cpu_mode, c->mode);
    return c;
}

static void close_fd(cpu_sampler *c, prism__thread *th)
{
    if (th->cpu.status_open) {
        close(th->cpu.status_fd);
        th->cpu.status_open = false;
        c->fds--;
    }
    if (th->cpu.stat_open) {
        close(th->cpu.stat_fd);
        th->cpu.stat_open = false;
        c->fds--;
    }
    if (th->cpu.src != SRC_STAT)
        return;
    close(th->cpu.fd);
    th->cpu.fd = -1;
    c->fds--;
}

/* No more samples from anyone: close every file. */
static void close_all(cpu_sampler *c)
{
    session *s = c->s;
    pthread_mutex_lock(&s->lock);
    for (prism__thread *th = s->threads; th; th = th->next) {
        close_fd(c, th);
        th->cpu.src = SRC_DONE;
    }
    pthread_mutex_unlock(&s->lock);
}

void pc_cpu_free(cpu_sampler *c)
{
    if (!c)
        return;
    if (c->period_ns)
        close_all(c);
    atomic_store(&c->s->cpu_mode, CPU_MODE_OFF);
    free(c->rec);
    free(c->ent);
    free(c);
}

uint64_t pc_cpu_period_ns(const cpu_sampler *c)
{
    return c ? c->period_ns : 0;
}

static void fail(cpu_sampler *c, const char *what, int err)
{
    pc_session_warn("CPU sampling stopped: %s: %s", what, strerror(err));
    set_status(c, "off: %s: %s", what, strerror(err));
    close_all(c);
    c->period_ns = 0;
    atomic_store(&c->s->cpu_mode, CPU_MODE_OFF);
}

/* Write a record of th's last kept values at ticks. */
static void record(cpu_sampler *c, const prism__thread *th, uint64_t ticks, uint32_t flags)
{
    if (c->nrec == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        cpu_rec *r = cap <= MAX_RECORDS ? realloc(c->rec, cap * sizeof *r) : NULL;
        if (!r) {
            c->dropped++;
            return;
        }
        c->rec = r;
        c->cap = cap;
    }
    c->rec[c->nrec++] = (cpu_rec){ ticks, th->stream, flags, th->cpu.on, th->cpu.wait };
}

/* A reading of th into the records (its values never go below the last
 * one's); true when it changed since the last.
 * An unchanged reading (an idle thread: blocked, or not scheduled) is held
 * back, and written just before the next one that changes (or at the
 * end): the file then says when the thread last was idle, with one record
 * instead of one a pass. */
static bool keep(cpu_sampler *c, prism__thread *th, uint64_t ticks, uint64_t on, uint64_t wait,
                 uint32_t flags)
{
    cpu_thread *t = &th->cpu;
    t->read_ticks = ticks;
    t->queued = (flags & PRISM_CPU_QUEUED) != 0;
    if (t->sampled) {
        on = on > t->on ? on : t->on;
        wait = wait > t->wait ? wait : t->wait;
        c->s->threads_on_ns += on - t->on;      /* the program ran (cupti watch) */
        if (on == t->on && wait == t->wait && !(flags & PRISM_CPU_EXITED)) {
            t->held = true;
            t->held_ticks = ticks;
            t->held_flags = flags;
            return false;
        }
        if (t->held)
            record(c, th, t->held_ticks, t->held_flags);    /* ordered at the flush */
    }
    t->held = false;
    t->on = on;
    t->wait = wait;
    t->sampled = true;
    record(c, th, ticks, flags);
    return true;
}

/* Choose th's source the first time it is sampled.  True when the read
 * names it by TID, so that it must be found alive after the read. */
static bool start(cpu_sampler *c, prism__thread *th)
{
    cpu_thread *t = &th->cpu;
    if (c->mode == CPU_MODE_STAT && c->fds < c->fd_max) {
        char path[64];
        stat_path(path, sizeof path, th->os_tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            t->fd = fd;
            t->src = SRC_STAT;
            t->have_wait = true;
            c->fds++;
            return true;
        }
        if (errno == ENOENT || errno == ESRCH) {
            t->src = SRC_GONE;          /* exited before its first pass */
            return true;
        }
        /* out of descriptors: its clock, without the wait */
    }
    t->src = t->clock_ok ? SRC_CLOCK : SRC_NONE;
    return t->clock_ok;
}

/* The state letter of a /proc/TID/stat line ("pid (comm) S ..."; comm may
 * hold any byte, so after the last ')'), or 0. */
static char stat_state(const char *buf, size_t n)
{
    const char *p = NULL;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == ')')
            p = buf + i;
    return p && p + 2 < buf + n && p[1] == ' ' ? p[2] : 0;
}

/* The voluntary context switches in a /proc/TID/status text. */
static bool status_nvcsw(const char *buf, uint64_t *nvcsw)
{
    static const char key[] = "\nvoluntary_ctxt_switches:";
    const char *vc = strstr(buf, key);
    if (!vc)
        return false;
    vc += sizeof key - 1;
    return parse_u64(&vc, nvcsw);
}

/* Read th's /proc/self/task/TID/<name> into buf (NUL-terminated), through
 * the fd kept in *fd / *open while descriptors allow.  *named: the file
 * was opened by TID in this pass (the caller checks the thread was alive
 * throughout).  Bytes read, or -1. */
static ssize_t read_proc(cpu_sampler *c, prism__thread *th, const char *name, int *fd,
                         bool *open_, char *buf, size_t cap, bool *named)
{
    int f = *fd;
    if (!*open_) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%" PRIu64 "/%s", th->os_tid, name);
        f = open(path, O_RDONLY | O_CLOEXEC);
        if (f < 0)
            return -1;
        *named = true;
        if (c->fds < c->fd_max) {
            *fd = f;
            *open_ = true;
            c->fds++;
        }
    }
    ssize_t n;
    do
        n = pread(f, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (!*open_)
        close(f);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/*
 * What th was doing at the sample: PRISM_CPU_RUNNING, _QUEUED (with
 * _PREEMPTED) or _BLOCKED; 0 when unknown.  A state at an instant, in the
 * region open then: sampled so, a region's runnable fraction needs no
 * splitting of intervals among the regions in them (analysis/cpu.c).
 *
 * The stat file says R for running and runnable alike; a running thread's
 * CPU clock moves while the file is read, a queued one's does not.  Linux
 * counts a thread's run-queue wait into schedstat only when it next gets a
 * CPU, so a queued thread's time since it was preempted is in neither
 * counter and would read as blocked: PREEMPTED says it is run-queue wait,
 * when the thread has not blocked since before the previous sample (no
 * state read since then saw it blocked, and its voluntary context switches,
 * from its status file, read only for a queued thread, have not moved
 * since they were last read).
 */
static uint32_t state_now(cpu_sampler *c, prism__thread *th, bool *named)
{
    cpu_thread *t = &th->cpu;
    struct timespec a, b;
    char buf[4096];
    bool clocks = clock_gettime(t->clock, &a) == 0;
    ssize_t n = read_proc(c, th, "stat", &t->stat_fd, &t->stat_open, buf, 512, named);
    clocks = clocks && clock_gettime(t->clock, &b) == 0;
    char st = n > 0 ? stat_state(buf, (size_t)n) : 0;
    if (!st || !clocks)
        return 0;
    if (st != 'R') {
        t->slept = true;
        return PRISM_CPU_BLOCKED;
    }
    if (ts_ns(&a) != ts_ns(&b))
        return PRISM_CPU_RUNNING;
    uint64_t nvcsw;
    bool known = read_proc(c, th, "status", &t->status_fd, &t->status_open, buf, sizeof buf,
                           named) > 0 && status_nvcsw(buf, &nvcsw);
    bool preempted = known && t->nvcsw_ok && nvcsw == t->nvcsw && !t->slept;
    t->nvcsw_ok = known;
    t->nvcsw = known ? nvcsw : 0;
    t->slept = false;
    return PRISM_CPU_QUEUED | (preempted ? PRISM_CPU_PREEMPTED : 0);
}

/* Worth reading th's state: read from schedstat, and it ran in the
 * interval or was queued at its start (a thread idle throughout is
 * blocked, or was found queued: idle threads cost nothing more). */
static bool state_worth(const prism__thread *th, const cpu_reading *r, uint64_t ticks)
{
    const cpu_thread *t = &th->cpu;
    return t->src == SRC_STAT && t->sampled && t->clock_ok && ticks > t->read_ticks &&
           (r->on > t->on || t->queued);
}

static int read_thread(prism__thread *th, cpu_reading *r)
{
    cpu_thread *t = &th->cpu;
    struct timespec ts;
    switch (t->src) {
    case SRC_STAT: {
        /* Linux counts a running thread's time into schedstat at scheduler
         * ticks only, so the file lags it by up to a tick (4 ms at 250 Hz);
         * reading the thread's clock first brings the count up to date.
         * Named by TID, but sound: if the pread of the task's own fd then
         * succeeds, the task was alive throughout, so the TID was its. */
        bool fresh = t->clock_ok && clock_gettime(t->clock, &ts) == 0;
        int rc = pc_cpu_read_stat(t->fd, r);
        if (rc == CPU_READ_OK && fresh && ts_ns(&ts) > r->on)
            r->on = ts_ns(&ts);
        return rc;
    }
    case SRC_CLOCK:
        if (clock_gettime(t->clock, &ts) != 0)
            return CPU_READ_GONE;       /* no such thread (EINVAL) */
        *r = (cpu_reading){ ts_ns(&ts), 0, true, false };
        return CPU_READ_OK;
    case SRC_GONE:
        return CPU_READ_GONE;
    default:
        return READ_NOTHING;
    }
}

/* th is gone: its last sample, flagged EXITED.  read_fd: its schedstat fd
 * is known to be its own (opened and checked in an earlier pass). */
static void finish(cpu_sampler *c, prism__thread *th, const cpu_reading *last,
                   uint64_t ticks, bool read_fd)
{
    cpu_thread *t = &th->cpu;
    uint64_t on = t->on, wait = t->wait;
    bool known = t->sampled;
    bool with_wait = t->have_wait || (!t->sampled && last->have_wait);
    cpu_reading x;
    if (read_fd && t->src == SRC_STAT && pc_cpu_read_stat(t->fd, &x) == CPU_READ_OK) {
        on = x.on > on ? x.on : on;
        wait = x.wait > wait ? x.wait : wait;
        known = true;
    }
    if (last->ok && t->src != SRC_NONE) {
        on = last->on > on ? last->on : on;
        if (last->have_wait && last->wait > wait)
            wait = last->wait;
        known = true;
    }
    close_fd(c, th);
    bool none = t->src == SRC_NONE;
    t->src = SRC_DONE;
    if (known && !none)
        keep(c, th, ticks, on, with_wait ? wait : 0,
             PRISM_CPU_EXITED | (with_wait ? PRISM_CPU_HAVE_WAIT : 0));
}

void pc_cpu_release_held(cpu_sampler *c)
{
    if (!c)
        return;
    session *s = c->s;
    size_t from = c->nrec;
    pthread_mutex_lock(&s->lock);
    for (prism__thread *th = s->threads; th; th = th->next)
        if (th->cpu.held) {
            th->cpu.held = false;
            record(c, th, th->cpu.held_ticks, th->cpu.held_flags);
        }
    pthread_mutex_unlock(&s->lock);
    /* into time order (stable): a held reading is older than the pass that
     * made it ours; the rest are in order, so few moves */
    for (size_t i = from > 0 ? from : 1; i < c->nrec; i++) {
        cpu_rec x = c->rec[i];
        size_t j = i;
        while (j > 0 && c->rec[j - 1].ticks > x.ticks) {
            c->rec[j] = c->rec[j - 1];
            j--;
        }
        c->rec[j] = x;
    }
}

/* The threads to sample, with what a pass must know of them, copied under
 * the lock.  Threads beyond the scratch array wait for the next pass when
 * it cannot grow. */
static size_t list_threads(cpu_sampler *c)
{
    session *s = c->s;
    size_t n = 0;
    for (int tries = 0; tries < 3; tries++) {
        n = 0;
        pthread_mutex_lock(&s->lock);
        for (prism__thread *th = s->threads; th; th = th->next) {
            if (th->cpu.src == SRC_DONE)
                continue;
            if (n < c->ecap)
                c->ent[n] = (entry){ .th = th, .last = th->cpu.last, .dead = th->dead };
            n++;
        }
        pthread_mutex_unlock(&s->lock);
        if (n <= c->ecap)
            return n;
        size_t cap = n + n / 2 + 16;
        entry *e = realloc(c->ent, cap * sizeof *e);
        if (!e)
            break;
        c->ent = e;
        c->ecap = cap;
    }
    return n < c->ecap ? n : c->ecap;
}

bool pc_cpu_pass(cpu_sampler *c)
{
    if (!c || !c->period_ns)
        return false;
    session *s = c->s;
    size_t n = list_threads(c);
    uint64_t ticks = prism__now();
    bool check = false, changed = false;
    for (size_t i = 0; i < n; i++) {
        entry *e = &c->ent[i];
        prism__thread *th = e->th;
        if (e->dead) {
            finish(c, th, &e->last, ticks, true);
            changed = true;
            continue;
        }
        if (th->cpu.src == SRC_NEW)
            e->check = start(c, th);
        /* The reading's date: the writer may be preempted between the read
         * and the clock (SCHED_BATCH, on a busy machine, for whole time
         * slices), and a reading dated late moves the thread's work of that
         * time into the next interval's regions; so read again, a few
         * times at most, until the read and its date lie close together. */
        int rc;
        for (int tries = 0;; tries++) {
            uint64_t t0 = prism__now();
            rc = read_thread(th, &e->r);
            e->ticks = prism__now();
            if (rc != CPU_READ_OK || tries == 2 ||
                (double)(e->ticks - t0) * s->ns_per_tick < READ_SPREAD_NS)
                break;
        }
        if (rc == CPU_READ_OK) {
            e->have = true;
            e->check |= th->cpu.src == SRC_CLOCK;
            e->state = state_worth(th, &e->r, e->ticks) ? state_now(c, th, &e->check) : 0;
            /* a state read well after the sample's time (the writer was
             * preempted) may belong to the next region: none then */
            if (e->state && (double)(prism__now() - e->ticks) * s->ns_per_tick >= READ_SPREAD_NS)
                e->state = 0;
        } else if (rc == CPU_READ_GONE) {
            close_fd(c, th);
            th->cpu.src = SRC_GONE;
            e->gone = e->check = true;
        } else if (rc == CPU_READ_ERROR) {
            fail(c, "reading /proc/self/task/TID/schedstat", errno);
            return true;
        }
        check |= e->check;
    }
    if (check) {                        /* alive throughout the reads? */
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < n; i++)
            if (c->ent[i].check) {
                c->ent[i].dead = c->ent[i].th->dead;
                c->ent[i].last = c->ent[i].th->cpu.last;
            }
        pthread_mutex_unlock(&s->lock);
    }
    for (size_t i = 0; i < n; i++) {
        entry *e = &c->ent[i];
        if (e->check && (e->dead || e->gone)) {
            finish(c, e->th, &e->last, ticks, false);   /* e->r may not be its */
            changed = true;
        } else if (e->have) {
            changed |= keep(c, e->th, e->ticks, e->r.on, e->r.wait,
                            (e->r.have_wait ? PRISM_CPU_HAVE_WAIT : 0) |
                            e->state);
        }
    }
    return changed;
}

bool pc_cpu_release(const cpu_sampler *c, const prism__thread *th)
{
    return !c || !c->period_ns || th->cpu.src == SRC_DONE || th->cpu.src == SRC_NONE;
}

size_t pc_cpu_records(const cpu_sampler *c, const cpu_rec **r)
{
    if (!c) {
        *r = NULL;
        return 0;
    }
    *r = c->rec;
    return c->nrec;
}

void pc_cpu_drained(cpu_sampler *c)
{
    if (c)
        c->nrec = 0;
}

const char *pc_cpu_status_changed(cpu_sampler *c)
{
    if (!c || !c->status_new)
        return NULL;
    c->status_new = false;
    return c->status;
}

void pc_cpu_pause(session *s, bool paused)
{
    atomic_store(&s->cpu_paused, paused);
    pc_session_wake(s);
}

uint64_t pc_cpu_dropped(const cpu_sampler *c)
{
    return c ? c->dropped : 0;
}

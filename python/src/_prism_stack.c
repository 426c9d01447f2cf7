/*
 * _prism_stack.c - the low-rate Python stack sampler: names the time the
 * regions miss (issue 25).  A C thread of its own wakes every period,
 * reads which system call each recorded thread is blocked in (outside the
 * GIL: /proc/self/task/TID/syscall), then takes the GIL for as long as it
 * takes to read sys._current_frames() and turn each recorded thread's
 * frames into interned names ("qualname (path:line)"), and hands the stacks to libcollect
 * (prism__stack_put), which writes them as STACKS chunks (format 1.2).
 *
 * What it costs the program: one GIL hand-over per period (a thread
 * running Python code gives the GIL up at its next switch check; one
 * blocked in C holds none) and the frames' walk while it holds it, a few
 * microseconds a thread; the hold is measured and reported in the INFO
 * stacks.sampler when sampling stops.  PRISM_STACK_HZ (default 100, 0:
 * off) or prism.init(stack_hz=...) sets the rate.
 *
 * The passes follow the clock (a late one skips to the next slot, no
 * burst catching up), and each sample carries the pass's wait for the GIL
 * and the part of it the sampler was off a CPU: a stack read after a
 * thread ran Python is where it let go, at CPython's request (after the
 * switch interval, INFO stacks.switch_interval_ns) or at a call of its own
 * that released the GIL; the analysis (analysis/stacks.c) tells them apart
 * and weighs them (docs/PYTHON.md, the stack sampler's wait).
 *
 * Stable ABI only (Py_LIMITED_API 3.10): frames through
 * sys._current_frames(), PyFrame_GetCode, PyFrame_GetLineNumber and the
 * f_back attribute.  Names are cached per (code object, line); the cache
 * holds its code objects and is emptied when full.
 */
#include "_prism.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "prism/collect.h"
#include "prism/profile.h"

/* libcollect's side (libcollect/stacks.c) */
extern bool prism__stacks_wanted;
bool prism__stack_begin(uint64_t period_ns, const char *what);
void prism__stack_end(const char *why);
uint32_t prism__stack_stream(uint64_t os_tid);
bool prism__stack_put(uint32_t stream, uint64_t ticks, uint32_t flags, const uint32_t *frames,
                      uint32_t n, uint64_t wait_ns, uint64_t queued_ns);
bool prism__info_uint(const char *key, uint64_t value);

#define MAX_FRAMES 256u            /* PRISM_STACK_MAX_FRAMES */
#define CACHE_SLOTS 8192u
#define MAX_THREADS 64u
#define RETRY_PASSES 10u           /* look again for a thread with no stream */

typedef struct name_slot {
    PyObject *code;                /* strong reference; NULL: empty */
    int line;
    uint32_t id;
} name_slot;

typedef struct known {
    unsigned long ident;           /* threading ident (pthread_t) */
    uint64_t tid;                  /* OS thread id */
    uint32_t stream;               /* 0: not recorded (yet) */
    uint32_t retry;                /* pass at which to look again */
    int fd;                        /* /proc/self/task/TID/syscall, -1 */
    uint32_t flags, sys_id;        /* state read before the GIL */
    bool seen;                     /* in the last pass */
} known;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool running, stop;
    uint64_t period_ns;
    pid_t pid;
    /* the sampler thread's own */
    name_slot cache[CACHE_SLOTS];
    size_t ncache;
    known k[MAX_THREADS];
    size_t nk;
    uint32_t sys_ids[512];         /* "[name]" per system call number */
    uint64_t passes, samples, hold_sum, hold_max, wait_sum;
    /* a pass's samples, handed to libcollect once the GIL is released:
     * per sample stream, flags, n, then n frame ids */
    uint32_t out[MAX_THREADS * (MAX_FRAMES + 4)];
    size_t nout;
    uint64_t out_ticks;             /* when read */
    uint64_t out_wait, out_queued;  /* how long the pass waited for the GIL; of it, off a CPU */
    PyObject *f_back;               /* "f_back", interned */
    PyObject *current_frames, *active;     /* sys._current_frames, threading._active */
    char own[1024];                 /* the prism package's directory, with its '/' */
    size_t nown;
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* ---- system calls ------------------------------------------------------ */

typedef struct sysname { int nr; const char *name; } sysname;
#if defined(__x86_64__)
static const sysname SYS[] = {
    { 0, "read" }, { 1, "write" }, { 7, "poll" }, { 17, "pread64" }, { 18, "pwrite64" },
    { 19, "readv" }, { 20, "writev" }, { 23, "select" }, { 24, "sched_yield" },
    { 35, "nanosleep" }, { 43, "accept" }, { 42, "connect" }, { 44, "sendto" },
    { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" }, { 61, "wait4" },
    { 74, "fsync" }, { 75, "fdatasync" }, { 202, "futex" }, { 230, "clock_nanosleep" },
    { 232, "epoll_wait" }, { 247, "waitid" }, { 270, "pselect6" }, { 271, "ppoll" },
    { 281, "epoll_pwait" }, { 288, "accept4" }, { 16, "ioctl" }, { 26, "msync" },
    { 257, "openat" }, { 3, "close" }, { 89, "readlink" }, { 4, "stat" }, { 5, "fstat" },
    { 262, "newfstatat" }, { 9, "mmap" }, { 11, "munmap" }, { 441, "epoll_pwait2" },
};
#elif defined(__aarch64__)
static const sysname SYS[] = {
    { 63, "read" }, { 64, "write" }, { 67, "pread64" }, { 68, "pwrite64" }, { 65, "readv" },
    { 66, "writev" }, { 72, "pselect6" }, { 73, "ppoll" }, { 124, "sched_yield" },
    { 101, "nanosleep" }, { 202, "accept" }, { 203, "connect" }, { 206, "sendto" },
    { 207, "recvfrom" }, { 211, "sendmsg" }, { 212, "recvmsg" }, { 260, "wait4" },
    { 82, "fsync" }, { 83, "fdatasync" }, { 98, "futex" }, { 115, "clock_nanosleep" },
    { 22, "epoll_pwait" }, { 95, "waitid" }, { 242, "accept4" }, { 29, "ioctl" },
    { 227, "msync" }, { 56, "openat" }, { 57, "close" }, { 79, "newfstatat" },
    { 80, "fstat" }, { 222, "mmap" }, { 215, "munmap" }, { 441, "epoll_pwait2" },
};
#else
static const sysname SYS[] = { { -1, "" } };
#endif

/* The interned "[name]" of system call nr (GIL not needed). */
static uint32_t sys_id(long nr)
{
    if (nr < 0 || nr >= (long)(sizeof S.sys_ids / sizeof S.sys_ids[0]))
        return 0;
    if (!S.sys_ids[nr]) {
        char buf[48];
        const char *name = NULL;
        for (size_t i = 0; i < sizeof SYS / sizeof SYS[0]; i++)
            if (SYS[i].nr == nr)
                name = SYS[i].name;
        if (name)
            snprintf(buf, sizeof buf, "[%s]", name);
        else
            snprintf(buf, sizeof buf, "[syscall %ld]", nr);
        S.sys_ids[nr] = prism_name(buf);
    }
    return S.sys_ids[nr];
}

/* "running", or "NR args..." (blocked in a system call), or "-1 ..."
 * (blocked elsewhere): the thread's state as the kernel sees it now. */
static void read_state(known *k)
{
    k->flags = 0;
    k->sys_id = 0;
    if (k->fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%llu/syscall", (unsigned long long)k->tid);
        k->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (k->fd < 0)
            return;
    }
    char buf[128];
    ssize_t n = pread(k->fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return;
    buf[n] = '\0';
    if (!strncmp(buf, "running", 7)) {
        k->flags = PRISM_STACK_RUNNING;
        return;
    }
    char *end;
    long nr = strtol(buf, &end, 10);
    if (end != buf && nr >= 0)
        k->sys_id = sys_id(nr);
}

/* ---- names of frames (GIL held) ---------------------------------------- */

static void cache_clear(void)
{
    for (size_t i = 0; i < CACHE_SLOTS; i++)
        Py_CLEAR(S.cache[i].code);
    S.ncache = 0;
}

static const char *attr_utf8(PyObject *o, const char *name, PyObject **keep)
{
    *keep = PyObject_GetAttrString(o, name);
    if (!*keep || !PyUnicode_Check(*keep)) {
        PyErr_Clear();
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8AndSize(*keep, NULL);
    if (!s)
        PyErr_Clear();
    return s;
}

/* frame_id's answers for a frame of PRISM's own, left out of the stack: a
 * wrapper, or the `python -m prism` launcher (its frames and those above
 * it, runpy's: the stack starts at the program's own <module>, as when it
 * runs as `python train.py`) */
#define OWN_FRAME UINT32_MAX
#define LAUNCHER_FRAME (UINT32_MAX - 1)

static uint32_t frame_id(PyObject *code, int line)
{
    size_t h = (((uintptr_t)code >> 4) * 0x9E3779B97F4A7C15ull ^ (size_t)line) % CACHE_SLOTS;
    for (size_t i = 0; i < CACHE_SLOTS; i++, h = (h + 1) % CACHE_SLOTS) {
        name_slot *e = &S.cache[h];
        if (!e->code)
            break;
        if (e->code == code && e->line == line)
            return e->id;
    }
    if (S.ncache >= CACHE_SLOTS * 3 / 4) {
        cache_clear();
        h = (((uintptr_t)code >> 4) * 0x9E3779B97F4A7C15ull ^ (size_t)line) % CACHE_SLOTS;
    }
    PyObject *qn, *fn;
    const char *q = attr_utf8(code, "co_qualname", &qn);
    if (!q) {
        Py_XDECREF(qn);
        q = attr_utf8(code, "co_name", &qn);
    }
    const char *f = attr_utf8(code, "co_filename", &fn);
    uint32_t id = OWN_FRAME;
    if (f && S.nown && !strncmp(f, S.own, S.nown) && !strcmp(f + S.nown, "__main__.py")) {
        id = LAUNCHER_FRAME;
    } else if (!f || !S.nown || strncmp(f, S.own, S.nown)) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s (%s:%d)", q ? q : "?", f ? f : "?", line);
        id = prism_name(buf);
    }
    Py_XDECREF(qn);
    Py_XDECREF(fn);
    if (!id)
        return 0;
    while (S.cache[h].code)
        h = (h + 1) % CACHE_SLOTS;
    Py_INCREF(code);
    S.cache[h] = (name_slot){ code, line, id };
    S.ncache++;
    return id;
}

/* ---- threads ----------------------------------------------------------- */

static known *thread_of(unsigned long ident)
{
    for (size_t i = 0; i < S.nk; i++)
        if (S.k[i].ident == ident)
            return &S.k[i];
    if (S.nk == MAX_THREADS)
        return NULL;
    /* its OS id from threading._active[ident].native_id */
    PyObject *key = PyLong_FromUnsignedLong(ident), *t = NULL, *nid = NULL;
    unsigned long long tid = 0;
    if (key && S.active)
        t = PyDict_GetItemWithError(S.active, key);       /* borrowed */
    if (t)
        nid = PyObject_GetAttrString(t, "native_id");
    if (nid && PyLong_Check(nid))
        tid = PyLong_AsUnsignedLongLong(nid);
    Py_XDECREF(nid);
    Py_XDECREF(key);
    if (PyErr_Occurred())
        PyErr_Clear();
    if (!tid || tid == (unsigned long long)-1)
        return NULL;
    known *k = &S.k[S.nk++];
    *k = (known){ .ident = ident, .tid = tid, .fd = -1 };
    return k;
}

static void forget_gone(void)
{
    size_t j = 0;
    for (size_t i = 0; i < S.nk; i++) {
        if (S.k[i].seen) {
            S.k[j++] = S.k[i];
        } else if (S.k[i].fd >= 0) {
            close(S.k[i].fd);
        }
    }
    S.nk = j;
}

/* One pass, GIL held. */
static void pass(void)
{
    PyObject *d = PyObject_CallNoArgs(S.current_frames);
    if (!d || !PyDict_Check(d)) {
        Py_XDECREF(d);
        PyErr_Clear();
        return;
    }
    uint64_t ticks = prism__now();
    S.out_ticks = ticks;
    S.nout = 0;
    for (size_t i = 0; i < S.nk; i++)
        S.k[i].seen = false;
    PyObject *key, *frame;
    Py_ssize_t pos = 0;
    uint32_t ids[MAX_FRAMES + 1];
    while (PyDict_Next(d, &pos, &key, &frame)) {
        unsigned long ident = PyLong_AsUnsignedLong(key);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            continue;
        }
        known *k = thread_of(ident);
        if (!k)
            continue;
        k->seen = true;
        if (!k->stream && S.passes >= k->retry) {
            k->stream = prism__stack_stream(k->tid);
            k->retry = (uint32_t)S.passes + RETRY_PASSES;
        }
        if (!k->stream)
            continue;
        /* innermost first into ids[], then reversed */
        uint32_t n = 0, flags = k->flags;
        PyObject *f = frame;
        Py_INCREF(f);
        while (f && f != Py_None) {
            if (n == MAX_FRAMES - 1) {
                flags |= PRISM_STACK_TRUNCATED;
                break;
            }
            PyCodeObject *code = PyFrame_GetCode((PyFrameObject *)f);
            int line = PyFrame_GetLineNumber((PyFrameObject *)f);
            uint32_t id = code ? frame_id((PyObject *)code, line) : 0;
            Py_XDECREF(code);
            if (id == LAUNCHER_FRAME)
                break;
            if (id && id != OWN_FRAME && id != LAUNCHER_FRAME)
                ids[n++] = id;
            PyObject *back = PyObject_GetAttr(f, S.f_back);
            Py_DECREF(f);
            f = back;
        }
        Py_XDECREF(f);
        if (PyErr_Occurred())
            PyErr_Clear();
        if (!n)
            continue;
        for (uint32_t a = 0, b = n - 1; a < b; a++, b--) {
            uint32_t x = ids[a];
            ids[a] = ids[b];
            ids[b] = x;
        }
        if (k->sys_id && !(flags & PRISM_STACK_RUNNING)) {
            ids[n++] = k->sys_id;
            flags |= PRISM_STACK_SYSCALL;
        }
        if (S.nout + 3 + n <= sizeof S.out / sizeof S.out[0]) {
            S.out[S.nout++] = k->stream;
            S.out[S.nout++] = flags;
            S.out[S.nout++] = n;
            memcpy(S.out + S.nout, ids, n * sizeof *ids);
            S.nout += n;
        }
    }
    Py_DECREF(d);
    forget_gone();
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The next due time after a pass due at *next: one period on, or the first
 * slot of the schedule after now when the pass was later than that (a
 * burst of passes catching up would each wait for the GIL and be taken at
 * the first moment it came free). */
static void next_due(struct timespec *next, uint64_t period_ns)
{
    uint64_t due = (uint64_t)next->tv_sec * 1000000000u + (uint64_t)next->tv_nsec + period_ns;
    uint64_t now = mono_ns();
    if (due <= now)
        due += (now - due) / period_ns * period_ns + period_ns;
    next->tv_sec = (time_t)(due / 1000000000u);
    next->tv_nsec = (long)(due % 1000000000u);
}

/* The time this thread has spent runnable but not running (ns, the second
 * field of /proc/thread-self/schedstat); 0 when unreadable. */
static uint64_t queued_ns(int fd)
{
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    strtoull(buf, &end, 10);
    return strtoull(end, NULL, 10);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    /* one thread state for the thread's life (PyGILState_Ensure per pass
     * would make and free one every time), the GIL released between passes */
    PyGILState_STATE g = PyGILState_Ensure();
    PyThreadState *ts = PyEval_SaveThread();
    int sched = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next_due(&next, S.period_ns);
        pthread_mutex_lock(&S.mu);
        while (!S.stop) {
            int rc = pthread_cond_timedwait(&S.cv, &S.mu, &next);
            if (rc == ETIMEDOUT)
                break;
        }
        bool stop = S.stop;
        pthread_mutex_unlock(&S.mu);
        if (stop || !prism_recording())
            break;
        for (size_t i = 0; i < S.nk; i++)       /* outside the GIL */
            read_state(&S.k[i]);
        /* The wait for the GIL says what the program was doing: ~0 when no
         * thread held it (the stacks are where the threads were when the
         * pass was due); the switch interval when one ran Python all along
         * (CPython asks it to drop the GIL then); in between when one ran
         * Python until a call that released it (the stack read is at that
         * call, not where the thread was): the analysis weighs by it.  The
         * time this thread was woken but waited for a CPU is not time the
         * GIL was held: on a busy machine a thread that released the GIL
         * for a short call is still there when the sampler runs at last. */
        uint64_t q0 = queued_ns(sched), asked = mono_ns();
        PyEval_RestoreThread(ts);
        uint64_t t0 = mono_ns();
        S.out_wait = t0 - asked;
        pass();
        uint64_t held = mono_ns() - t0;
        ts = PyEval_SaveThread();
        S.out_queued = queued_ns(sched) - q0;
        for (size_t i = 0; i + 3 <= S.nout;) {      /* outside the GIL */
            uint32_t n = S.out[i + 2];
            if (prism__stack_put(S.out[i], S.out_ticks, S.out[i + 1], S.out + i + 3, n,
                                 S.out_wait, S.out_queued))
                S.samples++;
            i += 3 + n;
        }
        S.nout = 0;
        S.passes++;
        S.hold_sum += held;
        S.wait_sum += S.out_wait;
        if (held > S.hold_max)
            S.hold_max = held;
    }
    if (sched >= 0)
        close(sched);
    PyEval_RestoreThread(ts);
    PyGILState_Release(g);
    return NULL;
}

/* The sampler's own thread condition variable uses CLOCK_MONOTONIC. */
static int cv_monotonic(bool fresh)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) || pthread_condattr_setclock(&a, CLOCK_MONOTONIC))
        return -1;
    if (fresh)          /* a forked child: the parent's waiter is not here */
        memset(&S.cv, 0, sizeof S.cv);
    else
        pthread_cond_destroy(&S.cv);
    int rc = pthread_cond_init(&S.cv, &a);
    pthread_condattr_destroy(&a);
    return rc;
}

static void after_fork_child(void)
{
    /* the thread is not in the child: forget it, sample nothing there;
     * its mutex and condition variable may be held or waited on: new ones
     * (destroying a condition variable with a waiter blocks forever) */
    memset(&S.mu, 0, sizeof S.mu);
    pthread_mutex_init(&S.mu, NULL);
    cv_monotonic(true);
    S.running = false;
    S.stop = false;
}

/* The rate: PRISM_STACK_HZ, else 100; 0 or anything unreadable below 1: off. */
static double env_hz(void)
{
    const char *v = getenv("PRISM_STACK_HZ");
    if (!v || !*v)
        return 100;
    char *end;
    double hz = strtod(v, &end);
    if (end == v || *end || !(hz >= 0) || hz > 1000) {
        fprintf(stderr, "prism: PRISM_STACK_HZ=%s is not a rate in 0..1000: stacks at 100 Hz\n",
                v);
        return 100;
    }
    return hz;
}

double prism_py_stack_hz(PyObject *config)
{
    double hz = env_hz();
    PyObject *v = config ? PyDict_GetItemString(config, "stack_hz") : NULL;
    if (v) {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            return -1;
        if (!(x >= 0) || x > 1000) {
            PyErr_SetString(PyExc_ValueError, "stack_hz must be in 0..1000");
            return -1;
        }
        hz = x;
    }
    return hz;
}

void prism_py_stacks_want(double hz)
{
    if (hz >= 1)
        prism__stacks_wanted = true;
}

/* The directory of the prism package ("/.../prism/") into S.own: its
 * frames (the wrappers around DataLoader's __next__, backward(),
 * optimizer.step(), the `python -m prism` launcher) are PRISM's, not the
 * program's, and are left out of the stacks.  Empty when unknown. */
static void own_dir(void)
{
    S.nown = 0;
    PyObject *name = PyUnicode_FromString("prism");
    PyObject *m = name ? PyImport_GetModule(name) : NULL;
    PyObject *file = m ? PyObject_GetAttrString(m, "__file__") : NULL;
    const char *f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8AndSize(file, NULL) : NULL;
    const char *slash = f ? strrchr(f, '/') : NULL;
    if (slash && (size_t)(slash + 1 - f) < sizeof S.own) {
        S.nown = (size_t)(slash + 1 - f);
        memcpy(S.own, f, S.nown);
    }
    Py_XDECREF(file);
    Py_XDECREF(m);
    Py_XDECREF(name);
    PyErr_Clear();
}

/* sys.getswitchinterval() as INFO stacks.switch_interval_ns: how long a
 * thread running Python keeps the GIL from a waiting sampler (the analysis
 * tells a pass that waited that long from one that found the GIL released
 * at a call).  Read once, at start. */
static void switch_interval(void)
{
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *v = sys ? PyObject_CallMethod(sys, "getswitchinterval", NULL) : NULL;
    double x = v ? PyFloat_AsDouble(v) : -1.0;
    Py_XDECREF(v);
    Py_XDECREF(sys);
    PyErr_Clear();
    if (x > 0 && x < 1000)
        prism__info_uint("stacks.switch_interval_ns", (uint64_t)(x * 1e9 + 0.5));
}

/* Start sampling at hz (GIL held); nothing when off, running or not
 * recording. */
void prism_py_stacks_start(double hz)
{
    if (hz < 1 || S.running || !prism_recording())
        return;
    static bool once;
    if (!once) {
        once = true;
        cv_monotonic(false);
        pthread_atfork(NULL, NULL, after_fork_child);
    }
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *thr = PyImport_ImportModule("threading");
    Py_CLEAR(S.current_frames);
    Py_CLEAR(S.active);
    if (!S.f_back)
        S.f_back = PyUnicode_InternFromString("f_back");
    S.current_frames = sys ? PyObject_GetAttrString(sys, "_current_frames") : NULL;
    S.active = thr ? PyObject_GetAttrString(thr, "_active") : NULL;
    Py_XDECREF(sys);
    Py_XDECREF(thr);
    own_dir();
    if (!S.f_back || !S.current_frames || !PyCallable_Check(S.current_frames) || !S.active ||
        !PyDict_Check(S.active)) {
        PyErr_Clear();
        prism__stack_end("this Python has no sys._current_frames or threading._active");
        return;
    }
    S.period_ns = (uint64_t)(1e9 / hz);
    S.stop = false;
    S.pid = getpid();
    S.passes = S.samples = S.hold_sum = S.hold_max = S.wait_sum = 0;
    switch_interval();
    char what[64];
    snprintf(what, sizeof what, "python %.0f Hz", hz);
    if (!prism__stack_begin(S.period_ns, what))
        return;
    sigset_t all, old;
    sigfillset(&all);                  /* signals stay with the program's threads */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&S.th, NULL, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        prism__stack_end("no thread for the stack sampler");
        return;
    }
    S.running = true;
}

/* Stop and join (GIL held: released while joining). */
void prism_py_stacks_stop(void)
{
    if (!S.running || S.pid != getpid())
        return;
    pthread_mutex_lock(&S.mu);
    S.stop = true;
    pthread_cond_signal(&S.cv);
    pthread_mutex_unlock(&S.mu);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(S.th, NULL);
    Py_END_ALLOW_THREADS
    S.running = false;
    char why[176];
    snprintf(why, sizeof why,
             "stopped after %llu passes, %llu samples; GIL held %.1f us a pass on average, "
             "%.1f us at most; waited for %.2f ms a pass",
             (unsigned long long)S.passes, (unsigned long long)S.samples,
             S.passes ? (double)S.hold_sum / (double)S.passes / 1e3 : 0.0,
             (double)S.hold_max / 1e3,
             S.passes ? (double)S.wait_sum / (double)S.passes / 1e6 : 0.0);
    prism__stack_end(why);
    cache_clear();
    for (size_t i = 0; i < S.nk; i++)
        if (S.k[i].fd >= 0)
            close(S.k[i].fd);
    S.nk = 0;
}

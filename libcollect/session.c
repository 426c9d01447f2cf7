/*
 * session.c - the one per-process session: start (explicit, or automatic
 * from PRISM_* variables when the library loads), shutdown at exit, fork
 * and SIGINT/SIGTERM handling.
 *
 * Signals: a handler is installed only where the program left the default
 * disposition.  It only sets a flag and writes a byte to a pipe (both
 * async-signal-safe); the writer thread then writes the last chunks and
 * the footer and re-raises the signal with its default disposition.
 * fork(): the child stops recording and never touches the parent's file.
 *
 * Faults never block or kill the host: the output is opened without
 * waiting (a FIFO with no reader would block open(2)) and must be a
 * regular file or a FIFO with a reader; SIGXFSZ, left at its default, is
 * ignored while the session records, so a file-size limit is a write
 * error (EFBIG) like a full disk.
 * Any such error warns once and recording stops (README, "Faults").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cupti.h"
#include "internal.h"

static session the_session;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ended;
static bool start_failed;               /* ended by a start that failed (warned) */
static bool hooks_installed;
static session *fork_locked;            /* the session before_fork locked */
static bool xfsz_ignored;               /* we set SIGXFSZ to SIG_IGN */

/* A worker's SIGTERM handler that was there before ours (torch's: a
 * DataLoader worker leaves quietly when its parent terminates it), called
 * with the signal's own information once the file is complete. */
static struct sigaction term_chain;
static volatile sig_atomic_t term_chained;
static siginfo_t term_info;

void pc_session_deliver(int sig)
{
    if (sig == SIGTERM && term_chained) {
        sigaction(SIGTERM, &term_chain, NULL);
        if (term_chain.sa_flags & SA_SIGINFO)
            term_chain.sa_sigaction(sig, &term_info, NULL);
        else
            term_chain.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
}

static void on_signal(int sig)
{
    session *s = prism__s;
    int saved = errno;
    /* a forked child (no writer of its own), a second signal, or a writer
     * that is gone (its output failed, or shutdown) and so will never
     * re-raise this one: the program's default, now */
    if (!s || session_forked(s) || atomic_exchange(&s->signo, sig) != 0 ||
        atomic_load(&s->writer_done)) {
        pc_session_deliver(sig);
        errno = saved;
        return;
    }
    atomic_store(&prism__on, 0);
    atomic_store(&prism__counting, 0);
    pc_session_wake(s);
    errno = saved;
}

static void on_term_info(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (info)
        term_info = *info;
    on_signal(sig);
}

/* A worker session: SIGTERM writes the file's last chunks first, then
 * goes to the handler the process had (a function of its own only). */
static void chain_term(void)
{
    struct sigaction old, sa;
    if (sigaction(SIGTERM, NULL, &old) != 0 || old.sa_handler == SIG_DFL ||
        old.sa_handler == SIG_IGN || old.sa_sigaction == on_term_info ||
        old.sa_handler == on_signal)
        return;
    term_chain = old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_term_info;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    if (sigaction(SIGTERM, &sa, NULL) == 0)
        term_chained = 1;
}

static void install_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;           /* the program handles it: leave it alone */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(sigs[i], &sa, NULL);
    }
}

/*
 * A file-size limit (RLIMIT_FSIZE) sends SIGXFSZ to the writing thread,
 * which by default kills the whole program before write() can fail.  When
 * the program left the default, ignore it while recording: write() then
 * fails with EFBIG, one warning, recording stops.  The program's own
 * writes past the limit fail the same way meanwhile (what a program that
 * ignores SIGXFSZ sees), and a program exec'd from it inherits SIG_IGN.
 */
static void xfsz_ignore(void)
{
    struct sigaction old, sa;
    if (sigaction(SIGXFSZ, NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO))
        return;                         /* the program's own choice */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    xfsz_ignored = sigaction(SIGXFSZ, &sa, NULL) == 0;
}

/* Back to the default once the library writes no more, unless the program
 * changed it meanwhile. */
static void xfsz_restore(void)
{
    struct sigaction old, sa;
    if (!xfsz_ignored || sigaction(SIGXFSZ, NULL, &old) != 0 || old.sa_handler != SIG_IGN ||
        (old.sa_flags & SA_SIGINFO))
        return;
    xfsz_ignored = false;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGXFSZ, &sa, NULL);
}

/*
 * The profile is a regular file, or a FIFO with its reader already there
 * (a stream: a slow reader then stalls the writer thread, never the
 * program's, which drops or waits by its policy; a FIFO stays O_NONBLOCK,
 * so that the writer waits in poll(2) and gives up once a stop was asked
 * and the grace is over: writer.c).  It is opened without
 * ever waiting: open(2) of a FIFO with no reader blocks, so O_NONBLOCK
 * makes it fail with ENXIO instead.  Anything else (a socket, a terminal,
 * any device, /dev/null included) is refused before it is opened when it
 * exists already, as opening a device can have effects of its own; the
 * type is checked again on the descriptor, and a regular file truncated
 * only then.  -1 after one warning.
 */
/*
 * A new regular file is made under a hidden name in the same directory
 * (".NAME.PID.N.part") and renamed to its own once the header is in it
 * (show_output), so that a program killed at any moment leaves a readable
 * profile or none, never an empty file under the profile's name.  An
 * existing FIFO or a symbolic link is opened as it is.  -1 with errno.
 */
static int open_hidden(session *s)
{
    const char *slash = strrchr(s->output, '/');
    size_t dir = slash ? (size_t)(slash - s->output) + 1 : 0;
    int fd = -1;
    for (unsigned k = 0; fd < 0 && k < 16; k++) {   /* 0644 and the umask, as open(2) */
        int n = snprintf(s->hidden, sizeof s->hidden, "%.*s.%s.%ld.%u.part", (int)dir,
                         s->output, s->output + dir, (long)getpid(), k);
        if (n < 0 || (size_t)n >= sizeof s->hidden) {
            errno = ENAMETOOLONG;
            break;
        }
        fd = open(s->hidden, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        s->hidden[0] = '\0';
    return fd;
}

/* The hidden file, its header written, under its own name (0), or -1. */
static int show_output(session *s)
{
    if (!s->hidden[0])
        return 0;
    int r = rename(s->hidden, s->output);
    if (r != 0)
        unlink(s->hidden);
    s->hidden[0] = '\0';
    return r;
}

/* Whether st is the file behind the program's stdout or stderr
 * (PRISM_OUTPUT=/dev/stdout with stdout redirected to a file). */
static bool is_std_stream(const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat o;
        if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
            return true;
    }
    return false;
}

static int open_output(session *s)
{
    static const char other[] = "not a regular file or a FIFO";
    struct stat st, lst;
    const char *why = NULL;
    if (stat(s->output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        why = other;
    else if (stat(s->output, &st) == 0 && is_std_stream(&st))
        why = "it is the program's standard output or error (the profile would be mixed "
              "with what the program prints)";
    bool direct = lstat(s->output, &lst) == 0 && !S_ISREG(lst.st_mode);
    int fd = why ? -1 : !direct ? open_hidden(s)
           : open(s->output, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (!why && fd < 0)
        why = errno == ENXIO ? "a FIFO with no reader" : strerror(errno);
    if (!why && (fstat(fd, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))))
        why = other;
    if (!why && direct && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
        why = strerror(errno);
    s->fifo = !why && S_ISFIFO(st.st_mode);
    int fl = why || s->fifo ? -1 : fcntl(fd, F_GETFL);  /* a FIFO stays O_NONBLOCK */
    if (!why && !s->fifo && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
        why = strerror(errno);
    if (!why)
        return fd;
    if (fd >= 0)
        close(fd);
    if (s->hidden[0])
        unlink(s->hidden);
    s->hidden[0] = '\0';
    pc_session_warn("cannot open profile output '%s': %s; profiling disabled", s->output, why);
    return -1;
}

static void in_child(void)
{
    /* The child inherits the parent's buffers but no writer: stop here.
     * Its one thread holds no lock but the session's (before_fork); a copy
     * another thread of the parent held would never be released. */
    pthread_mutex_init(&init_lock, NULL);
    if (fork_locked)
        pthread_mutex_init(&fork_locked->lock, NULL);
    fork_locked = NULL;
    atomic_store(&prism__on, 0);
    atomic_store(&prism__counting, 0);
    pc_buffers_reset_tls();
    prism__t.th = NULL;                 /* the parent's record: a worker session */
    prism__t.skip = 0;                  /* here registers the thread anew        */
    cupti_forked();                     /* CUPTI stays the parent's */
    if (prism__s)                       /* steps.c: no getpid() per step */
        atomic_store(&prism__s->forked, 1);
}

/* fork(): the session's lock is held across it (prepare, then released in
 * the parent), so that a child's copy of the table of names is whole: a
 * worker session there goes on with it (prism_init_worker). */

static void before_fork(void)
{
    session *s = prism__s;
    fork_locked = NULL;
    if (s && s->writer_started && !session_forked(s)) {
        pthread_mutex_lock(&s->lock);
        fork_locked = s;
    }
}

static void after_fork_parent(void)
{
    if (fork_locked)
        pthread_mutex_unlock(&fork_locked->lock);
    fork_locked = NULL;
}

static void at_exit(void)
{
    prism_shutdown();
}

/* argv from /proc/self/cmdline, NUL-separated. */
static size_t read_argv(char *buf, size_t n, char **argv, size_t max)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    size_t argc = 0;
    for (char *p = buf; p < buf + got && argc < max; p += strlen(p) + 1)
        argv[argc++] = p;
    return argc;
}

/*
 * One file per process of a run.  A process started from a profiled one
 * (exec: a spawned DataLoader worker, a subprocess, a child interpreter)
 * inherits its PRISM_* environment, and so its output pattern: it must not
 * truncate the file its parent is writing.  Its file gets its pid before
 * the extension (train.cbor -> train.12345.cbor) when
 *   - PRISM_RUN_PID (prism-run's pid, which its program keeps) is set, not
 *     ours, and the pattern has no %p: every process of a prism-run job but
 *     the first; or
 *   - PRISM_RUN_OUTPUT, the absolute path of the file the first session of
 *     the process tree writes (set by that session, inherited below it),
 *     names the file this session would write.
 * The first session to start sets PRISM_RUN_OUTPUT (never replaced).
 */
static void absolute(const char *path, char *out, size_t n)
{
    char cwd[4096];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        snprintf(out, n, "%s", path);
    else
        snprintf(out, n, "%s/%s", cwd, path);
}

static int own_output(session *s)
{
    const char *root = getenv("PRISM_RUN_PID"), *first = getenv("PRISM_RUN_OUTPUT");
    const char *pat = s->cfg.output && *s->cfg.output ? s->cfg.output : "%p";
    char full[sizeof s->output + 4096];
    absolute(s->output, full, sizeof full);
    bool child = (root && *root && atol(root) != (long)s->pid && !strstr(pat, "%p")) ||
                 (first && !strcmp(first, full));
    if (child) {
        const char *slash = strrchr(s->output, '/');
        const char *base = slash ? slash + 1 : s->output;
        const char *dot = strrchr(base, '.');
        size_t stem = dot && dot != base ? (size_t)(dot - s->output) : strlen(s->output);
        char tmp[sizeof s->output];
        int w = snprintf(tmp, sizeof tmp, "%.*s.%ld%s", (int)stem, s->output, (long)s->pid,
                         s->output + stem);
        if (w < 0 || (size_t)w >= sizeof tmp)
            return -1;
        memcpy(s->output, tmp, (size_t)w + 1);
        absolute(s->output, full, sizeof full);
    }
    if (!first || !*first)
        setenv("PRISM_RUN_OUTPUT", full, 0);
    return 0;
}

/* names: the table to go on with (a worker's, prism_init_worker), NULL
 * for a new one; w: the worker's identity, NULL for a program's session. */
static int start(session *s, const prism_config *cfg, prism_strtab *names,
                 const prism_worker_of *w)
{
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->worker_id = w ? (int64_t)(w->id & INT64_MAX) : -1;
    if (w) {
        s->parent_pid = w->parent_pid;
        s->parent_start_ns = w->parent_start_ns;
    }
    s->fd = -1;
    s->wake_rd = s->wake_wr = -1;
    s->pid = getpid();
    s->grace_ns = pc_cfg_grace_ns();
    s->rank = pc_cfg_rank();
    s->world_size = pc_cfg_world_size();
    if (gethostname(s->host, sizeof s->host - 1) != 0)
        snprintf(s->host, sizeof s->host, "unknown");
    if (pc_cfg_expand_output(&s->cfg, s->host, s->rank, s->output, sizeof s->output) != 0 ||
        (!w && own_output(s) != 0)) {     /* a worker's file is its parent's choice */
        pc_session_warn("output path too long; profiling disabled");
        return -1;
    }
    if (s->cfg.buffer_events < 64)
        s->cfg.buffer_events = 64;
    s->buffers_max = ((size_t)s->cfg.buffer_mb << 20) /
                     ((size_t)s->cfg.buffer_events * sizeof(prism__event));
    if (s->buffers_max < 2)
        s->buffers_max = 2;
    s->next_stream = 1;
    s->names = names ? names : prism_strtab_new();
    int pfd[2];
    if (!s->names || pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
        pc_session_warn("cannot start: %s; profiling disabled", strerror(errno ? errno : ENOMEM));
        if (!names)
            prism_strtab_free(s->names);
        s->names = names;
        return -1;
    }
    s->wake_rd = pfd[0];
    s->wake_wr = pfd[1];
    xfsz_ignore();                      /* before the first write */
    s->fd = open_output(s);
    if (s->fd < 0)
        goto fail;
    pc_clock_init(s);
    char cmdline[16384], *argv[PRISM_MAX_ARGV];
    size_t argc = read_argv(cmdline, sizeof cmdline, argv, PRISM_MAX_ARGV);
    if (pc_writer_header(s, argv, argc) != 0 || show_output(s) != 0) {
        pc_session_warn("cannot write profile '%s': %s; profiling disabled", s->output,
                     strerror(errno));
        goto fail;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->space, NULL);
    if (pthread_create(&s->writer, NULL, pc_writer_main, s) != 0) {
        pc_session_warn("cannot start the writer thread; profiling disabled");
        goto fail;
    }
    s->writer_started = true;
    /* named now, not when it first runs: another copy of the library in
     * this process (inject.c) looks for it to stay off */
    pthread_setname_np(s->writer, "prism-writer");
    return 0;
fail:
    if (s->fd >= 0)
        close(s->fd);
    if (s->hidden[0])                   /* never shown: gone */
        unlink(s->hidden);
    s->hidden[0] = '\0';
    close(s->wake_rd);
    close(s->wake_wr);
    if (!names)
        prism_strtab_free(s->names);
    s->names = names;
    xfsz_restore();
    return -1;
}

static void begin_recording(const prism_config *c);

int prism_init(const prism_config *cfg)
{
    prism_config c;
    if (cfg) {
        c = *cfg;
    } else {
        prism_config_default(&c);
        prism_config_from_env(&c);
    }
    pthread_mutex_lock(&init_lock);
    if (ended) {                        /* before prism__s: it outlives shutdown */
        pthread_mutex_unlock(&init_lock);
        if (!start_failed)              /* that one said why already */
            pc_session_warn("prism_init after prism_shutdown: one session per process; ignored");
        return -1;
    }
    if (prism__s) {                     /* already running: nothing to do */
        if (!atomic_load(&prism__s->stopping))
            cupti_start(prism__s);        /* except a GPU attach still waiting */
        pthread_mutex_unlock(&init_lock);
        return 0;
    }
    if (!c.enabled) {
        pthread_mutex_unlock(&init_lock);
        return 0;
    }
    if (start(&the_session, &c, NULL, NULL) != 0) {
        ended = start_failed = true;
        pthread_mutex_unlock(&init_lock);
        return -1;
    }
    begin_recording(&c);
    pthread_mutex_unlock(&init_lock);
    return 0;
}

/*
 * A worker's session.  In a forked child the parent's session is a copy
 * that never writes: its table of names goes on here (the ids already
 * handed out, to C call sites and Python regions, keep their names), unless
 * the fork caught a thread of the parent changing it (its lock held: the
 * table may be half-written).  A spawned worker starts with no session.
 */
int prism_init_worker(const prism_config *cfg, const prism_worker_of *w)
{
    if (!cfg || !w)
        return -1;
    prism_config c = *cfg;
    c.collect_gpu_ops = false;          /* CUDA does not survive a fork */
    pthread_mutex_lock(&init_lock);
    session *s = prism__s;
    prism_strtab *names = NULL;
    if (s && !session_forked(s) && !ended) {
        pthread_mutex_unlock(&init_lock);
        pc_session_warn("this process records to '%s' already; it is not recorded as worker %llu "
                        "of process %llu", s->output, (unsigned long long)w->id,
                        (unsigned long long)w->parent_pid);
        return -1;
    }
    if (s) {
        names = s->names;               /* after a shutdown here: its ids stay right */
    }
    if (!c.enabled) {
        pthread_mutex_unlock(&init_lock);
        return 0;
    }
    prism__s = NULL;
    if (start(&the_session, &c, names, w) != 0) {
        ended = start_failed = true;
        pthread_mutex_unlock(&init_lock);
        return -1;
    }
    ended = start_failed = false;
    begin_recording(&c);
    chain_term();
    pthread_mutex_unlock(&init_lock);
    return 0;
}

uint64_t prism_session_start_ns(void)
{
    session *s = prism__s;
    return s && !ended && !session_forked(s) ? s->start_unix_ns : 0;
}

/* The session just started (init_lock held): hooks, signals, recording on. */
static void begin_recording(const prism_config *c)
{
    prism__s = &the_session;
    if (!hooks_installed) {
        hooks_installed = true;
        atexit(at_exit);
        pthread_atfork(before_fork, after_fork_parent, in_child);
    }
    install_signals();
    atomic_store(&prism__on, c->collect_timing ? 1 : 0);
    cupti_start(prism__s);
    atomic_store(&prism__counting, c->collect_timing ? 1 : 0);
}

/*
 * Wait for the writer's footer, at most its grace (PRISM_SHUTDOWN_TIMEOUT_MS:
 * the writer gives up a stalled FIFO by then) and a second more for a
 * write the kernel holds (a hung disk).  False, after one warning, when it
 * did not end: the program is not kept waiting.
 */
static bool join_writer(session *s)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t ns = (uint64_t)t.tv_nsec + s->grace_ns + 1000000000u;
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    if (pthread_timedjoin_np(s->writer, NULL, &t) == 0)
        return true;
    pc_session_warn("the profile '%s' could not be finished within %llu ms (its output does not "
                    "take writes); it ends at its last complete chunk", s->output,
                    (unsigned long long)(s->grace_ns / 1000000u) + 1000u);
    return false;
}

/* A SIGINT or SIGTERM that arrived while the session was ending (the
 * writer re-raises only one that came while recording): the program's own
 * disposition now, so that no signal is lost. */
static void reraise(session *s)
{
    int sig = atomic_exchange(&s->signo, 0);
    if (!sig || !atomic_load(&s->stopping))
        return;
    pc_session_deliver(sig);
}

void prism_shutdown(void)
{
    pthread_mutex_lock(&init_lock);
    session *s = prism__s;
    if (!s || ended || session_forked(s)) {
        pthread_mutex_unlock(&init_lock);
        return;
    }
    ended = true;
    pc_step_close_at_mark(s);           /* a step left open after its work */
    atomic_store(&prism__on, 0);
    atomic_store(&prism__counting, 0);
    if (prism__t.th) {                  /* this thread's last events */
        pthread_mutex_lock(&s->lock);
        pc_buffers_hand_over(prism__t.th);
        pc_buffers_reset_tls();
        pthread_mutex_unlock(&s->lock);
    }
    atomic_store(&s->stopping, 1);
    pc_session_wake(s);
    if (s->writer_started && !join_writer(s)) {
        /* a write that never returns (a hung disk): the program exits
         * without us; the writer's state is left to the process's end */
        pthread_mutex_unlock(&init_lock);
        reraise(s);
        return;
    }
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    xfsz_restore();
    pthread_mutex_lock(&s->lock);
    pc_buffers_free_all(s);
    free(s->queue);
    s->queue = NULL;
    s->nqueue = s->qcap = 0;
    pc_stacks_free(s);
    pc_info_free(pc_info_take(s));
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&init_lock);
    reraise(s);
}

bool prism_recording(void)
{
    session *s = prism__s;
    return s && !ended && !atomic_load(&s->failed) && !session_forked(s);
}

const char *prism_output_path(void)
{
    return prism__s ? prism__s->output : NULL;
}

/* Automatic start when the library loads into a program run with PRISM_*
 * variables.  Loaded by the CUDA driver as the dependency of
 * libprism-inject.so (prism-run), it starts in InitializeInjection instead. */
__attribute__((constructor)) static void auto_init(void)
{
    const char *out = getenv("PRISM_OUTPUT"), *en = getenv("PRISM_ENABLED");
    if (cupti_loaded_by_injection())
        return;                         /* inside cuInit: InitializeInjection starts it */
    if ((out && *out) || (en && (!strcmp(en, "1") || !strcmp(en, "true"))))
        prism_init(NULL);
}

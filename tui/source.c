/*
 * source.c - see source.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ropen.h"
#include "source.h"
#include "units.h"

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void drop_profile(source *s)
{
    prism_analysis_free(s->a);
    prism_reader_free(s->r);
    s->a = NULL;
    s->r = NULL;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

/* A fresh, empty reader + analysis pair. */
static int new_profile(source *s)
{
    prism_reader_callbacks cb;
    s->a = prism_analysis_new(s->opts);
    prism_analysis_callbacks(&cb);
    s->r = s->a ? prism_reader_new(&cb, s->a) : NULL;
    prism_reader_name(s->r, s->path);  /* a .json file's error speaks of JSON */
    if (!s->a || !s->r) {
        snprintf(s->error, sizeof s->error, "%s: out of memory", s->path);
        return -1;
    }
    prism_analysis_attach(s->a, s->r);
    s->generation++;
    s->complete = false;
    s->workers_read = false;
    s->rate_n = 0;
    return 0;
}

static void watch(source *s)
{
    if (s->notify_fd < 0)
        return;
    if (s->wd_file >= 0)
        inotify_rm_watch(s->notify_fd, s->wd_file);
    s->wd_file = inotify_add_watch(s->notify_fd, s->path,
                                   IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF |
                                       IN_CLOSE_WRITE);
}

static void reader_error(source *s)
{
    const char *msg;
    uint64_t off;
    prism_reader_error(s->r, &msg, &off);
    snprintf(s->error, sizeof s->error, "%s: %s at byte %" PRIu64, s->path, msg, off);
}

/* Read from the current offset to end of file into the reader. */
static bool read_more(source *s)
{
    uint64_t before = prism_reader_input_offset(s->r);
    prism_status st = prism_reader_read_fd(s->r, s->fd);
    if (st != PRISM_OK && st != PRISM_NEED_MORE) {
        reader_error(s);
        return false;
    }
    if (prism_reader_input_offset(s->r) == before)
        return false;
    s->last_data_ns = mono_ns();
    return true;
}

static void note_rate(source *s)
{
    unsigned i = s->rate_n % 8;
    s->rate_t[i] = mono_ns();
    s->rate_ev[i] = prism_analysis_events(s->a);
    s->rate_n++;
}

/* The profile is whole (read to its end, or its footer read while
 * following): the files its worker processes wrote join it, once
 * (prism_reader_add_workers: their threads as the profile's, marked);
 * the caller refreshes the analysis. */
static void add_workers(source *s)
{
    if (s->workers_read || !s->r)
        return;
    s->workers_read = true;
    prism_reader_add_workers(s->r, s->path);
}

/* After a failure that dropped the profile: keep an empty one to show. */
static int failed(source *s)
{
    if (!s->a && new_profile(s) == 0)
        prism_analysis_refresh(s->a);
    return -1;
}

/*
 * The first read of a file, in slices: LOAD_SLICE bytes at most per read,
 * for about the budget given per step.  The partial analysis is refreshed
 * (source_sync) when the caller is about to draw or handle a key, and the
 * progress asks for a redraw at most every REFRESH_NS, or four times the
 * last refresh's cost when that is longer (it grows with the steps and
 * call paths read), so refreshing takes at most a fifth of the time.
 */
#define LOAD_SLICE (1u << 20)
#define OPEN_BUDGET_NS 100000000u       /* source_open reads this long itself */
#define UPDATE_BUDGET_NS 30000000u      /* a file replaced while followed */
#define REFRESH_NS 250000000u
#define PROGRESS_AFTER_NS 250000000u

static void end_load(source *s)
{
    s->loading = s->load_eof = false;
    free(s->buf);
    s->buf = NULL;
}

static int begin_load(source *s, off_t size)
{
    s->buf = malloc(LOAD_SLICE);
    if (!s->buf) {
        snprintf(s->error, sizeof s->error, "%s: out of memory", s->path);
        return -1;
    }
    uint64_t now = mono_ns();
    s->loading = true;
    s->load_eof = false;
    s->following = false;               /* decided when all is read */
    s->load_size = size > 0 ? (uint64_t)size : 0;
    s->load_t0 = now;
    s->load_tick_at = now + REFRESH_NS;
    return 0;
}

/* Everything was read: what the file is (complete, followed), the final
 * analysis.  0, or -1 with s->error set. */
static int finish_load(source *s)
{
    end_load(s);
    s->last_data_ns = mono_ns();
    if (prism_reader_input_offset(s->r) == 0 && s->mode == SRC_NO_FOLLOW) {
        snprintf(s->error, sizeof s->error, "%s: empty file at byte 0", s->path);
        return failed(s);
    }
    s->complete = prism_analysis_complete(s->a);
    s->following = s->mode == SRC_FOLLOW || (s->mode == SRC_AUTO && !s->complete);
    if (prism_reader_foreign(s->r))     /* a trace is written whole: read it once */
        s->following = false;
    prism_status fin = s->following ? PRISM_OK : prism_reader_finish(s->r);
    s->complete = prism_analysis_complete(s->a);
    if (fin != PRISM_OK) {
        reader_error(s);
        return failed(s);
    }
    if (!s->following || s->complete)
        add_workers(s);
    prism_analysis_refresh(s->a);
    s->stale = false;
    note_rate(s);
    watch(s);
    return 0;
}

/* Bytes the PRISM_READ_MBPS limit allows now (SIZE_MAX: no limit). */
static size_t allowed(const source *s, uint64_t now)
{
    if (s->read_mbps <= 0)
        return SIZE_MAX;
    double may = s->read_mbps * 1e6 * (double)(now - s->load_t0) / 1e9;
    double done = (double)prism_reader_input_offset(s->r);
    return may > done ? (size_t)(may - done) : 0;
}

/* The reader stopped on an error: say which, keep an empty profile. */
static int load_failed(source *s)
{
    reader_error(s);
    end_load(s);
    failed(s);
    return SRC_LOAD_FAILED | SRC_LOAD_REDRAW;
}

int source_load_step(source *s, uint64_t budget_ns)
{
    if (!s->loading)
        return 0;
    if (s->load_eof)                    /* the redraw saying so came first */
        return finish_load(s) == 0 ? SRC_LOAD_CHANGED | SRC_LOAD_REDRAW
                                   : SRC_LOAD_FAILED | SRC_LOAD_REDRAW;
    if (prism_reader_input_offset(s->r) == 0 && prism_reader_path_only(s->r, s->path)) {
        /* a format read by its path (no slices, no progress): at once */
        prism_status st = prism_reader_read_path(s->r, s->path);
        s->stale = true;
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            return load_failed(s);
        s->load_eof = true;
        return SRC_LOAD_REDRAW;
    }
    uint64_t t0 = mono_ns(), now = t0;
    do {                                /* one slice at least */
        size_t want = allowed(s, now);
        if (want == 0)
            break;
        want = want < LOAD_SLICE ? want : LOAD_SLICE;
        ssize_t got = pread(s->fd, s->buf, want, (off_t)prism_reader_input_offset(s->r));
        if (got < 0 && errno == EINTR)
            break;                      /* a signal: let the caller look */
        if (got < 0) {
            snprintf(s->error, sizeof s->error, "%s: cannot read: %s", s->path, strerror(errno));
            end_load(s);
            failed(s);
            return SRC_LOAD_FAILED | SRC_LOAD_REDRAW;
        }
        if (got == 0) {
            s->load_eof = true;
            if (prism_reader_foreign(s->r))
                return SRC_LOAD_REDRAW; /* say "building" before the long finish */
            return source_load_step(s, 0);
        }
        prism_status st = prism_reader_feed(s->r, s->buf, (size_t)got);
        s->stale = true;
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            return load_failed(s);
        now = mono_ns();
    } while (now - t0 < budget_ns);
    if (now < s->load_tick_at)
        return 0;
    s->load_tick_at = now + REFRESH_NS;
    return SRC_LOAD_REDRAW;
}

bool source_sync(source *s)
{
    if (!s->stale || !s->a)
        return false;
    uint64_t t0 = mono_ns();
    prism_analysis_refresh(s->a);
    s->stale = false;
    uint64_t cost = mono_ns() - t0;
    if (s->loading && 4 * cost > REFRESH_NS)
        s->load_tick_at = mono_ns() + 4 * cost;
    return true;
}

static void progress(source *s, uint64_t t0, bool done)
{
    uint64_t dt = mono_ns() - t0;
    double mb = (double)prism_reader_input_offset(s->r) / 1e6;
    double rate = dt ? mb * 1e9 / (double)dt : 0;
    if (done)
        fprintf(stderr, "\rprism-top: %s: read %.0f MB (%.0f MB/s); building the profile...\033[K",
                s->path, mb, rate);
    else
        fprintf(stderr, "\rprism-top: reading %s: %.0f of %.0f MB, %.0f MB/s\033[K", s->path, mb,
                (double)s->load_size / 1e6, rate);
    fflush(stderr);
    s->progress_shown = true;
}

static void progress_clear(source *s)
{
    if (s->progress_shown)
        fputs("\r\033[K", stderr);
    s->progress_shown = false;
}

int source_load_all(source *s)
{
    uint64_t t0 = mono_ns(), last = 0;
    bool tty = isatty(STDERR_FILENO);
    int r = 0;
    while (s->loading && !(r & SRC_LOAD_FAILED)) {
        uint64_t now = mono_ns();
        if (tty && now - t0 > PROGRESS_AFTER_NS && now - last > PROGRESS_AFTER_NS / 2) {
            progress(s, t0, s->load_eof);
            last = now;
        }
        r = source_load_step(s, PROGRESS_AFTER_NS / 4);
        if (s->loading && s->read_mbps > 0 && !(r & SRC_LOAD_FAILED))
            poll(NULL, 0, 10);          /* the limit: wait for the next slice */
    }
    progress_clear(s);
    source_sync(s);
    return r & SRC_LOAD_FAILED ? -1 : 0;
}

bool source_progress(const source *s, char *head, size_t hcap, char *detail, size_t dcap)
{
    if (hcap)
        head[0] = '\0';
    if (dcap)
        detail[0] = '\0';
    if (!s->loading || !s->r || !s->a)
        return false;
    uint64_t off = prism_reader_input_offset(s->r), total = s->load_size > off ? s->load_size : off;
    uint64_t events = prism_analysis_events(s->a);
    double dt = (double)(mono_ns() - s->load_t0) / 1e9;
    char done[32], all[32], ev[32], mbs[32], evs[32];
    fmt_bytes(done, sizeof done, (double)off);
    fmt_bytes(all, sizeof all, (double)total);
    fmt_count(ev, sizeof ev, (double)events);
    fmt_bytes(mbs, sizeof mbs, dt > 0 ? (double)off / dt : 0);
    fmt_count(evs, sizeof evs, dt > 0 ? (double)events / dt : 0);
    if (s->load_eof) {
        snprintf(head, hcap, "LOADING 100%%");
        snprintf(detail, dcap, "%s read, %s events: building the profile", all, ev);
    } else {
        snprintf(head, hcap, "LOADING %.0f%%", total ? 100.0 * (double)off / (double)total : 100.0);
        snprintf(detail, dcap, "%s of %s, %s events, %s/s, %s events/s", done, all, ev, mbs, evs);
    }
    return true;
}

/* Read for up to budget_ns: a small file whole (as if read at once), a
 * big one in part, refreshed; the rest goes on in source_load_step.
 * -1 when the read failed (s->error). */
static int load_briefly(source *s, uint64_t budget_ns)
{
    uint64_t t0 = mono_ns();
    while (s->loading && mono_ns() - t0 < budget_ns) {
        if (source_load_step(s, budget_ns) & SRC_LOAD_FAILED)
            return -1;
        if (s->loading && allowed(s, mono_ns()) == 0)
            poll(NULL, 0, 1);           /* PRISM_READ_MBPS */
    }
    source_sync(s);
    return 0;
}

/* Open the file if it exists now and start reading it; -1 on a hard error
 * (s->a stays usable).  The read goes on in source_load_step. */
static int try_open(source *s)
{
    struct stat st;
    int fd = pb_open_read(s->path);
    if (fd < 0) {
        if (errno == ENOENT && s->mode != SRC_NO_FOLLOW) {
            s->waiting = true;
            return 0;
        }
        snprintf(s->error, sizeof s->error, "%s: %s", s->path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(s->error, sizeof s->error, "%s: not a regular file", s->path);
        close(fd);
        return -1;
    }
    end_load(s);
    s->load_fatal = false;
    drop_profile(s);
    if (new_profile(s) != 0) {
        close(fd);
        return -1;
    }
    prism_analysis_refresh(s->a);       /* empty, but safe to show */
    s->stale = false;
    s->fd = fd;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->waiting = false;
    s->error[0] = '\0';
    if (begin_load(s, st.st_size) != 0)
        return failed(s);
    return 0;
}

int source_open(source *s, const char *path, source_mode mode, const prism_analysis_opts *opts)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->mode = mode;
    s->opts = opts;
    s->fd = -1;
    s->wd_file = s->wd_dir = -1;
    const char *mbps = getenv("PRISM_READ_MBPS");
    s->read_mbps = mbps ? atof(mbps) : 0;
    s->notify_fd = mode == SRC_NO_FOLLOW ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (s->notify_fd >= 0) {            /* creation and replacement in the directory */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        s->wd_dir = inotify_add_watch(s->notify_fd, dirname(dir),
                                      IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
    }
    if (try_open(s) != 0)
        return -1;
    s->load_fatal = true;               /* a bad file given: exit with its error */
    if (load_briefly(s, OPEN_BUDGET_NS) != 0)
        return -1;
    if (s->waiting) {                   /* an empty analysis to show meanwhile */
        if (new_profile(s) != 0)
            return -1;
        prism_analysis_refresh(s->a);
        s->following = true;
    }
    return 0;
}

void source_close(source *s)
{
    end_load(s);
    drop_profile(s);
    if (s->notify_fd >= 0)
        close(s->notify_fd);
    s->notify_fd = -1;
}

bool source_drain_notify(source *s)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    bool any = false;
    if (s->notify_fd < 0)
        return false;
    while (read(s->notify_fd, buf, sizeof buf) > 0)
        any = true;
    return any;
}

bool source_update(source *s)
{
    struct stat st;
    if (!s->following || s->paused || s->loading)
        return false;
    if (s->waiting || stat(s->path, &st) != 0) {
        if (!s->waiting)
            return false;               /* gone for a moment (being replaced) */
        uint64_t gen = s->generation;
        if (try_open(s) != 0 || s->waiting)
            return false;
        load_briefly(s, UPDATE_BUDGET_NS);
        return s->generation != gen;
    }
    bool replaced = st.st_dev != s->dev || st.st_ino != s->ino;
    bool truncated = (uint64_t)st.st_size < prism_reader_input_offset(s->r);
    if (replaced || truncated) {        /* read again: a new profile */
        if (try_open(s) != 0)
            return false;
        load_briefly(s, UPDATE_BUDGET_NS);
        return true;
    }
    if (!read_more(s))
        return false;
    s->complete = prism_analysis_complete(s->a);
    if (s->complete)
        add_workers(s);
    prism_analysis_refresh(s->a);
    note_rate(s);
    return true;
}

double source_rate(const source *s)
{
    if (s->rate_n < 2)
        return 0;
    unsigned last = (s->rate_n - 1) % 8;
    unsigned first = s->rate_n > 8 ? s->rate_n % 8 : 0;
    uint64_t dt = s->rate_t[last] - s->rate_t[first];
    uint64_t de = s->rate_ev[last] - s->rate_ev[first];
    return dt ? (double)de * 1e9 / (double)dt : 0;
}

double source_age_s(const source *s)
{
    if (!s->last_data_ns)
        return -1;
    return (double)(mono_ns() - s->last_data_ns) / 1e9;
}

/* ---- the explorer loop's timing ---- */

#define AGE_TICK_MS 1000                /* the status line's age */
#define KEY_GRACE_MS 400                /* reading waits this long after a key */

uint64_t source_now_ms(void)
{
    return mono_ns() / 1000000u;
}

bool source_may_read(const source *s, uint64_t key_ms)
{
    return s->loading && source_now_ms() - key_ms >= KEY_GRACE_MS;
}

int source_wait_ms(const source *s, uint64_t drawn_ms, uint64_t key_ms)
{
    uint64_t now = source_now_ms();
    if (s->loading && now - key_ms < KEY_GRACE_MS)
        return (int)(KEY_GRACE_MS - (now - key_ms));
    if (s->loading)
        return s->read_mbps > 0 ? 10 : 0;
    if (!s->following)
        return -1;
    uint64_t since = now - drawn_ms;
    int t = since >= AGE_TICK_MS ? 0 : (int)(AGE_TICK_MS - since);
    if (!s->paused && s->notify_fd < 0 && t > 100)
        t = 100;                        /* no inotify: poll the file */
    return t;
}

/*
 * source.c - see source.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "source.h"

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
    if (!s->a || !s->r) {
        snprintf(s->error, sizeof s->error, "%s: out of memory", s->path);
        return -1;
    }
    prism_analysis_attach(s->a, s->r);
    s->generation++;
    s->complete = false;
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

/* Read from the current offset to end of file into the reader. */
static bool read_more(source *s)
{
    uint64_t before = prism_reader_input_offset(s->r);
    prism_status st = prism_reader_read_fd(s->r, s->fd);
    if (st != PRISM_OK && st != PRISM_NEED_MORE) {
        const char *msg;
        uint64_t off;
        prism_reader_error(s->r, &msg, &off);
        snprintf(s->error, sizeof s->error, "%s: %s at byte %" PRIu64, s->path, msg, off);
        return false;
    }
    if (prism_reader_input_offset(s->r) == before)
        return false;
    s->last_data_ns = mono_ns();
    return true;
}

/*
 * The first read of a file, in blocks, with a progress line on a terminal
 * (stderr) once it takes longer than a moment: a big torch.profiler trace
 * takes seconds, and its records only arrive at the end (the importer sorts
 * and repairs first), so the line is what the user sees meanwhile.
 */
#define LOAD_BLOCK (4u << 20)
#define PROGRESS_AFTER_NS 250000000u

static void progress(source *s, uint64_t t0, off_t size, bool done)
{
    uint64_t dt = mono_ns() - t0;
    double mb = (double)prism_reader_input_offset(s->r) / 1e6;
    double rate = dt ? mb * 1e9 / (double)dt : 0;
    if (done)
        fprintf(stderr, "\rprism-top: %s: read %.0f MB (%.0f MB/s); building the profile...\033[K",
                s->path, mb, rate);
    else
        fprintf(stderr, "\rprism-top: reading %s: %.0f of %.0f MB, %.0f MB/s\033[K", s->path, mb,
                (double)size / 1e6, rate);
    fflush(stderr);
}

static bool load(source *s, off_t size)
{
    uint8_t *buf = malloc(LOAD_BLOCK);
    if (!buf)
        return read_more(s);
    uint64_t t0 = mono_ns(), last = 0;
    bool shown = false, tty = isatty(STDERR_FILENO);
    prism_status st = PRISM_OK;
    for (;;) {
        ssize_t got = pread(s->fd, buf, LOAD_BLOCK, (off_t)prism_reader_input_offset(s->r));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        st = prism_reader_feed(s->r, buf, (size_t)got);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            break;
        uint64_t now = mono_ns();
        if (tty && now - t0 > PROGRESS_AFTER_NS && now - last > PROGRESS_AFTER_NS / 2) {
            progress(s, t0, size, false);
            shown = true;
            last = now;
        }
    }
    free(buf);
    if (shown)
        progress(s, t0, size, true);
    s->progress_shown = shown;
    if (st != PRISM_OK && st != PRISM_NEED_MORE) {
        const char *msg;
        uint64_t off;
        prism_reader_error(s->r, &msg, &off);
        snprintf(s->error, sizeof s->error, "%s: %s at byte %" PRIu64, s->path, msg, off);
        return false;
    }
    s->last_data_ns = mono_ns();
    return true;
}

static void progress_clear(source *s)
{
    if (s->progress_shown)
        fputs("\r\033[K", stderr);
    s->progress_shown = false;
}

static void note_rate(source *s)
{
    unsigned i = s->rate_n % 8;
    s->rate_t[i] = mono_ns();
    s->rate_ev[i] = prism_analysis_events(s->a);
    s->rate_n++;
}

/* After a failure that dropped the profile: keep an empty one to show. */
static int failed(source *s)
{
    if (!s->a && new_profile(s) == 0)
        prism_analysis_refresh(s->a);
    return -1;
}

/* Open the file if it exists now; -1 on a hard error (s->a stays usable). */
static int try_open(source *s)
{
    struct stat st;
    int fd = open(s->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && s->mode != SRC_NO_FOLLOW) {
            s->waiting = true;
            return 0;
        }
        snprintf(s->error, sizeof s->error, "%s: cannot open: %s", s->path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(s->error, sizeof s->error, "%s: not a regular file", s->path);
        close(fd);
        return -1;
    }
    drop_profile(s);
    if (new_profile(s) != 0) {
        close(fd);
        return -1;
    }
    s->fd = fd;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->waiting = false;
    s->error[0] = '\0';
    load(s, st.st_size);
    if (s->error[0]) {
        progress_clear(s);
        return failed(s);
    }
    if (prism_reader_input_offset(s->r) == 0 && s->mode == SRC_NO_FOLLOW) {
        snprintf(s->error, sizeof s->error, "%s: empty file at byte 0", s->path);
        return failed(s);
    }
    s->complete = prism_analysis_complete(s->a);
    s->following = s->mode == SRC_FOLLOW || (s->mode == SRC_AUTO && !s->complete);
    if (prism_reader_foreign(s->r))     /* a trace is written whole: read it once */
        s->following = false;
    prism_status fin = s->following ? PRISM_OK : prism_reader_finish(s->r);
    progress_clear(s);
    s->complete = prism_analysis_complete(s->a);
    if (fin != PRISM_OK) {
        const char *msg;
        uint64_t off;
        prism_reader_error(s->r, &msg, &off);
        snprintf(s->error, sizeof s->error, "%s: %s at byte %" PRIu64, s->path, msg, off);
        return failed(s);
    }
    prism_analysis_refresh(s->a);
    note_rate(s);
    watch(s);
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
    s->notify_fd = mode == SRC_NO_FOLLOW ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (s->notify_fd >= 0) {            /* creation and replacement in the directory */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        s->wd_dir = inotify_add_watch(s->notify_fd, dirname(dir),
                                      IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE);
    }
    if (try_open(s) != 0)
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
    if (!s->following || s->paused)
        return false;
    if (s->waiting || stat(s->path, &st) != 0) {
        if (!s->waiting)
            return false;               /* gone for a moment (being replaced) */
        uint64_t gen = s->generation;
        if (try_open(s) != 0 || s->waiting)
            return false;
        return s->generation != gen;
    }
    bool replaced = st.st_dev != s->dev || st.st_ino != s->ino;
    bool truncated = (uint64_t)st.st_size < prism_reader_input_offset(s->r);
    if (replaced || truncated)
        return try_open(s) == 0;
    if (!read_more(s))
        return false;
    s->complete = prism_analysis_complete(s->a);
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

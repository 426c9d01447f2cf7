/*
 * source.h - a profile as the explorer sees it: a file, its streaming reader
 * and its analysis, kept up to date while a running job appends to it (live
 * tail).  No curses here.
 *
 * A file without a footer is followed: new bytes are read from where the
 * last read stopped and fed to the same reader and analysis (nothing is
 * re-read).  Once the profile is whole (read to its end, or its footer
 * read while following), the files of its worker processes
 * ("<path>.workers", prism_reader_add_workers) join it, once.  A file
 * that is replaced (new inode) or truncated is read again from the start;
 * a file that does not exist yet is waited for.  Change
 * notification uses inotify where available; the caller polls otherwise.
 *
 * A big file is read cooperatively: source_open reads for a moment (a
 * small file whole, so it opens as before), then the caller's loop calls
 * source_load_step between polls of the terminal; each step feeds a
 * bounded slice and, at most every ~250 ms, refreshes the partial analysis
 * so the panes show data that grows.  One thread: the analysis is never
 * read while it is written.  The end result is the analysis a one-shot
 * read gives (the reader streams; slices only cut the input).
 */
#ifndef PRISM_TUI_SOURCE_H
#define PRISM_TUI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prism/analysis.h"

typedef enum source_mode { SRC_AUTO = 0, SRC_FOLLOW, SRC_NO_FOLLOW } source_mode;

typedef struct source {  /* also "struct source" in ui.h */
    const char *path;
    source_mode mode;
    prism_reader *r;
    prism_analysis *a;          /* never NULL once opened (empty while waiting) */
    const prism_analysis_opts *opts;
    int fd;
    dev_t dev;
    ino_t ino;
    bool waiting;               /* the file does not exist (yet)          */
    bool following;             /* reading new bytes as they arrive       */
    bool paused;                /* following paused by the user           */
    bool complete;              /* a footer was read                      */
    bool workers_read;          /* its worker files joined (once whole)   */
    int notify_fd;              /* inotify, -1 when unavailable           */
    int wd_file, wd_dir;
    uint64_t generation;        /* bumped whenever `a` is replaced         */
    uint64_t last_data_ns;      /* monotonic time new bytes last arrived  */
    uint64_t rate_t[8], rate_ev[8];   /* recent (time, events) for the rate */
    unsigned rate_n;
    bool progress_shown;        /* a loading line is on stderr            */
    /* the first read of the file, in slices (source_load_step) */
    bool loading;               /* bytes are still being read             */
    bool load_eof;              /* all read: finishing on the next step   */
    bool load_fatal;            /* a failure ends the explorer (the file  */
                                /* given at open, not a live reload)      */
    uint64_t load_size;         /* file size when the read began          */
    uint64_t load_t0;           /* when it began (monotonic ns)           */
    uint64_t load_refresh_at;   /* next refresh of the partial analysis   */
    uint64_t load_tick_at;      /* next progress redraw                   */
    double read_mbps;           /* PRISM_READ_MBPS: read at most this     */
    uint8_t *buf;               /* a slice, while loading                 */
    bool stale;                 /* fed since the last refresh: source_sync */
    char error[256];            /* the last error (one line), "" if none  */
} source;

/* Open path.  Returns 0, or -1 with s->error set for a file that exists but
 * cannot be read as a profile (the caller prints it and exits 2).  A
 * missing file is not an error in follow/auto mode: s->waiting is set. */
int source_open(source *s, const char *path, source_mode mode, const prism_analysis_opts *opts);
void source_close(source *s);

/* Read what is new.  Returns true when the analysis changed (refreshed, or
 * replaced: compare s->generation).  Does nothing while s->loading. */
bool source_update(source *s);

/* Flags of source_load_step. */
enum { SRC_LOAD_REDRAW = 1,     /* the progress line changed              */
       SRC_LOAD_CHANGED = 2,    /* the analysis was refreshed: reload     */
       SRC_LOAD_FAILED = 4 };   /* s->error says why; quit if load_fatal  */

/* Read for about budget_ns (a few MB at most) while s->loading; returns
 * SRC_LOAD_* flags.  The read that reaches the end of the file finishes
 * loading (s->loading false) and refreshes the analysis. */
int source_load_step(source *s, uint64_t budget_ns);

/* Refresh the analysis if bytes were fed since the last refresh; true when
 * it did (the caller reloads its views).  Call before drawing or handling
 * a key while loading: what the getters returned before a feed is only
 * valid until it (prism/analysis.h). */
bool source_sync(source *s);

/* Read everything left (no terminal): for compare mode and tools; a
 * progress line goes to stderr when it is a terminal and this takes long.
 * 0, or -1 with s->error set. */
int source_load_all(source *s);

/* The loading line for the status bar, in two parts (the head stays when
 * the line is short of room): "LOADING 34%" and "246 MB of 724 MB, 160 M
 * events, 410 MB/s, 95 M events/s".  False (both "") when not loading. */
bool source_progress(const source *s, char *head, size_t hcap, char *detail, size_t dcap);

/* Drain pending change notifications; true if any arrived. */
bool source_drain_notify(source *s);

/* Events per second over the last few updates, and seconds since new data. */
double source_rate(const source *s);
double source_age_s(const source *s);

/* The explorer loop's timing (milliseconds of the monotonic clock).
 * source_wait_ms: how long to wait for the terminal, given when the screen
 * was last drawn and the last key came: while loading 0 (10 under
 * PRISM_READ_MBPS), or the rest of the 0.4 s after a key during which
 * reading waits (a run of keys costs one refresh of the partial analysis,
 * not one each); while following (paused or not) until the status line's
 * age changes (1 s; 100 ms polls without inotify); else -1 (no timeout).
 * 0 while following: the age is due for a redraw.  source_may_read: a
 * load step may run now. */
uint64_t source_now_ms(void);
int source_wait_ms(const source *s, uint64_t drawn_ms, uint64_t key_ms);
bool source_may_read(const source *s, uint64_t key_ms);

#endif

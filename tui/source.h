/*
 * source.h - a profile as the explorer sees it: a file, its streaming reader
 * and its analysis, kept up to date while a running job appends to it (live
 * tail).  No curses here.
 *
 * A file without a footer is followed: new bytes are read from where the
 * last read stopped and fed to the same reader and analysis (nothing is
 * re-read).  A file that is replaced (new inode) or truncated is read again
 * from the start; a file that does not exist yet is waited for.  Change
 * notification uses inotify where available; the caller polls otherwise.
 */
#ifndef PRISM_TUI_SOURCE_H
#define PRISM_TUI_SOURCE_H

#include <stdbool.h>
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
    int notify_fd;              /* inotify, -1 when unavailable           */
    int wd_file, wd_dir;
    uint64_t generation;        /* bumped whenever `a` is replaced         */
    uint64_t last_data_ns;      /* monotonic time new bytes last arrived  */
    uint64_t rate_t[8], rate_ev[8];   /* recent (time, events) for the rate */
    unsigned rate_n;
    bool progress_shown;        /* a loading line is on stderr            */
    char error[256];            /* the last error (one line), "" if none  */
} source;

/* Open path.  Returns 0, or -1 with s->error set for a file that exists but
 * cannot be read as a profile (the caller prints it and exits 2).  A
 * missing file is not an error in follow/auto mode: s->waiting is set. */
int source_open(source *s, const char *path, source_mode mode, const prism_analysis_opts *opts);
void source_close(source *s);

/* Read what is new.  Returns true when the analysis changed (refreshed, or
 * replaced: compare s->generation). */
bool source_update(source *s);

/* Drain pending change notifications; true if any arrived. */
bool source_drain_notify(source *s);

/* Events per second over the last few updates, and seconds since new data. */
double source_rate(const source *s);
double source_age_s(const source *s);

#endif

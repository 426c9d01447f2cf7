/*
 * export_scope.h - what an export keeps (--steps, --threads,
 * --min-duration), the same for every format: a quick first pass over the
 * file (its threads and steps, export_scan.c), the options resolved
 * against it (export_scope.c), and a filter that sits between the reader
 * and an export's callbacks (export_filter.c), so that the Chrome trace
 * and speedscope, which stream the events, and csv, folded and json, which
 * write the call tree of an analysis fed through the same filter, hold the
 * same events.  Internal to reports/.
 *
 * What the filter keeps:
 *   --steps A-B     the time from step A's start to step B's end (by the
 *                   steps' index): regions, marks, counters, memory and CPU
 *                   samples, GPU activity in it; a region or GPU span that
 *                   crosses an end is cut there (so it keeps its place in
 *                   the call tree); the steps A..B themselves.
 *   --threads L     the events of the threads named (a thread name, or its
 *                   OS thread id); steps, memory samples and GPU device
 *                   activity stay (they belong to no thread), CUDA API
 *                   calls only those of the threads kept.
 *   --min-duration  regions and GPU spans shorter than it (after the cut at
 *                   the window's ends) are left out; a region's children
 *                   are shorter than it, so they go with it and the call
 *                   tree stays a tree (the time of those left out counts
 *                   in their parent's self time).
 */
#ifndef PRISM_REPORTS_EXPORT_SCOPE_H
#define PRISM_REPORTS_EXPORT_SCOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "array.h"
#include "reports.h"
#include "u64map.h"
#include "prism/analysis.h"
#include "prism/profile.h"

/* ---- the first pass (export_scan.c) ---- */

typedef struct ex_thread {
    uint32_t stream;
    uint64_t os_tid;
    char *name;                 /* its last name                             */
} ex_thread;

typedef struct ex_scan {
    ex_thread *threads;         /* in the order first named                  */
    size_t nthreads, tcap;
    pb_map thread_of;           /* stream -> index                           */
    prism_step *steps;          /* every step as read                        */
    size_t nsteps, scap;
    uint32_t step_stream;       /* INFO steps.thread, 0 when none            */
    bool read;                  /* read to the end (else the export says why) */
    bool oom;
    /* ex_scan_file_train: the training thread of a file without INFO
     * steps.thread, as the analysis names it (export_lead.c) */
    struct ex_lead *lead;       /* (while reading)                           */
    bool train_known;           /* found, or found to be none                */
    bool train_found;
    uint32_t train;             /* its stream, when found                    */
} ex_scan;

/* Read path with callbacks for threads, steps and INFO only.  Never
 * fails: a file that cannot be read leaves s->read false. */
void ex_scan_file(const char *path, ex_scan *s);
/* The same, and where the file names no thread that marks its steps, its
 * training thread found from the leaf calls that begin its steps
 * (s->train_known: the streamed exports then need no analysis). */
void ex_scan_file_train(const char *path, ex_scan *s);

/* ---- the training thread without INFO steps.thread (export_lead.c) ---- */

typedef struct ex_lead ex_lead;
ex_lead *ex_lead_new(void);
void ex_lead_free(ex_lead *l);
void ex_lead_thread(ex_lead *l, const prism_thread *th);
void ex_lead_regions(ex_lead *l, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                     size_t n);
void ex_lead_steps(ex_lead *l, const prism_step *st, size_t n);
/* 1: the thread in *stream; 0: none qualifies; -1: out of memory (the
 * leaves it could not hold were lost: unknown). */
int ex_lead_result(const ex_lead *l, uint32_t *stream);
void ex_scan_free(ex_scan *s);
/* The thread of a stream, NULL when the file names none. */
const ex_thread *ex_scan_thread(const ex_scan *s, uint32_t stream);

/* ---- the options resolved (export_scope.c) ---- */

typedef struct ex_scope {
    bool active;                /* any option given: the filter runs         */
    uint64_t w0, w1;            /* the window [w0, w1); 0, UINT64_MAX: all   */
    bool steps;                 /* --steps: only steps first..last           */
    uint64_t first, last;
    bool all_threads;
    const char *threads;        /* --threads as given (borrowed), or NULL    */
    pb_map streams;             /* --threads: the streams kept               */
    uint64_t min_ns;
} ex_scope;

/* in (NULL: everything) against the scan of path: the window of the steps
 * and the streams of the threads.  false after one line on stderr
 * ("prism-top: FILE: --steps 5-9: ...") when a step range or a thread
 * matches nothing, or when out of memory. */
bool ex_scope_resolve(const char *path, const rp_export_scope *in, const ex_scan *scan,
                      ex_scope *out);
void ex_scope_free(ex_scope *sc);
/* Is the thread of this stream kept? */
bool ex_scope_thread(const ex_scope *sc, uint32_t stream);

/* The analysis of path as the filter lets it through (the tree exports,
 * and the first pass of the streamed ones when the file does not name its
 * training thread; sc NULL or not active: all of it).  NULL on failure,
 * after report_error's line on stderr unless quiet.  The analysis may
 * borrow *reader (names; NULL when it owns its own): the caller frees the
 * analysis, then the reader. */
prism_analysis *ex_analyze(const char *path, const ex_scope *sc, bool quiet,
                           prism_reader **reader);
/* The same for the first pass: the analysis of ex_filter_lean's part of
 * what sc keeps (the training thread and the steps as a whole analysis
 * finds them; nothing else is meant to be read from it). */
prism_analysis *ex_analyze_lean(const char *path, const ex_scope *sc, prism_reader **reader);

/* ---- the filter (export_filter.c) ---- */

typedef struct ex_filter ex_filter;

/* A filter passing what sc keeps on to inner (with ctx); *outer receives
 * the callbacks to create the reader with, the filter as their context.
 * NULL when out of memory.  sc is borrowed until ex_filter_free. */
ex_filter *ex_filter_new(const ex_scope *sc, const prism_reader_callbacks *inner, void *ctx,
                         prism_reader_callbacks *outer);
/* Only what names the training thread and the steps from here on: the
 * threads, regions, steps and INFO steps.thread (the first pass of the
 * streamed exports; without GPU records, samples and the INFO that asks
 * for transitions, an analysis of the rest costs half as much).  outer:
 * the callbacks ex_filter_new gave, trimmed to those. */
void ex_filter_lean(ex_filter *f, prism_reader_callbacks *outer);
/* Ran out of memory (events were lost). */
bool ex_filter_oom(const ex_filter *f);
void ex_filter_free(ex_filter *f);

#endif

/*
 * workers.h - the worker processes merged into a profile (DataLoader
 * workers, prism_reader_add_workers), in words, as a pure function (no
 * curses) so the explorer's Summary and any report say the same thing.
 *
 *     Workers   2 DataLoader workers (4 processes): threads 'worker N: ...'
 *               in Tree (t) and Timeline
 *               1 worker file damaged (what it held is shown); 3 files of
 *               another run left
 */
#ifndef PRISM_PRESENT_WORKERS_H
#define PRISM_PRESENT_WORKERS_H

#include "prism/analysis.h"

#define WORKERS_LINE 96

typedef struct workers_words {
    /* the line's parts, dropped from the end where room runs out; 0: the
     * profile has no worker threads and there is nothing to say */
    int nparts;
    char parts[3][WORKERS_LINE];
    /* notes on the worker files (damaged, of another run), 0 to 2 */
    int nnotes;
    char notes[3][WORKERS_LINE];
} workers_words;

/* The words for analysis a; rs (may be NULL) gives the notes (its
 * workers_damaged and workers_other).  ASCII only. */
void workers_words_of(const prism_analysis *a, const prism_reader_stats *rs, workers_words *w);

#endif

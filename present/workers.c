/*
 * workers.c - see workers.h.
 */
#include <stdio.h>
#include <string.h>

#include "workers.h"

/* Every worker thread is a DataLoader's: "worker N: DataLoader..." (the
 * name prism.torch gives its workers' threads). */
static bool all_dataloader(const prism_analysis *a)
{
    size_t n = prism_analysis_thread_count(a);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *colon;
        if (!prism_analysis_thread_worker(a, i, NULL, NULL))
            continue;
        prism_analysis_thread_tree(a, i, NULL, &name);
        if (!name || !(colon = strstr(name, ": ")) || strncmp(colon + 2, "DataLoader", 10))
            return false;
    }
    return true;
}

void workers_words_of(const prism_analysis *a, const prism_reader_stats *rs, workers_words *w)
{
    const prism_worker_stats *ws = prism_analysis_workers(a);
    size_t workers = ws->workers, procs = ws->processes, threads = ws->threads;
    memset(w, 0, sizeof *w);
    if (threads) {
        snprintf(w->parts[0], sizeof w->parts[0], "%zu %sworker%s (%zu process%s):", workers,
                 all_dataloader(a) ? "DataLoader " : "", workers == 1 ? "" : "s", procs,
                 procs == 1 ? "" : "es");
        snprintf(w->parts[1], sizeof w->parts[1], "threads 'worker N: ...'");
        snprintf(w->parts[2], sizeof w->parts[2], "in Tree (t) and Timeline");
        w->nparts = 3;
    }
    if (rs && rs->workers_damaged)
        snprintf(w->notes[w->nnotes++], sizeof w->notes[0],
                 "%u worker file%s damaged (what %s held is shown)", (unsigned)rs->workers_damaged,
                 rs->workers_damaged == 1 ? "" : "s", rs->workers_damaged == 1 ? "it" : "they");
    if (rs && rs->workers_other)
        snprintf(w->notes[w->nnotes++], sizeof w->notes[0], "%u file%s of another run left",
                 (unsigned)rs->workers_other, rs->workers_other == 1 ? "" : "s");
    if (rs && rs->workers_left)
        snprintf(w->notes[w->nnotes++], sizeof w->notes[0], "%u file%s past the first 65536 "
                 "not read", (unsigned)rs->workers_left, rs->workers_left == 1 ? "" : "s");
    if (!threads && w->nnotes) {
        snprintf(w->parts[0], sizeof w->parts[0], "no worker threads:");
        w->nparts = 1;
    }
}

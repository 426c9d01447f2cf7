/*
 * explore.h - the explorer's entry points, the one header of tui/ that the
 * command line (cli/) includes: open one profile, two side by side, or a
 * job; find a pane by name.  These always start curses: whether stdout is
 * a terminal (ui_want_tui) is the caller's decision, and a report is
 * written by reports/ when it is not.
 */
#ifndef PRISM_TUI_EXPLORE_H
#define PRISM_TUI_EXPLORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exit.h"
#include "prism/analysis.h"
#include "prism/job.h"

/* Run the explorer on one profile; mode: 0 auto-detect live tail, 1
 * follow, 2 do not follow (source_mode).  Returns the exit status. */
int explore_main(const char *path, int mode, const prism_analysis_opts *opts);
/* Compare two profiles side by side (compare.c in tui/). */
int explore_compare(const char *base, const char *cur, const prism_analysis_opts *opts);

/* Where the explorer opens (--pane NAME, --step INDEX: the job view's
 * Enter): pane -1 for the default (Summary). */
typedef struct explore_at {
    int pane;
    bool have_step;
    uint64_t step;              /* prism_step.index                          */
} explore_at;
int explore_main_at(const char *path, int mode, const prism_analysis_opts *opts,
                    const explore_at *at);

/* The job's report as text, of which the job view's Stragglers tab shows
 * the "Stragglers:" section (cli/ passes reports' job_write_txt). */
typedef void (*job_text_fn)(FILE *f, const prism_job *j);
/* prism-top --job FILE..., prism-top DIR, prism-top A B C...: the job
 * view.  args: the files and directories; text: see job_text_fn (NULL:
 * no findings).  Returns the exit status. */
int job_main(int n, char **args, job_text_fn text);

/* The pane whose --pane name is `name` (any case), or -1 (panes.c). */
int ui_pane_by_name(const char *name);
/* The --pane names joined by sep ("summary, tree, ..."), lower case, into
 * buf (cut at cap - 1); buf is returned. */
const char *ui_pane_names(char *buf, size_t cap, const char *sep);

/* stdin and stdout are terminals and TERM is usable (else print a
 * report). */
bool ui_want_tui(void);

#endif

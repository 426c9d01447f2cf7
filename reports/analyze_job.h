/*
 * analyze_job.h - the job report: `prism-top analyze` given several rank
 * files or a directory (analyze_job.c: loading with a progress line, the
 * text form; analyze_job_json.c: the JSON form, schema "prism.job/1" in
 * docs/JSON.md), and `analyze --summary` (summary_cmd.c).
 */
#ifndef PRISM_REPORTS_ANALYZE_JOB_H
#define PRISM_REPORTS_ANALYZE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prism/job.h"

/* What `analyze` was asked for when it reports a job. */
typedef struct job_report_opts {
    const char *output;         /* -o: NULL or "-" for the default stream    */
    bool json;                  /* --format json                             */
    bool steps;                 /* --steps: the rank x step matrix in JSON   */
    unsigned threads;           /* --threads: 0 = one per online CPU         */
} job_report_opts;

/* Does this command line name a job rather than one profile: two or more
 * files, or any directory? */
bool job_args_are_job(const char *const *args, size_t n);
/* Two files the explorer would compare that are two ranks of one job
 * instead: PRISM profiles whose headers give different ranks. */
bool job_two_ranks(const char *a, const char *b);

/* The job of args (files and directories) reported to out (or -o): each
 * file that could not be read is one line on stderr ("prism-top: FILE: MSG
 * at byte N"), and a progress line is drawn on stderr while loading when
 * stderr is a terminal.  EXIT_OK when at least one rank was read, else
 * EXIT_BADINPUT. */
int job_analyze(const char *const *args, size_t n, const job_report_opts *o, FILE *out);

/* The writers (testable without argv).  steps: include the matrix. */
void job_write_txt(FILE *f, const prism_job *j);
bool job_write_json(FILE *f, const prism_job *j, bool steps);

/* `analyze --summary [-o OUT] FILE`: FILE's rank summary (docs/SUMMARY.md)
 * to OUT (default stdout). */
int summary_cmd(const char *path, const char *output, FILE *out);

#endif

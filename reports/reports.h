/*
 * reports.h - the report writers, the one header other folders include
 * (cli/, python/, tests): the analyze report (text and JSON), the compare
 * report, a job's report and a rank's summary, the exports (a table of
 * formats), dump and convert.  No argv here: cli/ parses the command line
 * and calls these.
 *
 * Errors go to stderr as one line ("prism-top: FILE: MSG at byte N"); the
 * functions that run a whole report return an exit code (present/exit.h).
 * Internal helpers of the writers: report.h, json.h, export_trace.h.
 */
#ifndef PRISM_REPORTS_H
#define PRISM_REPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exit.h"
#include "prism/analysis.h"
#include "prism/job.h"

/* ---- loading ---- */

/* prism_analyze_file; on failure prints report_error's line and returns
 * NULL.  The caller frees the analysis (prism_analysis_free). */
prism_analysis *report_load(const char *path, const prism_analysis_opts *opts);
/* The one error line for a file that could not be read: "prism-top: FILE:
 * MSG at byte N", without the offset when nothing was read (an I/O error
 * at byte 0: "prism-top: FILE: No such file or directory"). */
void report_error(const char *path, prism_status st, const char *msg, uint64_t off);

/* ---- output ---- */

/*
 * An output destination.  A named file is written as NAME.tmp and renamed
 * over NAME by outfile_close(ok = true), so a failed run leaves no half
 * file; "-" or NULL writes to the default stream (stdout) directly.  A NAME
 * that exists and is not a regular file (/dev/null, a FIFO, a symlink) is
 * written in place: renaming over it would replace it.
 */
typedef struct outfile {
    FILE *f;
    char *path;              /* NULL: the default stream or in place         */
    char *tmp;
    bool in_place;           /* f is ours to close, no rename                */
} outfile;

/* 0 on success; -1 with one line on stderr. */
int outfile_open(outfile *o, const char *path, FILE *dflt);
/* ok: flush, check for write errors, rename into place.  !ok: remove the
 * temporary file.  Returns EXIT_OK, or EXIT_BADINPUT after one line on
 * stderr when the output could not be written. */
int outfile_close(outfile *o, bool ok);

/* Reports are not curses: "us" for microseconds, unless out is a terminal
 * whose locale is UTF-8 ("\u00b5s"). */
void report_units_for(FILE *out);

/* ---- whole reports: a file in, a report out (exit codes) ---- */

/* The analyze report of one profile (or trace) at path, to output (NULL
 * or "-": out), as text, JSON (prism.analyze/1) or one HTML page. */
enum { RP_TXT, RP_JSON, RP_HTML };
int rp_analyze_file(const char *path, const char *output, int format,
                    const prism_analysis_opts *opts, FILE *out);
/* The compare report of pb against the baseline pa, to output (NULL or
 * "-": out), as text, JSON or one HTML page (RP_*); top: how many region
 * rows the text shows (0 = all). */
int rp_compare_files(const char *pa, const char *pb, const char *output, int format,
                     size_t top, const prism_analysis_opts *opts, FILE *out);
/* `compare --gate BASE... NEW`: each BASE a file or a folder of profiles
 * (*.cbor, *.json, *.json.gz, in name order), up to RP_GATE_MAX_BASELINES
 * in all; format "txt", "markdown" or "json"; top: the rows shown beyond
 * the step and the regressions (0: all).  EXIT_OK (pass), EXIT_REGRESSED,
 * or EXIT_BADINPUT after one line on stderr. */
#define RP_GATE_MAX_BASELINES 32
int rp_gate_files(char *const *args, size_t nargs, const char *output, const char *format,
                  size_t top, const prism_gate_opts *gopts, const prism_analysis_opts *opts,
                  FILE *out);
/* Every record of a profile (dump.c), or one line per chunk, to out. */
int rp_dump_file(const char *path, bool chunks, FILE *out);
/* A PRISM profile of what the reader reads from in (a trace, or a profile:
 * rewritten), written whole or not at all to outpath (convert.c). */
int rp_convert_file(const char *in, const char *outpath);
/* path's rank summary (docs/SUMMARY.md) to output (NULL or "-": out). */
int rp_summary_file(const char *path, const char *output, FILE *out);

/* ---- the job report (analyze_job.c, analyze_job_json.c) ---- */

/* What `analyze` was asked for when it reports a job. */
typedef struct job_report_opts {
    const char *output;         /* -o: NULL or "-" for the default stream    */
    bool json;                  /* --format json                             */
    bool html;                  /* --format html                             */
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
/* The job report as one self-contained HTML page: the ranks, the
 * stragglers and where they lose their time, and the rank x step heatmap
 * (html.c). */
bool job_write_html(FILE *f, const prism_job *j);

/* ---- the writers of one analysis (testable without files) ----
 *
 * The text writers (these, job_write_txt) print every name whole and lay
 * their tables out for the line width of f: COLUMNS, else the terminal's
 * width, else 100 columns (report.h, "text layout"). */

/* The analyze report as text, and as JSON (false if the writer misfired). */
void analyze_write_txt(FILE *f, const char *path, const prism_analysis *a);
bool analyze_write_json(FILE *f, const char *path, const prism_analysis *a);
/* The analyze report as one self-contained HTML page (html.c): no network
 * requests, every name escaped; false if a writer misfired or memory ran
 * out. */
bool analyze_write_html(FILE *f, const char *path, const prism_analysis *a);
/* The compare report of b against the baseline a as one page: the runs, the
 * changes by region, new and gone findings, and b's flame graph coloured by
 * each path's change against a (html.c). */
bool compare_write_html(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c);
/* The compare report (B against the baseline A) as text, and as JSON.
 * top: how many region rows the text shows (0 = all). */
void compare_write_txt(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                       const prism_analysis *b, const prism_compare *c, size_t top);
bool compare_write_json(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c);

/* ---- exports ---- */

/*
 * What an export keeps (`--steps`, `--threads`, `--min-duration`), the same
 * in every format (export_scope.h says exactly what each keeps).  A zeroed
 * scope keeps everything.
 */
typedef struct rp_export_scope {
    bool steps;                 /* only steps first_step..last_step (index)
                                   and the time from the first's start to
                                   the last's end                           */
    uint64_t first_step, last_step;
    const char *threads;        /* "NAME|TID[,...]": only those threads'
                                   events; NULL: every thread (borrowed)     */
    uint64_t min_ns;            /* regions and GPU spans shorter are left
                                   out; 0: none                             */
} rp_export_scope;

/* The option values, checked: false with one line's reason in err ("not a
 * step range ..."), for a usage error.  Steps: "A-B" (A <= B) or "N".
 * Durations: a number and a unit, ns, us, ms or s ("50us", "1.5ms"; "0"
 * alone).  Threads: names or OS thread ids, by commas, none empty. */
bool rp_scope_parse_steps(const char *s, uint64_t *first, uint64_t *last, char *err,
                          size_t errlen);
bool rp_scope_parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen);
bool rp_scope_parse_threads(const char *s, char *err, size_t errlen);

/* The exports.  chrome-trace streams the file itself (no analysis) and
 * returns EXIT_OK or EXIT_BADINPUT after one line on stderr; the others
 * return false only when out of memory. */
int export_chrome_trace(const char *path, FILE *out);
/* The same, the error's words (msg) and byte offset returned instead of
 * printed (prism.export in Python). */
int export_chrome_trace_msg(const char *path, FILE *out, char *msg, size_t msglen,
                            uint64_t *offset);
/* speedscope's file format (export_speedscope.c), streamed from the file
 * like chrome-trace: EXIT_OK or EXIT_BADINPUT after one line on stderr. */
int export_speedscope(const char *path, FILE *out);
/* Both, keeping what scope keeps (NULL: everything). */
int export_chrome_trace_scoped(const char *path, const rp_export_scope *scope, FILE *out);
int export_speedscope_scoped(const char *path, const rp_export_scope *scope, FILE *out);
bool export_csv(FILE *f, const prism_analysis *a);
/* Folded stacks "a;b;c SELF_NS" (export_folded_unit with 1 ns). */
bool export_folded(FILE *f, const prism_analysis *a);
/* Folded stacks "a;b;c VALUE", VALUE the self time in units of unit_ns
 * nanoseconds (1, 1000, 1000000) rounded to an integer so that the running
 * sum stays the rounded running sum of the exact times (the total is the
 * rounded total); stacks whose value rounds to 0 are left out. */
bool export_folded_unit(FILE *f, const prism_analysis *a, uint64_t unit_ns);
bool export_json(FILE *f, const char *path, const prism_analysis *a);

/*
 * The export formats, one table (export.c): `prism-top export --format`,
 * its usage text and errors, and prism.export in Python are made from it.
 * A new format: its writer file defines a const rp_export_format, and
 * export.c's table gets one line (an extern and the pointer).
 */
typedef struct rp_export_in {
    const char *path;           /* the file, as named by the user            */
    const prism_analysis *a;    /* NULL for a format that streams (already
                                   filtered by scope for one that does not) */
    uint64_t unit_ns;           /* --unit: 1, 1000 or 1000000 (has_unit)     */
    const rp_export_scope *scope;   /* NULL: everything                    */
} rp_export_in;

typedef struct rp_export_format {
    const char *name;           /* --format NAME                             */
    const char *alias;          /* another name it answers to, or NULL       */
    /* the usage text's lines after "  --format NAME  ", each continuation
     * line indented to column 25, ending in a newline */
    const char *description;
    bool streams;               /* reads in->path itself, no analysis        */
    bool has_unit;              /* takes --unit ns|us|ms                     */
    /* Writes to out.  EXIT_OK; EXIT_BADINPUT after one line on stderr
     * (streams) or when out of memory (not said: the caller says it). */
    int (*write)(FILE *out, const rp_export_in *in);
} rp_export_format;

/* The format named name (or its alias), NULL if none.  Borrowed, static. */
const rp_export_format *rp_export_find(const char *name);
/* The i-th format in the table's order (NULL past the end). */
const rp_export_format *rp_export_at(size_t i);
/* The export of path in fmt to output (NULL or "-": out); unit_ns: the
 * unit of a has_unit format's values (1 ns unless --unit); scope: what it
 * keeps (NULL: everything).  A step range or thread that matches nothing
 * in the file is one line on stderr and EXIT_BADINPUT, before any output. */
int rp_export_file(const char *path, const rp_export_format *fmt, uint64_t unit_ns,
                   const rp_export_scope *scope, const char *output, FILE *out);
/* The names joined by sep ("chrome-trace, speedscope, ...") into buf
 * (cut at cap - 1); buf is returned. */
const char *rp_export_names(char *buf, size_t cap, const char *sep);

#endif

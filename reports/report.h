/*
 * report.h - what the report commands (analyze, compare, export) share:
 * option parsing, loading a profile with the one-line error convention,
 * output files that appear only when complete, call paths as text.
 */
#ifndef PRISM_TUI_REPORT_H
#define PRISM_TUI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jsonw.h"
#include "prism/analysis.h"
#include "u64map.h"

/* ---- options ---- */

/*
 * Match argv[*i] against a value option: "-o X", "--output X",
 * "--output=X" (short may be NULL).  Returns 1 and sets *val (advancing *i
 * past a separate value), 0 when argv[*i] is not this option, -1 when the
 * value is missing (one line on stderr already printed, naming cmd).
 */
int opt_value(const char *cmd, int argc, char **argv, int *i, const char *shrt,
              const char *lng, const char **val);
/* "-h" or "--help". */
bool opt_is_help(const char *arg);
/* A finite number >= 0; false (one line on stderr) otherwise. */
bool opt_nonneg(const char *cmd, const char *opt, const char *s, double *out);

/* ---- loading ---- */

/* prism_analyze_file; on failure prints report_error's line and returns
 * NULL. */
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

/* ---- text ---- */

/* A growable string; never NULL after sb_init.  On allocation failure the
 * text is cut short and sb->oom is set. */
typedef struct strbuf {
    char *s;
    size_t len, cap;
    bool oom;
} strbuf;

void sb_init(strbuf *b);
void sb_free(strbuf *b);
void sb_clear(strbuf *b);
void sb_putn(strbuf *b, const char *s, size_t n);
void sb_puts(strbuf *b, const char *s);

/*
 * The call path of a node, root first, names joined by sep ("step/forward").
 * With sanitize, sep inside a name becomes ':', a C0 control or DEL a
 * space, and the rest a terminal would interpret (C1 and bidi controls,
 * invalid UTF-8) is escaped (escape.h: "\u202e", "\xff"), for the folded
 * format, where ';' and newlines are syntax.  Without, names are raw (for
 * JSON, which escapes itself; text writers escape with esc_str()).
 */
void report_path(const prism_tree *t, uint32_t node, char sep, bool sanitize, strbuf *out);

/* Pre-order walk of a tree: the node after `n` (PRISM_NO_NODE at the end);
 * start with t->first_root. */
uint32_t report_next(const prism_tree *t, uint32_t n);

/* Names of GPU enums: "HtoD", "pinned". */
const char *report_copy_kind(uint32_t k);
const char *report_mem_kind(uint32_t k);

/* Figures in the one style of present/units.h, right-aligned in width
 * columns (0: as is); buf is returned.  A signed change ("+1.2 ms",
 * "-141.2 ms"); a count ("1304", "12.3 k"). */
const char *report_ns(char *buf, size_t cap, double ns, int width);
const char *report_ns_signed(char *buf, size_t cap, double ns, int width);
const char *report_count(char *buf, size_t cap, double n, int width);
/* Reports are not curses: "us" for microseconds, unless out is a terminal
 * whose locale is UTF-8 ("\u00b5s"). */
void report_units_for(FILE *out);

/* ns as milliseconds; bytes as MB (2^20). */
static inline double ns_ms(double ns) { return ns / 1e6; }
static inline double bytes_mb(double b) { return b / 1048576.0; }

/* A name from a profile escaped (escape.h) and cut to width bytes with
 * "..." (at most cap - 1); always written to buf, which is returned. */
const char *report_fit(const char *s, size_t width, char *buf, size_t cap);


/* ---- the writers behind the commands (testable without argv) ---- */

/* The analyze report as text, and as JSON (false if the writer misfired). */
void analyze_write_txt(FILE *f, const char *path, const prism_analysis *a);
bool analyze_write_json(FILE *f, const char *path, const prism_analysis *a);
/* The compare report (B against the baseline A) as text, and as JSON.
 * top: how many region rows the text shows (0 = all). */
void compare_write_txt(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                       const prism_analysis *b, const prism_compare *c, size_t top);
bool compare_write_json(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c);
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
bool export_csv(FILE *f, const prism_analysis *a);
/* Folded stacks "a;b;c SELF_NS" (export_folded_unit with 1 ns). */
bool export_folded(FILE *f, const prism_analysis *a);
/* Folded stacks "a;b;c VALUE", VALUE the self time in units of unit_ns
 * nanoseconds (1, 1000, 1000000) rounded to an integer so that the running
 * sum stays the rounded running sum of the exact times (the total is the
 * rounded total); stacks whose value rounds to 0 are left out. */
bool export_folded_unit(FILE *f, const prism_analysis *a, uint64_t unit_ns);
bool export_json(FILE *f, const char *path, const prism_analysis *a);
/* A JSON report on f: the writer (on the heap: it is large) with the
 * top-level object begun and its "schema" member written; NULL when out of
 * memory.  report_json_end() closes the object, finishes the document and
 * frees the writer: false if the writer was misused. */
pb_json *report_json_begin(FILE *f, unsigned indent, const char *schema);
bool report_json_end(pb_json *w);
/* "threads": [...], one object per thread of a: stream, name, its tree's
 * total time under ns_key, node count, then what more(w, its tree) writes
 * (more may be NULL; the tree may be NULL). */
void report_json_threads(pb_json *w, const prism_analysis *a, const char *ns_key,
                         void (*more)(pb_json *w, const prism_tree *t));
/* A nanosecond (or byte) figure held as a double: an integer, or null
 * (not finite, negative, or past uint64). */
void report_json_kns(pb_json *w, const char *key, double v);
/* "header": {...} and "reader": {...} members, shared by the JSON schemas. */
void report_json_header(pb_json *w, const prism_header *h);
void report_json_reader(pb_json *w, const prism_analysis *a);
/* One bottleneck object; its path is looked up in t (the tree of the
 * analysis it came from). */
void report_json_bottleneck(pb_json *w, const prism_bottleneck *b, const prism_tree *t,
                            strbuf *path);

#endif

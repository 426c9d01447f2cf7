/*
 * report.h - what the report writers share (internal to reports/; other
 * folders include reports.h, which this includes): call paths as text,
 * figures, JSON helpers.
 */
#ifndef PRISM_TUI_REPORT_H
#define PRISM_TUI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jsonw.h"
#include "strbuf.h"
#include "reports.h"
#include "prism/analysis.h"
#include "u64map.h"

/* ---- text ---- */


/*
 * The call path of a node, root first, names joined by sep ("step/forward").
 * With sanitize, sep inside a name becomes ':', a C0 control or DEL a
 * space, and the rest a terminal would interpret (C1 and bidi controls,
 * invalid UTF-8) is escaped (escape.h: "\u202e", "\xff"), for the folded
 * format, where ';' and newlines are syntax.  Without, names are raw (for
 * JSON, which escapes itself; text writers escape with esc_str()).
 */
void report_path(const prism_tree *t, uint32_t node, char sep, bool sanitize, pb_buf *out);

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
/* ns as milliseconds; bytes as MB (2^20). */
static inline double ns_ms(double ns) { return ns / 1e6; }
static inline double bytes_mb(double b) { return b / 1048576.0; }

/* ---- text layout (columns.c) ----
 *
 * A text report never cuts a name from a profile (a region, path, kernel,
 * thread or host name) nor a figure.  Its tables start from fixed name
 * columns; a column is widened to the longest name shown that fits in the
 * line, and a name wider than that takes a line of its own, its figures on
 * the next line in their columns:
 *
 *     3  layers.11                             6.30 ms         30   11.1%     30.0 us
 *     4  encoder.layers.11.self_attn.in_proj_and_scaled_dot_product (backward)
 *                                              6.27 ms         30   11.1%     6.27 ms
 */

/* The width a report writes with COLUMNS unset and no terminal (a pipe, a
 * file). */
#define REPORT_WIDTH_DEFAULT 100

/* The line width of a text report written to f: COLUMNS when it is a
 * positive integer (digits only), else the terminal's width when f is a
 * terminal (TIOCGWINSZ), else REPORT_WIDTH_DEFAULT. */
int report_width(FILE *f);

/* Columns a name from a profile takes once escaped (escape.h): an escape
 * counts its characters ("\x1b": 4), any other character 1. */
int report_cols(const char *s);

/* A name column col wide, widened for a name w columns wide when the name
 * fits in room (the line width less the row's other columns).  A wider
 * name leaves the column as it is: report_cell gives it a line. */
static inline int report_widen(int col, int room, int w)
{
    return w > col && w <= room ? w : col;
}

/* The name s of a table row, escaped and whole, padded to col columns;
 * lead: the columns the row printed before it.  A name wider than col ends
 * its line, and the next line is blank up to lead + col columns, where the
 * row's figures go on. */
void report_cell(FILE *f, const char *s, int lead, int col);

/* A C++ symbol (a demangled kernel name) as a text report shows it: whole
 * up to REPORT_SYMBOL_MAX bytes; longer, what lies inside three levels of
 * brackets (<> template arguments, () parameters) becomes "...", then
 * inside two, then inside one, until it fits; what is still too long is
 * cut, ending "...".  Returns s, or
 * buf (cap bytes, at least REPORT_SYMBOL_MAX + 1) holding the short form.
 * JSON, the exports and the explorer keep the whole name. */
#define REPORT_SYMBOL_MAX 160
const char *report_symbol(const char *s, char *buf, size_t cap);


/* ---- words a page shares with the text reports ----
 *
 * The HTML pages (html.c) show these lines as the text reports word them,
 * each line of f one line of the page. */

/* analyze's Summary lines after its "Summary:" (each starts with two
 * spaces; a line's details under it with four): the file, the run, the
 * steps and what lies outside them, folded modules, workers, CPU load,
 * memory, the system readings. */
void analyze_write_summary(FILE *f, const char *path, const prism_analysis *a);
/* compare's lines on the run as a whole: the whole-run shift, own time,
 * CPU load, different load. */
void compare_write_run(FILE *f, const prism_analysis *a, const prism_analysis *b,
                       const prism_compare *c);
/* The legends of compare's table of regions (its columns) and of its
 * p-value "folded", as lines (NULL-terminated). */
extern const char *const compare_regions_legend[];
extern const char *const compare_folded_legend[];
extern const char *const compare_hooks_legend[];

/* ---- the gate's writers (gate.c) ----
 *
 * files: the baselines then the new run (nfiles >= 2), as the report names
 * them; cur: the new run's analysis; top: rows beyond the step and the
 * failures (0: all). */
void gate_write_txt(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                    const prism_gate *g, size_t top);
void gate_write_md(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                   const prism_gate *g, size_t top);
bool gate_write_json(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                     const prism_gate *g);

/* ---- JSON helpers of the writers ---- */

/* A JSON report on f: the writer (on the heap: it is large) with the
 * top-level object begun and its "schema" member written; NULL when out of
 * memory.  report_json_end() closes the object, finishes the document and
 * frees the writer: false if the writer was misused. */
pb_json *report_json_begin(FILE *f, unsigned indent, const char *schema);
bool report_json_end(pb_json *w);
/* analyze_write_json's document, compact, appended to b; max_series > 0
 * keeps at most that many steps in steps.series (the longest of each run of
 * steps.series_every, so outliers stay).  False as analyze_write_json. */
bool analyze_json_buf(pb_buf *b, const char *path, const prism_analysis *a, size_t max_series);
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
/* The file's status in words, as the text report's Status line: a trace's
 * (prism_import_status), else "complete (footer present)" or "incomplete:
 * no footer (...)".  Returns buf. */
const char *report_status(const prism_analysis *a, char *buf, size_t cap);
/* "cpu_load": who used the CPUs (prism_cpu_load), in cores; null when the
 * file says nothing. */
void report_json_cpu_load(pb_json *w, const prism_cpu_load *l);

/* The operator window (analyze_ops.c): analyze's text section (nothing
 * when the file has no window steps) and its JSON "op_window" (null). */
void analyze_ops_txt(FILE *f, const prism_analysis *a);
void analyze_ops_json(pb_json *w, const prism_analysis *a, pb_buf *path);
/* One bottleneck object; its path is looked up in t (the tree of the
 * analysis it came from). */
void report_json_bottleneck(pb_json *w, const prism_bottleneck *b, const prism_tree *t,
                            pb_buf *path);

#endif

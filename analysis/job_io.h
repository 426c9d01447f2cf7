/*
 * job_io.h - the summary reader's internal entry points (analysis/job_io.c),
 * for the loader, the tests and the fuzz target: a summary read from
 * memory, with limits a test can lower, and a field-by-field comparison.
 * Not installed; the public API is prism/job.h.
 */
#ifndef PRISM_ANALYSIS_JOB_IO_H
#define PRISM_ANALYSIS_JOB_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/job.h"

/* What a summary may hold (docs/SUMMARY.md, "Limits"). */
#define SUM_MAX_FILE    (UINT64_C(256) << 20)      /* bytes                 */
#define SUM_MAX_STEPS   ((size_t)16 << 20)
#define SUM_MAX_REGIONS ((size_t)4 * PRISM_JOB_MAX_REGIONS)
#define SUM_MAX_STRING  65536u          /* bytes between a string's quotes  */
#define SUM_MAX_TOKEN   64u             /* bytes of a number or literal     */
#define SUM_MAX_DEPTH   8u              /* the format itself needs 3        */

typedef struct sum_limits {
    uint64_t file;
    size_t steps, regions;
} sum_limits;

/* The lexical rules (job_io.c).  an_sum_uint: a JSON number (its syntax
 * checked by yajl) as an integer up to max; a negative one only when
 * neg_ok, and only -1 (*neg set).  an_sum_hex64: exactly 16 hex digits, either
 * case.  an_sum_text_ok: a decoded string is UTF-8 without U+0000 (a \u
 * escape can make a NUL or a lone surrogate).  an_sum_scan_run: the scanner in
 * front of yajl, across pieces: how many bytes of p[0..n) keep every string
 * (bytes between the quotes) within SUM_MAX_STRING and every number or
 * literal within SUM_MAX_TOKEN; *over names the limit when fewer than n. */
bool an_sum_uint(const char *s, size_t len, bool neg_ok, uint64_t max, uint64_t *u, bool *neg);
bool an_sum_hex64(const unsigned char *s, size_t len, uint64_t *out);
bool an_sum_text_ok(const unsigned char *s, size_t len);
typedef struct sum_scan {
    bool in_str, esc;
    uint32_t str_run, tok_run;
} sum_scan;
size_t an_sum_scan_run(sum_scan *sc, const uint8_t *p, size_t n, const char **over);

/* The parser (job_parse.c): bytes in, a summary out.  new: NULL when out
 * of memory; *out is zeroed and owned by the parser until end.  feed:
 * false once an error is set (feed no more).  fail: sets an error of the
 * caller's (an I/O error), unless one is set; returns false.  end: the
 * document complete, defaults filled ("source" from source), the parser
 * freed; the status, msg and *offset as prism_rank_summary_read. */
typedef struct sum_parser sum_parser;
sum_parser *an_sum_parser_new(prism_rank_summary *out, const sum_limits *lim);
bool an_sum_parser_feed(sum_parser *r, const uint8_t *p, size_t n);
bool an_sum_parser_fail(sum_parser *r, prism_status st, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
prism_status an_sum_parser_end(sum_parser *r, const char *source, char *msg, size_t msglen,
                            uint64_t *offset);

/* Read a summary from p[0..n), fed to the parser in pieces of `piece`
 * bytes (0: 64 KiB); source: what "source" becomes when the file has none;
 * lim NULL: the limits above.  As prism_rank_summary_read otherwise: *out
 * filled on PRISM_OK, left zeroed on an error (msg, *offset). */
prism_status an_sum_read_mem(const uint8_t *p, size_t n, size_t piece, const char *source,
                          const sum_limits *lim, prism_rank_summary *out, char *msg,
                          size_t msglen, uint64_t *offset);

/* Every field of a and b equal (strings by bytes). */
bool an_sum_equal(const prism_rank_summary *a, const prism_rank_summary *b);

#endif

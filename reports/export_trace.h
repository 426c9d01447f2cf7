/*
 * export_trace.h - what the two halves of the Chrome trace writer share
 * (export_trace.c: threads, regions, marks, counters, steps and the file's
 * end; export_trace_gpu.c: memory samples and GPU records).  Internal to
 * reports/.
 */
#ifndef PRISM_REPORTS_EXPORT_TRACE_H
#define PRISM_REPORTS_EXPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "export_scope.h"
#include "outbuf.h"
#include "report.h"
#include "prism/profile.h"

#define GPU_PID_OFFSET (1u << 22)
#define API_TID_BASE 1000000000u
/* Track numbers of the profiled process: the training thread first, the
 * steps right after it, every other thread after both (speedscope orders
 * its profiles by pid and tid; Perfetto by thread_sort_index, set alike). */
#define TRAIN_TID 1u
#define STEPS_TID 2u
#define OTHER_TID_BASE 3u
#define NO_STREAM UINT32_MAX

/* An open region: written as one "X" event when it ends. */
typedef struct tframe {
    uint64_t start;             /* ns                                       */
    double kids;                /* where its last child ends, as a reader
                                   adds ts + dur (-1: none yet)            */
    uint32_t name;
} tframe;

typedef struct tstream {
    uint32_t open;              /* regions begun, not yet ended             */
    uint32_t tail_len;
    char tail[48];              /* ,"pid":P,"tid":T} ending its events      */
    uint32_t phantom;           /* frames open in the file we never began   */
    uint32_t deep;              /* frames open below PRISM_ANALYSIS_MAX_DEPTH,
                                   left out as the analysis leaves them out  */
    tframe *fr;                 /* the open frames, outermost first         */
    uint32_t cap;
    uint64_t last_ts;
    uint32_t id;                /* the stream                              */
} tstream;

/* export_outside.c: the first pass, read ahead from the file: the
 * training thread's stream as the analysis finds it (analyze's "training
 * thread", in what sc keeps; NO_STREAM when none is found or the file
 * cannot be read: the export itself then says why) and its sampled steps
 * (those sc keeps), in start order (none without a training thread or on
 * allocation failure: no time outside regions is written).  Taken from the
 * scan when the file names the thread that marks its steps (INFO
 * steps.thread, as the analysis does), else from an analysis of what sc
 * keeps.  Shared with the speedscope export. */
typedef struct trace_span {
    uint64_t start, end;
} trace_span;
typedef struct trace_first {
    uint32_t train;
    trace_span *steps;
    size_t nsteps;
} trace_first;
void trace_first_pass(const char *path, const ex_scan *scan, const ex_scope *sc,
                      trace_first *f);
void trace_first_free(trace_first *f);
/* The training thread's top level, as an export streams its regions:
 * idle is when its last root region ended (0 before the first). */
typedef struct trace_top {
    uint64_t idle;
} trace_top;
/* A root region enters at ts (its thread was at the top level): the
 * pieces of [idle, ts) inside sampled steps, each to fn. */
void trace_top_enter(const trace_first *f, trace_top *t, uint64_t ts,
                     void (*fn)(void *ctx, uint64_t a, uint64_t z), void *ctx);
/* A complete file's end at the top level: the pieces after idle. */
void trace_top_end(const trace_first *f, const trace_top *t,
                   void (*fn)(void *ctx, uint64_t a, uint64_t z), void *ctx);
/* The name they are written under, the analysis' node's. */
#define TRACE_OUTSIDE_NAME "(outside regions)"

typedef struct trace_counts {
    uint64_t enters, exits, unmatched_exits, closed_at_end, marks, counters, too_deep,
             nonfinite_counters, steps, memory, gpu, dropped, outside;
} trace_counts;

/* A string of the file as its JSON text, escaped once (id -> bytes in
 * trace.name_bytes); src: the reader's text it was made from. */
typedef struct trace_name {
    const char *src;
    uint32_t off, len;
} trace_name;

typedef struct trace {
    ob o;                       /* the output                               */
    prism_reader *r;
    uint64_t pid, gpu_pid;
    uint32_t train;             /* the training thread's stream, or NO_STREAM */
    const ex_scope *scope;      /* what is kept (otherData.scope says)      */
    trace_first first;          /* ... and its sampled steps                */
    trace_top top;              /* its top level                            */
    bool started, any_event, steps_named, gpu_named, oom;
    tstream *st;
    size_t nst, stcap;
    pb_map st_of;               /* stream -> index into st                  */
    pb_map gtrack;              /* GPU tids already named                   */
    pb_map wpid;                /* a worker thread's stream -> its process   */
    pb_map wnamed;              /* worker processes already named            */
    uint64_t last_ts;
    trace_name *names;          /* by string id, below TRACE_NAME_IDS       */
    size_t nnames;
    pb_buf name_bytes;
    pb_buf info;                /* rendered INFO entries for otherData      */
    uint64_t info_left_out;
    bool have_footer;
    prism_footer footer;
    trace_counts n;
} trace;

/* String ids with a cached escaped text (the dense table's bound). */
#define TRACE_NAME_IDS (1u << 22)
/* Bytes readable past a cached name's end (region events copy names in
 * 16-byte blocks). */
#define TRACE_NAME_SLACK 16
/* The escaped text of string id s[0..len), made once; NULL when it is not
 * cached (id past the table, or out of memory). */
const trace_name *trace_cached_name(trace *t, uint32_t id, const char *s, size_t len);

/* The separator before the next event. */
void trace_sep(trace *t);
/* ,"ts":MICROSECONDS -- exact: integer ns / 1000, the fraction's trailing
 * zeros left out ("12", "12.5", "12.345"). */
void trace_put_ts(trace *t, uint64_t ns);
/* ,"ts":..,"dur":.. of a complete ("X") event from start to end (ns): ts
 * exact, dur the longest (at most 1 ns short) whose sum with ts, as a
 * reader adds them in doubles, does not pass end (consecutive spans never
 * overlap) and, where that allows, not short of floor (the end, as a
 * reader adds it, of a span it holds; -1 for none: spans nest).  Returns
 * the sum a reader makes. */
double trace_put_span(trace *t, uint64_t start, uint64_t end, double floor);
/* A string of the file as a JSON string ("<string N>" when unknown). */
void trace_put_name(trace *t, uint32_t id);
void trace_note_ts(trace *t, uint64_t ts);
/* Metadata event: a process or thread name (text), or a sort index (num). */
void trace_meta(trace *t, const char *what, uint64_t pid, const uint64_t *tid,
                const char *key, const char *text, int64_t num);
/* The track (tid) of a CPU thread's stream. */
uint64_t trace_tid(const trace *t, uint32_t stream);

/* INFO entries, kept for otherData (export_trace_put.c). */
void trace_on_info(void *ctx, const char *key, const prism_value *v);
/* After the last event (the ob flushed): the events' array closed and
 * otherData written straight to the FILE (export_trace_put.c). */
void trace_other_data(trace *t, const char *path);

/* export_trace_gpu.c: the reader callbacks for memory samples and GPU
 * records. */
void trace_on_memory(void *ctx, const prism_memory_sample *m);
void trace_on_gpu(void *ctx, const prism_gpu_record *g, size_t n);


#endif

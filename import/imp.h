/*
 * imp.h - the torch.profiler trace importer's internals (import/): the
 * streaming JSON front end (json.c), what each Kineto / legacy event becomes
 * (kineto.c) and the backend (import.c).  The store and the build every
 * importer shares are in events.h.  docs/IMPORT.md.
 */
#ifndef PRISM_IMPORT_IMP_H
#define PRISM_IMPORT_IMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "events.h"

/* Caps on hostile JSON (events.h has the store's). */
#define IMP_MAX_DEPTH      64u          /* JSON nesting                      */
#define IMP_MAX_STRING     65536u       /* a string's bytes kept (cut after) */
#define IMP_MAX_TOKEN      1024u        /* a number or literal's bytes       */

enum { LAYOUT_NONE = 0, LAYOUT_KINETO, LAYOUT_LEGACY };

/* Event categories ("cat"); CAT_NONE: the legacy layout has none. */
enum {
    CAT_NONE = 0, CAT_CPU_OP, CAT_USER_ANNOT, CAT_PYTHON, CAT_KERNEL, CAT_MEMCPY,
    CAT_MEMSET, CAT_RUNTIME, CAT_DRIVER, CAT_SYNC, CAT_GPU_ANNOT, CAT_INSTANT,
    CAT_IGNORED, CAT_CPU_TO_CUDA, CAT_UNKNOWN
};

/* Field bits of imp_ev.have. */
enum {
    F_NAME = 1u << 0, F_PH = 1u << 1, F_CAT = 1u << 2, F_PID = 1u << 3, F_TID = 1u << 4,
    F_TS = 1u << 5, F_DUR = 1u << 6, F_CORR = 1u << 7, F_BYTES = 1u << 8,
    F_DEVICE = 1u << 9, F_STREAM = 1u << 10, F_TALLOC = 1u << 11, F_TRES = 1u << 12,
    F_DEVID = 1u << 13, F_ID = 1u << 14, F_EXTID = 1u << 15, F_BAD_TS = 1u << 16
};

/* A legacy-layout flow end (cpu_to_cuda): 's' at the launching op on a
 * CPU thread, 'f' at the kernel on a device. */
typedef struct imp_flow {
    uint64_t id;
    int64_t ts;
    uint32_t where;             /* 's': the track, 'f': the device (tid)      */
    uint32_t start;             /* 1: 's'                                     */
} imp_flow;

typedef struct imp_ev {
    uint32_t have;              /* F_* bits                                   */
    char ph;
    int cat;
    int64_t ts, dur;
    int64_t pid, tid;
    bool pid_str, tid_str;
    uint64_t corr, ext_id, id, bytes, device, stream;
    uint64_t grid[3], block[3], shared_mem, registers;
    uint64_t total_alloc, total_res;
    int64_t dev_id;
    uint32_t ngrid, nblock;
    char pidname[32];           /* a string pid, its start (legacy layout)   */
    size_t name_len, argname_len, sync_len;
    char name[IMP_NAME_CAP];
    char argname[64];           /* args.name (metadata)                      */
    char sync[32];              /* args.cuda_sync_kind                       */
} imp_ev;

typedef struct imp {
    imp_events s;               /* the store, the build, the error (first)    */

    /* input */
    bool gz, gz_done, gz_started;
    z_stream z;
    uint8_t *zout;
    uint64_t gz_pos;            /* compressed bytes inflate had taken         */
    uint64_t json_bytes;        /* JSON bytes scanned                         */
    bool json_started;
    yajl_handle y;
    bool after_end;             /* bytes after the document: ignored          */

    /* scanner (caps on strings and tokens before yajl sees them) */
    bool in_str;
    uint8_t esc;                /* escape bytes still to come                 */
    uint32_t str_run, tok_run;
    bool cutting;               /* inside a string past IMP_MAX_STRING        */
    unsigned scan_depth;        /* containers open                            */

    /* JSON structure */
    int layout;
    bool saw_events;            /* the events array was found             */
    unsigned depth;
    uint8_t role[IMP_MAX_DEPTH + 2];
    uint8_t key[IMP_MAX_DEPTH + 2];
    imp_ev ev;
    int dev_idx;                /* deviceProperties: the entry's id           */
    char dev_name[64];

    /* Kineto's own */
    imp_flow *flows;  size_t nflows, cflows;
    int64_t world_size;
    bool have_world;
    int64_t schema;             /* schemaVersion                              */
    bool have_schema;
    char trace_name[256];       /* traceName ("" : none)                      */
    char trace_id[64];          /* trace_id                                   */
    char proc_name[64];         /* the first numeric pid's process_name       */
    char script[256];           /* the outermost Python frame's file
                                   ("train.py(12): <module>": train.py)      */
    int64_t script_ts;
} imp;

/* json.c */
bool imp_json_init(imp *m);
void imp_json_free(imp *m);
/* Scan and parse JSON bytes; false on an error (m->s.e set). */
bool imp_json_feed(imp *m, const uint8_t *p, size_t n);
/* End of input: false on an error; a document cut off is not one. */
bool imp_json_finish(imp *m);

/* kineto.c */
/* The event in m->ev is complete: file it.  False only without memory. */
bool imp_store_event(imp *m);
/* Legacy layout: link kernels to their launching op through the flows
 * (an API record for each).  False only without memory. */
bool imp_link_flows(imp *m);
/* Say what the source is (events.h: producer, clock, lead entries) before
 * the build. */
void imp_kineto_source(imp *m);

#endif

/*
 * imp.h - the importer's internals (import/): the streaming JSON front end
 * (json.c), the compact event store (store.c) and the build that sorts,
 * repairs and delivers the records (build.c).  docs/IMPORT.md.
 */
#ifndef PRISM_IMPORT_IMP_H
#define PRISM_IMPORT_IMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#include "prism/import.h"
#include "prism/profile.h"
#include "array.h"
#include "errinfo.h"
#include "u64map.h"

/* Caps on hostile input. */
#define IMP_MAX_DEPTH      64u          /* JSON nesting                      */
#define IMP_MAX_STRING     65536u       /* a string's bytes kept (cut after) */
#define IMP_MAX_TOKEN      1024u        /* a number or literal's bytes       */
#define IMP_MAX_LANES      8u           /* a thread's tracks for overlaps    */
#define IMP_MAX_NEST       1024u        /* regions open at once on a track   */
#define IMP_NAME_CAP       PRISM_MAX_STRING_BYTES   /* names kept (cut after) */
#define IMP_CLIP_NS        1000         /* the trace's resolution (1 us)     */

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

/* Counters of what was repaired or left out: INFO "import.<name>". */
enum {
    C_EVENTS,           /* trace events read                                  */
    C_REGIONS,          /* CPU X events kept as regions                       */
    C_GPU,              /* kernels, copies, memsets, syncs                     */
    C_API,              /* runtime / driver calls                              */
    C_MEMORY,           /* [memory] events                                     */
    C_OVERLAP,          /* overlapping-not-nested events moved to a track      */
    C_OVERLAP_DROPPED,  /* ... beyond IMP_MAX_LANES or IMP_MAX_NEST: left out  */
    C_CLIPPED,          /* ending at most IMP_CLIP_NS after their parent: cut   */
    C_ZERO_DUR,         /* zero durations                                      */
    C_NEG_DUR,          /* negative durations (made zero)                      */
    C_UNSORTED,         /* events earlier than the previous of their thread    */
    C_MISSING,          /* events without a field they need (left out)         */
    C_UNKNOWN_CAT,      /* X events of a category not understood (left out)    */
    C_UNKNOWN_PH,       /* events of a phase not understood (left out)         */
    C_LONG_STRINGS,     /* strings cut at IMP_MAX_STRING / names at 4096       */
    C_BAD_NUMBERS,      /* numbers out of range (clamped) or not numbers       */
    C_GPU_ANNOT,        /* gpu_user_annotation ranges (not kept)               */
    C_COUNT
};

typedef struct imp_region {
    int64_t ts, end;            /* ns, trace clock                           */
    uint32_t name, track;
    uint32_t seq;               /* file order, for ties                      */
    uint16_t lane;              /* 0: the thread; 1..: overflow tracks        */
    uint16_t pad;
} imp_region;

typedef struct imp_gpu {
    int64_t start, end;
    uint64_t corr, bytes;
    uint32_t name, device;
    uint32_t stream;            /* CUDA stream; API: the track index          */
    uint32_t grid[3], block[3];
    uint32_t shared_mem, registers;
    uint8_t type, copy_kind, src_kind, dst_kind;
    uint32_t sync_type;
} imp_gpu;

typedef struct imp_mem {
    int64_t ts;
    int32_t device;             /* -1: the host                              */
    uint32_t seq;
    uint64_t allocated, reserved;
} imp_mem;

typedef struct imp_step {
    int64_t start, end;
    uint64_t index;
    uint32_t track;
} imp_step;

/* A legacy-layout flow end (cpu_to_cuda): 's' at the launching op on a
 * CPU thread, 'f' at the kernel on a device. */
typedef struct imp_flow {
    uint64_t id;
    int64_t ts;
    uint32_t where;             /* 's': the track, 'f': the device (tid)      */
    uint32_t start;             /* 1: 's'                                     */
} imp_flow;

typedef struct imp_track {
    int64_t pid, tid;           /* numbers, or a hash for a string            */
    bool pid_str, tid_str;
    int64_t last_ts;            /* unsorted input detection                   */
    char name[64];              /* from thread_name metadata, or made         */
    bool named;
    bool used;                  /* has regions or API calls                   */
    uint32_t stream;            /* PRISM stream of lane 0 (build)             */
    uint32_t lanes;             /* lanes used (build)                         */
} imp_track;

/* The one event being parsed: its fields as they arrive (any key order). */
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
    prism_reader_callbacks cb;
    void *ctx;

    /* input */
    bool gz, gz_done, gz_started;
    z_stream z;
    uint8_t *zout;
    uint64_t in_bytes;          /* bytes fed (compressed when gz)             */
    uint64_t gz_pos;            /* compressed bytes inflate had taken         */
    uint64_t json_bytes;        /* JSON bytes scanned                         */
    bool json_started;
    yajl_handle y;
    bool complete;              /* the document closed                        */
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

    /* store */
    prism_strtab *names;
    imp_region *reg;  size_t nreg, creg;
    imp_gpu *gpu;     size_t ngpu, cgpu;
    imp_mem *mem;     size_t nmem, cmem;
    imp_step *steps;  size_t nsteps, csteps;
    imp_flow *flows;  size_t nflows, cflows;
    imp_track *tracks; size_t ntracks, ctracks;
    pb_map tmap;                         /* hash of (pid, tid) -> track      */
    uint32_t last_track;
    uint64_t counters[C_COUNT];

    /* facts from the trace */
    bool have_base;
    uint64_t base_ns;
    int64_t rank, world_size;
    bool have_rank, have_world;
    char gpu_names[PRISM_MAX_GPUS][64];
    uint64_t first_pid;
    bool have_pid;

    /* result */
    bool built;
    prism_reader_stats st;      /* records delivered, footer                */
    prism_header h;
    prism_kv config[PRISM_MAX_GPUS + C_COUNT + 8];
    char producer[96];

    pb_error e;                 /* the first error; code 0 until one */
} imp;

/* json.c */
bool imp_json_init(imp *m);
void imp_json_free(imp *m);
/* Scan and parse JSON bytes; false on an error (m->err set). */
bool imp_json_feed(imp *m, const uint8_t *p, size_t n);
/* End of input: false on an error; a document cut off is not one. */
bool imp_json_finish(imp *m);

/* store.c */
bool imp_store_init(imp *m);
void imp_store_free(imp *m);
/* The event in m->ev is complete: file it.  False only without memory. */
bool imp_store_event(imp *m);
/* Interned name id, 0 without memory. */
uint32_t imp_intern(imp *m, const char *s, size_t len);

/* Legacy layout: link kernels to their launching op through the flows
 * (an API record for each).  False only without memory. */
bool imp_link_flows(imp *m);

/* build.c: sort, repair, deliver every record through m->cb. */
bool imp_build(imp *m);

bool imp_fail(imp *m, prism_status st, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

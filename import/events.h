/*
 * events.h - the part every importer shares (import/): the compact event
 * store (store.c), the build that sorts, repairs nesting and delivers the
 * records through the reader callbacks (build.c), the counters of what was
 * repaired or left out (INFO "import.<name>", read back in words by
 * notes.c) and the error of an import.  No trace format lives here: an
 * importer (json.c + kineto.c for torch.profiler traces, folded.c for
 * folded stacks) parses its input, files events with the calls below, says
 * what its source is (producer, clock, the first config and INFO entries)
 * and calls imp_build() once the input ended.  docs/IMPORT.md.
 */
#ifndef PRISM_IMPORT_EVENTS_H
#define PRISM_IMPORT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/import.h"
#include "prism/profile.h"
#include "array.h"
#include "errinfo.h"
#include "u64map.h"

/* Caps on hostile input. */
#define IMP_MAX_LANES      8u           /* a thread's tracks for overlaps    */
#define IMP_MAX_NEST       1024u        /* regions open at once on a track   */
#define IMP_NAME_CAP       PRISM_MAX_STRING_BYTES   /* names kept (cut after) */
#define IMP_CLIP_NS        1000         /* an end this far past its parent's
                                           is rounding: cut (1 us)           */
#define IMP_LEAD_MAX       8u           /* an importer's own config entries  */

/* Counters of what was read, repaired or left out: INFO "import.<name>". */
enum {
    C_EVENTS,           /* input events read                                  */
    C_REGIONS,          /* events kept as regions                             */
    C_GPU,              /* kernels, copies, memsets, syncs                     */
    C_API,              /* runtime / driver calls                              */
    C_MEMORY,           /* memory events                                       */
    C_OVERLAP,          /* overlapping-not-nested events moved to a track      */
    C_OVERLAP_DROPPED,  /* ... beyond IMP_MAX_LANES or IMP_MAX_NEST: left out  */
    C_CLIPPED,          /* ending at most IMP_CLIP_NS after their parent: cut   */
    C_ZERO_DUR,         /* zero durations                                      */
    C_NEG_DUR,          /* negative durations (made zero)                      */
    C_UNSORTED,         /* events earlier than the previous of their thread    */
    C_MISSING,          /* events without a field they need (left out)         */
    C_UNKNOWN_CAT,      /* events of a category not understood (left out)      */
    C_UNKNOWN_PH,       /* events of a phase not understood (left out)         */
    C_LONG_STRINGS,     /* strings cut (an importer's cap) / names at 4096     */
    C_BAD_NUMBERS,      /* numbers out of range (clamped) or not numbers       */
    C_GPU_ANNOT,        /* GPU-side annotation ranges (not kept)               */
    C_SOFT_CUT,         /* soft regions (Python frames) cut where a hard one
                           (an op, a record_function range) crosses them      */
    C_FLOWS,            /* flow events read (Kineto: ac2g, fwdbwd)             */
    C_COUNT
};

typedef struct imp_region {
    int64_t ts, end;            /* ns, the input's clock                     */
    uint32_t name, track;
    uint32_t seq;               /* file order, for ties                      */
    uint16_t lane;              /* 0: the thread; 1..: overflow tracks        */
    uint16_t flags;             /* IMP_REG_*                                  */
} imp_region;

/* imp_region.flags.  A soft region's extent is less exact than the others'
 * (Kineto's Python tracer: its frames cross the record_function ranges
 * they open and close): where a soft and a hard region overlap without
 * nesting, the soft one gives way (build.c), the hard one is never moved
 * for it. */
#define IMP_REG_SOFT 1u

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

typedef struct imp_track {
    int64_t pid, tid;           /* numbers, or a hash for a string            */
    bool pid_str, tid_str;
    int64_t last_ts;            /* unsorted input detection                   */
    int64_t last_soft_ts;       /* ... of its soft regions (a sorted run of
                                   their own in a Kineto trace)               */
    char name[64];              /* from the input, or made                    */
    bool named;
    bool used;                  /* has regions or API calls                   */
    uint32_t stream;            /* PRISM stream of lane 0 (build)             */
    uint32_t lanes;             /* lanes used (build)                         */
} imp_track;

/* The store of one import, and what the build delivers from it. */
typedef struct imp_events {
    prism_reader_callbacks cb;
    void *ctx;

    /* store */
    prism_strtab *names;
    imp_region *reg;  size_t nreg, creg;
    imp_gpu *gpu;     size_t ngpu, cgpu;
    imp_mem *mem;     size_t nmem, cmem;
    imp_step *steps;  size_t nsteps, csteps;
    imp_track *tracks; size_t ntracks, ctracks;
    pb_map tmap;                         /* hash of (pid, tid) -> track      */
    uint32_t last_track;
    uint64_t counters[C_COUNT];

    /* facts from the input (the importer sets them) */
    bool have_base;
    uint64_t base_ns;           /* wall-clock ns of the input's time 0        */
    int64_t rank;
    bool have_rank;
    char gpu_names[PRISM_MAX_GPUS][64];
    uint64_t first_pid;
    bool have_pid;
    char host[64];              /* the host's name ("" : not in the input)     */
    const char *argv[2];        /* the run's command line, as far as known     */
    size_t argc;
    uint64_t in_bytes;          /* bytes fed                                  */
    bool complete;              /* the input ended where it should            */

    /* the source, in the header and INFO (the importer sets them) */
    char producer[96];          /* header producer                            */
    const char *clock;          /* header clock (static text)                 */
    prism_kv lead[IMP_LEAD_MAX];         /* the config's first entries        */
    size_t nlead;
    prism_kv lead_info;         /* the first INFO entry (key NULL: none)      */
    const char *gpu_status;     /* INFO gpu.status when GPU records exist     */

    /* result */
    bool built;
    prism_reader_stats st;      /* records delivered, footer                */
    prism_header h;
    prism_kv config[IMP_LEAD_MAX + PRISM_MAX_GPUS + C_COUNT + 4];

    pb_error e;                 /* the first error; code 0 until one */
} imp_events;

/* store.c */
/* cb and ctx as for prism_reader_new.  False without memory. */
bool imp_events_init(imp_events *m, const prism_reader_callbacks *cb, void *ctx);
/* Frees what the store holds (not m itself). */
void imp_events_free(imp_events *m);
/* Interned name id, 0 without memory. */
uint32_t imp_intern(imp_events *m, const char *s, size_t len);
/* The track of (pid, tid), made on first use; UINT32_MAX without memory.
 * *_str: the number is a hash of a string (the thread is named from it). */
uint32_t imp_track_of(imp_events *m, int64_t pid, int64_t tid, bool pid_str, bool tid_str);
/* File a region [ts, end) of a track (counted in C_REGIONS, the track
 * marked used).  False only without memory. */
bool imp_region_add(imp_events *m, uint32_t track, int64_t ts, int64_t end, uint32_t name);
/* The same for a soft region (IMP_REG_SOFT). */
bool imp_region_add_soft(imp_events *m, uint32_t track, int64_t ts, int64_t end, uint32_t name);

/* build.c: sort, repair, deliver every record through m->cb, once the
 * input ended.  False on an error (m->e set). */
bool imp_build(imp_events *m);

/* The backend getters every importer answers with. */
const prism_header *imp_events_header(const imp_events *m);
const char *imp_events_string(const imp_events *m, uint32_t id, size_t *len);

/* Set the error (the first one stays); returns false. */
bool imp_fail(imp_events *m, prism_status st, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Room for one more element in a vector of the store (base/array.h). */
#define IMP_PUSH(m, vec, n, cap) \
    pb_vec_reserve((void **)&(m)->vec, &(m)->cap, (m)->n + 1, sizeof *(m)->vec)

#endif

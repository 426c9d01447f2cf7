/*
 * prism/profile.h - the PRISM profile format v1: writer (encoder) and
 * streaming reader.  The byte layout is specified in docs/FORMAT.md.
 *
 * Conventions
 *   - Operations return a prism_status; prism_strerror() turns one into words.
 *   - The reader reports errors with a code, a message and the byte offset.
 *   - Strings handed to callbacks are borrowed: valid until the callback
 *     returns unless stated otherwise.  Strings returned by
 *     prism_reader_string() / prism_reader_header() live as long as the reader.
 *
 * The writer (header and chunk encoders, string interning):
 * prism/profile_write.h; foreign input (backends, reading by path):
 * prism/profile_foreign.h.  This header includes both.
 */
#ifndef PRISM_PROFILE_H
#define PRISM_PROFILE_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PRISM_VERSION_MAJOR 0
#define PRISM_VERSION_MINOR 1
#define PRISM_VERSION_PATCH 0
#define PRISM_VERSION_STRING "0.1.0"

/* The file format version this library implements.  A reader accepts any
 * minor version of its own major version and rejects a larger major.  A
 * writer states the minor version whose features it uses
 * (prism_header.version_minor): 1.1 added CPU chunks, 1.2 STACKS chunks,
 * 1.3 the system readings of MEMORY samples. */
#define PRISM_FORMAT_MAJOR 1
#define PRISM_FORMAT_MINOR 3
#define PRISM_MAGIC "PRISM"

/* Limits (docs/FORMAT.md, "Limits").  A reader rejects anything larger. */
#define PRISM_MAX_HEADER_BYTES   (64u * 1024u)        /* whole header item   */
#define PRISM_MAX_CHUNK_PAYLOAD  (1024u * 1024u)      /* one chunk's payload */
/* A sequence number further than this past the expected one is damage (the
 * chunk is delivered, the expectation kept), not that many missing chunks. */
#define PRISM_MAX_SEQ_GAP        (UINT64_C(1) << 32)
#define PRISM_MAX_STRING_BYTES   4096u                 /* one interned string */
#define PRISM_MAX_STRINGS        (1u << 24)            /* ids 1 .. 2^24-1     */
#define PRISM_MAX_DEPTH          16u                   /* CBOR nesting        */
#define PRISM_MAX_GPUS           16u                   /* per memory sample   */
#define PRISM_MAX_CONFIG         64u                   /* header config pairs */
#define PRISM_MAX_ARGV           64u                   /* header argv entries */

/* The smallest buffer that always holds an empty chunk's framing. */
#define PRISM_CHUNK_OVERHEAD     64u

typedef enum prism_status {
    PRISM_OK = 0,
    PRISM_NEED_MORE,    /* reader: input ends inside an item (torn tail)     */
    PRISM_E_NOSPACE,    /* writer: the caller's buffer is full               */
    PRISM_E_NOMEM,      /* an allocation failed                              */
    PRISM_E_IO,         /* read/write failed (errno is kept)                 */
    PRISM_E_EMPTY,      /* the input holds no bytes at all                   */
    PRISM_E_NOT_PRISM,  /* not CBOR or no PRISM magic: a foreign file        */
    PRISM_E_VERSION,    /* a format major version this reader does not know  */
    PRISM_E_HEADER,     /* the header is damaged or truncated                */
    PRISM_E_LIMIT,      /* a length, count or depth beyond the limits        */
    PRISM_E_ARG,        /* a bad argument from the caller                    */
    PRISM_E_STATE,      /* call out of order (e.g. feed after finish)        */
    PRISM_STATUS_COUNT
} prism_status;

/* Words for a status; never NULL, static storage. */
PRISM_API const char *prism_strerror(prism_status s);

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

typedef enum prism_chunk_kind {
    PRISM_CHUNK_STRINGS  = 1,  /* interned names -> ids                    */
    PRISM_CHUNK_THREADS  = 2,  /* stream id -> OS thread id and name        */
    PRISM_CHUNK_REGIONS  = 3,  /* region enter/exit, delta timestamps       */
    PRISM_CHUNK_MARKS    = 4,  /* instant events                            */
    PRISM_CHUNK_COUNTERS = 5,  /* named integer / float values              */
    PRISM_CHUNK_STEPS    = 6,  /* iteration boundaries, sampled or not      */
    PRISM_CHUNK_MEMORY   = 7,  /* host RSS, CPU, per-GPU used/reserved      */
    PRISM_CHUNK_GPU      = 8,  /* kernels, copies, memsets, syncs, API      */
    PRISM_CHUNK_DROPPED  = 9,  /* cumulative dropped-record counts          */
    PRISM_CHUNK_INFO     = 10, /* key/value facts learnt while running      */
    PRISM_CHUNK_FOOTER   = 11, /* clean shutdown                            */
    PRISM_CHUNK_CPU      = 12, /* per-thread on-CPU / run-queue time samples */
    PRISM_CHUNK_UNRECORDED = 13, /* regions a thread could not record, where */
    PRISM_CHUNK_STACKS   = 14, /* (1.2) sampled call stacks of the threads    */
    PRISM_CHUNK_KIND_MAX = 14
} prism_chunk_kind;

/* Name of a chunk kind ("regions"), "unknown" for others. */
PRISM_API const char *prism_chunk_kind_name(uint32_t kind);

/* A configuration value in the header or an INFO chunk. */
typedef enum prism_value_type {
    PRISM_VAL_INT = 0, PRISM_VAL_UINT, PRISM_VAL_FLOAT, PRISM_VAL_BOOL,
    PRISM_VAL_TEXT, PRISM_VAL_NULL
} prism_value_type;

typedef struct prism_value {
    prism_value_type type;
    union { int64_t i; uint64_t u; double f; bool b; const char *s; } v;
} prism_value;

typedef struct prism_kv {
    const char *key;
    prism_value value;
} prism_kv;

typedef struct prism_header {
    uint32_t version_major, version_minor;
    const char *producer;        /* "libcollect 0.1.0"                        */
    const char *host;
    uint64_t pid;
    int64_t rank;                /* -1: not part of a distributed job         */
    const char *const *argv;     /* command line, argc entries                */
    size_t argc;
    const char *clock;           /* clock source, display text               */
    uint64_t start_unix_ns;      /* wall-clock time of timestamp 0            */
    uint64_t start_mono_ns;      /* CLOCK_MONOTONIC of timestamp 0            */
    const prism_kv *config;      /* collection configuration                  */
    size_t nconfig;
} prism_header;

typedef struct prism_thread {
    uint32_t stream;             /* the stream id its chunks carry            */
    uint64_t os_tid;
    const char *name;            /* borrowed                                  */
    /* a thread of a worker process (a worker file merged by
     * prism_reader_add_workers): which worker, and its process */
    bool is_worker;
    uint32_t worker_id;
    uint64_t pid;                /* 0: the profile's own process               */
} prism_thread;

enum { PRISM_REGION_ENTER = 0, PRISM_REGION_EXIT = 1 };

typedef struct prism_region_event {
    uint64_t ts;                 /* ns since the file's time origin           */
    uint32_t name;               /* string id (ENTER only; 0 for EXIT)        */
    uint32_t kind;               /* PRISM_REGION_ENTER / _EXIT                */
} prism_region_event;

typedef struct prism_mark {
    uint64_t ts;
    uint32_t name;
} prism_mark;

typedef struct prism_counter {
    uint64_t ts;
    uint32_t name;
    bool is_float;
    union { int64_t i; double f; } v;
} prism_counter;

/* PRISM_STEP_SAMPLED: its regions were recorded (sample_rate);
 * PRISM_STEP_OPS: it ran in the operator window (Python: every PyTorch
 * operator recorded as a region, docs/PYTHON.md), so it is slower than
 * the others and left out of the step-time figures. */
enum { PRISM_STEP_SAMPLED = 1u, PRISM_STEP_OPS = 2u };
/* The steps the analysis times and shares out (the rules' step time, the
 * regions' time in steps, compare's per-step samples): sampled, and not
 * slowed by the operator window. */
#define PRISM_STEP_COUNTED(flags) \
    (((flags) & (PRISM_STEP_SAMPLED | PRISM_STEP_OPS)) == PRISM_STEP_SAMPLED)

typedef struct prism_step {
    uint64_t start, end;         /* ns                                        */
    uint64_t index;              /* global step number, from 0                */
    uint64_t epoch;
    uint32_t flags;              /* PRISM_STEP_SAMPLED, PRISM_STEP_OPS        */
} prism_step;

#define PRISM_NO_STEP UINT64_MAX
#define PRISM_NO_CPU  UINT32_MAX
#define PRISM_NO_VALUE UINT64_MAX    /* a system reading not known (format 1.3) */

typedef struct prism_gpu_mem {
    uint32_t device;
    uint64_t used;               /* bytes in use by the process               */
    uint64_t reserved;           /* bytes held by allocators / total used     */
    /* (format 1.3, NVML) the device's utilisation since the previous
     * reading, percent of time a kernel ran (PRISM_NO_CPU: unknown), and
     * its energy since the session started, mJ (PRISM_NO_VALUE: unknown) */
    uint32_t util_pct;
    uint64_t energy_mj;
} prism_gpu_mem;

typedef struct prism_memory_sample {
    uint64_t ts;
    uint64_t step;               /* PRISM_NO_STEP: periodic sample            */
    uint64_t rss;                /* host resident set, bytes                  */
    uint32_t cpu_permille;       /* process CPU, 1000 = one core; NO_CPU      */
    uint32_t ngpu;
    prism_gpu_mem gpu[PRISM_MAX_GPUS];
    /* The machine's load (format 1.2, appended to the sample).  ncpu 0: not
     * recorded, the encoder writes the 1.1 sample and the decoder gives the
     * two figures below as PRISM_NO_CPU (so a zero-initialised sample is a
     * 1.1 one).  Both are since the previous sample, 1000 = one core. */
    uint32_t ncpu;               /* online CPUs of the machine; 0: unknown     */
    uint32_t host_busy_permille; /* all CPUs' busy time (/proc/stat); NO_CPU  */
    uint32_t children_cpu_permille; /* the process's child processes (live
                                    and reaped); NO_CPU                       */
    /* System readings (format 1.3, appended after the load): have_sys 0:
     * not read at this sample (the encoder writes no 1.3 elements, and the
     * GPU entries' util_pct/energy_mj are not written).  Each figure counts
     * since the session started and never decreases; PRISM_NO_VALUE:
     * unknown. */
    uint32_t have_sys;
    uint64_t io_read_bytes;      /* storage reads of the process and its live
                                    children (/proc/PID/io read_bytes)        */
    uint64_t io_write_bytes;     /* ... writes (write_bytes)                  */
    uint64_t net_rx_bytes;       /* the machine's network interfaces but lo
                                    (/proc/net/dev: the network namespace's)  */
    uint64_t net_tx_bytes;
    uint64_t cpu_user_ns;        /* the process's user and system CPU time     */
    uint64_t cpu_sys_ns;
    uint64_t mem_total;          /* the machine's memory, bytes (MemTotal)     */
    uint64_t cpu_energy_uj;      /* CPU packages' energy (RAPL), µJ            */
} prism_memory_sample;

/*
 * A sample of one thread's scheduler accounting (CPU chunks, stream 0).
 * The collector reads every recorded thread once per sampling pass, each
 * record with the time of its own reading (a pass's records are consecutive,
 * one per thread); values are cumulative since the
 * thread started, so a reader takes differences between two samples of the
 * same stream and a lost chunk only widens an interval.
 */
enum {
    PRISM_CPU_HAVE_WAIT = 1u,    /* wait_ns is known (schedstat)              */
    PRISM_CPU_EXITED    = 2u,    /* the thread has exited: its last sample    */
    PRISM_CPU_QUEUED    = 4u,    /* at the sample: waiting for a CPU (runnable,
                                    not running), a run-queue wait in progress,
                                    which Linux adds to wait_ns only when the
                                    thread next runs                          */
    PRISM_CPU_PREEMPTED = 8u,    /* QUEUED, and the thread has not blocked
                                    since before the previous sample: its time
                                    since then in neither counter is run-queue
                                    wait                                      */
    PRISM_CPU_RUNNING   = 16u,   /* at the sample: running on a CPU          */
    PRISM_CPU_BLOCKED   = 32u    /* at the sample: blocked (sleeping, I/O).
                                    RUNNING, QUEUED and BLOCKED are the state
                                    where the writer read it, none where not;
                                    readers that ignore them read the sample
                                    as before (no minor version needed)      */
};

typedef struct prism_cpu_sample {
    uint64_t ts;                 /* ns, when read                             */
    uint32_t stream;             /* the thread (its REGIONS stream id)        */
    uint32_t flags;              /* PRISM_CPU_*                               */
    uint64_t oncpu_ns;           /* cumulative time running on a CPU          */
    uint64_t wait_ns;            /* cumulative time runnable, waiting for a
                                    CPU (run queue); 0 without HAVE_WAIT      */
} prism_cpu_sample;

/*
 * A sampled call stack (STACKS chunks, format 1.2): where a thread was when
 * the collector looked, frames outermost first, each a string id ("name
 * (file:line)").  Written by the Python module's stack sampler at a low
 * rate; the time a sample stands for is the INFO `stacks.period_ns`.
 * wait_ns and queued_ns (format 1.2, optional; 0 when not written, as in
 * an older file): how long the sampler waited for the GIL before it read
 * the stack (the pass was due at ts - wait_ns), and how much of that wait
 * it spent runnable but off a CPU (time the GIL was free or another
 * thread's hand-over, not time a thread held it).
 */
enum {
    PRISM_STACK_TRUNCATED = 1u,  /* outermost frames were left out            */
    PRISM_STACK_RUNNING   = 2u,  /* the thread was on a CPU or runnable       */
    PRISM_STACK_SYSCALL   = 4u   /* the last frame names the system call the
                                    thread was blocked in ("[futex]")        */
};
#define PRISM_STACK_MAX_FRAMES 256u

typedef struct prism_stack_sample {
    uint64_t ts;                 /* ns, when read                             */
    uint32_t stream;             /* the thread (its REGIONS stream id)        */
    uint32_t flags;              /* PRISM_STACK_*                             */
    uint32_t nframes;            /* 1 .. PRISM_STACK_MAX_FRAMES               */
    const uint32_t *frames;      /* string ids, outermost first               */
    uint64_t wait_ns;            /* the sampler's wait for the GIL             */
    uint64_t queued_ns;          /* of it, runnable but not running           */
} prism_stack_sample;

typedef enum prism_gpu_type {
    PRISM_GPU_KERNEL = 1, PRISM_GPU_MEMCPY = 2, PRISM_GPU_MEMSET = 3,
    PRISM_GPU_SYNC = 4, PRISM_GPU_API = 5, PRISM_GPU_ALLOC = 6,
    PRISM_GPU_FREE = 7, PRISM_GPU_TYPE_MAX = 7
} prism_gpu_type;

typedef enum prism_copy_kind {
    PRISM_COPY_UNKNOWN = 0, PRISM_COPY_HTOD, PRISM_COPY_DTOH, PRISM_COPY_DTOD,
    PRISM_COPY_HTOH, PRISM_COPY_PTOP
} prism_copy_kind;

typedef enum prism_mem_kind {
    PRISM_MEM_UNKNOWN = 0, PRISM_MEM_PAGEABLE, PRISM_MEM_PINNED,
    PRISM_MEM_DEVICE, PRISM_MEM_MANAGED
} prism_mem_kind;

typedef enum prism_sync_type {
    PRISM_SYNC_UNKNOWN = 0, PRISM_SYNC_EVENT, PRISM_SYNC_STREAM_WAIT_EVENT,
    PRISM_SYNC_STREAM, PRISM_SYNC_CONTEXT
} prism_sync_type;

/* One GPU activity record.  Fields not used by a type are zero. */
typedef struct prism_gpu_record {
    uint32_t type;               /* prism_gpu_type                            */
    uint64_t start, end;         /* ns, same clock as CPU events              */
    uint32_t device;
    uint32_t stream;             /* CUDA stream; API: the CPU thread stream   */
    uint64_t correlation;        /* ties a kernel/copy to its API call        */
    uint32_t name;               /* KERNEL: kernel name, API: function name   */
    uint64_t bytes;              /* MEMCPY, MEMSET, ALLOC, FREE               */
    uint32_t copy_kind;          /* MEMCPY: prism_copy_kind                   */
    uint32_t src_kind, dst_kind; /* MEMCPY, MEMSET(dst), ALLOC: prism_mem_kind */
    uint32_t sync_type;          /* SYNC: prism_sync_type                     */
    uint32_t grid[3], block[3];  /* KERNEL                                    */
    uint32_t shared_mem;         /* KERNEL: static + dynamic bytes            */
    uint32_t registers;          /* KERNEL: per thread                        */
    uint64_t address;            /* ALLOC, FREE                               */
} prism_gpu_record;

enum { PRISM_SOURCE_CPU = 0, PRISM_SOURCE_GPU = 1 };

typedef struct prism_dropped {
    uint32_t stream;
    uint32_t source;             /* PRISM_SOURCE_CPU / _GPU                   */
    uint64_t total;              /* cumulative since the start of the run     */
    /* 1.1, CPU: the writer drops whole regions (an enter is never written
     * without its exit); `regions` of them, cumulative, are in `total`
     * (2 records each).  have_regions false: a 3-element record. */
    bool have_regions;
    uint64_t regions;
} prism_dropped;

/* UNRECORDED (1.1): `regions` regions of the chunk's thread were not
 * recorded (whole: enter, exit and all inside) under the region open at
 * recorded nesting depth `depth` (0: at the thread's top level), counted
 * up to `ts`.  Written in the thread's stream between its REGIONS chunks
 * where the depth is `depth`, so a reader in chunk order finds the region
 * it belongs to on its stack. */
typedef struct prism_unrecorded {
    uint64_t ts;
    uint32_t depth;
    uint64_t regions;
} prism_unrecorded;

typedef struct prism_footer {
    uint64_t end_ts;             /* ns, last timestamp of the run             */
    uint64_t events;             /* records written                           */
    uint64_t dropped;            /* records dropped                           */
    uint64_t chunks;             /* chunks written before the footer          */
    bool clean;                  /* false: written from a signal/exit path    */
} prism_footer;

/* ------------------------------------------------------------------ */
/* Reader                                                              */
/* ------------------------------------------------------------------ */

typedef enum prism_chunk_status {
    PRISM_CHUNK_OK = 0,
    PRISM_CHUNK_BAD_CHECKSUM,    /* framed, but the checksum fails: skipped   */
    PRISM_CHUNK_MALFORMED,       /* checksum good, payload not as specified   */
    PRISM_CHUNK_UNKNOWN,         /* a kind this reader does not know: skipped */
    PRISM_CHUNK_GARBAGE          /* bytes that are no chunk: skipped          */
} prism_chunk_status;

typedef struct prism_chunk_info {
    uint64_t offset;             /* file offset of the chunk's first byte     */
    uint64_t length;             /* bytes, framing included                   */
    uint32_t kind, stream;
    uint64_t seq;
    uint64_t payload_len;
    uint64_t records;            /* records delivered from it                 */
    prism_chunk_status status;
} prism_chunk_info;

/*
 * Callbacks.  Any may be NULL.  Batches point into reader storage valid
 * until the callback returns; a chunk's records may come in several batches.
 * `stream` is the chunk's stream id (for REGIONS/MARKS/COUNTERS the thread).
 */
typedef struct prism_reader_callbacks {
    void (*header)(void *ctx, const prism_header *h);
    void (*string)(void *ctx, uint32_t id, const char *s, size_t len);
    void (*thread)(void *ctx, const prism_thread *t);
    /* depth: nesting depth before ev[0] as the writer recorded it */
    void (*regions)(void *ctx, uint32_t stream, uint32_t depth,
                    const prism_region_event *ev, size_t n);
    void (*marks)(void *ctx, uint32_t stream, const prism_mark *m, size_t n);
    void (*counters)(void *ctx, uint32_t stream, const prism_counter *c, size_t n);
    void (*steps)(void *ctx, uint32_t stream, const prism_step *s, size_t n);
    void (*memory)(void *ctx, const prism_memory_sample *m);
    void (*gpu)(void *ctx, const prism_gpu_record *g, size_t n);
    void (*dropped)(void *ctx, const prism_dropped *d);
    void (*info)(void *ctx, const char *key, const prism_value *v);
    void (*footer)(void *ctx, const prism_footer *f);
    /* CPU chunks: samples in time order, a pass's records consecutive */
    void (*cpu)(void *ctx, const prism_cpu_sample *s, size_t n);
    /* After every chunk or skipped run of bytes, good or not. */
    void (*chunk)(void *ctx, const prism_chunk_info *c);
    /* UNRECORDED chunks (1.1): where a thread's regions were not recorded */
    void (*unrecorded)(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n);
    /* STACKS chunks (1.2): sampled call stacks in time order; each
     * sample's frames are valid during the call only */
    void (*stacks)(void *ctx, const prism_stack_sample *s, size_t n);
} prism_reader_callbacks;

typedef struct prism_reader_stats {
    uint64_t chunks;             /* good chunks delivered                     */
    uint64_t damaged;            /* damaged runs skipped (checksum or framing),
                                    and implausible sequence numbers   */
    uint64_t bad_checksum;       /* ... of which began with a checksum failure */
    uint64_t skipped_bytes;      /* bytes in damaged runs                     */
    uint64_t malformed;          /* chunks whose payload did not decode       */
    uint64_t unknown;            /* chunks of unknown kind skipped            */
    uint64_t seq_gaps;           /* chunks missing by sequence number         */
    uint64_t records;            /* records delivered                         */
    uint64_t torn_bytes;         /* bytes of an incomplete last chunk         */
    bool footer;                 /* a footer was read                         */
    /* worker files (prism_reader_add_workers): merged, of them damaged or
     * torn (what they held is merged), and files in the folder that belong
     * to another session (left), files past the 65536 read (left: the
     * first in name order are read); the records the merged ones delivered */
    uint32_t workers, workers_damaged, workers_other, workers_left;
    uint64_t worker_records;
} prism_reader_stats;

typedef struct prism_reader prism_reader;

/* NULL on allocation failure.  cb is copied; ctx is passed back. */
PRISM_API prism_reader *prism_reader_new(const prism_reader_callbacks *cb, void *ctx);
PRISM_API void prism_reader_free(prism_reader *r);

/*
 * Feed the next bytes of the file.  Complete chunks are decoded and reported
 * at once; an incomplete last item is kept (at most one chunk's worth).
 * Returns PRISM_OK when the input ends on an item boundary, PRISM_NEED_MORE
 * when it ends inside one (a torn tail: feed more to resume), or an error
 * (which is sticky: later calls return it again).
 */
PRISM_API prism_status prism_reader_feed(prism_reader *r, const void *data, size_t len);

/*
 * Read fd from the reader's current input offset (prism_reader_input_offset)
 * to end of file, feeding the reader.  Same returns as feed, plus PRISM_E_IO.
 * Call again later to pick up bytes appended since (live tail).
 */
PRISM_API prism_status prism_reader_read_fd(prism_reader *r, int fd);

/*
 * Declare the end of the input.  Bytes of an incomplete item are then
 * scanned for further chunks (damage) and the rest counted as torn_bytes.
 * Returns PRISM_OK, or the sticky error; PRISM_E_EMPTY if nothing was fed,
 * PRISM_E_HEADER if the header never completed.
 */
PRISM_API prism_status prism_reader_finish(prism_reader *r);

/* Bytes fed so far (the next file offset read_fd reads from). */
PRISM_API uint64_t prism_reader_input_offset(const prism_reader *r);
/* End of the last complete item: where a new reader would resume. */
PRISM_API uint64_t prism_reader_good_offset(const prism_reader *r);
/* The last error: its code, a one-line message and the byte offset. */
PRISM_API prism_status prism_reader_error(const prism_reader *r, const char **msg,
                                uint64_t *offset);
PRISM_API const prism_reader_stats *prism_reader_stats_get(const prism_reader *r);
/* The header once read, else NULL.  Owned by the reader. */
PRISM_API const prism_header *prism_reader_header(const prism_reader *r);
/*
 * A string by id, NULL if not (yet) known.  Owned by the reader.  A C++
 * mangled name ("_Z...", a CUPTI kernel name) comes demangled when the C++
 * runtime's demangler is present ("void cudnn::...<float, ...>(...)"); the
 * string callback delivers the same form.  Demangled once, when the string
 * is read; cut at PRISM_MAX_STRING_BYTES.  docs/FORMAT.md, "Mangled names".
 */
PRISM_API const char *prism_reader_string(const prism_reader *r, uint32_t id, size_t *len);
/* The same string as the file holds it (mangled names not demangled). */
PRISM_API const char *prism_reader_string_raw(const prism_reader *r, uint32_t id, size_t *len);

/*
 * Convenience: a new reader reads path (prism_reader_read_path), then
 * finish.  On error prism_reader_error(*out) describes it.  The caller
 * frees *out (set even on an error; NULL without memory).
 */
PRISM_API prism_status prism_read_file(const char *path, const prism_reader_callbacks *cb,
                             void *ctx, prism_reader **out);

/*
 * Worker files: once the profile at path is read (its header known), read
 * the files its worker processes wrote into the folder "<path>.workers"
 * (prism_init_worker) and deliver their threads' records through the
 * reader's callbacks: each worker thread a stream of its own, marked
 * (prism_thread.is_worker), its names under ids of their own, its times on
 * the profile's clock.  Files of another session are left; a damaged one
 * gives what it holds.  Counted in the stats (workers, workers_damaged,
 * workers_other).  Only once per reader; nothing to do for a foreign file.
 * prism_read_file calls it.  PRISM_OK, or PRISM_E_ARG.
 */
PRISM_API prism_status prism_reader_add_workers(prism_reader *r, const char *path);

#ifdef __cplusplus
}
#endif

/* Parts of this header's API, in headers of their own: the writer (the
 * header and chunk encoders, string interning); foreign input (the
 * backends, reading by path). */
#include "prism/profile_write.h"
#include "prism/profile_foreign.h"

#endif /* PRISM_PROFILE_H */

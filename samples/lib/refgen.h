/*
 * refgen.h - builds reference profiles with the format library's own
 * writer: every chunk kind, a realistic nested training-loop region stream,
 * and (optionally) extreme values.  Used by tests, benchmarks and the
 * `refprofile` sample.
 */
#ifndef PRISM_REFGEN_H
#define PRISM_REFGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/profile.h"

typedef struct refgen_opts {
    uint64_t seed;          /* deterministic stream from this seed          */
    unsigned steps;         /* training steps                               */
    unsigned layers;        /* forward/backward layers per step             */
    unsigned threads;       /* region streams (1 = main thread only)        */
    size_t chunk_bytes;     /* chunk buffer size (small = many chunks)      */
    bool extremes;          /* add records with extreme field values        */
    bool footer;            /* write a footer                               */
    bool regions_only;      /* only the region stream (size benchmarks)     */
    uint64_t stall_ns;      /* a "synchronize" leaf of this length per step  */
    bool cpu;               /* CPU chunks: a sampling pass over the threads
                               after every step (a format 1.1 file)         */
    uint64_t rss_kb_per_step;  /* host RSS growth per step, KiB (GPU memory
                                  used grows 4x that)                      */
} refgen_opts;

/* Defaults: seed 1, 20 steps, 4 layers, 2 threads, 4 KiB chunks, footer,
 * no CPU chunks, RSS growing 1 MiB per step. */
refgen_opts refgen_defaults(void);

/* A growable output buffer the generator appends whole chunks to. */
typedef struct refgen_out {
    uint8_t *data;
    size_t len, cap;
    uint64_t chunks;        /* chunks appended                              */
    uint64_t region_events; /* region enter/exit records written            */
    uint64_t records;       /* all records written                          */
} refgen_out;

/* Build a profile into out (the caller frees out->data).  0 on success,
 * -1 on allocation or encoding failure. */
int refgen_build(const refgen_opts *o, refgen_out *out);

/* Write a built profile to path; 0 on success, -1 (errno set) otherwise. */
int refgen_write_file(const char *path, const refgen_out *out);

#endif

/*
 * encode_run.h - the writer thread's region encoder (internal): a thread's
 * new enter/exit events, straight from its buffer into REGIONS chunks.
 */
#ifndef PRISM_COLLECT_ENCODE_RUN_H
#define PRISM_COLLECT_ENCODE_RUN_H

#include "internal.h"

/* Where a thread's REGIONS chunks are built.  The caller sets buf, cap,
 * full and ctx, and open = false; `e` then holds the chunk being built
 * while `open` (the caller finishes the last one, out of the same `e`). */
typedef struct region_sink {
    prism_enc e;
    bool open;
    uint8_t *buf;               /* the chunk buffer, cap bytes */
    size_t cap;                 /* >= PRISM_CHUNK_OVERHEAD + ENC_REGION_MAX, or
                                   pc_encode_regions encodes nothing */
    /* A chunk is full: finish it and write it out.  The encoder begins the
     * next one itself (the next sequence number of th's stream). */
    void (*full)(void *ctx, prism_enc *e);
    void *ctx;
} region_sink;

/*
 * Encode ev[i..fill) of thread th while they are enters and exits, in
 * order, as the per-event path (pc_clock_ns, clamp to th->last_ns,
 * prism_enc_enter/exit, a new chunk when one is full) does, to the byte.
 * Advances th->last_ns, th->depth and th->seq.  Returns the index of the
 * first event that is not an enter or exit (fill when there is none) and
 * adds the region events it encoded to *written.
 */
uint32_t pc_encode_regions(session *s, prism__thread *th, region_sink *k,
                        const prism__event *ev, uint32_t i, uint32_t fill,
                        uint64_t *written);

#endif

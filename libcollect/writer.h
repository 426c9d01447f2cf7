/*
 * writer.h - the writer thread's state, shared by its two halves: the loop
 * (writer.c: when to flush, the snapshot under the lock, the footer) and
 * the output (writer_emit.c: each kind of record encoded into chunks and
 * appended to the file with bounded writes).  Internal to libcollect.
 */
#ifndef PRISM_COLLECT_WRITER_H
#define PRISM_COLLECT_WRITER_H

#include "cpusample.h"
#include "internal.h"
#include "sampler.h"

#define OUT_BYTES   (1u << 20)
#define CHUNK_BYTES (64u * 1024u)

typedef struct snap {
    prism__thread *th;
    buffer *full;               /* detached full buffers, oldest first */
    buffer *cur;
    uint32_t cur_fill;          /* the current buffer's fill at the snapshot */
    bool dead;
    bool name_dirty;
    char name[64];
} snap;

typedef struct wstate {
    session *s;
    uint8_t *out;
    size_t olen;
    uint8_t *rbuf, *mbuf, *kbuf, *pbuf;
    mem_sampler mem;                /* memory samples (sampler.c) */
    uint64_t dropped_total;
    uint64_t gpu_dropped_written;
    cpu_sampler *cpu;               /* on-CPU samples, written at each flush */
    uint64_t cpu_last_ns, cpu_dropped_written;
    uint64_t stk_last_ns, stk_dropped_written;  /* STACKS chunks (stacks.c) */
    uint32_t step_stream_written;   /* INFO steps.thread written for it */
    uint64_t give_up_ns;            /* a stop was asked: writes end by then */
    bool sig_seen;                  /* ... by a signal: sooner */
    bool world_written;             /* INFO job.world_size written */
    uint64_t last_cycle;            /* when the last flush began */
    uint64_t written_then;          /* s->events_written after it */
    double bufs_per_ns;             /* buffers filled: the recent rate */
    /* a thread's marks and counters, encoded after its regions so that
     * chunk sequence numbers follow the order chunks are written in */
    prism_mark *marks;
    prism_counter *ctrs;
    size_t nmarks, nctrs, mcap, ccap;
} wstate;

/* writer_emit.c: chunks into the output buffer (pc_out_chunk), the buffer
 * to the file (pc_out_flush: any failure stops recording, warned once). */
void pc_out_flush(wstate *w);
void pc_out_chunk(wstate *w, prism_enc *e);
/* ... what one flush writes, in this order (writer.c's cycle) */
void pc_emit_strings(wstate *w, char **names, uint32_t first, uint32_t n);
void pc_emit_process(wstate *w, snap *sn, size_t nsnap, proc_rec *q, size_t nq);
void pc_emit_gpu_status(wstate *w);
void pc_encode_thread(wstate *w, snap *sn);
void pc_emit_gpu(wstate *w);
void pc_emit_cpu(wstate *w);
void pc_emit_stacks(wstate *w, const pc_stacks *q);
void pc_emit_info(wstate *w, const pc_info *l);
void pc_emit_dropped(wstate *w, snap *sn, size_t nsnap);

#endif

/*
 * encode_ref.h - the writer's per-event region path as it was before
 * libcollect/encode_run.c (pc_clock_ns per event, a clamp to the thread's last
 * timestamp, prism_enc_enter/exit, a new chunk when one is full), with
 * pc_encode_regions()'s contract: the reference the batch encoder must match
 * to the byte (tests/collect_encode_test.c) and the baseline it is timed
 * against (bench/writer_bench.c).  Header only; include after internal.h.
 */
#ifndef PRISM_TESTS_ENCODE_REF_H
#define PRISM_TESTS_ENCODE_REF_H

#include "../libcollect/encode_run.h"

/* pc_encode_regions() and ref_encode_regions(), side by side. */
typedef uint32_t (*encoder_fn)(session *, prism__thread *, region_sink *, const prism__event *,
                               uint32_t, uint32_t, uint64_t *);

static inline void ref_begin(region_sink *k, prism__thread *th, uint64_t ns)
{
    prism_enc_begin(&k->e, k->buf, k->cap, PRISM_CHUNK_REGIONS, th->stream, th->seq++, ns,
                    th->depth);
    k->open = true;
}

__attribute__((unused))
static uint32_t ref_encode_regions(session *s, prism__thread *th, region_sink *k,
                                   const prism__event *ev, uint32_t i, uint32_t fill,
                                   uint64_t *written)
{
    for (; i < fill; i++) {
        uint32_t kind = ev[i].word & 15u, id = ev[i].word >> 4;
        if (kind != PRISM__EV_ENTER && kind != PRISM__EV_EXIT)
            break;
        uint64_t ns = pc_clock_ns(s, ev[i].ts);
        if (ns < th->last_ns)
            ns = th->last_ns;
        th->last_ns = ns;
        if (!k->open)
            ref_begin(k, th, ns);
        prism_status st = kind == PRISM__EV_ENTER ? prism_enc_enter(&k->e, ns, id)
                                                  : prism_enc_exit(&k->e, ns);
        if (st == PRISM_E_NOSPACE) {
            k->full(k->ctx, &k->e);
            ref_begin(k, th, ns);
            if (kind == PRISM__EV_ENTER)
                prism_enc_enter(&k->e, ns, id);
            else
                prism_enc_exit(&k->e, ns);
        }
        if (kind == PRISM__EV_ENTER)
            th->depth++;
        else if (th->depth)
            th->depth--;
        (*written)++;
    }
    return i;
}

#endif

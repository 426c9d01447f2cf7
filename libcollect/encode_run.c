/*
 * encode_run.c - the writer thread's region encoder: one pass over a
 * thread's new enter/exit events that converts ticks to ns, clamps them,
 * delta-encodes them and writes the CBOR straight into the chunk buffer.
 *
 * It writes the bytes the per-event path writes (pc_clock_ns, a clamp to the
 * thread's last timestamp, prism_enc_enter/exit, a new chunk where one is
 * full), with the work that path repeats per event done once per run:
 *
 *   - the clock: the segment converting the run's first tick is hoisted
 *     (pc_clock_run_at); a tick inside its range converts with the same
 *     formula as pc_clock_ns (clock_seg_map), so bit for bit; only a tick
 *     outside it (a segment boundary, a tick out of order) looks the
 *     table up again;
 *   - the bounds: the chunk's room is checked once per batch of room /
 *     ENC_REGION_MAX events, each of which surely fits; only the last few
 *     records of a chunk are measured one by one;
 *   - no call per event: the checks of prism_enc_enter/exit that the
 *     chunk settles (its kind, its room) are made once, and the encoder's
 *     state (position, count, last timestamp, depth) lives in locals for
 *     the batch, stored once after it.
 *
 * bench/writer_bench.c times it against the per-event path (tests/
 * encode_ref.h), which tests/collect_encode_test.c holds it to, byte for
 * byte.
 */
#include "encode_run.h"

#include "enc_region.h"

_Static_assert(PRISM__EV_ENTER == 1 && PRISM__EV_EXIT == 2,
               "an event's kind - 1 is the region word's exit bit");

/* 0 for an enter, 1 for an exit, more for any other kind. */
static inline uint32_t region_bit(uint32_t word)
{
    return (word & 15u) - PRISM__EV_ENTER;
}

/* pc_clock_ns(s, t) through the hoisted segment c, moved when t is not in it. */
static inline uint64_t tick_ns(session *s, clock_run *c, uint64_t t)
{
    uint64_t ns;
    if (__builtin_expect(clock_run_ns(c, t, &ns), 1))
        return ns;
    pc_clock_run_at(s, t, c);
    return pc_clock_ns(s, t);
}

uint32_t pc_encode_regions(session *s, prism__thread *th, region_sink *k,
                        const prism__event *ev, uint32_t i, uint32_t fill,
                        uint64_t *written)
{
    if (i >= fill || region_bit(ev[i].word) > 1 || !k->buf ||
        k->cap < PRISM_CHUNK_OVERHEAD + ENC_REGION_MAX)
        return i;
    const uint32_t first = i;
    clock_run c;
    pc_clock_run_at(s, ev[i].ts, &c);
    uint64_t last_ns = th->last_ns;
    uint32_t depth = th->depth;
    prism_enc *e = &k->e;
    while (i < fill && region_bit(ev[i].word) <= 1) {
        if (!k->open) {
            /* a chunk starts at its first event's time, at the depth
             * before it (an empty chunk holds any one record) */
            uint64_t ns = tick_ns(s, &c, ev[i].ts);
            prism_enc_begin(e, k->buf, k->cap, PRISM_CHUNK_REGIONS, th->stream, th->seq++,
                            ns < last_ns ? last_ns : ns, depth);
            k->open = true;
        }
        size_t room = enc_room(e);
        uint32_t n = fill - i;
        if (room / ENC_REGION_MAX < n)
            n = (uint32_t)(room / ENC_REGION_MAX);
        if (n == 0) {
            /* the chunk's last bytes: this record, if it fits exactly */
            uint32_t w = ev[i].word, x = region_bit(w);
            uint64_t ns = tick_ns(s, &c, ev[i].ts);
            if (ns < last_ns)
                ns = last_ns;
            uint64_t word = enc_region_word(e->last, ns, x);
            if (enc_uint_size(word) + (x ? 0 : enc_uint_size(w >> 4)) > room) {
                k->full(k->ctx, e);
                k->open = false;
                continue;
            }
            uint8_t *p = e->buf + e->pos;
            p += enc_put_uint(p, word);
            if (!x)
                p += enc_put_uint(p, w >> 4);
            e->pos = (size_t)(p - e->buf);
            e->count += 2 - x;
            e->records++;
            if (ns > e->last)
                e->last = ns;
            depth = x ? depth - (depth != 0) : depth + 1;
            e->depth = depth;
            last_ns = ns;
            i++;
            continue;
        }
        /* n records surely fit: no bounds check until the batch ends */
        uint8_t *const p0 = e->buf + e->pos;
        uint8_t *p = p0;
        uint64_t elast = e->last;
        uint32_t j = i, stop = i + n, enters = 0;
        for (; j < stop; j++) {
            uint32_t w = ev[j].word, x = region_bit(w);
            if (x > 1)
                break;
            uint64_t ns = tick_ns(s, &c, ev[j].ts);
            if (ns < last_ns)
                ns = last_ns;
            last_ns = ns;
            p += enc_put_uint(p, enc_region_word(elast, ns, x));
            if (ns > elast)
                elast = ns;
            if (!x) {
                p += enc_put_uint(p, w >> 4);
                enters++;
                depth++;
            } else {
                depth -= depth != 0;
            }
        }
        e->pos += (size_t)(p - p0);
        e->count += (j - i) + enters;
        e->records += j - i;
        e->last = elast;
        e->depth = depth;
        i = j;
    }
    th->last_ns = last_ns;
    th->depth = depth;
    *written += i - first;
    return i;
}

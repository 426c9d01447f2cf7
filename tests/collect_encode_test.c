/*
 * collect_encode_test.c - the writer's batch region encoder
 * (libcollect/encode_run.c) against the per-event path it replaces
 * (tests/encode_ref.h):
 *
 *   - the hoisted clock segment converts every tick as pc_clock_ns does, bit
 *     for bit: around every segment start, before and at t0, far out;
 *   - randomised runs of enters and exits (tick jumps of every CBOR size,
 *     ticks out of order, segment boundaries, marks between them, flushes
 *     at random points, chunks from the smallest allowed to 64 KiB) come
 *     out as the same bytes, the same thread state and the same counts;
 *   - those bytes read back through the reader as the events, with the
 *     depth carried across chunks, and timestamps clamped where the ticks
 *     went backwards;
 *   - the encoder stops at the first event that is no enter or exit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../libcollect/internal.h"
#include "enc_region.h"
#include "encode_ref.h"

/* ---- a session clock with many segments ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* A session whose clock table holds `nseg` segments (or none: 0), the
 * ratio wandering around `ratio` as a real calibration's does. */
static session *clock_session(double ratio, unsigned nseg)
{
    session *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->t0_ticks = 1000000 + below(1000);
    s->t0_mono = 5000000000u;
    s->ns_per_tick = ratio;
    if (nseg == 0)
        return s;                       /* no table: the plain ratio */
    pc_clock_segments_reset(s);
    uint64_t t = s->t0_ticks;
    for (unsigned i = 0; atomic_load(&s->nsegs) < nseg && i < 200; i++) {
        t += (uint64_t)(60e6 / ratio) << (atomic_load(&s->nsegs) - 1);
        double truth = ratio * (1 + 1e-4 * (double)((int)below(21) - 10));
        pc_clock_segment_add(s, t, s->t0_mono + (uint64_t)((double)(t - s->t0_ticks) * truth));
    }
    assert_int_equal(atomic_load(&s->nsegs), nseg);
    return s;
}

/* ---- the clock ---- */

/* Ticks up to t0 + FAR: their ns (at most 2.9 ns a tick here) stay below
 * 2^64, where a conversion from double would be undefined. */
#define FAR (1ull << 62)

static void check_tick(session *s, uint64_t t)
{
    clock_run c;
    uint64_t ns;
    pc_clock_run_at(s, t, &c);
    if (t == UINT64_MAX)                /* the one tick no range holds */
        return;
    assert_true(clock_run_ns(&c, t, &ns));
    assert_int_equal(ns, pc_clock_ns(s, t));
    /* a range hoisted elsewhere converts t exactly, or refuses it */
    pc_clock_run_at(s, t + below(1u << 20) - (1u << 19), &c);
    if (clock_run_ns(&c, t, &ns))
        assert_int_equal(ns, pc_clock_ns(s, t));
}

static void test_clock_run_exact(void **state)
{
    (void)state;
    rng_state = 1;
    static const double ratios[] = { 0.3703, 1.0, 0.25, 2.9, 1.0 / 3.0 };
    static const unsigned segs[] = { 0, 1, 5, 30 };
    unsigned checked = 0;
    for (size_t r = 0; r < sizeof ratios / sizeof ratios[0]; r++)
        for (size_t g = 0; g < sizeof segs / sizeof segs[0]; g++) {
            session *s = clock_session(ratios[r], segs[g]);
            uint64_t t0 = s->t0_ticks;
            for (uint64_t d = 0; d < 64; d++) {         /* around t0 */
                check_tick(s, t0 - d);
                check_tick(s, t0 + d);
            }
            check_tick(s, 0);
            check_tick(s, UINT64_MAX);      /* found, never converted */
            check_tick(s, t0 + FAR);
            uint32_t n = atomic_load(&s->nsegs);
            for (uint32_t k = 0; k < n; k++) {          /* around each start */
                uint64_t at = s->segs[k].ticks;
                for (uint64_t d = 0; d < 300; d++) {
                    check_tick(s, at - d);
                    check_tick(s, at + d);
                }
                for (int i = 0; i < 2000; i++)          /* inside the segment */
                    check_tick(s, at + below(k + 1 < n ? s->segs[k + 1].ticks - at : 1ull << 40));
                checked += 2600;
            }
            for (int i = 0; i < 20000; i++)             /* anywhere */
                check_tick(s, t0 + (FAR >> (rnd() & 63)) - below(1000));
            checked += 20000;
            free(s);
        }
    assert_true(checked > 100000);
}

/* ---- two encoders over the same events ---- */

typedef struct out {
    uint8_t *b;
    size_t n, cap;
    uint64_t chunks;
} out;

static void out_put(void *ctx, prism_enc *e)
{
    out *o = ctx;
    size_t len;
    if (prism_enc_records(e) == 0)
        return;
    assert_int_equal(prism_enc_finish(e, &len), PRISM_OK);
    if (o->n + len > o->cap) {
        o->cap = (o->n + len) * 2;
        o->b = realloc(o->b, o->cap);
        assert_non_null(o->b);
    }
    memcpy(o->b + o->n, e->buf, len);
    o->n += len;
    o->chunks++;
}

typedef struct side {
    prism__thread th;
    region_sink k;
    out o;
    uint64_t written;
} side;

static void side_init(side *d, size_t cap, const prism_header *h)
{
    memset(d, 0, sizeof *d);
    d->th.stream = 7;
    d->th.seq = 0;
    d->k.buf = malloc(cap);
    assert_non_null(d->k.buf);
    d->k.cap = cap;
    d->k.full = out_put;
    d->k.ctx = &d->o;
    d->o.cap = 1u << 16;
    d->o.b = malloc(d->o.cap);
    assert_non_null(d->o.b);
    assert_int_equal(prism_header_encode(h, d->o.b, d->o.cap, &d->o.n), PRISM_OK);
}

static void side_free(side *d)
{
    free(d->k.buf);
    free(d->o.b);
}

/* What the writer does with ev[from..to): regions by `enc`, a mark's time
 * clamped and kept (its chunk is another story), other kinds skipped. */
static void feed(encoder_fn enc, session *s, side *d, const prism__event *ev, uint32_t from,
                 uint32_t to)
{
    uint32_t i = from;
    while (i < to) {
        i = enc(s, &d->th, &d->k, ev, i, to, &d->written);
        if (i >= to)
            break;
        uint64_t ns = pc_clock_ns(s, ev[i].ts);
        if (ns < d->th.last_ns)
            ns = d->th.last_ns;
        d->th.last_ns = ns;
        i++;
    }
}

/* The end of a flush: the open chunk goes out. */
static void flush(side *d)
{
    if (d->k.open)
        out_put(&d->o, &d->k.e);
    d->k.open = false;
}

/* A random event stream: nested enters and exits (exits at depth 0 too),
 * marks and unknown kinds among them; ticks that mostly advance a little,
 * sometimes by 2^8, 2^16, 2^32 ticks or more, sometimes go backwards, and
 * land on segment starts. */
static prism__event *gen_events(session *s, uint32_t n, uint64_t *start)
{
    prism__event *ev = malloc(n * sizeof *ev);
    assert_non_null(ev);
    uint32_t nseg = atomic_load(&s->nsegs);
    uint64_t t = s->t0_ticks - 50 + below(100), depth = 0;
    *start = t;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = below(1000);
        if (r < 700)
            t += below(200);
        else if (r < 850)
            t += below(70000);
        else if (r < 900)
            t += below(1ull << 33);
        else if (r < 905 && nseg)
            t = s->segs[below(nseg)].ticks - 3 + below(6);      /* back or forth */
        else if (r < 950)
            t -= below(t - s->t0_ticks + 100 < 5000 ? t - s->t0_ticks + 100 : 5000);
        else if (r < 952)
            t += 1ull << (34 + below(8));
        else
            t += below(24);
        uint32_t kind, id = 0;
        uint64_t k = below(100);
        if (k < 3)
            kind = PRISM__EV_MARK;
        else if (k < 4)
            kind = below(2) ? 0 : 9;                            /* unknown */
        else if (k < 52 + (depth > 20 ? 20 : 0) || (depth == 0 && k < 90))
            kind = PRISM__EV_EXIT;
        else
            kind = PRISM__EV_ENTER;
        if (kind == PRISM__EV_ENTER) {
            uint64_t m = below(10);
            id = (uint32_t)(m < 6 ? 1 + below(23) : m < 8 ? below(300) : m < 9 ? below(70000)
                                                                     : below(1u << 28));
            depth++;
        } else if (kind == PRISM__EV_EXIT && depth) {
            depth--;
        }
        ev[i] = (prism__event){ t, id << 4 | kind, 0 };
    }
    return ev;
}

/* What the reader reads back. */
typedef struct got {
    prism_region_event *ev;
    size_t n, cap;
    uint32_t *depth_at;         /* expected depth before each event */
    size_t bad_depth, batches;
    uint32_t stream;
} got;

static void got_regions(void *ctx, uint32_t stream, uint32_t depth,
                        const prism_region_event *ev, size_t n)
{
    got *g = ctx;
    g->stream = stream;
    g->batches++;
    if (g->n < g->cap && depth != g->depth_at[g->n])
        g->bad_depth++;
    for (size_t i = 0; i < n && g->n < g->cap; i++)
        g->ev[g->n++] = ev[i];
}

/* One trial: n events, chunks of `cap` bytes, flushes about every
 * `flush_every` events, encoded both ways; the same bytes, state and
 * counts, and the reader gets the events back. */
static void trial(double ratio, unsigned nseg, uint32_t n, size_t cap, uint32_t flush_every)
{
    session *s = clock_session(ratio, nseg);
    uint64_t start;
    prism__event *ev = gen_events(s, n, &start);
    prism_header h = { .producer = "collect_encode_test", .host = "h", .clock = "test" };
    side a, b;
    side_init(&a, cap, &h);
    side_init(&b, cap, &h);
    a.th.last_ns = b.th.last_ns = below(2) ? 0 : pc_clock_ns(s, start + 10);
    a.th.depth = b.th.depth = (uint32_t)below(3);
    uint64_t first_ns = a.th.last_ns;
    uint32_t first_depth = a.th.depth;
    for (uint32_t i = 0; i < n;) {
        uint32_t to = i + 1 + (uint32_t)below(2 * flush_every);
        if (to > n)
            to = n;
        /* a flush may see a buffer in several pieces (full buffers, then
         * the current one) */
        uint32_t mid = i + (uint32_t)below(to - i + 1);
        feed(ref_encode_regions, s, &a, ev, i, mid);
        feed(ref_encode_regions, s, &a, ev, mid, to);
        feed(pc_encode_regions, s, &b, ev, i, mid);
        feed(pc_encode_regions, s, &b, ev, mid, to);
        if (below(3) == 0 || to == n) {
            flush(&a);
            flush(&b);
        }
        i = to;
    }
    assert_int_equal(a.written, b.written);
    assert_int_equal(a.th.last_ns, b.th.last_ns);
    assert_int_equal(a.th.depth, b.th.depth);
    assert_int_equal(a.th.seq, b.th.seq);
    assert_int_equal(a.o.chunks, b.o.chunks);
    assert_int_equal(a.o.n, b.o.n);
    assert_memory_equal(a.o.b, b.o.b, a.o.n);

    /* expected: regions with clamped times and the depth before each */
    got g = { 0 };
    g.cap = n;
    g.ev = calloc(n, sizeof *g.ev);
    g.depth_at = calloc(n + 1, sizeof *g.depth_at);
    prism_region_event *want = calloc(n, sizeof *want);
    assert_true(g.ev && g.depth_at && want);
    size_t nw = 0;
    uint64_t last = first_ns;
    uint32_t depth = first_depth;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t kind = ev[i].word & 15u;
        uint64_t ns = pc_clock_ns(s, ev[i].ts);
        last = ns > last ? ns : last;
        if (kind != PRISM__EV_ENTER && kind != PRISM__EV_EXIT)
            continue;
        g.depth_at[nw] = depth;
        want[nw++] = (prism_region_event){ last, kind == PRISM__EV_ENTER ? ev[i].word >> 4 : 0,
                                           kind == PRISM__EV_ENTER ? PRISM_REGION_ENTER
                                                                   : PRISM_REGION_EXIT };
        depth = kind == PRISM__EV_ENTER ? depth + 1 : depth ? depth - 1 : 0;
    }
    assert_int_equal(nw, b.written);
    prism_reader_callbacks cb = { .regions = got_regions };
    prism_reader *r = prism_reader_new(&cb, &g);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, b.o.b, b.o.n), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    const prism_reader_stats *st = prism_reader_stats_get(r);
    assert_int_equal(st->damaged + st->malformed + st->seq_gaps, 0);
    assert_int_equal(st->chunks, b.o.chunks);
    prism_reader_free(r);
    assert_int_equal(g.n, nw);
    for (size_t i = 0; i < nw; i++) {
        assert_int_equal(g.ev[i].ts, want[i].ts);
        assert_int_equal(g.ev[i].kind, want[i].kind);
        assert_int_equal(g.ev[i].name, want[i].name);
    }
    assert_int_equal(g.bad_depth, 0);
    assert_true(nw == 0 || g.stream == 7);
    free(want);
    free(g.ev);
    free(g.depth_at);
    side_free(&a);
    side_free(&b);
    free(ev);
    free(s);
}

static void test_random_runs(void **state)
{
    (void)state;
    rng_state = 42;
    static const size_t caps[] = { PRISM_CHUNK_OVERHEAD + ENC_REGION_MAX, 100, 333, 4096,
                                   65536 };
    for (int round = 0; round < 6; round++)
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
            unsigned nseg = round % 3 == 0 ? 0 : round % 3 == 1 ? 1 : 12 + (unsigned)below(15);
            double ratio = round & 1 ? 0.3703 : 1.0 + (double)below(1000) / 500.0;
            uint32_t n = caps[c] >= 4096 ? 60000 : 6000;
            trial(ratio, nseg, n, caps[c], (uint32_t)(10 + below(3000)));
        }
}

/* Chunk boundaries at every offset: a stream of enters with 2-byte words
 * and 1..5-byte names fills chunks of every small size to the last byte. */
static void test_every_small_chunk(void **state)
{
    (void)state;
    rng_state = 7;
    for (size_t cap = PRISM_CHUNK_OVERHEAD + ENC_REGION_MAX; cap < 200; cap++)
        trial(0.5, 3, 700, cap, 1000);
}

/* Ticks that go backwards: clamped to the thread's last time (delta 0),
 * never written as a negative delta. */
static void test_clamp(void **state)
{
    (void)state;
    rng_state = 9;
    session *s = clock_session(1.0, 2);
    uint64_t t0 = s->t0_ticks;
    prism__event ev[] = {
        { t0 + 1000, 5u << 4 | PRISM__EV_ENTER, 0 },
        { t0 + 900, PRISM__EV_EXIT, 0 },                        /* back 100 */
        { t0 + 1100, 6u << 4 | PRISM__EV_ENTER, 0 },
        { t0 - 500, PRISM__EV_EXIT, 0 },                        /* before t0 */
        { t0 + 1100, PRISM__EV_EXIT, 0 },                       /* at depth 0 */
    };
    prism_header h = { .producer = "t", .host = "h", .clock = "test" };
    side d;
    side_init(&d, 4096, &h);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 0, 5, &d.written), 5);
    assert_int_equal(d.written, 5);
    assert_int_equal(d.th.depth, 0);
    assert_int_equal(d.th.last_ns, pc_clock_ns(s, t0 + 1100));
    prism_enc *e = &d.k.e;
    assert_int_equal(e->records, 5);
    assert_int_equal(e->count, 2 + 7);                 /* base, depth, 2+1+2+1+1 */
    /* after base and depth: enter 5 (delta 0), exit (clamped), enter 6
     * (delta 100: word 200), two exits (clamped; the last at depth 0) */
    const uint8_t want[] = { 0x00, 0x05, 0x01, 0x18, 0xc8, 0x06, 0x01, 0x01 };
    assert_int_equal(e->pos - e->payload_pos, 5 + 3 + 1 + sizeof want);  /* 9a count, base 1a.. */
    assert_memory_equal(e->buf + e->pos - sizeof want, want, sizeof want);
    side_free(&d);
    free(s);
}

/* The encoder stops at the first event that is no enter or exit and
 * touches nothing for it; an empty range does nothing. */
static void test_stops_at_other_kinds(void **state)
{
    (void)state;
    rng_state = 11;
    session *s = clock_session(1.0, 1);
    uint64_t t0 = s->t0_ticks;
    prism__event ev[] = {
        { t0 + 10, 1u << 4 | PRISM__EV_ENTER, 0 },
        { t0 + 20, 2u << 4 | PRISM__EV_MARK, 0 },
        { t0 + 30, PRISM__EV_EXIT, 0 },
        { t0 + 40, 3u << 4 | PRISM__EV_COUNTER_I, 0 },
        { 77, 0, 0 },                                   /* the counter's value */
        { t0 + 50, 0, 0 },
    };
    prism_header h = { .producer = "t", .host = "h", .clock = "test" };
    side d;
    side_init(&d, 4096, &h);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 0, 6, &d.written), 1);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 1, 6, &d.written), 1);
    assert_int_equal(d.th.last_ns, pc_clock_ns(s, t0 + 10));
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 2, 6, &d.written), 3);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 4, 6, &d.written), 4);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 5, 6, &d.written), 5);
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 6, 6, &d.written), 6);
    assert_int_equal(d.written, 2);
    assert_int_equal(d.th.depth, 0);
    /* a chunk buffer too small for a chunk: nothing is encoded */
    d.k.cap = PRISM_CHUNK_OVERHEAD + ENC_REGION_MAX - 1;
    d.k.open = false;
    assert_int_equal(pc_encode_regions(s, &d.th, &d.k, ev, 0, 6, &d.written), 0);
    d.k.cap = 4096;
    side_free(&d);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_run_exact),
        cmocka_unit_test(test_random_runs),
        cmocka_unit_test(test_every_small_chunk),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_stops_at_other_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

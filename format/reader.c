/*
 * reader.c - the streaming reader: header, chunk framing, checksums,
 * resynchronisation after damage, torn tails.  docs/FORMAT.md, "Reading".
 *
 * Bytes are processed straight from the caller's buffer; only the bytes of
 * an incomplete last item are copied and kept, so memory is bounded by one
 * chunk (PRISM_MAX_CHUNK_PAYLOAD) plus what the caller feeds at once.
 * Whole inputs (fd, path) and foreign formats: reader_input.c; the string
 * table and worker names: reader_strings.c; the state: reader_state.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "reader_state.h"

enum { FR_OK = CUR_OK, FR_SHORT = CUR_SHORT, FR_BAD = CUR_BAD };

/* ---- small accessors for decode.c ---- */

const prism_reader_callbacks *pf_reader_cb(prism_reader *r) { return &r->cb; }
void *pf_reader_ctx(prism_reader *r) { return r->ctx; }
void pf_reader_saw_footer(prism_reader *r) { r->st.footer = true; }
prism_reader_stats *pf_reader_stats_mut(prism_reader *r) { return &r->st; }

/* ---- lifecycle ---- */

prism_reader *prism_reader_new(const prism_reader_callbacks *cb, void *ctx)
{
    prism_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (cb)
        r->cb = *cb;
    r->ctx = ctx;
    r->nfb = pf_reader_backends(r->fbs);
    r->probe = r->nfb ? PROBE_WAIT : PROBE_NONE;
    return r;
}

void prism_reader_free(prism_reader *r)
{
    if (!r)
        return;
    if (r->fst)
        r->fb->close(r->fst);
    pf_header_store_free(&r->hs);
    free(r->pend);
    pf_idmap_free(&r->strings);
    pf_idmap_free(&r->raws);
    pf_idmap_free(&r->seqs);
    pf_idmap_free(&r->wnames);
    pf_arena_free(&r->mem);
    free(r);
}

prism_status pf_reader_fail(prism_reader *r, prism_status code, uint64_t off,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pb_error_vset(&r->err, code, off, fmt, ap);
    va_end(ap);
    return code;
}

prism_status prism_reader_error(const prism_reader *r, const char **msg,
                                uint64_t *offset)
{
    if (msg)
        *msg = r->err.code ? r->err.msg : "";
    if (offset)
        *offset = r->err.offset;
    return (prism_status)r->err.code;
}

const prism_reader_stats *prism_reader_stats_get(const prism_reader *r)
{
    if (r->probe == PROBE_FOREIGN && r->fb->stats)
        return r->fb->stats(r->fst);
    return &r->st;
}
uint64_t prism_reader_input_offset(const prism_reader *r) { return r->fed; }
uint64_t prism_reader_good_offset(const prism_reader *r) { return r->good; }

const prism_header *prism_reader_header(const prism_reader *r)
{
    if (r->probe == PROBE_FOREIGN)
        return r->fb->header(r->fst);
    return r->have_header ? &r->hs.h : NULL;
}

/* ---- framing ---- */

static int frame_parse(const uint8_t *p, size_t n, frame *f)
{
    cur c = { p, p + n };
    unsigned mt, ai;
    uint64_t v;
    int rc;
    if (n == 0)
        return FR_SHORT;
    if (p[0] != 0x85)
        return FR_BAD;
    c.p++;
    if ((rc = cur_u32(&c, &f->kind)) != CUR_OK)
        return rc;
    if ((rc = cur_u32(&c, &f->stream)) != CUR_OK)
        return rc;
    if ((rc = cur_uint(&c, &f->seq)) != CUR_OK)
        return rc;
    if ((rc = cur_head(&c, &mt, &v, &ai)) != CUR_OK)
        return rc;
    if (mt != MT_TAG || v != 24)
        return FR_BAD;
    if ((rc = cur_head(&c, &mt, &v, &ai)) != CUR_OK)
        return rc;
    if (mt != MT_BYTES || v > PRISM_MAX_CHUNK_PAYLOAD)
        return FR_BAD;
    f->payload_off = (size_t)(c.p - p);
    f->payload_len = (size_t)v;
    if ((size_t)(c.end - c.p) < f->payload_len)
        return FR_SHORT;
    c.p += f->payload_len;
    f->sum_off = (size_t)(c.p - p);
    if ((rc = cur_uint(&c, &f->sum)) != CUR_OK)
        return rc;
    f->total = (size_t)(c.p - p);
    return FR_OK;
}

static bool frame_verified(const uint8_t *p, const frame *f)
{
    return XXH3_64bits(p, f->sum_off) == f->sum;
}

/*
 * Bounded work per byte (docs/FORMAT.md, "Resynchronisation"): a candidate
 * chunk is hashed in full before it is rejected, so damage made of
 * overlapping candidates (a pattern that frames at every 16th byte) could
 * hash each byte PRISM_MAX_CHUNK_PAYLOAD / 16 times.  Failed candidates may
 * hash RESYNC_HASH_FACTOR times the input plus RESYNC_HASH_SLACK bytes in
 * all; past that budget the reader hashes no candidate that starts inside
 * the last one rejected, so each byte is hashed at most once more.
 */
#define RESYNC_HASH_FACTOR 8u
#define RESYNC_HASH_SLACK  (4ull * PRISM_MAX_CHUNK_PAYLOAD)

static bool over_budget(const prism_reader *r)
{
    return r->bad_hashed > RESYNC_HASH_SLACK + RESYNC_HASH_FACTOR * r->fed;
}

/* A framed candidate at file offset off: hashed, or passed over unhashed
 * when over budget and inside the span of the last rejected one. */
static bool candidate_good(prism_reader *r, const uint8_t *p, const frame *f, uint64_t off)
{
    if (off < r->skip_until)
        return false;
    if (frame_verified(p, f))
        return true;
    r->bad_hashed += f->sum_off;
    if (over_budget(r))
        r->skip_until = off + f->total;
    return false;
}

static void note_seq(prism_reader *r, const frame *f)
{
    uintptr_t next;
    uint32_t unused;
    uint64_t expect = 0;
    if (pf_idmap_get(&r->seqs, f->stream, &next, &unused))
        expect = (uint64_t)next;
    if (f->seq > expect && f->seq - expect > PRISM_MAX_SEQ_GAP) {
        r->st.damaged++;                /* a damaged number, not lost chunks */
        return;
    }
    if (f->seq > expect)
        r->st.seq_gaps += f->seq - expect;
    if (f->seq >= expect)
        pf_idmap_put(&r->seqs, f->stream, (uintptr_t)(f->seq + 1), 0);
}

static void deliver(prism_reader *r, const uint8_t *p, const frame *f, uint64_t off)
{
    prism_chunk_info ci = {
        .offset = off, .length = f->total, .kind = f->kind, .stream = f->stream,
        .seq = f->seq, .payload_len = f->payload_len, .status = PRISM_CHUNK_OK,
    };
    note_seq(r, f);
    if (!pf_payload_known(f->kind)) {
        ci.status = PRISM_CHUNK_UNKNOWN;
        r->st.unknown++;
    } else if (!pf_payload_decode(r, f->kind, f->stream, p + f->payload_off,
                               f->payload_len, &ci.records)) {
        ci.status = PRISM_CHUNK_MALFORMED;
        r->st.malformed++;
    } else {
        r->st.chunks++;
    }
    r->st.records += ci.records;
    if (r->cb.chunk)
        r->cb.chunk(r->ctx, &ci);
}

static void damage_begin(prism_reader *r, uint64_t off, prism_chunk_status why,
                         const frame *f, bool torn)
{
    r->resync = true;
    r->resync_torn = torn;
    r->bad_start = off;
    r->bad_status = why;
    if (f)
        r->bad_frame = *f;
    else
        memset(&r->bad_frame, 0, sizeof r->bad_frame);
}

static void damage_end(prism_reader *r, uint64_t end)
{
    prism_chunk_info ci = {
        .offset = r->bad_start, .length = end - r->bad_start,
        .kind = r->bad_frame.kind, .stream = r->bad_frame.stream,
        .seq = r->bad_frame.seq, .payload_len = r->bad_frame.payload_len,
        .status = r->bad_status,
    };
    r->resync = false;
    r->st.damaged++;
    if (r->bad_status == PRISM_CHUNK_BAD_CHECKSUM)
        r->st.bad_checksum++;
    r->st.skipped_bytes += ci.length;
    if (r->cb.chunk)
        r->cb.chunk(r->ctx, &ci);
}

/*
 * Look for the next verified chunk at or after p[pos].  Returns the offset
 * to continue from; *stalled when a candidate needs more bytes.
 */
static size_t resync_scan(prism_reader *r, const uint8_t *p, size_t n,
                          size_t pos, uint64_t off, bool final, bool *stalled)
{
    *stalled = false;
    for (size_t s = pos; s < n; s++) {
        if (p[s] != 0x85)
            continue;
        frame f;
        int rc = frame_parse(p + s, n - s, &f);
        if (rc == FR_OK && candidate_good(r, p + s, &f, off + s)) {
            if (r->resync_torn)     /* what looked like a torn tail was damage */
                r->resync_torn = false;
            damage_end(r, off + s);
            return s;
        }
        if (rc == FR_SHORT && !final) {
            *stalled = true;
            return s;
        }
    }
    return n;
}

/* Process p[0..n) starting at file offset off.  Returns the bytes consumed;
 * the rest must be kept and offered again with more data. */
static size_t process(prism_reader *r, const uint8_t *p, size_t n, uint64_t off,
                      bool final)
{
    size_t pos = 0;
    if (r->phase == PH_HEADER) {
        size_t lim = n < PRISM_MAX_HEADER_BYTES ? n : PRISM_MAX_HEADER_BYTES;
        int rc = pf_header_parse(&r->hs, p, lim);
        if (rc == HDR_ERROR && r->hs.err == PRISM_E_NOT_PRISM && off == 0 && !r->hs.err_off) {
            pf_reader_not_prism(r, p, n);
            return 0;
        }
        if (rc == HDR_ERROR) {
            pf_reader_fail(r, r->hs.err, off + r->hs.err_off, "%s", r->hs.msg);
            return 0;
        }
        if (rc == HDR_SHORT) {
            if (n >= PRISM_MAX_HEADER_BYTES)
                pf_reader_fail(r, PRISM_E_LIMIT, off, "header larger than %u bytes",
                     PRISM_MAX_HEADER_BYTES);
            else if (final)
                pf_reader_fail(r, PRISM_E_HEADER, off + n, "header is truncated");
            return 0;
        }
        r->have_header = true;
        r->phase = PH_CHUNKS;
        pos = r->hs.len;
        r->good = off + pos;
        if (r->cb.header)
            r->cb.header(r->ctx, &r->hs.h);
    }
    /* At the end of input a damaged run still open (even one that began at
     * the last byte) must be closed: counted as damage or as a torn tail. */
    while (pos < n || (final && r->resync)) {
        if (r->resync) {
            bool stalled;
            pos = resync_scan(r, p, n, pos, off, final, &stalled);
            if (stalled)
                return pos;
            if (r->resync) {        /* ran off the end still skipping */
                if (final) {
                    if (r->resync_torn) {
                        r->resync = false;
                        r->st.torn_bytes = off + n - r->bad_start;
                    } else {
                        damage_end(r, off + n);
                    }
                }
                return n;
            }
            continue;
        }
        frame f;
        int rc = frame_parse(p + pos, n - pos, &f);
        if (rc == FR_OK && candidate_good(r, p + pos, &f, off + pos)) {
            deliver(r, p + pos, &f, off + pos);
            pos += f.total;
            r->good = off + pos;
        } else if (rc == FR_OK) {
            damage_begin(r, off + pos, PRISM_CHUNK_BAD_CHECKSUM, &f, false);
            pos++;
        } else if (rc == FR_SHORT) {
            if (!final)
                return pos;
            damage_begin(r, off + pos, PRISM_CHUNK_GARBAGE, NULL, true);
            pos++;
        } else {
            damage_begin(r, off + pos, PRISM_CHUNK_GARBAGE, NULL, false);
            pos++;
        }
    }
    return pos;
}

static bool pending_reserve(prism_reader *r, size_t n)
{
    if (n <= r->pcap)
        return true;
    size_t cap = r->pcap ? r->pcap : 4096;
    while (cap < n)
        cap *= 2;
    uint8_t *b = realloc(r->pend, cap);
    if (!b)
        return false;
    r->pend = b;
    r->pcap = cap;
    return true;
}

/* Keep p[0..n): either new bytes or a tail of the pending buffer itself. */
static bool keep_pending(prism_reader *r, const uint8_t *p, size_t n)
{
    if (p != r->pend && !pending_reserve(r, n))
        return false;
    if (n)
        memmove(r->pend, p, n);
    r->plen = n;
    return true;
}

bool pf_reader_keep_pending_append(prism_reader *r, const uint8_t *p, size_t n)
{
    if (!pending_reserve(r, r->plen + n))
        return false;
    memcpy(r->pend + r->plen, p, n);
    r->plen += n;
    return true;
}

/* r->fed already counts data[0..len). */
static prism_status run(prism_reader *r, const uint8_t *data, size_t len, bool final)
{
    const uint8_t *p = data;
    size_t n = len;
    if (r->plen) {                  /* join the kept bytes and the new ones */
        if (len && !pf_reader_keep_pending_append(r, data, len))
            return pf_reader_fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
        p = r->pend;
        n = r->plen;
    }
    uint64_t off = r->fed - n;
    size_t used = process(r, p, n, off, final);
    if (r->err.code)
        return (prism_status)r->err.code;
    /* p is NULL when nothing was kept or fed (a finish after a whole
     * file): no offset may be applied to it, not even 0. */
    if (!keep_pending(r, used < n ? p + used : NULL, n - used))
        return pf_reader_fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
    return (r->plen || r->resync) ? PRISM_NEED_MORE : PRISM_OK;
}

prism_status prism_reader_feed(prism_reader *r, const void *data, size_t len)
{
    if (!r || (!data && len))
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    if (r->phase == PH_DONE)
        return pf_reader_fail(r, PRISM_E_STATE, r->fed, "data fed after the end of input");
    r->fed += len;
    if (r->probe == PROBE_FOREIGN)
        return pf_reader_foreign_feed(r, data, len);
    if (r->probe == PROBE_WAIT && len) {
        bool used;
        prism_status st = pf_reader_probe(r, data, len, false, &used);
        if (st != PRISM_OK || r->probe == PROBE_FOREIGN)
            return st;
        if (used)                       /* the bytes are kept: run on them */
            return run(r, NULL, 0, false);
    }
    return run(r, data, len, false);
}

prism_status prism_reader_finish(prism_reader *r)
{
    if (!r)
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    if (r->phase == PH_DONE)
        return PRISM_OK;
    if (r->fed == 0)
        return pf_reader_fail(r, PRISM_E_EMPTY, 0, "empty file");
    if (r->probe == PROBE_WAIT) {
        bool used;
        prism_status pst = pf_reader_probe(r, NULL, 0, true, &used);
        if (pst != PRISM_OK)
            return pst;
    }
    if (r->probe == PROBE_FOREIGN) {
        const char *msg = NULL;
        uint64_t off = 0;
        prism_status fst = r->fb->finish(r->fst, &msg, &off);
        r->phase = PH_DONE;
        return pf_reader_foreign_status(r, fst, msg, off);
    }
    prism_status st = run(r, NULL, 0, true);
    if (st == PRISM_NEED_MORE)
        st = PRISM_OK;
    if (st == PRISM_OK && !r->have_header)
        return pf_reader_fail(r, PRISM_E_HEADER, r->fed, "header is truncated");
    r->plen = 0;
    r->phase = PH_DONE;
    return st;
}

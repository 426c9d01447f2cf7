/*
 * reader.c - the streaming reader: header, chunk framing, checksums,
 * resynchronisation after damage, torn tails.  docs/FORMAT.md, "Reading".
 *
 * Bytes are processed straight from the caller's buffer; only the bytes of
 * an incomplete last item are copied and kept, so memory is bounded by one
 * chunk (PRISM_MAX_CHUNK_PAYLOAD) plus what the caller feeds at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "ropen.h"
#include "errinfo.h"
#include "format_internal.h"
#include "idmap.h"

enum { PH_HEADER, PH_CHUNKS, PH_DONE };
/* Foreign input (profile.h): no backend or a PRISM profile, the first bytes
 * not yet decided, or a foreign file read by the backend that took it. */
enum { PROBE_NONE, PROBE_WAIT, PROBE_FOREIGN };
#define PROBE_MAX_BYTES 65536u
enum { FR_OK = CUR_OK, FR_SHORT = CUR_SHORT, FR_BAD = CUR_BAD };

typedef struct frame {
    uint32_t kind, stream;
    uint64_t seq;
    size_t payload_off, payload_len, sum_off, total;
    uint64_t sum;
} frame;

struct prism_reader {
    prism_reader_callbacks cb;
    void *ctx;
    int phase;
    header_store hs;
    bool have_header;

    uint8_t *pend;              /* bytes of an incomplete item */
    size_t plen, pcap;
    uint64_t fed, good;

    bool resync, resync_torn;   /* skipping damage; it began as a short item */
    uint64_t bad_hashed;        /* bytes hashed for candidates that failed */
    uint64_t skip_until;        /* over budget: no candidate starts before this */
    uint64_t bad_start;
    frame bad_frame;
    prism_chunk_status bad_status;

    pb_error err;               /* code 0 (PRISM_OK) until an error */

    prism_reader_stats st;
    idmap strings;              /* id -> arena string, demangled */
    idmap raws;                 /* id -> the file's string, where demangled */
    idmap seqs;                 /* stream -> next expected seq + 1 */
    arena mem;

    int probe;                  /* PROBE_* */
    const prism_foreign_backend *fbs[PRISM_MAX_BACKENDS];
    size_t nfb;                 /* the backends registered at creation */
    const prism_foreign_backend *fb;    /* the one that took the file */
    void *fst;                  /* the backend's state once it took the file */

    uint32_t next_wid, next_wstream;    /* worker files' merged ids (workers.c) */
    idmap wnames;                       /* a worker name's hash -> its merged id */
    bool workers_read;
};

const char *prism_reader_foreign(const prism_reader *r)
{
    return r && r->probe == PROBE_FOREIGN ? r->fb->name : NULL;
}


/* ---- small accessors for decode.c ---- */

const prism_reader_callbacks *pf_reader_cb(prism_reader *r) { return &r->cb; }
void *pf_reader_ctx(prism_reader *r) { return r->ctx; }
void pf_reader_saw_footer(prism_reader *r) { r->st.footer = true; }
prism_reader_stats *pf_reader_stats_mut(prism_reader *r) { return &r->st; }

uint32_t *pf_reader_worker_next(prism_reader *r, bool stream)
{
    if (!r->next_wid) {
        r->next_wid = 0xC0000000u;
        r->next_wstream = 0x40000000u;
    }
    return stream ? &r->next_wstream : &r->next_wid;
}

/* One merged id per name across the worker files (the same region in
 * every worker is one path of the all-threads tree): the name's hash
 * (a few probes) to the id, checked against the stored text. */
#define WNAME_PROBES 4u

static uint32_t wname_key(const char *s, size_t len, uint32_t k)
{
    uint32_t h = (uint32_t)XXH3_64bits(s, len) + k;
    return h == UINT32_MAX ? 0 : h;
}

uint32_t pf_reader_worker_name(prism_reader *r, const char *s, size_t len, uint32_t id)
{
    for (uint32_t k = 0; k < WNAME_PROBES; k++) {
        uintptr_t v;
        uint32_t l, key = wname_key(s, len, k);
        if (!pf_idmap_get(&r->wnames, key, &v, &l)) {
            if (id)
                pf_idmap_put(&r->wnames, key, id, 0);
            return id;
        }
        size_t have;
        const char *t = prism_reader_string_raw(r, (uint32_t)v, &have);
        if (t && have == len && !memcmp(t, s, len))
            return (uint32_t)v;
    }
    return id;                          /* (probes full: a name of its own) */
}

bool pf_reader_workers_once(prism_reader *r)
{
    bool was = r->workers_read;
    r->workers_read = true;
    return was;
}

static char *arena_copy(prism_reader *r, const char *s, size_t len)
{
    char *d = pf_arena_alloc(&r->mem, len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static bool same(const idmap *m, uint32_t id, const char *s, size_t len)
{
    uintptr_t v;
    uint32_t l;
    return pf_idmap_get(m, id, &v, &l) && l == len && !memcmp((const char *)v, s, len);
}

static bool has(const idmap *m, uint32_t id)
{
    uintptr_t v;
    uint32_t l;
    return pf_idmap_get(m, id, &v, &l);
}

/* A mangled name is demangled here, once: an id stored again with the same
 * text (a chunk repeated) is left as it is. */
bool pf_reader_put_string(prism_reader *r, uint32_t id, const char *s, size_t len)
{
    if (same(&r->raws, id, s, len) || (!has(&r->raws, id) && same(&r->strings, id, s, len)))
        return true;
    char *d = arena_copy(r, s, len);
    if (!d)
        return false;
    size_t plen = 0;
    char *plain = pf_demangle(d, len, &plen);
    if (plain) {
        char *p = arena_copy(r, plain, plen);
        free(plain);
        return p && pf_idmap_put(&r->raws, id, (uintptr_t)d, (uint32_t)len) &&
               pf_idmap_put(&r->strings, id, (uintptr_t)p, (uint32_t)plen);
    }
    if (has(&r->raws, id) &&                        /* it was demangled before */
        !pf_idmap_put(&r->raws, id, (uintptr_t)d, (uint32_t)len))
        return false;
    return pf_idmap_put(&r->strings, id, (uintptr_t)d, (uint32_t)len);
}

const char *prism_reader_string(const prism_reader *r, uint32_t id, size_t *len)
{
    uintptr_t v;
    uint32_t l;
    if (r->probe == PROBE_FOREIGN)
        return r->fb->string(r->fst, id, len);
    if (!pf_idmap_get(&r->strings, id, &v, &l))
        return NULL;
    if (len)
        *len = l;
    return (const char *)v;
}

const char *prism_reader_string_raw(const prism_reader *r, uint32_t id, size_t *len)
{
    uintptr_t v;
    uint32_t l;
    if (r->probe == PROBE_FOREIGN || !pf_idmap_get(&r->raws, id, &v, &l))
        return prism_reader_string(r, id, len);
    if (len)
        *len = l;
    return (const char *)v;
}

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

static prism_status fail(prism_reader *r, prism_status code, uint64_t off,
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
        if (rc == HDR_ERROR) {
            fail(r, r->hs.err, off + r->hs.err_off, "%s", r->hs.msg);
            return 0;
        }
        if (rc == HDR_SHORT) {
            if (n >= PRISM_MAX_HEADER_BYTES)
                fail(r, PRISM_E_LIMIT, off, "header larger than %u bytes",
                     PRISM_MAX_HEADER_BYTES);
            else if (final)
                fail(r, PRISM_E_HEADER, off + n, "header is truncated");
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

static bool keep_pending_append(prism_reader *r, const uint8_t *p, size_t n)
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
        if (len && !keep_pending_append(r, data, len))
            return fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
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
        return fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
    return (r->plen || r->resync) ? PRISM_NEED_MORE : PRISM_OK;
}

/* ---- foreign input ---- */

static prism_status foreign_status(prism_reader *r, prism_status st, const char *msg,
                                   uint64_t off)
{
    if (st != PRISM_OK && st != PRISM_NEED_MORE)
        return fail(r, st, off, "%s", msg ? msg : prism_strerror(st));
    r->good = r->fed;
    return st;
}

static prism_status foreign_feed(prism_reader *r, const uint8_t *p, size_t n)
{
    const char *msg = NULL;
    uint64_t off = 0;
    if (!r->fb->feed)
        return fail(r, PRISM_E_STATE, r->fed, "%s: read by path, not fed", r->fb->name);
    prism_status st = r->fb->feed(r->fst, p, n, &msg, &off);
    return foreign_status(r, st, msg, off);
}

/*
 * Which backend takes a file starting with p[0..n): the first in
 * registration order whose probe accepts, skipping those that take only
 * paths unless by_path.  -1: a backend before it is undecided (only while
 * more bytes may come and fewer than PROBE_MAX_BYTES were seen), -2: none.
 */
static int choose(const prism_reader *r, const uint8_t *p, size_t n, bool final,
                  bool by_path)
{
    if (n && p[0] == 0xd9)
        return -2;                      /* the CBOR self-describe tag */
    if (!n)
        return final ? -2 : -1;
    for (size_t i = 0; i < r->nfb; i++) {
        const prism_foreign_backend *b = r->fbs[i];
        if (!b->feed && !by_path)
            continue;
        int d = b->probe(p, n, final);
        if (d > 0)
            return (int)i;
        if (d < 0 && !final && n < PROBE_MAX_BYTES)
            return -1;
    }
    return -2;
}

static prism_status take(prism_reader *r, size_t i)
{
    r->fb = r->fbs[i];
    r->fst = r->fb->open(&r->cb, r->ctx);
    if (!r->fst)
        return fail(r, PRISM_E_NOMEM, 0, "out of memory");
    r->probe = PROBE_FOREIGN;
    return PRISM_OK;
}

/*
 * Decide from the first bytes (the kept ones, then p[0..n)) whether the
 * backend reads the file.  PRISM_NEED_MORE: undecided, the bytes are kept;
 * PRISM_OK: decided (r->probe set; for a foreign file the bytes went to the
 * backend, else they are in r->pend for the CBOR reader, or still in p when
 * nothing was kept); an error otherwise.
 */
static prism_status probe(prism_reader *r, const uint8_t *p, size_t n, bool final,
                          bool *used)
{
    *used = false;
    if (r->plen) {
        if (n && !keep_pending_append(r, p, n))
            return fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
        *used = true;
        p = r->pend;
        n = r->plen;
    }
    int d = choose(r, p, n, final, false);
    if (d == -1) {
        if (!*used && n && !keep_pending_append(r, p, n))
            return fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
        *used = true;
        return PRISM_NEED_MORE;
    }
    if (d < 0) {
        r->probe = PROBE_NONE;
        return PRISM_OK;
    }
    if (take(r, (size_t)d) != PRISM_OK)
        return (prism_status)r->err.code;
    *used = true;
    prism_status st = foreign_feed(r, p, n);
    r->plen = 0;
    return st == PRISM_NEED_MORE ? PRISM_OK : st;
}

prism_status prism_reader_feed(prism_reader *r, const void *data, size_t len)
{
    if (!r || (!data && len))
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    if (r->phase == PH_DONE)
        return fail(r, PRISM_E_STATE, r->fed, "data fed after the end of input");
    r->fed += len;
    if (r->probe == PROBE_FOREIGN)
        return foreign_feed(r, data, len);
    if (r->probe == PROBE_WAIT && len) {
        bool used;
        prism_status st = probe(r, data, len, false, &used);
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
        return fail(r, PRISM_E_EMPTY, 0, "empty file");
    if (r->probe == PROBE_WAIT) {
        bool used;
        prism_status pst = probe(r, NULL, 0, true, &used);
        if (pst != PRISM_OK)
            return pst;
    }
    if (r->probe == PROBE_FOREIGN) {
        const char *msg = NULL;
        uint64_t off = 0;
        prism_status fst = r->fb->finish(r->fst, &msg, &off);
        r->phase = PH_DONE;
        return foreign_status(r, fst, msg, off);
    }
    prism_status st = run(r, NULL, 0, true);
    if (st == PRISM_NEED_MORE)
        st = PRISM_OK;
    if (st == PRISM_OK && !r->have_header)
        return fail(r, PRISM_E_HEADER, r->fed, "header is truncated");
    r->plen = 0;
    r->phase = PH_DONE;
    return st;
}

prism_status prism_reader_read_fd(prism_reader *r, int fd)
{
    enum { BLOCK = 1 << 20 };
    if (!r || fd < 0)
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    uint8_t *buf = malloc(BLOCK);
    if (!buf)
        return fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
    prism_status st = r->plen || r->resync ? PRISM_NEED_MORE : PRISM_OK;
    bool can_pread = true;
    for (;;) {
        ssize_t got = can_pread ? pread(fd, buf, BLOCK, (off_t)r->fed) : read(fd, buf, BLOCK);
        if (got < 0 && can_pread && errno == ESPIPE) {
            can_pread = false;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = fail(r, PRISM_E_IO, r->fed, "read failed: %s", strerror(errno));
            break;
        }
        if (got == 0)
            break;
        st = prism_reader_feed(r, buf, (size_t)got);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            break;
    }
    free(buf);
    return st;
}

/* A regular file not read yet: the index of the backend that reads it by
 * its path (its first bytes decide), else -1 (it is streamed: read_fd
 * decides again), or -2 without memory (r's error set). */
static int path_choice(prism_reader *r, int fd, struct stat *sb)
{
    bool any = false;
    for (size_t i = 0; i < r->nfb; i++)
        any |= r->fbs[i]->read_path != NULL;
    if (!any || r->probe != PROBE_WAIT || r->fed || fstat(fd, sb) || !S_ISREG(sb->st_mode))
        return -1;
    uint8_t *head = malloc(PROBE_MAX_BYTES);
    if (!head) {
        fail(r, PRISM_E_NOMEM, 0, "out of memory");
        return -2;
    }
    ssize_t got;
    do
        got = pread(fd, head, PROBE_MAX_BYTES, 0);
    while (got < 0 && errno == EINTR);
    int d = got <= 0 ? -2 : choose(r, head, (size_t)got, (uint64_t)got >= (uint64_t)sb->st_size
                                   || got < (ssize_t)PROBE_MAX_BYTES, true);
    free(head);
    return d >= 0 && r->fbs[d]->read_path ? d : -1;
}

/* True when a backend that reads paths took the file (*st: how it went). */
static bool by_path(prism_reader *r, int fd, const char *path, prism_status *st)
{
    struct stat sb;
    int d = path_choice(r, fd, &sb);
    if (d == -1)
        return false;
    if (d < 0 || take(r, (size_t)d) != PRISM_OK) {
        *st = (prism_status)r->err.code;
        return true;
    }
    const char *msg = NULL;
    uint64_t off = 0;
    r->fed = (uint64_t)sb.st_size;
    *st = foreign_status(r, r->fb->read_path(r->fst, path, &msg, &off), msg, off);
    return true;
}

bool prism_reader_path_only(prism_reader *r, const char *path)
{
    if (!r || !path || r->err.code)
        return false;
    int fd = pb_open_read(path);
    if (fd < 0)
        return false;
    struct stat sb;
    int d = path_choice(r, fd, &sb);
    close(fd);
    return d >= 0;
}

prism_status prism_reader_read_path(prism_reader *r, const char *path)
{
    if (!r || !path)
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    int fd = pb_open_read(path);
    if (fd < 0)
        return fail(r, PRISM_E_IO, 0, "%s", strerror(errno));
    prism_status st;
    if (!by_path(r, fd, path, &st))
        st = prism_reader_read_fd(r, fd);
    close(fd);
    return st;
}

prism_status prism_read_file(const char *path, const prism_reader_callbacks *cb,
                             void *ctx, prism_reader **out)
{
    prism_reader *r = prism_reader_new(cb, ctx);
    *out = r;
    if (!r)
        return PRISM_E_NOMEM;
    prism_status st = prism_reader_read_path(r, path);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    if (st == PRISM_OK)
        prism_reader_add_workers(r, path);
    return st;
}

/*
 * format_conformance_test.c - a written file is plain CBOR: libcbor's
 * generic decoder (cbor_load) reads every item, each chunk is an array of 5
 * holding a tag-24 byte string whose content is one array; and the reader's
 * specialised payload decoders deliver exactly what an independent decode of
 * that array (with libcbor) says.  Also: the reader accepts every valid
 * length encoding (FORMAT.md 4.2), and half/single floats.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cbor.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "refgen.h"
#include "test_util.h"

/* ---- an independent decoder on libcbor's item trees ---- */

static uint64_t u(const cbor_item_t *it)
{
    assert_true(cbor_isa_uint(it));
    return cbor_get_int(it);
}

/* A CBOR int (uint or negint) added to base, as the reader does. */
static uint64_t add_int(uint64_t base, const cbor_item_t *it)
{
    if (cbor_isa_uint(it))
        return base + cbor_get_int(it);
    assert_true(cbor_isa_negint(it));
    return base - cbor_get_int(it) - 1;
}

static cbor_item_t **items(const cbor_item_t *it, size_t *n)
{
    assert_true(cbor_isa_array(it));
    assert_true(cbor_array_is_definite(it));
    *n = cbor_array_size(it);
    return cbor_array_handle(it);
}

/* A text as a NUL-terminated copy in buf (size PRISM_MAX_STRING_BYTES + 1). */
static const char *text(const cbor_item_t *it, char *buf, size_t *len)
{
    assert_true(cbor_isa_string(it));
    size_t n = cbor_string_length(it);
    assert_true(n <= PRISM_MAX_STRING_BYTES);
    memcpy(buf, cbor_string_handle(it), n);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

static prism_value scalar(const cbor_item_t *it, char *buf)
{
    prism_value v = { PRISM_VAL_NULL, { .i = 0 } };
    if (cbor_isa_uint(it)) {
        v.type = PRISM_VAL_UINT;
        v.v.u = cbor_get_int(it);
    } else if (cbor_isa_negint(it)) {
        v.type = PRISM_VAL_INT;
        v.v.i = -1 - (int64_t)cbor_get_int(it);
    } else if (cbor_isa_string(it)) {
        v.type = PRISM_VAL_TEXT;
        v.v.s = text(it, buf, NULL);
    } else if (cbor_isa_float_ctrl(it) && cbor_float_get_width(it) != CBOR_FLOAT_0) {
        v.type = PRISM_VAL_FLOAT;
        v.v.f = cbor_float_get_float(it);
    } else if (cbor_is_bool(it)) {          /* (asks a float for its ctrl value) */
        v.type = PRISM_VAL_BOOL;
        v.v.b = cbor_get_bool(it);
    } else {
        assert_true(cbor_is_null(it) || cbor_is_undef(it));
    }
    return v;
}

static void gpu_fields(cbor_item_t **f, prism_gpu_record *g)
{
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        g->name = (uint32_t)u(f[6]);
        for (int i = 0; i < 3; i++) {
            g->grid[i] = (uint32_t)u(f[7 + i]);
            g->block[i] = (uint32_t)u(f[10 + i]);
        }
        g->shared_mem = (uint32_t)u(f[13]);
        g->registers = (uint32_t)u(f[14]);
        break;
    case PRISM_GPU_MEMCPY:
        g->bytes = u(f[6]);
        g->copy_kind = (uint32_t)u(f[7]);
        g->src_kind = (uint32_t)u(f[8]);
        g->dst_kind = (uint32_t)u(f[9]);
        break;
    case PRISM_GPU_MEMSET: g->bytes = u(f[6]); g->dst_kind = (uint32_t)u(f[7]); break;
    case PRISM_GPU_SYNC: g->sync_type = (uint32_t)u(f[6]); break;
    case PRISM_GPU_API: g->name = (uint32_t)u(f[6]); break;
    default:
        g->bytes = u(f[6]);
        g->address = u(f[7]);
        g->dst_kind = (uint32_t)u(f[8]);
        break;
    }
}

/* Log the records of one payload array the way the reader's callbacks do;
 * returns the number of records. */
static uint64_t decode_payload(tlog *l, uint32_t kind, uint32_t stream, const cbor_item_t *pa)
{
    static char buf[PRISM_MAX_STRING_BYTES + 1], kbuf[PRISM_MAX_STRING_BYTES + 1];
    size_t n, k, len;
    cbor_item_t **a = items(pa, &n);
    uint64_t recs = 0, ts = 0;
    switch (kind) {
    case PRISM_CHUNK_STRINGS:
        for (size_t i = 1; i < n; i++, recs++) {
            text(a[i], buf, &len);
            tl_string(l, (uint32_t)(u(a[0]) + i - 1), buf, len);
        }
        break;
    case PRISM_CHUNK_THREADS:
        for (size_t i = 0; i < n; i++, recs++) {
            cbor_item_t **f = items(a[i], &k);
            prism_thread t = { .stream = (uint32_t)u(f[0]), .os_tid = u(f[1]),
                               .name = text(f[2], buf, NULL) };
            tl_thread(l, &t);
        }
        break;
    case PRISM_CHUNK_REGIONS:
        ts = u(a[0]);
        for (size_t i = 2; i < n; recs++) {
            uint64_t w = u(a[i++]);
            ts += w >> 1;
            prism_region_event ev = { ts, 0, (w & 1) ? PRISM_REGION_EXIT : PRISM_REGION_ENTER };
            if (!(w & 1))
                ev.name = (uint32_t)u(a[i++]);
            an_tl_regions(l, stream, (uint32_t)u(a[1]), &ev, 1);
        }
        break;
    case PRISM_CHUNK_MARKS:
        ts = u(a[0]);
        for (size_t i = 1; i + 1 < n; i += 2, recs++) {
            ts += u(a[i]);
            prism_mark m = { ts, (uint32_t)u(a[i + 1]) };
            tl_marks(l, stream, &m, 1);
        }
        break;
    case PRISM_CHUNK_COUNTERS:
        ts = u(a[0]);
        for (size_t i = 1; i + 2 < n; i += 3, recs++) {
            ts += u(a[i]);
            prism_value v = scalar(a[i + 2], buf);
            prism_counter c = { ts, (uint32_t)u(a[i + 1]), v.type == PRISM_VAL_FLOAT, { .i = v.v.i } };
            if (c.is_float)
                c.v.f = v.v.f;
            tl_counters(l, stream, &c, 1);
        }
        break;
    case PRISM_CHUNK_STEPS:
        ts = u(a[0]);
        for (size_t i = 1; i + 4 < n; i += 5, recs++) {
            ts = add_int(ts, a[i]);
            prism_step s = { ts, ts + u(a[i + 1]), u(a[i + 2]), u(a[i + 3]),
                             (uint32_t)u(a[i + 4]) };
            tl_steps(l, stream, &s, 1);
        }
        break;
    case PRISM_CHUNK_MEMORY:
        ts = u(a[0]);
        for (size_t i = 1; i < n; i++, recs++) {
            cbor_item_t **f = items(a[i], &k);
            ts += u(f[0]);
            prism_memory_sample m = { .ts = ts, .rss = u(f[2]) };
            m.step = cbor_is_null(f[1]) ? PRISM_NO_STEP : u(f[1]);
            m.cpu_permille = cbor_is_null(f[3]) ? PRISM_NO_CPU : (uint32_t)u(f[3]);
            size_t ng;
            cbor_item_t **gs = items(f[4], &ng);
            m.ngpu = (uint32_t)ng;
            for (size_t g = 0; g < ng; g++) {
                cbor_item_t **e = items(gs[g], &k);
                m.gpu[g] = (prism_gpu_mem){ (uint32_t)u(e[0]), u(e[1]), u(e[2]), PRISM_NO_CPU, PRISM_NO_VALUE };
            }
            size_t nf = cbor_array_size(a[i]);      /* 1.2: the machine's load */
            m.host_busy_permille = m.children_cpu_permille = PRISM_NO_CPU;
            if (nf > 6)
                m.ncpu = (uint32_t)u(f[6]);
            if (m.ncpu && !cbor_is_null(f[5]))
                m.host_busy_permille = (uint32_t)u(f[5]);
            if (m.ncpu && nf > 7 && !cbor_is_null(f[7]))
                m.children_cpu_permille = (uint32_t)u(f[7]);
            tl_memory(l, &m);
        }
        break;
    case PRISM_CHUNK_GPU:
        for (size_t i = 1; i < n; i++, recs++) {
            cbor_item_t **f = items(a[i], &k);
            prism_gpu_record g = { .type = (uint32_t)u(f[0]) };
            g.start = add_int(u(a[0]), f[1]);
            g.end = g.start + u(f[2]);
            g.device = (uint32_t)u(f[3]);
            g.stream = (uint32_t)u(f[4]);
            g.correlation = u(f[5]);
            gpu_fields(f, &g);
            tl_gpu(l, &g, 1);
        }
        break;
    case PRISM_CHUNK_DROPPED:
        for (size_t i = 0; i < n; i++, recs++) {
            cbor_item_t **f = items(a[i], &k);
            prism_dropped d = { (uint32_t)u(f[0]), (uint32_t)u(f[1]), u(f[2]), false, 0 };
            tl_dropped(l, &d);
        }
        break;
    case PRISM_CHUNK_INFO:
        for (size_t i = 0; i + 1 < n; i += 2, recs++) {
            prism_value v = scalar(a[i + 1], buf);
            tl_info(l, text(a[i], kbuf, NULL), &v);
        }
        break;
    case PRISM_CHUNK_FOOTER: {
        assert_true(cbor_is_bool(a[4]));
        prism_footer f = { u(a[0]), u(a[1]), u(a[2]), u(a[3]), cbor_get_bool(a[4]) };
        tl_footer(l, &f);
        recs = 1;
        break;
    }
    case PRISM_CHUNK_CPU:
        /* a uint advances the pass time; an array is a sample at it */
        ts = u(a[0]);
        for (size_t i = 1; i < n; i++) {
            if (cbor_isa_uint(a[i])) {
                ts += u(a[i]);
                continue;
            }
            cbor_item_t **f = items(a[i], &k);
            assert_true(k >= 4);
            prism_cpu_sample c = { ts, (uint32_t)u(f[0]), (uint32_t)u(f[1]), u(f[2]), u(f[3]) };
            if (!(c.flags & PRISM_CPU_HAVE_WAIT))
                c.wait_ns = 0;
            tl_cpu(l, &c, 1);
            recs++;
        }
        break;
    default:
        fail_msg("unexpected kind %u", kind);
    }
    return recs;
}

/* ---- walking a file with cbor_load ---- */

/* Every item of data decodes with cbor_load; each chunk's records, decoded
 * from libcbor's tree, equal what the reader delivered for it. */
static void check_file(const uint8_t *data, size_t len, tlog *rd)
{
    prism_reader_stats st;
    tlog_init(rd);
    assert_int_equal(tlog_read_all(rd, data, len, &st), PRISM_OK);
    assert_int_equal(st.damaged + st.malformed + st.unknown + st.torn_bytes, 0);

    struct cbor_load_result res;
    cbor_item_t *h = cbor_load(data, len, &res);
    assert_non_null(h);
    assert_int_equal(res.error.code, CBOR_ERR_NONE);
    assert_true(cbor_isa_tag(h));
    assert_int_equal(cbor_tag_value(h), 55799);
    cbor_item_t *m = cbor_tag_item(h);
    assert_true(cbor_isa_map(m) && cbor_map_is_definite(m));
    size_t np = cbor_map_size(m);
    struct cbor_pair *pairs = cbor_map_handle(m);
    char buf[PRISM_MAX_STRING_BYTES + 1];
    assert_string_equal(text(pairs[0].key, buf, NULL), "magic");
    assert_string_equal(text(pairs[0].value, buf, NULL), "PRISM");
    assert_string_equal(text(pairs[np - 1].key, buf, NULL), "checksum");
    /* the checksum covers the bytes before its key (9 bytes) and value (9) */
    assert_int_equal(u(pairs[np - 1].value), XXH3_64bits(data, res.read - 18));
    cbor_decref(&m);
    cbor_decref(&h);

    size_t off = res.read, ci = 0;
    assert_int_equal(rd->hdr_end > 0, true);
    while (off < len) {
        cbor_item_t *c = cbor_load(data + off, len - off, &res);
        assert_non_null(c);
        assert_int_equal(res.error.code, CBOR_ERR_NONE);
        assert_int_equal(data[off], 0x85);
        size_t n;
        cbor_item_t **f = items(c, &n);
        assert_int_equal(n, 5);
        assert_true(cbor_isa_tag(f[3]));
        assert_int_equal(cbor_tag_value(f[3]), 24);
        cbor_item_t *bs = cbor_tag_item(f[3]);
        assert_true(cbor_isa_bytestring(bs) && cbor_bytestring_is_definite(bs));
        assert_int_equal(u(f[4]), XXH3_64bits(data + off, res.read - 9));

        assert_true(ci < rd->nchunks);
        const tlog_chunk *rc = &rd->chunks[ci];
        assert_int_equal(rc->ci.status, PRISM_CHUNK_OK);
        assert_int_equal(rc->ci.offset, off);
        assert_int_equal(rc->ci.length, res.read);
        assert_int_equal(rc->ci.kind, u(f[0]));
        assert_int_equal(rc->ci.stream, u(f[1]));
        assert_int_equal(rc->ci.seq, u(f[2]));
        assert_int_equal(rc->ci.payload_len, cbor_bytestring_length(bs));

        struct cbor_load_result r2;
        cbor_item_t *pa = cbor_load(cbor_bytestring_handle(bs), cbor_bytestring_length(bs), &r2);
        assert_non_null(pa);
        assert_int_equal(r2.error.code, CBOR_ERR_NONE);
        assert_int_equal(r2.read, cbor_bytestring_length(bs));      /* one item */
        assert_true(cbor_isa_array(pa));
        tlog one;
        tlog_init(&one);
        uint64_t recs = decode_payload(&one, rc->ci.kind, rc->ci.stream, pa);
        assert_int_equal(recs, rc->ci.records);
        assert_int_equal(rc->rec_end - rc->rec_start, one.len);
        assert_memory_equal(rd->b + rc->rec_start, one.b, one.len);
        tlog_free(&one);
        cbor_decref(&pa);
        cbor_decref(&bs);
        cbor_decref(&c);
        off += res.read;
        ci++;
    }
    assert_int_equal(off, len);
    assert_int_equal(ci, rd->nchunks);
}

static void test_refgen_fixtures(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 12; i++) {
        refgen_opts o = refgen_defaults();
        o.seed = 1 + i;
        o.extremes = i % 2 == 0;
        o.threads = 1 + i % 3;
        o.steps = 4 + i;
        o.chunk_bytes = i % 4 == 0 ? 512 : i % 4 == 1 ? 4096 : i % 4 == 2 ? 700 : 65536;
        o.footer = i != 5;
        o.regions_only = i == 7;
        o.cpu = i % 3 != 1;
        refgen_out out;
        assert_int_equal(refgen_build(&o, &out), 0);
        tlog rd;
        check_file(out.data, out.len, &rd);
        assert_int_equal(rd.nchunks, out.chunks);
        size_t ncpu = 0;
        for (size_t k = 0; k < rd.nchunks; k++)
            ncpu += rd.chunks[k].ci.kind == PRISM_CHUNK_CPU;
        assert_int_equal(ncpu > 0, o.cpu && !o.regions_only);
        tlog_free(&rd);
        free(out.data);
    }
}

/* ---- every valid length encoding ---- */

/* Copy one item from *in to *out with every head of major types 0-6 in its
 * 8-byte form (additional info 27); floats and simple values as they are. */
static void overlong_item(const uint8_t **in, uint8_t **out)
{
    const uint8_t *start = *in;
    uint8_t b = *(*in)++;
    unsigned mt = b >> 5, ai = b & 31u;
    uint64_t v = ai;
    assert_true(ai <= 27);
    if (ai >= 24) {
        v = 0;
        for (unsigned i = 0; i < 1u << (ai - 24); i++)
            v = v << 8 | *(*in)++;
    }
    if (mt == 7) {
        memcpy(*out, start, (size_t)(*in - start));
        *out += *in - start;
        return;
    }
    *(*out)++ = (uint8_t)(mt << 5 | 27);
    *out += tbe(*out, v, 8);
    if (mt == 2 || mt == 3) {
        memcpy(*out, *in, v);
        *out += v;
        *in += v;
    } else if (mt >= 4) {
        uint64_t k = mt == 4 ? v : mt == 5 ? 2 * v : 1;
        for (uint64_t i = 0; i < k; i++)
            overlong_item(in, out);
    }
}

/* The whole file re-encoded with overlong heads (the chunk's 85 and the
 * header's d9 d9 f7 excepted), checksums recomputed. */
static size_t overlong_file(const uint8_t *in, size_t len, const tlog *rd, uint8_t *out)
{
    uint8_t *o = out;
    const uint8_t *p = in + 3;
    assert_true(rd->nchunks > 0);
    assert_int_equal(rd->chunks[rd->nchunks - 1].ci.offset +
                     rd->chunks[rd->nchunks - 1].ci.length, len);
    memcpy(o, in, 3);
    o += 3;
    assert_true((*p >> 5) == 5 && (*p & 31u) < 24);     /* a short map head */
    *o++ = 0xbb;
    o += tbe(o, *p++ & 31u, 8);
    for (;;) {
        if (memcmp(p, "\x68" "checksum", 9) == 0) {
            uint64_t sum = XXH3_64bits(out, (size_t)(o - out));
            memcpy(o, p, 9);
            o += 9;
            *o++ = 0x1b;
            o += tbe(o, sum, 8);
            break;
        }
        overlong_item(&p, &o);
        overlong_item(&p, &o);
    }
    for (size_t k = 0; k < rd->nchunks; k++) {
        const prism_chunk_info *c = &rd->chunks[k].ci;
        const uint8_t *pl = in + c->offset + c->length - 9 - c->payload_len;
        uint8_t *at = o;
        *o++ = 0x85;
        const uint64_t fields[] = { c->kind, c->stream, c->seq };
        for (int i = 0; i < 3; i++) {
            *o++ = 0x1b;
            o += tbe(o, fields[i], 8);
        }
        *o++ = 0xdb;
        o += tbe(o, 24, 8);
        uint8_t *lenp = o;
        o += 9;
        const uint8_t *q = pl;
        overlong_item(&q, &o);
        assert_ptr_equal(q, pl + c->payload_len);
        lenp[0] = 0x5b;
        tbe(lenp + 1, (uint64_t)(o - lenp - 9), 8);
        uint64_t sum = XXH3_64bits(at, (size_t)(o - at));
        *o++ = 0x1b;
        o += tbe(o, sum, 8);
    }
    return (size_t)(o - out);
}

static void test_overlong_encodings(void **state)
{
    (void)state;
    refgen_opts o = refgen_defaults();
    o.extremes = true;
    o.cpu = true;
    o.steps = 6;
    o.chunk_bytes = 1024;
    refgen_out out;
    assert_int_equal(refgen_build(&o, &out), 0);
    tlog rd, ro;
    check_file(out.data, out.len, &rd);
    uint8_t *big = malloc(out.len * 10);
    assert_non_null(big);
    size_t n = overlong_file(out.data, out.len, &rd, big);
    assert_true(n > out.len * 2);
    check_file(big, n, &ro);
    /* the same header and the same records, chunk by chunk */
    assert_int_equal(ro.hdr_end, rd.hdr_end);
    assert_memory_equal(ro.b, rd.b, rd.hdr_end);
    assert_int_equal(ro.nchunks, rd.nchunks);
    for (size_t k = 0; k < rd.nchunks; k++) {
        const tlog_chunk *a = &rd.chunks[k], *b = &ro.chunks[k];
        assert_int_equal(a->ci.records, b->ci.records);
        assert_int_equal(a->rec_end - a->rec_start, b->rec_end - b->rec_start);
        assert_memory_equal(rd.b + a->rec_start, ro.b + b->rec_start, a->rec_end - a->rec_start);
    }
    tlog_free(&rd);
    tlog_free(&ro);
    free(big);
    free(out.data);
}

/* Half and single precision floats and `undefined` where scalars go. */
static void test_small_floats(void **state)
{
    (void)state;
    static uint8_t file[1024];
    size_t n;
    prism_header h = { .producer = "f" };
    assert_int_equal(prism_header_encode(&h, file, sizeof file, &n), PRISM_OK);
    static const uint8_t counters[] = {
        0x9a, 0, 0, 0, 10, 0x00,
        0x01, 0x01, 0xf9, 0x3c, 0x00,                       /* 1.0 (half) */
        0x01, 0x02, 0xfa, 0x3f, 0xc0, 0x00, 0x00,           /* 1.5 (single) */
        0x01, 0x03, 0xf9, 0xfc, 0x00,                       /* -inf (half) */
    };
    static const uint8_t info[] = {
        0x9a, 0, 0, 0, 6, 0x61, 'h', 0xf9, 0xc0, 0x00,      /* -2.0 */
        0x61, 's', 0xfa, 0x47, 0x7f, 0xe0, 0x00,            /* 65504.0 */
        0x61, 'u', 0xf7,                                    /* undefined: null */
    };
    n += tchunk(file + n, PRISM_CHUNK_COUNTERS, 1, 0, counters, sizeof counters);
    n += tchunk(file + n, PRISM_CHUNK_INFO, 0, 0, info, sizeof info);
    tlog rd;
    check_file(file, n, &rd);
    tlog want;
    tlog_init(&want);
    const prism_counter c[] = { { 1, 1, true, { .f = 1.0 } }, { 2, 2, true, { .f = 1.5 } },
                                { 3, 3, true, { .f = -INFINITY } } };
    tl_counters(&want, 1, c, 3);
    assert_memory_equal(rd.b + rd.chunks[0].rec_start, want.b, want.len);
    tlog_free(&want);
    tlog_init(&want);
    const prism_value v[] = { { PRISM_VAL_FLOAT, { .f = -2.0 } },
                              { PRISM_VAL_FLOAT, { .f = 65504.0 } },
                              { PRISM_VAL_NULL, { .i = 0 } } };
    tl_info(&want, "h", &v[0]);
    tl_info(&want, "s", &v[1]);
    tl_info(&want, "u", &v[2]);
    assert_int_equal(rd.chunks[1].rec_end - rd.chunks[1].rec_start, want.len);
    assert_memory_equal(rd.b + rd.chunks[1].rec_start, want.b, want.len);
    tlog_free(&want);
    tlog_free(&rd);
}

/* CPU payloads a writer may produce besides the reference writer's: a
 * pass at the base, a delta of 0, samples with fields of a later minor
 * version, overlong heads, wait without HAVE_WAIT (read as 0). */
static void test_cpu_layouts(void **state)
{
    (void)state;
    static uint8_t file[1024];
    size_t n;
    prism_header h = { .producer = "c", .version_minor = 1 };
    assert_int_equal(prism_header_encode(&h, file, sizeof file, &n), PRISM_OK);
    static const uint8_t cpu[] = {
        0x9a, 0, 0, 0, 7, 0x18, 100,                        /* base 100 */
        0x86, 0x01, 0x01, 0x05, 0x06, 0x61, 'x', 0x82, 0x01, 0x02,   /* + 2 fields */
        0x00,                                               /* delta 0: a new pass */
        0x84, 0x02, 0x00, 0x09, 0x09,                       /* wait without the flag */
        0x1b, 0, 0, 0, 0, 0, 0, 0, 7,                       /* delta 7, overlong */
        0x84, 0x1a, 0, 0, 0, 3, 0x03, 0x19, 0, 1, 0x00,
        0x84, 0x04, 0x02, 0x00, 0x00,
    };
    n += tchunk(file + n, PRISM_CHUNK_CPU, 0, 0, cpu, sizeof cpu);
    tlog rd;
    check_file(file, n, &rd);
    tlog want;
    tlog_init(&want);
    const prism_cpu_sample c[] = {
        { 100, 1, PRISM_CPU_HAVE_WAIT, 5, 6 }, { 100, 2, 0, 9, 0 },
        { 107, 3, PRISM_CPU_HAVE_WAIT | PRISM_CPU_EXITED, 1, 0 }, { 107, 4, PRISM_CPU_EXITED, 0, 0 },
    };
    tl_cpu(&want, c, 4);
    assert_int_equal(rd.chunks[0].ci.records, 4);
    assert_int_equal(rd.chunks[0].rec_end - rd.chunks[0].rec_start, want.len);
    assert_memory_equal(rd.b + rd.chunks[0].rec_start, want.b, want.len);
    tlog_free(&want);
    tlog_free(&rd);
}

/* FORMAT.md section 7.12: the CPU example's payload, byte for byte. */
static void test_cpu_example(void **state)
{
    (void)state;
    static const uint8_t spec[] = {
        0x9a, 0x00, 0x00, 0x00, 0x06, 0x1a, 0x00, 0x4c, 0x4b, 0x40,
        0x84, 0x01, 0x01, 0x1a, 0x00, 0x3d, 0x09, 0x00, 0x19, 0x4e, 0x20,
        0x84, 0x02, 0x01, 0x1a, 0x00, 0x0f, 0x42, 0x40, 0x00,
        0x1a, 0x00, 0x4c, 0x4b, 0x40,
        0x84, 0x01, 0x01, 0x1a, 0x00, 0x87, 0xcd, 0xa0, 0x19, 0x4e, 0x20,
        0x84, 0x02, 0x03, 0x1a, 0x00, 0x10, 0xc8, 0xe0, 0x19, 0x13, 0x88,
    };
    const prism_cpu_sample c[] = {
        { 5000000, 1, PRISM_CPU_HAVE_WAIT, 4000000, 20000 },
        { 5000000, 2, PRISM_CPU_HAVE_WAIT, 1000000, 0 },
        { 10000000, 1, PRISM_CPU_HAVE_WAIT, 8900000, 20000 },
        { 10000000, 2, PRISM_CPU_HAVE_WAIT | PRISM_CPU_EXITED, 1100000, 5000 },
    };
    uint8_t buf[256];
    prism_enc e;
    size_t len;
    assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, PRISM_CHUNK_CPU, 0, 0, 5000000, 0),
                     PRISM_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(prism_enc_cpu(&e, &c[i]), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    /* framing: 85 0c 00 00 d8 18 5a LLLLLLLL, then the payload, then 9 bytes */
    assert_int_equal(len, 11 + sizeof spec + 9);
    assert_memory_equal(buf + 11, spec, sizeof spec);
}

/* FORMAT.md section 7.7: the memory examples (1.1 and 1.2), byte for byte. */
static void test_memory_examples(void **state)
{
    (void)state;
    static const uint8_t v11[] = {
        0x9a, 0x00, 0x00, 0x00, 0x02, 0x19, 0x27, 0x10, 0x85, 0x00, 0xf6, 0x1a, 0x00, 0x10,
        0x00, 0x00, 0x19, 0x03, 0xb6, 0x81, 0x83, 0x00, 0x19, 0x10, 0x00, 0x19, 0x20, 0x00,
    };
    static const uint8_t v12[] = {
        0x9a, 0x00, 0x00, 0x00, 0x02, 0x19, 0x27, 0x10, 0x88, 0x00, 0xf6, 0x1a, 0x00, 0x10,
        0x00, 0x00, 0x19, 0x03, 0xb6, 0x80, 0x19, 0x05, 0xdc, 0x02, 0xf6,
    };
    prism_memory_sample m = { .ts = 10000, .step = PRISM_NO_STEP, .rss = 1048576, .cpu_permille = 950,
                              .ngpu = 1, .gpu = { { 0, 4096, 8192 } } };
    uint8_t buf[256];
    prism_enc e;
    size_t len;
    assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, PRISM_CHUNK_MEMORY, 0, 0, 10000, 0),
                     PRISM_OK);
    assert_int_equal(prism_enc_memory(&e, &m), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    assert_int_equal(len, 11 + sizeof v11 + 9);
    assert_memory_equal(buf + 11, v11, sizeof v11);
    m.ngpu = 0;
    m.ncpu = 2;
    m.host_busy_permille = 1500;
    m.children_cpu_permille = PRISM_NO_CPU;
    assert_int_equal(prism_enc_begin(&e, buf, sizeof buf, PRISM_CHUNK_MEMORY, 0, 0, 10000, 0),
                     PRISM_OK);
    assert_int_equal(prism_enc_memory(&e, &m), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    assert_int_equal(len, 11 + sizeof v12 + 9);
    assert_memory_equal(buf + 11, v12, sizeof v12);
}

/* FORMAT.md section 14: the worked example, byte for byte. */
static void test_worked_example(void **state)
{
    (void)state;
    static const uint8_t spec[240] = {
        0xd9, 0xd9, 0xf7, 0xac, 0x65, 0x6d, 0x61, 0x67, 0x69, 0x63, 0x65, 0x50,
        0x52, 0x49, 0x53, 0x4d, 0x67, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e,
        0x82, 0x01, 0x00, 0x68, 0x70, 0x72, 0x6f, 0x64, 0x75, 0x63, 0x65, 0x72,
        0x64, 0x64, 0x65, 0x6d, 0x6f, 0x64, 0x68, 0x6f, 0x73, 0x74, 0x61, 0x68,
        0x63, 0x70, 0x69, 0x64, 0x07, 0x64, 0x72, 0x61, 0x6e, 0x6b, 0x20, 0x64,
        0x61, 0x72, 0x67, 0x76, 0x81, 0x67, 0x2e, 0x2f, 0x74, 0x72, 0x61, 0x69,
        0x6e, 0x65, 0x63, 0x6c, 0x6f, 0x63, 0x6b, 0x69, 0x6d, 0x6f, 0x6e, 0x6f,
        0x74, 0x6f, 0x6e, 0x69, 0x63, 0x6d, 0x73, 0x74, 0x61, 0x72, 0x74, 0x5f,
        0x75, 0x6e, 0x69, 0x78, 0x5f, 0x6e, 0x73, 0x1b, 0x18, 0x86, 0x72, 0x51,
        0xed, 0xfa, 0x00, 0x00, 0x6d, 0x73, 0x74, 0x61, 0x72, 0x74, 0x5f, 0x6d,
        0x6f, 0x6e, 0x6f, 0x5f, 0x6e, 0x73, 0x1b, 0x00, 0x00, 0x00, 0x01, 0x2a,
        0x05, 0xf2, 0x00, 0x66, 0x63, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0xa1, 0x68,
        0x66, 0x6c, 0x75, 0x73, 0x68, 0x5f, 0x6d, 0x73, 0x18, 0xc8, 0x68, 0x63,
        0x68, 0x65, 0x63, 0x6b, 0x73, 0x75, 0x6d, 0x1b, 0x17, 0x5b, 0x7f, 0xab,
        0xe3, 0xa3, 0xbe, 0x0e, 0x85, 0x01, 0x00, 0x00, 0xd8, 0x18, 0x5a, 0x00,
        0x00, 0x00, 0x0e, 0x9a, 0x00, 0x00, 0x00, 0x02, 0x01, 0x67, 0x66, 0x6f,
        0x72, 0x77, 0x61, 0x72, 0x64, 0x1b, 0x9e, 0xda, 0x5b, 0xe7, 0x1a, 0x63,
        0xe7, 0xec, 0x85, 0x03, 0x01, 0x00, 0xd8, 0x18, 0x5a, 0x00, 0x00, 0x00,
        0x0e, 0x9a, 0x00, 0x00, 0x00, 0x05, 0x19, 0x03, 0xe8, 0x00, 0x00, 0x01,
        0x19, 0x01, 0xf5, 0x1b, 0x5d, 0x3b, 0xf0, 0x7d, 0x6e, 0x4c, 0x5a, 0xa3,
    };
    static const char *const argv[] = { "./train" };
    const prism_kv cfg[] = { { "flush_ms", { PRISM_VAL_UINT, { .u = 200 } } } };
    prism_header h = { .producer = "demo", .host = "h", .pid = 7, .rank = -1, .argv = argv,
                       .argc = 1, .clock = "monotonic",
                       .start_unix_ns = 1767225600000000000ull, .start_mono_ns = 5000000000ull,
                       .config = cfg, .nconfig = 1 };
    uint8_t file[512];
    size_t n, len;
    assert_int_equal(prism_header_encode(&h, file, sizeof file, &n), PRISM_OK);
    assert_int_equal(n, 0xac);
    prism_enc e;
    assert_int_equal(prism_enc_begin(&e, file + n, sizeof file - n, PRISM_CHUNK_STRINGS, 0, 0,
                                     1, 0), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, "forward", 7), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    assert_int_equal(prism_enc_begin(&e, file + n, sizeof file - n, PRISM_CHUNK_REGIONS, 1, 0,
                                     1000, 0), PRISM_OK);
    assert_int_equal(prism_enc_enter(&e, 1000, 1), PRISM_OK);
    assert_int_equal(prism_enc_exit(&e, 1250), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    assert_int_equal(n, sizeof spec);
    assert_memory_equal(file, spec, sizeof spec);
    tlog rd;
    check_file(spec, sizeof spec, &rd);
    assert_int_equal(rd.nchunks, 2);
    tlog_free(&rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refgen_fixtures),
        cmocka_unit_test(test_overlong_encodings),
        cmocka_unit_test(test_small_floats),
        cmocka_unit_test(test_cpu_layouts),
        cmocka_unit_test(test_cpu_example),
        cmocka_unit_test(test_memory_examples),
        cmocka_unit_test(test_worked_example),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

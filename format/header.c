/*
 * header.c - the file header: tag 55799 (self-describe) + a map of text keys.
 * The last entry, "checksum", holds the XXH3-64 of every byte of the file
 * before that key.  docs/FORMAT.md, "Header".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cbor_cursor.h"
#include "enc_util.h"
#include "format_internal.h"

#define HEADER_KEYS 12

prism_status prism_header_encode(const prism_header *h, uint8_t *buf,
                                 size_t cap, size_t *out_len)
{
    if (!h || !buf || h->version_minor > PRISM_FORMAT_MINOR)
        return PRISM_E_ARG;
    if (h->argc > PRISM_MAX_ARGV || h->nconfig > PRISM_MAX_CONFIG ||
        (h->argc && !h->argv) || (h->nconfig && !h->config))
        return PRISM_E_LIMIT;
    if (cap > PRISM_MAX_HEADER_BYTES)
        cap = PRISM_MAX_HEADER_BYTES;
    wr w = { buf, 0, cap, true };
    w_raw(&w, 0xd9);
    w_raw(&w, 0xd9);
    w_raw(&w, 0xf7);
    w_map(&w, HEADER_KEYS);
    w_cstr(&w, "magic");
    w_cstr(&w, PRISM_MAGIC);
    w_cstr(&w, "version");
    w_array(&w, 2);
    w_uint(&w, PRISM_FORMAT_MAJOR);
    w_uint(&w, h->version_minor);      /* the features the file uses */
    w_cstr(&w, "producer");
    w_cstr(&w, h->producer);
    w_cstr(&w, "host");
    w_cstr(&w, h->host);
    w_cstr(&w, "pid");
    w_uint(&w, h->pid);
    w_cstr(&w, "rank");
    w_int(&w, h->rank);
    w_cstr(&w, "argv");
    w_array(&w, h->argc);
    for (size_t i = 0; i < h->argc; i++)
        w_cstr(&w, h->argv[i]);
    w_cstr(&w, "clock");
    w_cstr(&w, h->clock);
    w_cstr(&w, "start_unix_ns");
    w_uint(&w, h->start_unix_ns);
    w_cstr(&w, "start_mono_ns");
    w_uint(&w, h->start_mono_ns);
    w_cstr(&w, "config");
    w_map(&w, h->nconfig);
    for (size_t i = 0; i < h->nconfig; i++) {
        w_cstr(&w, h->config[i].key);
        if (w_value(&w, &h->config[i].value) != PRISM_OK)
            return PRISM_E_ARG;
    }
    w_cstr(&w, "checksum");
    if (!w.ok)
        return cap == PRISM_MAX_HEADER_BYTES ? PRISM_E_LIMIT : PRISM_E_NOSPACE;
    uint64_t sum = XXH3_64bits(buf, w.pos - 9); /* up to the "checksum" key */
    if (w.cap - w.pos < 9)
        return cap == PRISM_MAX_HEADER_BYTES ? PRISM_E_LIMIT : PRISM_E_NOSPACE;
    w.pos += cbor_encode_uint64(sum, buf + w.pos, 9);
    *out_len = w.pos;
    return PRISM_OK;
}

/* ---- parsing ---------------------------------------------------------- */

/* Copy a text into the store's string area, NUL-terminated. */
static const char *keep(header_store *hs, const char *s, size_t len)
{
    char *d = hs->mem + hs->used;
    memcpy(d, s, len);
    d[len] = '\0';
    hs->used += len + 1;
    return d;
}

static bool key_is(const char *k, size_t klen, const char *want)
{
    return klen == strlen(want) && memcmp(k, want, klen) == 0;
}

#define FAIL(code, ...) do { \
        hs->err = (code); \
        snprintf(hs->msg, sizeof hs->msg, __VA_ARGS__); \
        hs->err_off = (uint64_t)(c.p - buf); \
        return HDR_ERROR; } while (0)

/* Map a cursor result inside the header to need-more or an error. */
#define CHECK(expr, what) do { int rc_ = (expr); \
        if (rc_ == CUR_SHORT) return HDR_SHORT; \
        if (rc_ != CUR_OK) FAIL(PRISM_E_HEADER, "malformed header (%s)", what); \
    } while (0)

static int parse_text(header_store *hs, cur *c, const char **out)
{
    const char *s;
    size_t len;
    int rc = cur_text(c, &s, &len, PRISM_MAX_STRING_BYTES);
    if (rc == CUR_OK)
        *out = keep(hs, s, len);
    return rc;
}

static int parse_value(header_store *hs, cur *c, prism_value *v)
{
    size_t tlen;
    int rc = pf_cur_value(c, v, &tlen, PRISM_MAX_STRING_BYTES);
    if (rc == CUR_OK && v->type == PRISM_VAL_TEXT)
        v->v.s = keep(hs, v->v.s, tlen);
    return rc;
}

int pf_header_parse(header_store *hs, const uint8_t *buf, size_t len)
{
    cur c = { buf, buf + len };
    unsigned mt, ai;
    uint64_t n;

    if (len >= 1 && buf[0] != 0xd9)
        FAIL(PRISM_E_NOT_PRISM, "not a PRISM profile (no CBOR self-describe tag)");
    if (len < 3)
        return HDR_SHORT;
    if (buf[1] != 0xd9 || buf[2] != 0xf7)
        FAIL(PRISM_E_NOT_PRISM, "not a PRISM profile (no CBOR self-describe tag)");
    c.p += 3;
    CHECK(cur_head(&c, &mt, &n, &ai), "map");
    if (mt != MT_MAP)
        FAIL(PRISM_E_NOT_PRISM, "not a PRISM profile (header is not a map)");
    if (n > 2u * PRISM_MAX_CONFIG)
        FAIL(PRISM_E_LIMIT, "header has %llu entries, limit %u",
             (unsigned long long)n, 2u * PRISM_MAX_CONFIG);

    /* Room for every text in the header: never more than its bytes. */
    if (!hs->mem) {
        hs->mem = malloc(PRISM_MAX_HEADER_BYTES + 64);
        if (!hs->mem)
            FAIL(PRISM_E_NOMEM, "out of memory");
    }
    hs->used = 0;
    hs->h = (prism_header){ .rank = -1 };
    hs->h.argv = hs->argv;
    hs->h.config = hs->config;
    bool have_sum = false, have_version = false;

    for (uint64_t i = 0; i < n; i++) {
        const uint8_t *key_at = c.p;
        const char *k;
        size_t klen;
        CHECK(cur_text(&c, &k, &klen, 64), "key");
        if (i == 0 && !key_is(k, klen, "magic"))
            FAIL(PRISM_E_NOT_PRISM, "not a PRISM profile (no magic)");
        if (key_is(k, klen, "magic")) {
            const char *m;
            size_t mlen;
            CHECK(cur_text(&c, &m, &mlen, 64), "magic");
            if (!key_is(m, mlen, PRISM_MAGIC))
                FAIL(PRISM_E_NOT_PRISM, "not a PRISM profile (wrong magic)");
        } else if (key_is(k, klen, "version")) {
            uint64_t cnt, maj, min;
            CHECK(cur_array(&c, &cnt), "version");
            if (cnt < 2)
                FAIL(PRISM_E_HEADER, "malformed header (version)");
            CHECK(cur_uint(&c, &maj), "version");
            CHECK(cur_uint(&c, &min), "version");
            for (uint64_t j = 2; j < cnt; j++)
                CHECK(pf_cur_skip(&c, PRISM_MAX_DEPTH), "version");
            if (maj != PRISM_FORMAT_MAJOR)
                FAIL(PRISM_E_VERSION, "format version %llu.%llu is not supported "
                     "(this reader knows %d.x)", (unsigned long long)maj,
                     (unsigned long long)min, PRISM_FORMAT_MAJOR);
            hs->h.version_major = (uint32_t)maj;
            hs->h.version_minor = (uint32_t)(min > UINT32_MAX ? UINT32_MAX : min);
            have_version = true;
        } else if (key_is(k, klen, "producer")) {
            CHECK(parse_text(hs, &c, &hs->h.producer), "producer");
        } else if (key_is(k, klen, "host")) {
            CHECK(parse_text(hs, &c, &hs->h.host), "host");
        } else if (key_is(k, klen, "clock")) {
            CHECK(parse_text(hs, &c, &hs->h.clock), "clock");
        } else if (key_is(k, klen, "pid")) {
            CHECK(cur_uint(&c, &hs->h.pid), "pid");
        } else if (key_is(k, klen, "rank")) {
            CHECK(cur_int(&c, &hs->h.rank), "rank");
        } else if (key_is(k, klen, "start_unix_ns")) {
            CHECK(cur_uint(&c, &hs->h.start_unix_ns), "start_unix_ns");
        } else if (key_is(k, klen, "start_mono_ns")) {
            CHECK(cur_uint(&c, &hs->h.start_mono_ns), "start_mono_ns");
        } else if (key_is(k, klen, "argv")) {
            uint64_t cnt;
            /* the limit first: a huge count is an error, not a short read */
            CHECK(cur_head(&c, &mt, &cnt, &ai), "argv");
            if (mt != MT_ARRAY)
                FAIL(PRISM_E_HEADER, "malformed header (argv)");
            if (cnt > PRISM_MAX_ARGV)
                FAIL(PRISM_E_LIMIT, "header argv has %llu entries, limit %u",
                     (unsigned long long)cnt, PRISM_MAX_ARGV);
            for (uint64_t j = 0; j < cnt; j++)
                CHECK(parse_text(hs, &c, &hs->argv[j]), "argv");
            hs->h.argc = (size_t)cnt;
        } else if (key_is(k, klen, "config")) {
            uint64_t cnt;
            CHECK(cur_head(&c, &mt, &cnt, &ai), "config");
            if (mt != MT_MAP)
                FAIL(PRISM_E_HEADER, "malformed header (config)");
            if (cnt > PRISM_MAX_CONFIG)
                FAIL(PRISM_E_LIMIT, "header config has %llu entries, limit %u",
                     (unsigned long long)cnt, PRISM_MAX_CONFIG);
            for (uint64_t j = 0; j < cnt; j++) {
                CHECK(parse_text(hs, &c, &hs->config[j].key), "config key");
                CHECK(parse_value(hs, &c, &hs->config[j].value), "config value");
            }
            hs->h.nconfig = (size_t)cnt;
        } else if (key_is(k, klen, "checksum")) {
            uint64_t sum;
            CHECK(cur_uint(&c, &sum), "checksum");
            if (XXH3_64bits(buf, (size_t)(key_at - buf)) != sum)
                FAIL(PRISM_E_HEADER, "header checksum mismatch");
            if (i + 1 != n)
                FAIL(PRISM_E_HEADER, "malformed header (checksum is not last)");
            have_sum = true;
        } else {
            CHECK(pf_cur_skip(&c, PRISM_MAX_DEPTH), "unknown key");  /* newer minor */
        }
        if ((size_t)(c.p - buf) > PRISM_MAX_HEADER_BYTES)
            FAIL(PRISM_E_LIMIT, "header larger than %u bytes", PRISM_MAX_HEADER_BYTES);
    }
    if (!have_version)
        FAIL(PRISM_E_HEADER, "malformed header (no version)");
    if (!have_sum)
        FAIL(PRISM_E_HEADER, "malformed header (no checksum)");
    hs->len = (size_t)(c.p - buf);
    return HDR_DONE;
}

void pf_header_store_free(header_store *hs)
{
    free(hs->mem);
    hs->mem = NULL;
}

/*
 * import.c - the importer as a reader backend (prism_foreign_backend):
 * detection by content, gzip through zlib, errors with their byte offset,
 * and the getters the reader answers from.  prism/import.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

#define ZOUT (256u * 1024u)

bool imp_fail(imp_events *m, prism_status st, uint64_t off, const char *fmt, ...)
{
    if (m->e.code)
        return false;
    va_list ap;
    va_start(ap, fmt);
    pb_error_vset(&m->e, st, off, fmt, ap);
    va_end(ap);
    return false;
}

static bool blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int prism_import_probe(const uint8_t *p, size_t n, bool final)
{
    if (n >= 1 && p[0] == 0x1f)
        return n >= 2 ? p[1] == 0x8b : final ? 0 : -1;
    size_t i = 0;
    if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
        i = 3;                          /* a UTF-8 byte order mark */
    while (i < n && blank(p[i]))
        i++;
    if (i == n)
        return final ? 0 : -1;
    return p[i] == '{' || p[i] == '[';
}

static void *imp_open(const prism_reader_callbacks *cb, void *ctx)
{
    imp *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (!imp_events_init(&m->s, cb, ctx) || !imp_json_init(m)) {
        imp_events_free(&m->s);
        imp_json_free(m);
        free(m);
        return NULL;
    }
    return m;
}

static void imp_close(void *b)
{
    imp *m = b;
    if (!m)
        return;
    if (m->gz_started)
        inflateEnd(&m->z);
    free(m->zout);
    imp_json_free(m);
    imp_events_free(&m->s);
    free(m->flows);
    free(m);
}

static prism_status report(imp *m, const char **msg, uint64_t *off)
{
    *msg = m->s.e.msg;
    *off = m->s.e.offset;
    return m->s.e.code;
}

/* Skip a byte order mark at the very start (yajl does not take one). */
static size_t bom(imp *m, const uint8_t *p, size_t n)
{
    if (m->json_bytes || m->json_started || n < 3)
        return 0;
    return p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf ? 3 : 0;
}

static bool plain(imp *m, const uint8_t *p, size_t n)
{
    size_t skip = bom(m, p, n);
    m->json_bytes += skip;
    return imp_json_feed(m, p + skip, n - skip);
}

static bool gunzip(imp *m, const uint8_t *p, size_t n)
{
    if (!m->gz_started) {
        m->zout = malloc(ZOUT);
        if (!m->zout || inflateInit2(&m->z, 15 + 32) != Z_OK)
            return imp_fail(&m->s, PRISM_E_NOMEM, 0, "out of memory");
        m->gz_started = true;
    }
    m->z.next_in = (Bytef *)p;
    m->z.avail_in = (uInt)n;
    while (m->z.avail_in) {
        if (m->gz_done) {               /* another gzip member follows */
            if (inflateReset(&m->z) != Z_OK)
                return imp_fail(&m->s, PRISM_E_NOMEM, 0, "out of memory");
            m->gz_done = false;
        }
        m->z.next_out = m->zout;
        m->z.avail_out = ZOUT;
        int rc = inflate(&m->z, Z_NO_FLUSH);
        size_t got = ZOUT - m->z.avail_out;
        m->gz_pos = m->s.in_bytes - m->z.avail_in;
        if (got && !plain(m, m->zout, got))
            return false;
        if (rc == Z_STREAM_END) {
            m->gz_done = true;
        } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
            return imp_fail(&m->s, PRISM_E_NOT_PRISM, m->s.in_bytes - m->z.avail_in,
                            "damaged gzip data (%s)", m->z.msg ? m->z.msg : "inflate failed");
        } else if (rc == Z_MEM_ERROR) {
            return imp_fail(&m->s, PRISM_E_NOMEM, m->s.in_bytes, "out of memory");
        } else if (rc == Z_BUF_ERROR && !got) {
            break;
        }
    }
    /* drain what inflate still holds for this input */
    return true;
}

static prism_status imp_feed(void *b, const uint8_t *p, size_t n, const char **msg,
                             uint64_t *off)
{
    imp *m = b;
    if (m->s.e.code)
        return report(m, msg, off);
    if (!n)
        return PRISM_OK;
    if (!m->s.in_bytes && !m->gz)
        m->gz = n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
    m->s.in_bytes += n;
    bool ok = m->gz ? gunzip(m, p, n) : plain(m, p, n);
    return ok ? PRISM_OK : report(m, msg, off);
}

static prism_status imp_finish(void *b, const char **msg, uint64_t *off)
{
    imp *m = b;
    if (m->s.e.code)
        return report(m, msg, off);
    if (m->gz && m->gz_started) {       /* flush the inflater's remainder */
        for (;;) {
            m->z.next_in = NULL;
            m->z.avail_in = 0;
            m->z.next_out = m->zout;
            m->z.avail_out = ZOUT;
            int rc = inflate(&m->z, Z_SYNC_FLUSH);
            size_t got = ZOUT - m->z.avail_out;
            if (got && !plain(m, m->zout, got))
                return report(m, msg, off);
            if (rc != Z_OK || !got)
                break;
        }
        if (!m->gz_done && m->s.complete)
            m->s.complete = false;        /* JSON whole, gzip cut: say so */
    }
    if (!imp_json_finish(m))
        return report(m, msg, off);
    if (!imp_link_flows(m)) {
        imp_fail(&m->s, PRISM_E_NOMEM, m->s.in_bytes, "out of memory");
        return report(m, msg, off);
    }
    imp_kineto_source(m);
    if (!imp_build(&m->s))
        return report(m, msg, off);
    return PRISM_OK;
}

static const prism_header *imp_header(const void *b)
{
    return imp_events_header(&((const imp *)b)->s);
}

static const char *imp_string(const void *b, uint32_t id, size_t *len)
{
    return imp_events_string(&((const imp *)b)->s, id, len);
}

static const prism_reader_stats *imp_stats(const void *b)
{
    return &((const imp *)b)->s.st;
}

static const prism_foreign_backend backend = {
    .name = "torch.profiler trace",
    .probe = prism_import_probe,
    .open = imp_open,
    .feed = imp_feed,
    .finish = imp_finish,
    .close = imp_close,
    .header = imp_header,
    .string = imp_string,
    .stats = imp_stats,
};

const prism_foreign_backend *prism_import_backend(void) { return &backend; }

/*
 * job_io.c - the rank summary file (docs/SUMMARY.md): one JSON object,
 * written with stdio (strings by pb_json); its lexical rules (how a string, an integer, a hash
 * must look; the scanner that stops a string or number past its limit
 * before yajl buffers it: a 20 MB string costs 64 KiB); read from a file or
 * from memory through the parser of job_parse.c; told apart from profiles
 * by its first bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ropen.h"
#include "escape.h"            /* esc_utf8_decode: the project's one decoder */
#include "job_io.h"
#include "jsonw.h"

/* ---- writing ---- */

/* s as a JSON string (pb_json's escaping), cut, at a character, before
 * SUM_MAX_STRING bytes between the quotes, so the reader takes back
 * whatever was written. */
static void put_str(FILE *f, const char *str)
{
    const char *s = str ? str : "";
    pb_json_put_string_max(f, s, strlen(s), SUM_MAX_STRING);
}

bool prism_rank_summary_write(FILE *f, const prism_rank_summary *s)
{
    fprintf(f, "{\"prism_summary\": %d,\n \"producer\": ", PRISM_SUMMARY_VERSION);
    put_str(f, "prism-top " PRISM_VERSION_STRING);
    fputs(",\n \"source\": ", f);
    put_str(f, s->source);
    fprintf(f, ",\n \"rank\": %" PRId64 ",\n \"host\": ", s->rank);
    put_str(f, s->host);
    fprintf(f, ",\n \"pid\": %" PRIu64 ",\n \"start_unix_ns\": %" PRIu64 ",\n \"thread\": ",
            s->pid, s->start_unix_ns);
    put_str(f, s->thread);
    fprintf(f, ",\n \"events\": %" PRIu64 ",\n \"dropped\": %" PRIu64
               ",\n \"span_ns\": %" PRIu64 ",\n \"complete\": %s,\n \"steps_total\": %" PRIu64
               ",\n \"gpu\": {\"kernel_ns\": %" PRIu64 ", \"nccl_kernel_ns\": %" PRIu64
               ", \"busy_ns\": %" PRIu64 ", \"span_ns\": %" PRIu64 "},\n \"steps\": [",
            s->events, s->dropped, s->span_ns, s->complete ? "true" : "false", s->steps_total,
            s->gpu_kernel_ns, s->nccl_kernel_ns, s->gpu_busy_ns, s->gpu_span_ns);
    for (size_t i = 0; i < s->nsteps; i++)
        fprintf(f, "%s\n  [%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", i ? "," : "",
                s->steps[i].index, s->steps[i].step_ns, s->steps[i].wait_ns);
    fputs(s->nsteps ? "\n ],\n \"regions\": [" : "],\n \"regions\": [", f);
    for (size_t i = 0; i < s->nregions; i++) {
        const prism_rank_region *r = &s->regions[i];
        fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        put_str(f, r->name);
        fprintf(f, ", \"path_hash\": \"%016" PRIx64 "\", \"parent_hash\": \"%016" PRIx64
                   "\", \"depth\": %" PRIu32 ", \"calls\": %" PRIu64 ", \"total_ns\": %" PRIu64
                   ", \"self_ns\": %" PRIu64 ", \"in_step_ns\": %" PRIu64
                   ", \"cpu_known_ns\": %" PRIu64 ", \"oncpu_ns\": %" PRIu64
                   ", \"offcpu_ns\": %" PRIu64 ", \"gpu_wait_ns\": %" PRIu64 ", \"wait\": ",
                r->path_hash, r->parent_hash, r->depth, r->calls, r->total_ns, r->self_ns,
                r->in_step_ns, r->cpu_known_ns, r->oncpu_ns, r->offcpu_ns, r->gpu_wait_ns);
        put_str(f, prism_wait_kind_name((prism_wait_kind)r->wait));
        fputc('}', f);
    }
    fputs(s->nregions ? "\n ]}\n" : "]}\n", f);
    return fflush(f) == 0 && !ferror(f);
}

/* ---- reading: the lexical rules ---- */

bool an_sum_uint(const char *s, size_t len, bool neg_ok, uint64_t max, uint64_t *u, bool *neg)
{
    size_t i = 0;
    *neg = false;
    if (len && s[0] == '-') {
        if (!neg_ok)
            return false;
        *neg = true;
        i = 1;
    }
    if (i == len)
        return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;           /* a fraction or an exponent */
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (*neg ? v > 1 : v > max)     /* the only negative taken: rank -1 */
        return false;
    *u = v;
    return true;
}

bool an_sum_hex64(const unsigned char *s, size_t len, uint64_t *out)
{
    if (len != 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < 16; i++) {
        unsigned c = s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            d = (c | 0x20) - 'a' + 10;
        else
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

bool an_sum_text_ok(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t n = s[i] < 0x80 ? (s[i] ? 1 : 0) : esc_utf8_decode(s + i, &cp);
        if (!n || i + n > len)
            return false;
        i += n;
    }
    return true;
}

/* Bytes that end a number or literal outside strings. */
static const uint8_t separator[256] = {
    [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\n'] = 1, [','] = 1, [':'] = 1,
    ['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1,
};

size_t an_sum_scan_run(sum_scan *sc, const uint8_t *p, size_t n, const char **over)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (sc->in_str) {
            if (sc->esc)
                sc->esc = false;
            else if (c == '\\')
                sc->esc = true;
            else if (c == '"') {
                sc->in_str = false;
                continue;
            }
            if (++sc->str_run > SUM_MAX_STRING) {
                *over = "a string longer than 65536 bytes";
                return i;
            }
        } else if (c == '"') {
            sc->in_str = true;
            sc->str_run = sc->tok_run = 0;
        } else if (!separator[c]) {
            if (++sc->tok_run > SUM_MAX_TOKEN) {
                *over = "a number or literal longer than 64 bytes";
                return i;
            }
        } else {
            sc->tok_run = 0;
        }
    }
    return n;
}

/* The parser could not be made. */
static prism_status nomem(prism_rank_summary *out, char *msg, size_t msglen, uint64_t *offset)
{
    memset(out, 0, sizeof *out);
    if (msg && msglen)
        snprintf(msg, msglen, "out of memory");
    if (offset)
        *offset = 0;
    return PRISM_E_NOMEM;
}

prism_status an_sum_read_mem(const uint8_t *p, size_t n, size_t piece, const char *source,
                          const sum_limits *lim, prism_rank_summary *out, char *msg,
                          size_t msglen, uint64_t *offset)
{
    sum_parser *r = an_sum_parser_new(out, lim);
    if (!r)
        return nomem(out, msg, msglen, offset);
    if (!piece)
        piece = 64 << 10;
    bool ok = true;
    for (size_t off = 0; off < n && ok; off += piece)
        ok = an_sum_parser_feed(r, p + off, n - off < piece ? n - off : piece);
    return an_sum_parser_end(r, source, msg, msglen, offset);
}

prism_status prism_rank_summary_read(const char *path, prism_rank_summary *out, char *msg,
                                     size_t msglen, uint64_t *offset)
{
    sum_parser *r = an_sum_parser_new(out, NULL);
    if (!r)
        return nomem(out, msg, msglen, offset);
    FILE *f = pb_fopen_read(path);
    struct stat st;
    uint8_t *buf = malloc(64 << 10);
    bool ok = false;
    uint64_t total = 0;
    if (!f)
        an_sum_parser_fail(r, PRISM_E_IO, 0, "%s", strerror(errno));
    else if (!buf)
        an_sum_parser_fail(r, PRISM_E_NOMEM, 0, "out of memory");
    else if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
             (uint64_t)st.st_size > SUM_MAX_FILE)
        an_sum_parser_fail(r, PRISM_E_LIMIT, SUM_MAX_FILE,
                        "a PRISM summary larger than %" PRIu64 " bytes", SUM_MAX_FILE);
    else
        ok = true;
    while (ok) {
        size_t got = fread(buf, 1, 64 << 10, f);
        ok = !got || an_sum_parser_feed(r, buf, got);
        total += got;
        if (ok && got < (64 << 10)) {
            if (ferror(f))
                an_sum_parser_fail(r, PRISM_E_IO, total, "read error: %s", strerror(errno));
            break;
        }
    }
    if (f)
        fclose(f);
    free(buf);
    return an_sum_parser_end(r, path, msg, msglen, offset);
}

bool prism_rank_summary_probe(const uint8_t *p, size_t n)
{
    static const char key[] = "\"prism_summary\"";
    size_t i = 0, end = n < 256 ? n : 256;
    while (i < end && strchr(" \t\r\n", p[i]) && p[i])
        i++;
    if (i == end || p[i++] != '{')
        return false;
    while (i < end && strchr(" \t\r\n", p[i]) && p[i])
        i++;
    return end - i >= sizeof key - 1 && !memcmp(p + i, key, sizeof key - 1);
}

/* ---- comparing (tests, the fuzz target's round trip) ---- */

static bool str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

bool an_sum_equal(const prism_rank_summary *a, const prism_rank_summary *b)
{
    if (a->rank != b->rank || !str_eq(a->source, b->source) || !str_eq(a->host, b->host) ||
        a->pid != b->pid || a->start_unix_ns != b->start_unix_ns ||
        !str_eq(a->thread, b->thread) || a->events != b->events || a->dropped != b->dropped ||
        a->span_ns != b->span_ns || a->complete != b->complete ||
        a->steps_total != b->steps_total || a->nsteps != b->nsteps ||
        a->nregions != b->nregions || a->gpu_kernel_ns != b->gpu_kernel_ns ||
        a->nccl_kernel_ns != b->nccl_kernel_ns || a->gpu_busy_ns != b->gpu_busy_ns ||
        a->gpu_span_ns != b->gpu_span_ns)
        return false;
    for (size_t i = 0; i < a->nsteps; i++)
        if (a->steps[i].index != b->steps[i].index || a->steps[i].step_ns != b->steps[i].step_ns ||
            a->steps[i].wait_ns != b->steps[i].wait_ns)
            return false;
    for (size_t i = 0; i < a->nregions; i++) {
        const prism_rank_region *x = &a->regions[i], *y = &b->regions[i];
        if (!str_eq(x->name, y->name) || x->path_hash != y->path_hash ||
            x->parent_hash != y->parent_hash || x->depth != y->depth || x->calls != y->calls ||
            x->total_ns != y->total_ns || x->self_ns != y->self_ns ||
            x->in_step_ns != y->in_step_ns || x->cpu_known_ns != y->cpu_known_ns ||
            x->oncpu_ns != y->oncpu_ns || x->offcpu_ns != y->offcpu_ns ||
            x->gpu_wait_ns != y->gpu_wait_ns || x->wait != y->wait)
            return false;
    }
    return true;
}

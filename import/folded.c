/*
 * folded.c - folded stacks as a profile: the lines flamegraph.pl,
 * inferno, `py-spy record --format raw` and `perf script | stackcollapse`
 * write, "frame1;frame2;frame3 COUNT" (outermost frame first).  Each line
 * becomes nested regions on one thread, laid end to end in file order: a
 * frame shared with the previous line's stack stays open, so sorted input
 * (as those tools write it) merges as a flame graph does.  The times are
 * synthetic: one sample lasts FOLDED_SAMPLE_NS.  docs/IMPORT.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

#define FOLDED_SAMPLE_NS 1000000        /* 1 sample = 1 ms of synthetic time */
#define FOLDED_MAX_LINE  65536u         /* bytes in one line                 */
#define FOLDED_MAX_TOTAL (UINT64_C(1) << 40)   /* samples in all             */

typedef struct folded {
    imp_events s;
    char line[FOLDED_MAX_LINE];
    size_t len;
    uint64_t line_off;                  /* file offset of line[0]            */
    uint64_t lines;
    int64_t now;                        /* ns: where the next line starts    */
    uint32_t track;
    uint32_t open[IMP_MAX_NEST];        /* ids of the open frames            */
    size_t reg_of[IMP_MAX_NEST];        /* their regions in s.reg            */
    uint32_t depth;
} folded;

/* "STACK COUNT": the count's start, 0 when the line is not one. */
static size_t count_at(const uint8_t *p, size_t n)
{
    size_t i = n;
    while (i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9')
        i--;
    if (i == n || i < 2 || p[i - 1] != ' ' || n - i > 19)
        return 0;
    return i;
}

static bool text(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] < 0x20 && p[i] != '\t')
            return false;
    return true;
}

/* Every complete line of p[0..n) (and the last one when final) must be
 * "STACK COUNT", the first byte neither '{', '[' nor a blank. */
static int folded_probe(const uint8_t *p, size_t n, bool final)
{
    if (!n)
        return final ? 0 : -1;
    if (p[0] == '{' || p[0] == '[' || p[0] == ' ' || p[0] == ';')
        return 0;
    size_t start = 0, lines = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && p[i] != '\n')
            continue;
        if (i == n && !final)
            break;
        size_t len = i - start;
        if (len && p[start + len - 1] == '\r')
            len--;
        if (len && (!text(p + start, len) || !count_at(p + start, len)))
            return 0;
        lines += len > 0;
        start = i + 1;
    }
    /* No whole line yet: wait only for what already looks like a stack of
     * several frames (a ';' in text), so that a short foreign text file
     * that is still being followed ("hello") is not held undecided. */
    if (!lines)
        return final || n >= FOLDED_MAX_LINE || !memchr(p, ';', n) || !text(p, n) ? 0 : -1;
    return 1;
}

static bool close_to(folded *f, uint32_t keep)
{
    while (f->depth > keep) {
        f->depth--;
        f->s.reg[f->reg_of[f->depth]].end = f->now;
    }
    return true;
}

static bool line(folded *f)
{
    const char *p = f->line;
    size_t n = f->len;
    if (n && p[n - 1] == '\r')
        n--;
    if (!n)
        return true;
    size_t c = count_at((const uint8_t *)p, n);
    if (!c || !text((const uint8_t *)p, n))
        return imp_fail(&f->s, PRISM_E_NOT_PRISM, f->line_off,
                        "folded stacks: line %llu is not \"STACK COUNT\"",
                        (unsigned long long)f->lines + 1);
    uint64_t count = 0;
    for (size_t i = c; i < n; i++)
        count = count * 10 + (uint64_t)(p[i] - '0');
    uint64_t done = (uint64_t)f->now / FOLDED_SAMPLE_NS;
    if (count > FOLDED_MAX_TOTAL - done)
        return imp_fail(&f->s, PRISM_E_LIMIT, f->line_off + c,
                        "folded stacks: bad count (more than %llu samples in all)",
                        (unsigned long long)FOLDED_MAX_TOTAL);
    f->s.counters[C_EVENTS]++;
    if (!count) {
        f->s.counters[C_ZERO_DUR]++;
        return true;
    }
    /* the frames, outermost first; those shared with the open stack stay */
    uint32_t d = 0;
    bool same = true;
    for (size_t a = 0, b; a < c - 1; a = b + 1) {
        for (b = a; b < c - 1 && p[b] != ';'; b++)
            ;
        if (d >= IMP_MAX_NEST)
            return imp_fail(&f->s, PRISM_E_LIMIT, f->line_off + a,
                            "folded stacks: a stack deeper than %u frames", IMP_MAX_NEST);
        uint32_t name = imp_intern(&f->s, p + a, b - a);
        if (!name)
            return imp_fail(&f->s, PRISM_E_NOMEM, f->line_off, "out of memory");
        if (same && d < f->depth && f->open[d] == name) {
            d++;
            continue;
        }
        if (same)
            close_to(f, d);
        same = false;
        if (!imp_region_add(&f->s, f->track, f->now, f->now, name))
            return imp_fail(&f->s, PRISM_E_NOMEM, f->line_off, "out of memory");
        f->open[d] = name;
        f->reg_of[d] = f->s.nreg - 1;
        f->depth = ++d;
    }
    if (same)
        close_to(f, d);
    f->now += (int64_t)(count * FOLDED_SAMPLE_NS);
    return true;
}

static void *folded_open(const prism_reader_callbacks *cb, void *ctx)
{
    folded *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    if (!imp_events_init(&f->s, cb, ctx)) {
        imp_events_free(&f->s);
        free(f);
        return NULL;
    }
    f->track = imp_track_of(&f->s, 0, 1, false, false);
    if (f->track == UINT32_MAX) {
        imp_events_free(&f->s);
        free(f);
        return NULL;
    }
    snprintf(f->s.tracks[f->track].name, sizeof f->s.tracks[0].name, "folded stacks");
    f->s.tracks[f->track].named = true;
    return f;
}

static void folded_close(void *b)
{
    folded *f = b;
    if (!f)
        return;
    imp_events_free(&f->s);
    free(f);
}

static prism_status report(folded *f, const char **msg, uint64_t *off)
{
    *msg = f->s.e.msg;
    *off = f->s.e.offset;
    return f->s.e.code;
}

static prism_status folded_feed(void *b, const uint8_t *p, size_t n, const char **msg,
                                uint64_t *off)
{
    folded *f = b;
    for (size_t i = 0; i < n && !f->s.e.code; i++) {
        if (p[i] == '\n') {
            if (line(f)) {
                f->lines++;
                f->line_off = f->s.in_bytes + i + 1;
                f->len = 0;
            }
        } else if (f->len == FOLDED_MAX_LINE) {
            imp_fail(&f->s, PRISM_E_LIMIT, f->line_off,
                     "folded stacks: a line longer than %u bytes", FOLDED_MAX_LINE);
        } else {
            f->line[f->len++] = (char)p[i];
        }
    }
    f->s.in_bytes += n;
    return f->s.e.code ? report(f, msg, off) : PRISM_OK;
}

static prism_status folded_finish(void *b, const char **msg, uint64_t *off)
{
    folded *f = b;
    if (f->s.e.code || (f->len && !line(f)))
        return report(f, msg, off);
    close_to(f, 0);
    f->s.complete = true;
    snprintf(f->s.producer, sizeof f->s.producer, "folded stacks, imported by prism %s",
             PRISM_VERSION_STRING);
    f->s.clock = "synthetic: 1 sample = 1 ms";
    f->s.lead[0] = (prism_kv){ "import.format", { .type = PRISM_VAL_TEXT, .v.s = "folded" } };
    f->s.lead[1] = (prism_kv){ "import.note", { .type = PRISM_VAL_TEXT,
        .v.s = "folded stacks: times are synthetic sample counts (1 sample = 1 ms)" } };
    f->s.nlead = 2;
    f->s.lead_info = f->s.lead[0];
    if (!imp_build(&f->s))
        return report(f, msg, off);
    return PRISM_OK;
}

static const prism_header *folded_header(const void *b)
{
    return imp_events_header(&((const folded *)b)->s);
}

static const char *folded_string(const void *b, uint32_t id, size_t *len)
{
    return imp_events_string(&((const folded *)b)->s, id, len);
}

static const prism_reader_stats *folded_stats(const void *b)
{
    return &((const folded *)b)->s.st;
}

const prism_foreign_backend imp_folded_backend = {
    .name = "folded stacks",
    .probe = folded_probe,
    .open = folded_open,
    .feed = folded_feed,
    .finish = folded_finish,
    .close = folded_close,
    .header = folded_header,
    .string = folded_string,
    .stats = folded_stats,
};

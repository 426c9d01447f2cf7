/*
 * export_scope.c - --steps, --threads and --min-duration: the option
 * values checked, resolved against a file's first pass, and the analysis
 * of what they keep (see export_scope.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export_scope.h"
#include "report.h"

/* ---- option values ---- */

/* Decimal digits at *s into *v (no sign, no overflow); the end, or NULL. */
static const char *digits(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9')
        return NULL;
    uint64_t x = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return NULL;
        x = x * 10 + d;
    }
    *v = x;
    return s;
}

bool rp_scope_parse_steps(const char *s, uint64_t *first, uint64_t *last, char *err,
                          size_t errlen)
{
    uint64_t a, b;
    const char *p = digits(s, &a);
    if (p && !*p) {
        *first = *last = a;
        return true;
    }
    if (p && *p == '-' && (p = digits(p + 1, &b)) && !*p) {
        if (a > b) {
            snprintf(err, errlen, "--steps %s: the first step comes after the last", s);
            return false;
        }
        *first = a;
        *last = b;
        return true;
    }
    snprintf(err, errlen, "--steps takes a step or a range of steps, N or A-B (as 10-19), "
             "not '%s'", s);
    return false;
}

bool rp_scope_parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen)
{
    static const struct { const char *unit; double ns; } units[] = {
        { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
    };
    char *end;
    errno = 0;
    double v = (*s >= '0' && *s <= '9') || *s == '.' ? strtod(s, &end) : NAN;
    if (!isnan(v) && errno == 0 && end != s) {
        if (!*end && v == 0) {
            *ns = 0;
            return true;
        }
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (!strcmp(end, units[i].unit)) {
                double x = v * units[i].ns;
                if (x >= 0 && x < 1.8e19) {
                    *ns = (uint64_t)llround(x);
                    return true;
                }
            }
    }
    snprintf(err, errlen, "--min-duration takes a time with its unit, ns, us, ms or s "
             "(as 50us or 1.5ms), not '%s'", s);
    return false;
}

bool rp_scope_parse_threads(const char *s, char *err, size_t errlen)
{
    bool empty = !*s;
    for (const char *p = s; *p && !empty; p++)
        empty = *p == ',' && (p == s || p[-1] == ',' || !p[1]);
    if (!empty)
        return true;
    snprintf(err, errlen, "--threads takes thread names or OS thread ids by commas "
             "(as main,4242), none empty");
    return false;
}

/* ---- resolved against the file ---- */

bool ex_scope_thread(const ex_scope *sc, uint32_t stream)
{
    uint64_t v;
    return !sc || sc->all_threads || pb_map_get(&sc->streams, stream, &v);
}

/* The threads of the file, for an error line: "main (4242), loader (4250), ...". */
static void thread_list(const ex_scan *scan, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < scan->nthreads && len + 1 < cap; i++) {
        char name[80];
        esc_str(scan->threads[i].name, name, sizeof name);
        int n = i < 8 ? snprintf(buf + len, cap - len, "%s%s (%" PRIu64 ")", i ? ", " : "",
                                 name, scan->threads[i].os_tid)
                      : snprintf(buf + len, cap - len, ", ...");
        if (n < 0 || (size_t)n >= cap - len)
            break;
        len += (size_t)n;
        if (i >= 8)
            break;
    }
    if (!scan->nthreads)
        snprintf(buf, cap, "none named");
}

/* Each item of the list: the threads it names (a name matched whole, or
 * all digits: an OS thread id too) into sc->streams; false after the line
 * when one names none. */
static bool resolve_threads(const char *path, const char *list, const ex_scan *scan,
                            ex_scope *sc)
{
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        uint64_t tid = 0;
        char num[24];
        bool numeric = n && n < sizeof num;
        if (numeric) {
            memcpy(num, p, n);
            num[n] = '\0';
            const char *e = digits(num, &tid);
            numeric = e && !*e;
        }
        bool any = false;
        for (size_t i = 0; i < scan->nthreads; i++) {
            const ex_thread *t = &scan->threads[i];
            if ((strlen(t->name) == n && !memcmp(t->name, p, n)) ||
                (numeric && t->os_tid == tid)) {
                if (!pb_map_put(&sc->streams, t->stream, 1)) {
                    fprintf(stderr, "prism-top: out of memory\n");
                    return false;
                }
                any = true;
            }
        }
        if (!any) {
            char item[128], file[512], have[512];
            snprintf(item, sizeof item, "%.*s", (int)(n < 100 ? n : 100), p);
            char safe[4 * sizeof item + 1];
            esc_str(item, safe, sizeof safe);
            esc_str(path, file, sizeof file);
            thread_list(scan, have, sizeof have);
            fprintf(stderr, "prism-top: %s: --threads: no thread '%s' (threads: %s)\n", file,
                    safe, have);
            return false;
        }
        if (!comma)
            return true;
        p = comma + 1;
    }
}

bool ex_scope_resolve(const char *path, const rp_export_scope *in, const ex_scan *scan,
                      ex_scope *out)
{
    memset(out, 0, sizeof *out);
    out->w1 = UINT64_MAX;
    out->all_threads = true;
    if (!in || (!in->steps && !in->threads && !in->min_ns))
        return true;
    out->active = true;
    out->min_ns = in->min_ns;
    if (in->threads) {
        out->all_threads = false;
        out->threads = in->threads;
        if (!resolve_threads(path, in->threads, scan, out)) {
            ex_scope_free(out);
            return false;
        }
    }
    if (in->steps) {
        out->steps = true;
        out->first = in->first_step;
        out->last = in->last_step;
        uint64_t lo = UINT64_MAX, hi = 0, imin = UINT64_MAX, imax = 0;
        bool any = false;
        for (size_t i = 0; i < scan->nsteps; i++) {
            const prism_step *s = &scan->steps[i];
            imin = s->index < imin ? s->index : imin;
            imax = s->index > imax ? s->index : imax;
            if (s->index < in->first_step || s->index > in->last_step)
                continue;
            uint64_t end = s->end > s->start ? s->end : s->start;
            lo = s->start < lo ? s->start : lo;
            hi = end > hi ? end : hi;
            any = true;
        }
        if (!any) {
            char file[512];
            esc_str(path, file, sizeof file);
            if (scan->nsteps)
                fprintf(stderr, "prism-top: %s: --steps %" PRIu64 "-%" PRIu64 ": no such "
                        "step (the profile's steps are %" PRIu64 "-%" PRIu64 ")\n", file,
                        in->first_step, in->last_step, imin, imax);
            else
                fprintf(stderr, "prism-top: %s: --steps: the profile has no steps\n", file);
            ex_scope_free(out);
            return false;
        }
        out->w0 = lo;
        /* [lo, hi): a region that starts as the last step ends is the next
         * one's; hi == lo (a zero-length step) keeps the instant */
        out->w1 = hi > lo ? hi : lo + 1;
    }
    return true;
}

void ex_scope_free(ex_scope *sc)
{
    pb_map_free(&sc->streams);
}

/* ---- the analysis of what the scope keeps ---- */

static prism_analysis *analyze(const char *path, const ex_scope *sc, bool quiet, bool lean,
                               prism_reader **reader)
{
    *reader = NULL;
    if (!lean && (!sc || !sc->active)) {
        prism_status st;
        char msg[256];
        uint64_t off;
        prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
        if (!a && !quiet)
            report_error(path, st, msg, off);
        return a;
    }
    ex_scope all;
    if (!sc && ex_scope_resolve("", NULL, NULL, &all))
        sc = &all;                      /* everything (no allocation) */
    prism_analysis *a = prism_analysis_new(NULL);
    prism_reader_callbacks inner, outer;
    prism_analysis_callbacks(&inner);
    ex_filter *f = a ? ex_filter_new(sc, &inner, a, &outer) : NULL;
    if (f && lean)
        ex_filter_lean(f, &outer);
    prism_reader *r = f ? prism_reader_new(&outer, f) : NULL;
    if (!r) {
        if (!quiet)
            fprintf(stderr, "prism-top: out of memory\n");
        ex_filter_free(f);
        prism_analysis_free(a);
        return NULL;
    }
    prism_analysis_attach(a, r);        /* names looked up while reading */
    prism_status st = prism_reader_read_path(r, path);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    if (st == PRISM_OK)
        prism_reader_add_workers(r, path);      /* DataLoader workers' threads */
    bool oom = ex_filter_oom(f);
    ex_filter_free(f);
    if (st != PRISM_OK || oom) {
        const char *m = oom ? "out of memory" : prism_strerror(st);
        uint64_t off = 0;
        if (!oom)
            prism_reader_error(r, &m, &off);
        if (!quiet)
            report_error(path, oom ? PRISM_E_NOMEM : st, m, off);
        prism_analysis_free(a);
        prism_reader_free(r);
        return NULL;
    }
    prism_analysis_refresh(a);
    *reader = r;
    return a;
}

prism_analysis *ex_analyze(const char *path, const ex_scope *sc, bool quiet,
                           prism_reader **reader)
{
    return analyze(path, sc, quiet, false, reader);
}

prism_analysis *ex_analyze_lean(const char *path, const ex_scope *sc, prism_reader **reader)
{
    return analyze(path, sc, true, true, reader);
}

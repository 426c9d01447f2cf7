/*
 * export_trace_put.c - the Chrome trace's pieces shared by its event
 * writers (export_trace.c, export_trace_gpu.c): separators, exact
 * timestamps and durations, names escaped once by string id, metadata
 * events; and what follows the events: the INFO entries gathered as they
 * come and the otherData object (the file, its header, the reader's and
 * the export's counts, the scope kept).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports.h"
#include "export_trace.h"
#include "jsonw.h"

#define INFO_MAX_BYTES (256u * 1024u)

static void put_str(FILE *f, const char *s) { pb_json_put_string(f, s, strlen(s)); }

void trace_sep(trace *t)
{
    if (t->any_event)
        OB_LIT(&t->o, ",\n");
    else
        OB_LIT(&t->o, "\n");
    t->any_event = true;
}

void trace_put_ts(trace *t, uint64_t ns)
{
    char *p = ob_room(&t->o, 8 + OB_NUM_MAX);
    memcpy(p, ",\"ts\":", 6);
    t->o.len += (size_t)(ob_fmt_us(p + 6, ns) - p);
}

/* The double a JSON reader makes of ob_fmt_us(ns), as strtod rounds the
 * decimal: below 2^53 ns / 1000 is that double (both exact, and the
 * division rounds the exact quotient once, to nearest, as strtod does). */
static double us_double(uint64_t ns)
{
    if (ns < (UINT64_C(1) << 53))
        return (double)ns / 1000.0;
    char b[OB_NUM_MAX];
    *ob_fmt_us(b, ns) = '\0';
    return strtod(b, NULL);
}

/* A dur, as text, whose sum with ds lies in [lo, hi] (hi >= ds): hi - ds
 * to 9 or 12 decimals when that is enough, else the round-trip form
 * (%.17g) of hi - ds or of a double just below it; false if none does.
 * Rare (0.4 % of the regions of a training loop): a span that ends with
 * one it holds, at the same ns, when the ns grid has no sum between the
 * two ends. */
static bool dur_between(double ds, double lo, double hi, char *buf, size_t cap)
{
    double x = hi - ds;
    for (int digits = 9; digits <= 12; digits += 3) {
        snprintf(buf, cap, "%.*f", digits, x);
        double sum = ds + strtod(buf, NULL);
        if (sum >= lo && sum <= hi)
            return true;
    }
    for (int i = 0; i < 4 && x >= 0; i++, x = nextafter(x, 0)) {
        snprintf(buf, cap, "%.17g", x);
        double sum = ds + x;            /* %.17g reads back as x exactly */
        if (sum >= lo && sum <= hi)
            return true;
    }
    return false;
}

double trace_put_span(trace *t, uint64_t start, uint64_t end, double floor)
{
    double ds = us_double(start), de = us_double(end);
    uint64_t dur = end - start;
    double sum = ds + us_double(dur);
    for (int i = 0; i < 8 && dur && sum > de; i++) {
        dur--;
        sum = ds + us_double(dur);
    }
    char *p = ob_room(&t->o, 16 + 2 * OB_NUM_MAX);
    char *q = p;
    memcpy(q, ",\"ts\":", 6);
    q = ob_fmt_us(q + 6, start);
    memcpy(q, ",\"dur\":", 7);
    q += 7;
    char fix[40];
    if (sum < floor && floor <= de && dur_between(ds, floor, de, fix, sizeof fix)) {
        size_t n = strlen(fix);
        memcpy(q, fix, n);
        t->o.len += (size_t)(q + n - p);
        return ds + strtod(fix, NULL);
    }
    t->o.len += (size_t)(ob_fmt_us(q, dur) - p);
    return sum;
}

/* The escaped text of string id, made once (NULL: not cached). */
const trace_name *trace_cached_name(trace *t, uint32_t id, const char *s, size_t len)
{
    if (id >= TRACE_NAME_IDS)
        return NULL;
    if (id >= t->nnames) {
        size_t cap = t->nnames ? t->nnames : 1024;
        while (cap <= id)
            cap *= 2;
        trace_name *n = realloc(t->names, cap * sizeof *n);
        if (!n)
            return NULL;
        memset(n + t->nnames, 0, (cap - t->nnames) * sizeof *n);
        t->names = n;
        t->nnames = cap;
    }
    trace_name *e = &t->names[id];
    if (e->src == s)
        return e;
    size_t at = t->name_bytes.len;
    if (at > UINT32_MAX / 2 || !pb_json_buf_string(&t->name_bytes, s, len) ||
        !pb_buf_reserve(&t->name_bytes, TRACE_NAME_SLACK)) {
        t->name_bytes.len = at;
        return NULL;
    }
    e->src = s;
    e->off = (uint32_t)at;
    e->len = (uint32_t)(t->name_bytes.len - at);
    return e;
}

void trace_put_name(trace *t, uint32_t id)
{
    size_t len;
    const char *s = prism_reader_string(t->r, id, &len);
    if (!s) {
        OB_LIT(&t->o, "\"<string ");
        ob_u64(&t->o, id);
        OB_LIT(&t->o, ">\"");
        return;
    }
    const trace_name *e = trace_cached_name(t, id, s, len);
    if (e)
        ob_mem(&t->o, t->name_bytes.data + e->off, e->len);
    else
        ob_json_str(&t->o, s, len);
}

void trace_note_ts(trace *t, uint64_t ts)
{
    if (ts > t->last_ts)
        t->last_ts = ts;
}

void trace_meta(trace *t, const char *what, uint64_t pid, const uint64_t *tid,
                const char *key, const char *text, int64_t num)
{
    trace_sep(t);
    OB_LIT(&t->o, "{\"name\":\"");
    ob_str(&t->o, what);
    OB_LIT(&t->o, "\",\"ph\":\"M\",\"pid\":");
    ob_u64(&t->o, pid);
    if (tid) {
        OB_LIT(&t->o, ",\"tid\":");
        ob_u64(&t->o, *tid);
    }
    OB_LIT(&t->o, ",\"args\":{\"");
    ob_str(&t->o, key);
    OB_LIT(&t->o, "\":");
    if (text)
        ob_json_cstr(&t->o, text);
    else
        ob_i64(&t->o, num);
    OB_LIT(&t->o, "}}");
}

/* ---- after the events ---- */

void trace_on_info(void *ctx, const char *key, const prism_value *v)
{
    trace *t = ctx;
    if (t->info.len > INFO_MAX_BYTES) {
        t->info_left_out++;
        return;
    }
    /* rendered through a memory stream so the escaping is the writer's */
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        t->info_left_out++;
        return;
    }
    fputs(t->info.len ? ",{\"key\":" : "{\"key\":", m);
    put_str(m, key);
    fputs(",\"value\":", m);
    switch (v->type) {
    case PRISM_VAL_INT: fprintf(m, "%" PRId64, v->v.i); break;
    case PRISM_VAL_UINT: fprintf(m, "%" PRIu64, v->v.u); break;
    case PRISM_VAL_FLOAT: pb_json_put_double(m, v->v.f); break;
    case PRISM_VAL_BOOL: fputs(v->v.b ? "true" : "false", m); break;
    case PRISM_VAL_TEXT: put_str(m, v->v.s ? v->v.s : ""); break;
    default: fputs("null", m); break;
    }
    fputc('}', m);
    if (fclose(m) == 0)
        pb_buf_append(&t->info, buf, len);
    free(buf);
}

void trace_other_data(trace *t, const char *path)
{
    const prism_header *h = prism_reader_header(t->r);
    const prism_reader_stats *s = prism_reader_stats_get(t->r);
    FILE *f = t->o.f;
    fputs("\n],\n\"otherData\":{\"schema\":\"prism.trace/1\",\"file\":", f);
    put_str(f, path);
    if (h) {
        fputs(",\"producer\":", f);
        put_str(f, h->producer ? h->producer : "");
        fputs(",\"host\":", f);
        put_str(f, h->host ? h->host : "");
        fprintf(f, ",\"pid\":%" PRIu64 ",\"gpu_pid\":%" PRIu64 ",\"rank\":%" PRId64
                ",\"start_unix_ns\":%" PRIu64 ",\"argv\":[", h->pid, t->gpu_pid, h->rank,
                h->start_unix_ns);
        for (size_t i = 0; i < h->argc; i++) {
            if (i)
                fputc(',', f);
            put_str(f, h->argv[i] ? h->argv[i] : "");
        }
        fputc(']', f);
    }
    fprintf(f, ",\n\"info\":[%s]", pb_buf_str(&t->info));
    if (t->have_footer)
        fprintf(f, ",\n\"footer\":{\"end_ns\":%" PRIu64 ",\"events\":%" PRIu64 ",\"dropped\":%"
                PRIu64 ",\"chunks\":%" PRIu64 ",\"clean\":%s}", t->footer.end_ts,
                t->footer.events, t->footer.dropped, t->footer.chunks,
                t->footer.clean ? "true" : "false");
    else
        fputs(",\n\"footer\":null", f);
    fprintf(f, ",\n\"reader\":{\"chunks\":%" PRIu64 ",\"records\":%" PRIu64 ",\"damaged_runs\":%"
            PRIu64 ",\"skipped_bytes\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"seq_gaps\":%"
            PRIu64 ",\"torn_bytes\":%" PRIu64 "}", s->chunks, s->records, s->damaged,
            s->skipped_bytes, s->malformed, s->seq_gaps, s->torn_bytes);
    const ex_scope *sc = t->scope;
    if (sc && sc->active) {             /* what was kept */
        fputs(",\n\"scope\":{", f);
        if (sc->steps)
            fprintf(f, "\"first_step\":%" PRIu64 ",\"last_step\":%" PRIu64 ",\"from_ns\":%"
                    PRIu64 ",\"to_ns\":%" PRIu64 ",", sc->first, sc->last, sc->w0, sc->w1);
        fputs("\"threads\":", f);
        if (sc->threads)
            put_str(f, sc->threads);
        else
            fputs("null", f);
        fprintf(f, ",\"min_duration_ns\":%" PRIu64 "}", sc->min_ns);
    }
    fprintf(f, ",\n\"export\":{\"enters\":%" PRIu64 ",\"exits\":%" PRIu64
            ",\"unmatched_exits\":%" PRIu64 ",\"closed_regions\":%" PRIu64 ",\"marks\":%" PRIu64
            ",\"counters\":%" PRIu64 ",\"nonfinite_counters\":%" PRIu64 ",\"steps\":%" PRIu64
            ",\"memory_samples\":%" PRIu64 ",\"gpu_records\":%" PRIu64 ",\"info_left_out\":%"
            PRIu64 ",\"outside_regions\":%" PRIu64 ",\"too_deep\":%" PRIu64 "}}}\n",
            t->n.enters, t->n.exits,
            t->n.unmatched_exits, t->n.closed_at_end, t->n.marks, t->n.counters,
            t->n.nonfinite_counters, t->n.steps, t->n.memory, t->n.gpu, t->info_left_out,
            t->n.outside, t->n.too_deep);
}

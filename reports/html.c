/*
 * html.c - analyze --format html: the report as one self-contained page
 * (issue 30).  No network request, no external script, style or font: the
 * data are three JSON documents in <script type="application/json">
 * elements (the analyze report with the step series cut to at most
 * HTML_MAX_STEPS, the flame graph's call paths, the memory samples at step
 * ends), and a small script renders them with DOM text nodes only, so a
 * name from the profile is never markup.  In the JSON every '<', '>' and '&'
 * is written \\u003c, \\u003e, \\u0026, so no text ends the script
 * element.
 *
 * Size is bounded for big profiles: at most HTML_MAX_STEPS steps (the
 * longest of each run kept), HTML_MAX_MEM memory points (the highest of
 * each run), and the flame graph's paths that hold at least 1/HTML_MIN_SHARE
 * of the run, HTML_MAX_NODES at most (the rest counted as left out).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "escape.h"
#include "html_page.h"
#include "jsonw.h"
#include "prism/job.h"
#include "report.h"
#include "prism/compare.h"

#define HTML_MAX_STEPS 4000u
#define HTML_MAX_MEM 2000u
#define HTML_MAX_NODES 20000u
#define HTML_MIN_SHARE 20000.0
#define HTML_HEAT_BINS 400u

/* s as HTML text: escape.h's rule for untrusted text (controls and
 * invisible characters as visible escapes), then the five markup
 * characters as entities. */
static void html_text(pb_buf *b, const char *s)
{
    char rep[ESC_CHAR_MAX];
    while (s && *s) {
        s += esc_char(s, rep, NULL);
        for (const char *r = rep; *r; r++) {
            switch (*r) {
            case '&': pb_buf_puts(b, "&amp;"); break;
            case '<': pb_buf_puts(b, "&lt;"); break;
            case '>': pb_buf_puts(b, "&gt;"); break;
            case '"': pb_buf_puts(b, "&quot;"); break;
            case '\'': pb_buf_puts(b, "&#39;"); break;
            default: pb_buf_putc(b, *r);
            }
        }
    }
}

/* b's JSON into f with '<', '>' and '&' as \\u escapes (they occur in
 * strings only, where the escape is the same character). */
static void put_json(FILE *f, const pb_buf *b)
{
    for (size_t i = 0; i < b->len; i++) {
        char c = b->data[i];
        if (c == '<')
            fputs("\\u003c", f);
        else if (c == '>')
            fputs("\\u003e", f);
        else if (c == '&')
            fputs("\\u0026", f);
        else
            fputc(c, f);
    }
}

/* The flame graph's paths: {"nodes": [[parent, name, total_ns, self_ns,
 * calls], ...], "pruned": N} in preorder of the all-threads tree (a parent
 * before its children; -1: a root), the paths below the size floor left
 * out with everything under them.  With a base analysis, each node also
 * carries the same path's total there (-1: not in the base), then 1 when
 * c says the path was folded in one run only (not compared), else 0. */
static bool flame_json(pb_buf *b, const prism_analysis *a, const prism_analysis *base,
                       const prism_compare *c)
{
    const prism_tree *bt = base ? prism_analysis_tree(base) : NULL;
    const prism_tree *t = prism_analysis_tree(a);
    bool *folded = c ? calloc(t->count + 1, sizeof *folded) : NULL;
    for (size_t i = 0; folded && i < c->count; i++)
        if (c->deltas[i].folded_one && c->deltas[i].new_node < t->count)
            folded[c->deltas[i].new_node] = true;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    uint64_t total = 0;
    for (uint32_t r = t->count ? 0 : PRISM_NO_NODE; r != PRISM_NO_NODE && r < t->count;
         r = t->nodes[r].next_sibling)
        total += t->nodes[r].total_ns;
    double floor = (double)total / HTML_MIN_SHARE;
    uint32_t *stack = malloc((t->count + 1) * sizeof *stack);
    int64_t *out = malloc((t->count + 1) * sizeof *out);   /* tree node -> emitted index */
    uint64_t pruned = 0, n = 0;
    pb_json_key(&w, "nodes");
    pb_json_begin_array(&w);
    if (stack && out && t->count) {
        size_t sp = 0;
        for (uint32_t r = 0; r != PRISM_NO_NODE; r = t->nodes[r].next_sibling)
            stack[sp++] = r;
        /* roots pushed in order: reverse them so the first comes out first */
        for (size_t i = 0; i < sp / 2; i++) {
            uint32_t x = stack[i];
            stack[i] = stack[sp - 1 - i];
            stack[sp - 1 - i] = x;
        }
        while (sp) {
            uint32_t i = stack[--sp];
            const prism_node *nd = &t->nodes[i];
            if ((double)nd->total_ns < floor || n >= HTML_MAX_NODES) {
                pruned++;
                continue;
            }
            int64_t parent = nd->parent == PRISM_NO_NODE ? -1 : out[nd->parent];
            out[i] = (int64_t)n++;
            pb_json_begin_array(&w);
            pb_json_int(&w, parent);
            pb_json_string(&w, nd->name ? nd->name : "");
            pb_json_uint(&w, nd->total_ns);
            pb_json_uint(&w, nd->self_ns);
            pb_json_uint(&w, nd->calls);
            if (bt) {
                uint32_t k = prism_analysis_find(base, nd->path_hash);
                if (k < bt->count)
                    pb_json_uint(&w, bt->nodes[k].total_ns);
                else
                    pb_json_int(&w, -1);
                pb_json_uint(&w, folded && folded[i]);
            }
            pb_json_end_array(&w);
            size_t first = sp;
            for (uint32_t k = nd->first_child; k != PRISM_NO_NODE; k = t->nodes[k].next_sibling)
                stack[sp++] = k;
            for (size_t x = first, y = sp; x + 1 < y; x++, y--) {   /* first child first */
                uint32_t tmp = stack[x];
                stack[x] = stack[y - 1];
                stack[y - 1] = tmp;
            }
        }
    }
    pb_json_end_array(&w);
    pb_json_kuint(&w, "pruned", pruned);
    pb_json_end_object(&w);
    bool ok = (t->count == 0 || (stack && out)) && (!c || folded) && pb_json_finish(&w) &&
              !b->oom;
    free(stack);
    free(out);
    free(folded);
    return ok;
}

/* Host RSS (and GPU memory used) at step ends: {"points": [[step, rss,
 * gpu_used], ...]}, at most HTML_MAX_MEM (the highest RSS of each run). */
static bool memory_json(pb_buf *b, const prism_analysis *a)
{
    const prism_memory_stats *m = prism_analysis_memory(a);
    size_t k = 0;
    for (size_t i = 0; i < m->count; i++)
        k += m->samples[i].step != PRISM_NO_STEP;
    size_t every = k > HTML_MAX_MEM ? (k + HTML_MAX_MEM - 1) / HTML_MAX_MEM : 1, seen = 0;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "points");
    pb_json_begin_array(&w);
    const prism_mem_point *best = NULL;
    for (size_t i = 0; i < m->count; i++) {
        const prism_mem_point *p = &m->samples[i];
        if (p->step == PRISM_NO_STEP)
            continue;
        if (!best || p->rss > best->rss)
            best = p;
        if (++seen % every && i + 1 < m->count)
            continue;
        pb_json_begin_array(&w);
        pb_json_uint(&w, best->step);
        pb_json_uint(&w, best->rss);
        pb_json_uint(&w, best->gpu_used);
        pb_json_end_array(&w);
        best = NULL;
    }
    pb_json_end_array(&w);
    pb_json_end_object(&w);
    return pb_json_finish(&w) && !b->oom;
}

/* The page around its JSON documents: ids[i] holds docs[i]. */
static bool page(FILE *f, const char *what, const char *title, const char *const *ids,
                 const pb_buf *docs, size_t n)
{
    pb_buf t = { 0 };
    html_text(&t, title);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            "<meta name=\"generator\" content=\"prism-top %s --format html\">\n"
            "<title>PRISM %s: %s</title>\n<style>\n%s</style>\n</head>\n<body>\n"
            "<div id=\"app\"></div>\n"
            "<noscript>This report draws itself with JavaScript; its data are in the "
            "page as JSON (docs/JSON.md).</noscript>\n",
            what, what, pb_buf_str(&t), html_css);
    bool ok = !t.oom;
    pb_buf_free(&t);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<script type=\"application/json\" id=\"prism-%s\">", ids[i]);
        put_json(f, &docs[i]);
        fputs("</script>\n", f);
    }
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", html_script);
    return ok;
}

/* What a text report writer prints (report.h, "words a page shares"),
 * for the page: w's next value is an array of its lines, each without the
 * first `strip` spaces (the text's indent), so the page says what the text
 * says in the same words; the names in them are escaped as the text
 * escapes them, and the page shows them as text. */
typedef struct text_lines {
    const char *path;
    const prism_analysis *a, *b;
    const prism_compare *c;
} text_lines;

static void summary_text(FILE *f, const text_lines *t)
{
    analyze_write_summary(f, t->path, t->a);
}

static void run_text(FILE *f, const text_lines *t)
{
    compare_write_run(f, t->a, t->b, t->c);
}

static bool lines_json(pb_json *w, void (*write)(FILE *f, const text_lines *t),
                       const text_lines *t, size_t strip, bool join)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return false;
    write(m, t);
    bool ok = fclose(m) == 0;
    /* join: a line that goes on the one before it (it starts with a
     * space) joins it, one space between, as the page wraps its own lines */
    for (size_t i = 0, o = 0; ok && i < len; i++) {
        if (join && buf[i] == '\n' && i + 1 < len && buf[i + 1] == ' ') {
            while (i + 1 < len && buf[i + 1] == ' ')
                i++;
            buf[o++] = ' ';
        } else {
            buf[o++] = buf[i];
        }
        if (i + 1 == len)
            len = o;
    }
    pb_json_begin_array(w);
    for (size_t i = 0; ok && i < len;) {
        size_t e = i;
        while (e < len && buf[e] != '\n')
            e++;
        size_t s = i;
        while (s < e && s - i < strip && buf[s] == ' ')
            s++;
        pb_json_stringn(w, buf + s, e - s);
        i = e + 1;
    }
    pb_json_end_array(w);
    free(buf);
    return ok;
}

/* {"lines": [analyze's Summary lines]}. */
static bool summary_json(pb_buf *b, const char *path, const prism_analysis *a)
{
    text_lines t = { .path = path, .a = a };
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "lines");
    bool ok = lines_json(&w, summary_text, &t, 2, false);
    pb_json_end_object(&w);
    return ok && pb_json_finish(&w) && !b->oom;
}

bool analyze_write_html(FILE *f, const char *path, const prism_analysis *a)
{
    pb_buf d[4] = { { 0 }, { 0 }, { 0 }, { 0 } };
    static const char *const ids[4] = { "analyze", "flame", "memory", "summary" };
    bool ok = analyze_json_buf(&d[0], path, a, HTML_MAX_STEPS) &&
              flame_json(&d[1], a, NULL, NULL) && memory_json(&d[2], a) &&
              summary_json(&d[3], path, a) && page(f, "analyze", path, ids, d, 4);
    for (size_t i = 0; i < 4; i++)
        pb_buf_free(&d[i]);
    return ok;
}

/* The rank x step heatmap: {"ranks": [id, ...], "bins": B, "every": E,
 * "first": [first aligned step index of each bin], "step_ns": [[per rank,
 * per bin: the slowest step of the bin, or null], ...], "work_ns": the
 * same of the work (the step less its waits)}, at most HTML_HEAT_BINS
 * bins. */
static bool heat_json(pb_buf *b, const prism_job *j)
{
    size_t every = j->nsteps > HTML_HEAT_BINS ? (j->nsteps + HTML_HEAT_BINS - 1) / HTML_HEAT_BINS
                                              : 1;
    size_t bins = (j->nsteps + every - 1) / every;
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "ranks");
    pb_json_begin_array(&w);
    for (size_t r = 0; r < j->nranks; r++)
        pb_json_int(&w, j->ranks[r].id);
    pb_json_end_array(&w);
    pb_json_kuint(&w, "bins", bins);
    pb_json_kuint(&w, "every", every);
    pb_json_key(&w, "first");
    pb_json_begin_array(&w);
    for (size_t k = 0; k < bins; k++)
        pb_json_uint(&w, j->step_index[k * every]);
    pb_json_end_array(&w);
    for (int work = 0; work < 2; work++) {
        pb_json_key(&w, work ? "work_ns" : "step_ns");
        pb_json_begin_array(&w);
        for (size_t r = 0; r < j->nranks; r++) {
            pb_json_begin_array(&w);
            for (size_t k = 0; k < bins; k++) {
                double most = -1;
                for (size_t s = k * every; s < (k + 1) * every && s < j->nsteps; s++) {
                    double v = work ? prism_job_work(j, r, s) : prism_job_step(j, r, s);
                    if (isfinite(v) && v > most)
                        most = v;
                }
                if (most >= 0)
                    pb_json_uint(&w, (uint64_t)llround(most));
                else
                    pb_json_null(&w);
            }
            pb_json_end_array(&w);
        }
        pb_json_end_array(&w);
    }
    pb_json_end_object(&w);
    return pb_json_finish(&w) && !b->oom;
}

bool job_write_html(FILE *f, const prism_job *j)
{
    pb_buf d[2] = { { 0 }, { 0 } };
    static const char *const ids[2] = { "job", "heatmap" };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool ok = m && job_write_json(m, j, false);
    if (m && fclose(m) != 0)
        ok = false;
    ok = ok && pb_buf_append(&d[0], buf, len) && heat_json(&d[1], j);
    free(buf);
    char title[64];
    snprintf(title, sizeof title, "%zu ranks", j->nranks);
    ok = ok && page(f, "job", title, ids, d, 2);
    for (size_t i = 0; i < 2; i++)
        pb_buf_free(&d[i]);
    return ok;
}

/* {"run": [compare's lines on the whole run, each sentence one line],
 * "regions_legend": the legend of its table of regions, "folded_legend":
 * that of its p-value 'folded', "hooks_legend": that of its mark 'h', each one line}. */
static bool words_json(pb_buf *b, const prism_analysis *a, const prism_analysis *n,
                       const prism_compare *c)
{
    text_lines t = { .a = a, .b = n, .c = c };
    pb_json w;
    pb_json_init_buf(&w, b, 0);
    pb_json_begin_object(&w);
    pb_json_key(&w, "run");
    bool ok = lines_json(&w, run_text, &t, 0, true);
    static const char *const keys[3] = { "regions_legend", "folded_legend", "hooks_legend" };
    const char *const *legends[3] = { compare_regions_legend, compare_folded_legend,
                                      compare_hooks_legend };
    for (size_t k = 0; k < 3; k++) {
        pb_buf legend = { 0 };
        for (size_t i = 0; legends[k][i]; i++)
            pb_buf_printf(&legend, "%s%s", i ? " " : "", legends[k][i]);
        pb_json_kstring(&w, keys[k], pb_buf_str(&legend));
        ok = ok && !legend.oom;
        pb_buf_free(&legend);
    }
    pb_json_end_object(&w);
    return ok && pb_json_finish(&w) && !b->oom;
}

bool compare_write_html(FILE *f, const char *pa, const char *pb, const prism_analysis *a,
                        const prism_analysis *b, const prism_compare *c)
{
    pb_buf d[3] = { { 0 }, { 0 }, { 0 } };
    static const char *const ids[3] = { "compare", "flame", "words" };
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    bool ok = m && compare_write_json(m, pa, pb, a, b, c);
    if (m && fclose(m) != 0)
        ok = false;
    ok = ok && pb_buf_append(&d[0], buf, len) && flame_json(&d[1], b, a, c) &&
         words_json(&d[2], a, b, c);
    free(buf);
    pb_buf t = { 0 };
    pb_buf_printf(&t, "%s -> %s", pa, pb);
    ok = ok && !t.oom && page(f, "compare", pb_buf_str(&t), ids, d, 3);
    pb_buf_free(&t);
    for (size_t i = 0; i < 3; i++)
        pb_buf_free(&d[i]);
    return ok;
}

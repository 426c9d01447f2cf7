/*
 * gate.c - the regression gate's report (`prism-top compare --gate BASE...
 * NEW`): the baselines (files, or folders of them) and the new run loaded
 * at once, prism_gate_new's verdict, and its words: text for a CI log,
 * markdown for a pull-request comment, JSON (schema "prism.gate/1",
 * docs/JSON.md) for a program.  The exit status is the decision: 0 pass,
 * 1 a regression, 2 an error.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "report.h"
#include "units.h"

/* ---- the files -------------------------------------------------------- */

typedef struct gate_files {
    char **path;
    size_t n, cap;
} gate_files;

static bool files_add(gate_files *f, const char *path)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        char **p = realloc(f->path, cap * sizeof *p);
        if (!p)
            return false;
        f->path = p;
        f->cap = cap;
    }
    return (f->path[f->n] = strdup(path)) != NULL && ++f->n;
}

static void files_free(gate_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && !strcmp(s + n - k, tail);
}

/* A profile by its name: a PRISM file or a trace prism-top opens. */
static bool profile_name(const char *name)
{
    return name[0] != '.' && (ends_with(name, ".cbor") || ends_with(name, ".json") ||
                              ends_with(name, ".json.gz"));
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* A baseline argument: a file, or a folder's profiles in name order.
 * False after one line on stderr. */
static bool add_baseline(gate_files *f, const char *arg)
{
    struct stat st;
    if (stat(arg, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (!files_add(f, arg)) {
            fprintf(stderr, "prism-top: out of memory\n");
            return false;
        }
        return true;                    /* a missing file: its loader says so */
    }
    DIR *d = opendir(arg);
    if (!d) {
        int err = errno;
        fputs("prism-top: ", stderr);
        esc_fputs(arg, stderr);
        fprintf(stderr, ": %s\n", strerror(err));
        return false;
    }
    size_t first = f->n;
    struct dirent *e;
    bool ok = true;
    size_t len = strlen(arg);
    while (ok && (e = readdir(d)) != NULL) {
        if (!profile_name(e->d_name))
            continue;
        char *p = malloc(len + strlen(e->d_name) + 2);
        ok = p != NULL;
        if (ok) {
            sprintf(p, "%s%s%s", arg, len && arg[len - 1] == '/' ? "" : "/", e->d_name);
            ok = files_add(f, p);
            free(p);
        }
    }
    closedir(d);
    if (!ok) {
        fprintf(stderr, "prism-top: out of memory\n");
        return false;
    }
    if (f->n == first) {
        fputs("prism-top: ", stderr);
        esc_fputs(arg, stderr);
        fputs(": no profiles in the folder (*.cbor, *.json, *.json.gz)\n", stderr);
        return false;
    }
    qsort(f->path + first, f->n - first, sizeof *f->path, cmp_str);
    return true;
}

/* ---- loading, several files at once --------------------------------- */

typedef struct loader {
    char *const *path;
    prism_analysis **a;
    size_t n;
    atomic_size_t next;
    const prism_analysis_opts *opts;
} loader;

static void *load_some(void *arg)
{
    loader *l = arg;
    for (size_t i; (i = atomic_fetch_add(&l->next, 1)) < l->n;)
        l->a[i] = report_load(l->path[i], l->opts);
    return NULL;
}

/* Every file loaded (a[i] NULL where it failed, after its line). */
static void load_all(char *const *path, prism_analysis **a, size_t n,
                     const prism_analysis_opts *opts)
{
    loader l = { path, a, n, 0, opts };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cpus > 1 ? (size_t)cpus : 1;
    nt = nt > n ? n : nt;
    nt = nt > 8 ? 8 : nt;
    pthread_t th[8];
    size_t started = 0;
    for (size_t i = 1; i < nt; i++)
        started += pthread_create(&th[started], NULL, load_some, &l) == 0;
    load_some(&l);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* ---- words ------------------------------------------------------------ */

/* A run-queue share past which the report warns: beside CPU hogs that
 * kept the training thread waiting 80 % of its time, a planted +25 % in a
 * 2.5 ms region went unseen (tests/verdict_busy_test.c). */
#define TOO_BUSY 0.75

/* The whole path of an item, from the new run's tree (the item keeps the
 * last 255 bytes); "step" for the step. */
static const char *item_path(const prism_gate_item *it, const prism_analysis *cur, pb_buf *b)
{
    if (it->is_step)
        return "step";
    uint32_t n = prism_analysis_find(cur, it->path_hash);
    if (n == PRISM_NO_NODE)
        return it->path;
    b->len = 0;
    report_path(prism_analysis_tree(cur), n, '/', false, b);
    return b->oom || !b->len ? it->path : pb_buf_str(b);
}

static const char *pval(char *buf, size_t cap, double p)
{
    if (p < 0)
        snprintf(buf, cap, "n/a");
    else if (p >= 1e-4)
        snprintf(buf, cap, "%.4f", p);
    else
        snprintf(buf, cap, "%.1e", p);
    return buf;
}

/* The rows a text or markdown report shows: the step, every regression,
 * then up to `top` more (0: all). */
static bool shown(const prism_gate *g, size_t i, size_t top, size_t *more)
{
    const prism_gate_item *it = &g->items[i];
    if (it->is_step || it->regressed)
        return true;
    if (!top || *more < top) {
        ++*more;
        return true;
    }
    return false;
}

static size_t rest(const prism_gate *g, size_t top)
{
    size_t more = 0, n = 0;
    for (size_t i = 0; i < g->count; i++)
        n += !shown(g, i, top, &more);
    return n;
}

static void verdict_line(const prism_gate *g, char *buf, size_t cap)
{
    if (!g->regressed)
        snprintf(buf, cap, "pass: nothing slower beyond noise and the %.1f%% limit",
                 g->max_slowdown_pct);
    else if (g->failed)
        snprintf(buf, cap, "FAIL: %zu regression%s (slower beyond noise and the %.1f%% limit)",
                 g->failed, g->failed == 1 ? "" : "s", g->max_slowdown_pct);
    else
        snprintf(buf, cap, "FAIL: the whole run is %.1f%% slower (--fail-on-shift)",
                 100.0 * (g->run_factor - 1.0));
}

/* An item past its limit that passes: its change is within step-to-step
 * noise (not significantly slower against enough baselines). */
static bool noise_only(const prism_gate_item *it)
{
    return !it->regressed && it->compared && it->change_pct > it->limit_pct;
}

static void shift_words(FILE *f, const prism_gate *g, bool md)
{
    const char *b = md ? "**" : "";
    if (g->whole_run_shift)
        fprintf(f, "%sWhole run%s: %.1f%% %s, every region alike (x%.2f): the machine, its "
                "load, or a change that slows everything; %s.\n", b, b,
                fabs(100.0 * (g->run_factor - 1.0)), g->run_factor > 1 ? "slower" : "faster",
                g->run_factor, g->shift_failed ? "--fail-on-shift fails it"
                : "each region is tested beyond it, its base scaled by it (--fail-on-shift "
                  "fails on it)");
    if (g->load_base >= 0 && g->load_new >= 0)
        fprintf(f, "%sLoad%s: the training thread waited for a CPU %.1f%% of its time in the "
                "baseline%s, %.1f%% in the new run.%s\n", b, b, 100.0 * g->load_base,
                g->baselines > 1 ? "s (median)" : "", 100.0 * g->load_new,
                g->load_base > TOO_BUSY || g->load_new > TOO_BUSY
                    ? " Most of its time: short regions are timed roughly and a slowdown "
                      "may go unseen; a quieter runner or more steps will tell." : "");
}

void gate_write_txt(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                      const prism_gate *g, size_t top)
{
    char v[160], tb[48], tn[48], p[32];
    pb_buf path = { 0 };
    verdict_line(g, v, sizeof v);
    fprintf(f, "PRISM gate: %s\n", v);
    fprintf(f, "Baseline: %zu run%s", g->baselines, g->baselines == 1 ? "" : "s");
    for (size_t i = 0; i + 1 < nfiles && i < 3; i++) {
        fputs(i ? ", " : " (", f);
        esc_fputs(files[i], f);
    }
    fprintf(f, "%s; new: ", nfiles - 1 > 3 ? ", ...)" : ")");
    esc_fputs(files[nfiles - 1], f);
    if (!prism_analysis_complete(cur))
        fputs(" (INCOMPLETE: the run was cut short; its steps so far are compared)", f);
    fprintf(f, "\nLimit: %.1f%% slower (--max-slowdown), or more where the baselines differed "
            "more among themselves.\n", g->max_slowdown_pct);
    shift_words(f, g, false);
    fputs("\n", f);
    int width = report_width(f), col = 28, room = width - 8 - 72;
    for (size_t i = 0, more = 0; i < g->count; i++)
        if (shown(g, i, top, &more))
            col = report_widen(col, room, report_cols(item_path(&g->items[i], cur, &path)));
    fprintf(f, "        %-*s %10s %10s %8s %7s %9s %9s\n", col, "path (per-step median)", "base",
            "new", "change", "limit", "slower in", "p-value");
    for (size_t i = 0, more = 0; i < g->count; i++) {
        const prism_gate_item *it = &g->items[i];
        if (!shown(g, i, top, &more))
            continue;
        fprintf(f, "  %-4s  ", it->regressed ? "FAIL" : "ok");
        report_cell(f, item_path(it, cur, &path), 8, col);
        char sl[32];
        snprintf(sl, sizeof sl, "%zu of %zu", it->slower, it->compared);
        if (it->compared)
            fprintf(f, " %s %s %+7.1f%% %6.1f%% %9s %9s%s%s\n",
                    report_ns(tb, sizeof tb, it->base_ns, 10),
                    report_ns(tn, sizeof tn, it->new_ns, 10), it->change_pct, it->limit_pct,
                    sl, pval(p, sizeof p, it->p_value), it->own ? "  own time" : "",
                    noise_only(it) ? "  within its noise" : "");
        else
            fprintf(f, " %10s %10s %8s %6.1f%% %9s %9s\n", "n/a", "n/a", "n/a", it->limit_pct,
                    "-", "n/a");
    }
    size_t r = rest(g, top);
    if (r)
        fprintf(f, "  (%zu more paths, within their limits; --top 0 shows all)\n", r);
    if (g->appeared)
        fprintf(f, "New in this run: %zu path%s (`prism-top compare` lists them).\n",
                g->appeared, g->appeared == 1 ? "" : "s");
    pb_buf_free(&path);
}

/* Markdown: a name as text, never markup (GitHub renders HTML inside
 * markdown: <, > and & become entities, other ASCII punctuation is
 * backslash-escaped), with escape.h's escapes of what a terminal or an
 * editor would take for control. */
static void md_text(FILE *f, const char *s)
{
    char rep[ESC_CHAR_MAX];
    while (s && *s) {
        s += esc_char(s, rep, NULL);
        for (const char *r = rep; *r; r++) {
            unsigned char c = (unsigned char)*r;
            if (c == '<')
                fputs("&lt;", f);
            else if (c == '>')
                fputs("&gt;", f);
            else if (c == '&')
                fputs("&amp;", f);
            else if (c < 0x80 && strchr("\\`*_{}[]()#+-.!|~\"'$%:;=@^", c) && c)
                fprintf(f, "\\%c", c);
            else
                fputc(c, f);
        }
    }
}

void gate_write_md(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                     const prism_gate *g, size_t top)
{
    char v[160], tb[48], tn[48], p[32];
    pb_buf path = { 0 };
    verdict_line(g, v, sizeof v);
    fprintf(f, "### %s PRISM gate: %s\n\nBaseline", g->regressed ? "\u274c" : "\u2705", v);
    fprintf(f, ": %zu run%s", g->baselines, g->baselines == 1 ? "" : "s");
    for (size_t i = 0; i + 1 < nfiles && i < 3; i++) {
        fputs(i ? ", " : " (", f);
        md_text(f, files[i]);
    }
    fprintf(f, "%s \u00b7 new: ", nfiles - 1 > 3 ? ", \u2026)" : ")");
    md_text(f, files[nfiles - 1]);
    if (!prism_analysis_complete(cur))
        fputs(" (**incomplete**: the run was cut short; its steps so far are compared)", f);
    fprintf(f, " \u00b7 limit: %.1f %% slower, or the noise between the baselines where "
            "larger\n\n", g->max_slowdown_pct);
    if (g->whole_run_shift || (g->load_base >= 0 && g->load_new >= 0)) {
        shift_words(f, g, true);
        fputc('\n', f);
    }
    fputs("| | Path (per-step median) | Base | New | Change | Limit | Slower in | p |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|\n", f);
    for (size_t i = 0, more = 0; i < g->count; i++) {
        const prism_gate_item *it = &g->items[i];
        if (!shown(g, i, top, &more))
            continue;
        fprintf(f, "| %s | ", it->regressed ? "\u274c" : "\u2705");
        md_text(f, item_path(it, cur, &path));
        if (it->compared)
            fprintf(f, "%s%s | %s | %s | %+.1f %% | %.1f %% | %zu of %zu | %s |\n",
                    it->own ? " (own time)" : "", noise_only(it) ? " (within its noise)" : "",
                    report_ns(tb, sizeof tb, it->base_ns, 0),
                    report_ns(tn, sizeof tn, it->new_ns, 0), it->change_pct, it->limit_pct,
                    it->slower, it->compared, pval(p, sizeof p, it->p_value));
        else
            fprintf(f, " | n/a | n/a | n/a | %.1f %% | \u2013 | n/a |\n", it->limit_pct);
    }
    size_t r = rest(g, top);
    if (r)
        fprintf(f, "\n%zu more paths, within their limits.\n", r);
    if (g->appeared)
        fprintf(f, "\nNew in this run: %zu path%s.\n", g->appeared, g->appeared == 1 ? "" : "s");
    pb_buf_free(&path);
}

bool gate_write_json(FILE *f, char *const *files, size_t nfiles, const prism_analysis *cur,
                       const prism_gate *g)
{
    pb_json *w = report_json_begin(f, 2, "prism.gate/1");
    if (!w)
        return false;
    pb_buf path = { 0 };
    pb_json_kstring(w, "decision", g->regressed ? "fail" : "pass");
    pb_json_kbool(w, "regressed", g->regressed);
    pb_json_key(w, "max_slowdown_pct");
    pb_json_double(w, g->max_slowdown_pct);
    pb_json_key(w, "baselines");
    pb_json_begin_array(w);
    for (size_t i = 0; i + 1 < nfiles; i++)
        pb_json_string(w, files[i]);
    pb_json_end_array(w);
    pb_json_kstring(w, "new", files[nfiles - 1]);
    pb_json_kbool(w, "new_complete", prism_analysis_complete(cur));
    pb_json_kuint(w, "failed", g->failed);
    pb_json_kuint(w, "appeared", g->appeared);
    pb_json_key(w, "run");
    pb_json_begin_object(w);
    pb_json_key(w, "factor");
    pb_json_double(w, g->run_factor);
    pb_json_kbool(w, "whole_run_shift", g->whole_run_shift);
    pb_json_key(w, "shift_noise_pct");
    pb_json_double(w, g->shift_noise_pct);
    pb_json_kbool(w, "shift_failed", g->shift_failed);
    pb_json_key(w, "base_runq_share");
    g->load_base >= 0 ? pb_json_double(w, g->load_base) : pb_json_null(w);
    pb_json_key(w, "new_runq_share");
    g->load_new >= 0 ? pb_json_double(w, g->load_new) : pb_json_null(w);
    pb_json_end_object(w);
    pb_json_key(w, "items");
    pb_json_begin_array(w);
    for (size_t i = 0; i < g->count; i++) {
        const prism_gate_item *it = &g->items[i];
        pb_json_begin_object(w);
        pb_json_kstring(w, "kind", it->is_step ? "step" : "region");
        pb_json_key(w, "path");
        it->is_step ? pb_json_null(w) : pb_json_string(w, item_path(it, cur, &path));
        pb_json_kbool(w, "regressed", it->regressed);
        pb_json_kuint(w, "compared", it->compared);
        pb_json_kuint(w, "slower_in", it->slower);
        pb_json_key(w, "change_pct");
        it->compared ? pb_json_double(w, it->change_pct) : pb_json_null(w);
        pb_json_key(w, "noise_pct");
        pb_json_double(w, it->noise_pct);
        pb_json_key(w, "limit_pct");
        pb_json_double(w, it->limit_pct);
        pb_json_key(w, "p_value");
        it->p_value >= 0 ? pb_json_double(w, it->p_value) : pb_json_null(w);
        report_json_kns(w, "base_median_ns", it->compared ? it->base_ns : NAN);
        report_json_kns(w, "new_median_ns", it->compared ? it->new_ns : NAN);
        if (!it->is_step) {
            pb_json_key(w, "share");
            pb_json_double(w, it->share);
        }
        pb_json_kbool(w, "own_time", it->own);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
    bool ok = report_json_end(w) && !path.oom;
    pb_buf_free(&path);
    return ok;
}

/* ---- the command ------------------------------------------------------ */

int rp_gate_files(char *const *args, size_t nargs, const char *output, const char *format,
                  size_t top, const prism_gate_opts *gopts, const prism_analysis_opts *opts,
                  FILE *out)
{
    gate_files files = { 0 };
    bool ok = nargs >= 2;
    for (size_t i = 0; ok && i + 1 < nargs; i++)
        ok = add_baseline(&files, args[i]);
    ok = ok && files_add(&files, args[nargs - 1]);
    if (ok && files.n - 1 > RP_GATE_MAX_BASELINES) {
        fprintf(stderr, "prism-top: compare --gate: %zu baselines; it takes up to %d (the "
                "newest runs say the most about the noise)\n", files.n - 1,
                RP_GATE_MAX_BASELINES);
        ok = false;
    }
    prism_analysis **a = ok ? calloc(files.n, sizeof *a) : NULL;
    if (ok && !a)
        fprintf(stderr, "prism-top: out of memory\n");
    ok = a != NULL;
    if (ok)
        load_all(files.path, a, files.n, opts);
    for (size_t i = 0; ok && i < files.n; i++)
        ok = a[i] != NULL;
    prism_gate *g = NULL;
    if (ok) {
        char msg[256];
        g = prism_gate_new((const prism_analysis *const *)a, files.n - 1, a[files.n - 1], gopts,
                           msg, sizeof msg);
        if (!g) {
            fputs("prism-top: compare --gate: ", stderr);
            fputs(msg[0] ? msg : "out of memory", stderr);
            fputc('\n', stderr);
        }
    }
    int rc = EXIT_BADINPUT;
    outfile o;
    if (g && !outfile_open(&o, output, out)) {
        bool wok = true;
        if (!strcmp(format, "json")) {
            wok = gate_write_json(o.f, files.path, files.n, a[files.n - 1], g);
        } else {
            report_units_for(o.f);
            if (!strcmp(format, "markdown"))
                gate_write_md(o.f, files.path, files.n, a[files.n - 1], g, top);
            else
                gate_write_txt(o.f, files.path, files.n, a[files.n - 1], g, top);
        }
        if (!wok)
            fprintf(stderr, "prism-top: compare --gate: internal error writing JSON\n");
        rc = outfile_close(&o, wok);
        if (rc == EXIT_OK && g->regressed)
            rc = EXIT_REGRESSED;
    }
    prism_gate_free(g);
    for (size_t i = 0; a && i < files.n; i++)
        prism_analysis_free(a[i]);
    free(a);
    files_free(&files);
    return rc;
}

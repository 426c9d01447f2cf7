/*
 * report.c - helpers shared by analyze, compare and export (see report.h).
 */
#include "report.h"

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "prism/import.h"
#include "units.h"

/* ---- figures ---- */

static const char *pad(char *buf, size_t cap, const char *s, int width)
{
    if (width > 0)
        fmt_rpad(buf, cap, s, width);
    else
        snprintf(buf, cap, "%s", s);
    return buf;
}

const char *report_ns(char *buf, size_t cap, double ns, int width)
{
    char t[48];
    fmt_ns(t, sizeof t, ns);
    return pad(buf, cap, t, width);
}

const char *report_ns_signed(char *buf, size_t cap, double ns, int width)
{
    char t[48];
    fmt_ns_signed(t, sizeof t, ns);
    return pad(buf, cap, t, width);
}

const char *report_count(char *buf, size_t cap, double n, int width)
{
    char t[48];
    fmt_count(t, sizeof t, n);
    return pad(buf, cap, t, width);
}

void report_units_for(FILE *out)
{
    bool utf8 = false;
    if (isatty(fileno(out))) {
        const char *was = setlocale(LC_CTYPE, NULL);
        char saved[64];
        snprintf(saved, sizeof saved, "%s", was ? was : "C");
        if (setlocale(LC_CTYPE, ""))
            utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
        setlocale(LC_CTYPE, saved);
    }
    fmt_set_utf8(utf8);
}

/* ---- loading ---- */

prism_analysis *report_load(const char *path, const prism_analysis_opts *opts)
{
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, opts, &st, msg, sizeof msg, &off);
    if (!a)
        report_error(path, st, msg, off);
    return a;
}

void report_error(const char *path, prism_status st, const char *msg, uint64_t off)
{
    char p[1024], m[512];           /* a file's name may hold anything */
    esc_str(path, p, sizeof p);
    esc_str(msg, m, sizeof m);
    if (st == PRISM_E_IO && off == 0)
        fprintf(stderr, "prism-top: %s: %s\n", p, m);
    else
        fprintf(stderr, "prism-top: %s: %s at byte %" PRIu64 "\n", p, m, off);
}

/* ---- output ---- */

int outfile_open(outfile *o, const char *path, FILE *dflt)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = dflt;
        return 0;
    }
    /* Only a regular file (or none yet) is replaced by rename: a device
     * (-o /dev/null), a FIFO or a symlink is written in place, never
     * replaced by a file. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "w");
        if (!o->f) {
            fprintf(stderr, "prism-top: %s: cannot open for writing: %s\n", path,
                    strerror(errno));
            return -1;
        }
        o->in_place = true;
        return 0;
    }
    size_t n = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(n + 5);
    if (!o->path || !o->tmp) {
        fprintf(stderr, "prism-top: %s: out of memory\n", path);
        free(o->path);
        free(o->tmp);
        return -1;
    }
    memcpy(o->tmp, path, n);
    memcpy(o->tmp + n, ".tmp", 5);
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        fprintf(stderr, "prism-top: %s: cannot create: %s\n", o->tmp, strerror(errno));
        free(o->path);
        free(o->tmp);
        return -1;
    }
    return 0;
}

int outfile_close(outfile *o, bool ok)
{
    int rc = EXIT_OK;
    if (!o->path) {
        errno = 0;
        if (fflush(o->f) || ferror(o->f)) {
            if (errno == EPIPE) {       /* the reader left (SIGPIPE ignored): quietly */
                memset(o, 0, sizeof *o);
                return EXIT_OK;
            }
            fprintf(stderr, "prism-top: cannot write the output: %s\n", strerror(errno));
            rc = EXIT_BADINPUT;
        }
        if (o->in_place && fclose(o->f) && rc == EXIT_OK) {
            fprintf(stderr, "prism-top: cannot write the output: %s\n", strerror(errno));
            rc = EXIT_BADINPUT;
        }
        memset(o, 0, sizeof *o);
        return ok ? rc : EXIT_BADINPUT;
    }
    if (ok && (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))) {
        fprintf(stderr, "prism-top: %s: cannot write: %s\n", o->tmp, strerror(errno));
        ok = false;
    }
    if (fclose(o->f) && ok) {
        fprintf(stderr, "prism-top: %s: cannot write: %s\n", o->tmp, strerror(errno));
        ok = false;
    }
    if (ok && rename(o->tmp, o->path)) {
        fprintf(stderr, "prism-top: %s: cannot rename %s into place: %s\n", o->path, o->tmp,
                strerror(errno));
        ok = false;
    }
    if (!ok) {
        unlink(o->tmp);
        rc = EXIT_BADINPUT;
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}

/* ---- text ---- */

static void put_name(pb_buf *b, const char *name, char sep, bool sanitize)
{
    if (!sanitize) {
        pb_buf_puts(b, name);
        return;
    }
    char rep[ESC_CHAR_MAX];
    while (*name) {
        if (*name == sep || (unsigned char)*name < 0x20 || *name == 0x7f) {
            pb_buf_append(b, *name == sep ? ":" : " ", 1);    /* as folded tools expect */
            name++;
            continue;
        }
        name += esc_char(name, rep, NULL);
        pb_buf_puts(b, rep);
    }
}

void report_path(const prism_tree *t, uint32_t node, char sep, bool sanitize, pb_buf *out)
{
    pb_buf_clear(out);
    if (node >= t->count)
        return;
    /* root first: collect the chain, then write it backwards */
    uint32_t chain[PRISM_MAX_STRING_BYTES / 8];
    size_t n = 0;
    for (uint32_t q = node; q != PRISM_NO_NODE && q < t->count; q = t->nodes[q].parent) {
        chain[n++] = q;
        if (n == sizeof chain / sizeof chain[0])
            break;              /* deeper than we keep: the top shown as "..." */
    }
    if (t->nodes[chain[n - 1]].parent != PRISM_NO_NODE) {
        pb_buf_puts(out, "...");
        pb_buf_append(out, &sep, 1);
    }
    for (size_t i = n; i-- > 0;) {
        put_name(out, t->nodes[chain[i]].name, sep, sanitize);
        if (i)
            pb_buf_append(out, &sep, 1);
    }
}

uint32_t report_next(const prism_tree *t, uint32_t n)
{
    if (n >= t->count)
        return PRISM_NO_NODE;
    if (t->nodes[n].first_child != PRISM_NO_NODE)
        return t->nodes[n].first_child;
    while (n != PRISM_NO_NODE) {
        if (t->nodes[n].next_sibling != PRISM_NO_NODE)
            return t->nodes[n].next_sibling;
        n = t->nodes[n].parent;
    }
    return PRISM_NO_NODE;
}

const char *report_copy_kind(uint32_t k)
{
    static const char *const names[] = { "unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
    return k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

const char *report_mem_kind(uint32_t k)
{
    static const char *const names[] = { "unknown", "pageable", "pinned", "device", "managed" };
    return k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

/* ---- JSON documents ---- */

void report_json_kns(pb_json *w, const char *key, double v)
{
    pb_json_key(w, key);
    if (isfinite(v) && v >= 0 && v < 1.8e19)
        pb_json_uint(w, (uint64_t)llround(v));
    else
        pb_json_null(w);
}

pb_json *report_json_begin(FILE *f, unsigned indent, const char *schema)
{
    pb_json *w = malloc(sizeof *w);
    if (!w)
        return NULL;
    pb_json_init(w, f, indent);
    pb_json_begin_object(w);
    pb_json_kstring(w, "schema", schema);
    return w;
}

bool report_json_end(pb_json *w)
{
    pb_json_end_object(w);
    bool ok = pb_json_finish(w);
    free(w);
    return ok;
}

void report_json_threads(pb_json *w, const prism_analysis *a, const char *ns_key,
                         void (*more)(pb_json *w, const prism_tree *t))
{
    pb_json_key(w, "threads");
    pb_json_begin_array(w);
    for (size_t i = 0; i < prism_analysis_thread_count(a); i++) {
        uint32_t stream = 0;
        const char *name = NULL;
        const prism_tree *tt = prism_analysis_thread_tree(a, i, &stream, &name);
        pb_json_begin_object(w);
        pb_json_kuint(w, "stream", stream);
        pb_json_kstring(w, "name", name);
        pb_json_kuint(w, ns_key, tt ? tt->total_ns : 0);
        pb_json_kuint(w, "nodes", tt ? tt->count : 0);
        pb_json_kuint(w, "dropped_regions", prism_analysis_thread_dropped_regions(a, stream));
        if (more)
            more(w, tt);
        pb_json_end_object(w);
    }
    pb_json_end_array(w);
}

const char *report_status(const prism_analysis *a, char *buf, size_t cap)
{
    bool done = prism_analysis_complete(a);
    if (!prism_import_status(prism_analysis_header(a), done, buf, cap))
        snprintf(buf, cap, "%s", done ? "complete (footer present)"
                                      : "incomplete: no footer (the profile is still being "
                                        "written or its writer died)");
    return buf;
}

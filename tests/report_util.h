/*
 * report_util.h - helpers for the prism-top report and export tests
 * (header-only): a scratch directory, refgen fixtures, running a cmd_*
 * in-process with its stdout and stderr captured, reading files back, and
 * the tests' common setup (fx: a scratch directory holding a reference
 * profile).
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_TEST_REPORT_UTIL_H
#define PRISM_TEST_REPORT_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "refgen.h"

typedef int (*cmd_fn)(int argc, char **argv, FILE *out);

/* A fresh scratch directory (mkdtemp) in buf, which holds 64 bytes. */
static inline void scratch_dir(char *buf)
{
    strcpy(buf, "/tmp/prism-report-XXXXXX");
    assert_non_null(mkdtemp(buf));
}

/* Remove the files of a scratch directory (not recursive), then it. */
static inline void scratch_remove(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* dir/name into out (512 bytes). */
static inline char *path_in(char *out, const char *dir, const char *name)
{
    snprintf(out, 512, "%s/%s", dir, name);
    return out;
}

/* Build a refgen profile with o and write it to path. */
static inline void fixture(const char *path, const refgen_opts *o)
{
    refgen_out r;
    assert_int_equal(refgen_build(o, &r), 0);
    assert_int_equal(refgen_write_file(path, &r), 0);
    free(r.data);
}

/* What each test starts from: a scratch directory with a reference profile. */
typedef struct fx {
    char dir[64];
    char ref[512];              /* refgen defaults                          */
} fx;

static inline int fx_setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    scratch_dir(f->dir);
    refgen_opts o = refgen_defaults();
    fixture(path_in(f->ref, f->dir, "ref.cbor"), &o);
    *state = f;
    return 0;
}

static inline int fx_teardown(void **state)
{
    fx *f = *state;
    scratch_remove(f->dir);
    free(f);
    return 0;
}

/* A test that gets a fresh fx as its state. */
#define FX_TEST(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

/* A whole file, NUL-terminated (the caller frees); NULL if unreadable. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (len)
        *len = 0;
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, got;
    char *b = malloc(cap);
    assert_non_null(b);
    while ((got = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            cap *= 2;
            b = realloc(b, cap);
            assert_non_null(b);
        }
    }
    fclose(f);
    b[n] = 0;
    if (len)
        *len = n;
    return b;
}

static inline void write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(s, f);
    assert_int_equal(fclose(f), 0);
}

static inline bool exists(const char *path) { return access(path, F_OK) == 0; }

/* Occurrences of needle in hay. */
static inline size_t count_str(const char *hay, const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = hay; (p = strstr(p, needle)); p += l)
        n++;
    return n;
}

/* Lines in s (newline-terminated). */
static inline size_t count_lines(const char *s) { return count_str(s, "\n"); }

/*
 * Run a subcommand in-process: argv is NULL-terminated; what it writes to
 * its `out` stream lands in *out_text, what it writes on stderr in
 * *err_text (both malloc'd, NUL-terminated; pass NULL to drop them).
 */
static inline int run_cmd(cmd_fn fn, const char *const *argv, char **out_text, char **err_text)
{
    char dir[64], outp[512], errp[512];
    int argc = 0;
    char *args[32];
    while (argv[argc]) {
        assert_true(argc < 31);
        args[argc] = (char *)argv[argc];
        argc++;
    }
    args[argc] = NULL;
    scratch_dir(dir);
    path_in(outp, dir, "stdout");
    path_in(errp, dir, "stderr");
    FILE *out = fopen(outp, "w");
    assert_non_null(out);
    fflush(stderr);
    int saved = dup(2);
    int efd = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(saved >= 0 && efd >= 0);
    dup2(efd, 2);
    close(efd);
    int rc = fn(argc, args, out);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(fclose(out), 0);
    if (out_text)
        *out_text = slurp(outp, NULL);
    if (err_text)
        *err_text = slurp(errp, NULL);
    scratch_remove(dir);
    return rc;
}

/* An error report: exactly one line, naming the file and a byte offset. */
static inline void assert_one_error_line(const char *err, const char *path)
{
    assert_non_null(err);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, "prism-top: "));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, " at byte "));
}

/* ---- text layout (reports/columns.c) ---- */

/* The widths every layout test runs at; NULL: COLUMNS unset (the output
 * is a file: no terminal), which must read as the default, 100. */
static const char *const test_widths[] = { "40", "80", "120", "200", NULL, "1000" };
#define NWIDTHS (sizeof test_widths / sizeof test_widths[0])

/* The width the reports see at test_widths[w], and its name. */
static inline size_t test_width(size_t w)
{
    return test_widths[w] ? (size_t)atoi(test_widths[w]) : 100;
}
static inline const char *width_name(size_t w)
{
    return test_widths[w] ? test_widths[w] : "unset";
}

static inline void set_columns(const char *w)
{
    if (w)
        assert_int_equal(setenv("COLUMNS", w, 1), 0);
    else
        assert_int_equal(unsetenv("COLUMNS"), 0);
}

/*
 * The row of a table whose name cell is `name` right after `lead` at the
 * start of a line: the name must be whole there, followed by a blank and
 * the figures, or by the end of the line and a next line blank up to the
 * figures.  figs gets the figures with each run of blanks made one blank;
 * *cols the columns of the line they end (their alignment); *split
 * whether the name had its own line.  False when there is no such row.
 */
static inline bool table_row(const char *out, const char *lead, const char *name, char *figs,
                             size_t cap, size_t *cols, bool *split)
{
    char head[512];
    snprintf(head, sizeof head, "\n%s%s", lead, name);
    const char *line = out, *p;
    do {                                /* not a longer name that starts alike */
        line = strstr(line + 1, head);
        if (!line)
            return false;
        p = line + strlen(head);
    } while (*p != ' ' && *p != '\n');
    line++;
    *split = *p == '\n';
    if (*split) {
        line = ++p;
        size_t blank = strspn(p, " ");
        assert_true(blank > strlen(lead));         /* blank up to the figures */
        p += blank;
    }
    const char *eol = strchr(p, '\n');
    assert_non_null(eol);
    *cols = (size_t)(eol - line);
    size_t n = 0;
    for (; p < eol && n + 1 < cap; p++) {
        if (*p == ' ' && (n == 0 || figs[n - 1] == ' '))
            continue;
        figs[n++] = *p;
    }
    figs[n] = '\0';
    return true;
}

/* The columns of the line that holds needle. */
static inline size_t line_cols(const char *out, const char *needle)
{
    const char *p = strstr(out, needle);
    assert_non_null(p);
    const char *bol = p;
    while (bol > out && bol[-1] != '\n')
        bol--;
    return (size_t)(strchr(p, '\n') - bol);
}

#endif

/*
 * view_util.h - helpers for the explorer's model and pane tests
 * (header-only, static inline): a refgen profile written to a file and
 * read back through the analysis as prism-top reads it, alone or in a
 * scratch directory of its own; a cmocka fixture holding one (vu_fix).
 *
 * Include after <cmocka.h>.
 */
#ifndef PRISM_TEST_VIEW_UTIL_H
#define PRISM_TEST_VIEW_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "prism/analysis.h"
#include "refgen.h"

#define VU_DIR_CAP 64           /* bytes of a scratch directory's name       */
#define VU_PATH_CAP 128         /* bytes of the profile's path in it         */

/* The analysis of the profile at path (the caller frees it); the test fails
 * when the file cannot be read. */
static inline prism_analysis *vu_analyze(const char *path)
{
    prism_status st;
    char msg[200];
    uint64_t off;
    prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
    if (!a)
        fail_msg("%s: %s at %llu", path, msg, (unsigned long long)off);
    return a;
}

/* refgen's defaults with `layers` layers and, unless 0, `threads` threads. */
static inline refgen_opts vu_ref_opts(unsigned layers, unsigned threads)
{
    refgen_opts o = refgen_defaults();
    o.layers = layers;
    if (threads)
        o.threads = threads;
    return o;
}

/* A refgen profile built with o, written to path and analysed; the file
 * stays (the caller removes it). */
static inline prism_analysis *vu_ref_analysis(const char *path, const refgen_opts *o)
{
    refgen_out r;
    assert_int_equal(refgen_build(o, &r), 0);
    assert_int_equal(refgen_write_file(path, &r), 0);
    free(r.data);
    return vu_analyze(path);
}

/* A fresh directory /tmp/prism-<tag>-XXXXXX into dir (VU_DIR_CAP bytes)
 * and the path of ref.cbor in it into path (VU_PATH_CAP bytes). */
static inline void vu_scratch(char *dir, char *path, const char *tag)
{
    snprintf(dir, VU_DIR_CAP, "/tmp/prism-%s-XXXXXX", tag);
    assert_non_null(mkdtemp(dir));
    snprintf(path, VU_PATH_CAP, "%s/ref.cbor", dir);
}

static inline void vu_scratch_remove(const char *dir, const char *path)
{
    unlink(path);
    rmdir(dir);
}

/* vu_scratch(), ref.cbor a refgen profile of `layers` layers and `threads`
 * threads (0: the default).  Returns its analysis; vu_scratch_remove()
 * takes the files away. */
static inline prism_analysis *vu_scratch_ref(char *dir, char *path, const char *tag,
                                             unsigned layers, unsigned threads)
{
    vu_scratch(dir, path, tag);
    refgen_opts o = vu_ref_opts(layers, threads);
    return vu_ref_analysis(path, &o);
}

/* The analysis of a refgen profile built with o; its file is gone again. */
static inline prism_analysis *vu_ref_temp(const refgen_opts *o)
{
    char dir[VU_DIR_CAP], path[VU_PATH_CAP];
    vu_scratch(dir, path, "view");
    prism_analysis *a = vu_ref_analysis(path, o);
    vu_scratch_remove(dir, path);
    return a;
}

/* A cmocka fixture: a scratch directory holding a refgen profile of 6
 * layers and 3 threads, its analysis and tree (more than 20 nodes). */
typedef struct vu_fix {
    char dir[VU_DIR_CAP], path[VU_PATH_CAP];
    prism_analysis *a;
    const prism_tree *t;
} vu_fix;

static inline int vu_fix_setup(void **state)
{
    vu_fix *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->a = vu_scratch_ref(f->dir, f->path, "view", 6, 3);
    f->t = prism_analysis_tree(f->a);
    assert_true(f->t->count > 20);
    *state = f;
    return 0;
}

static inline int vu_fix_teardown(void **state)
{
    vu_fix *f = *state;
    prism_analysis_free(f->a);
    vu_scratch_remove(f->dir, f->path);
    free(f);
    return 0;
}

#endif

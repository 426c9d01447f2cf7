/*
 * compare_util.h - what compare_test.c and compare_fold_test.c share: a
 * delta by its path, the text and JSON reports of a comparison, and the
 * one-thread profiles of prism.torch's folded modules.
 */
#ifndef PRISM_COMPARE_UTIL_H
#define PRISM_COMPARE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "prism/analysis.h"
#include "prism/compare.h"
#include "../reports/report.h"
#include "pbuild.h"

static __attribute__((unused))
const prism_delta *find_delta(const prism_compare *c, const char *path)
{
    for (size_t i = 0; i < c->count; i++)
        if (!strcmp(c->deltas[i].path, path))
            return &c->deltas[i];
    fail_msg("no delta for %s", path);
    return NULL;
}

/* The text and JSON reports of a comparison. */
static __attribute__((unused))
char *report_of(const prism_analysis *a, const prism_analysis *b, const prism_compare *c,
                bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    if (json)
        assert_true(compare_write_json(m, "a.cbor", "b.cbor", a, b, c));
    else
        compare_write_txt(m, "a.cbor", "b.cbor", a, b, c, 0);
    assert_int_equal(fclose(m), 0);
    return buf;
}

/* ---- prism.torch's folded modules ------------------------------------------ */

#define CMS 1000000ull

/* A profile of one thread, "MainThread", which steps. */
static __attribute__((unused))
void main_thread(pbuild *b, const char *const *names, unsigned n, uint64_t seed)
{
    pb_init(b, names, n, seed);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
}

/* 40 steps: leaves a, b, c (about 2, 3, 4 ms, times `scale`) and, in the
 * steps below `mod_steps`, 'layer.0' (1 ms) under 'a'; `extra`: a leaf
 * 'e' (3 ms) in every step; `folded`: INFO saying layer.0 was folded
 * after step 5 (prism.torch's adaptive module regions). */
static __attribute__((unused))
loaded fold_profile(uint64_t seed, double scale, unsigned mod_steps, bool extra,
                    bool folded)
{
    static const char *const names[] = { "a", "b", "c", "layer.0", "e" };
    pbuild b;
    main_thread(&b, names, 5, seed);
    uint64_t t = CMS;
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t t0 = t;
        pb_enter(&b, 1, t, 1);
        t += jitter(&b, (uint64_t)(scale * CMS));
        if (k < mod_steps)
            pb_leaf(&b, 1, &t, 4, (uint64_t)(scale * CMS));
        pb_exit(&b, 1, t);
        pb_leaf(&b, 1, &t, 2, (uint64_t)(scale * 3 * CMS));
        pb_leaf(&b, 1, &t, 3, (uint64_t)(scale * 4 * CMS));
        if (extra)
            pb_leaf(&b, 1, &t, 5, 3 * CMS);
        t += 100000;
        prism_step st = { t0, t, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
        if (k == 4 && folded) {
            pb_info_uint(&b, "torch.modules.after_steps", 5);
            pb_info_uint(&b, "torch.modules.kept", 3);
            pb_info_uint(&b, "torch.modules.folded", 1);
            pb_info_text(&b, "torch.modules.folded_names", "layer.9, layer.0");
        }
    }
    return pb_load(&b);
}

#endif

/*
 * fuzz_common.h - what the fuzz targets that read through the analysis
 * share (header-only, static inline): a prism_reader with a fresh analysis
 * attached, as prism-top reads a file, and its end.
 */
#ifndef PRISM_FUZZ_COMMON_H
#define PRISM_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "prism/analysis.h"
#include "prism/import.h"
#include "prism/profile.h"

/* A reader feeding a new analysis (*a); NULL, with nothing left allocated,
 * when either cannot be made.  Free both with fuzz_reader_free(). */
static inline prism_reader *fuzz_reader_new(prism_analysis **a)
{
    prism_import_register();            /* as prism-top: traces too */
    *a = prism_analysis_new(NULL);
    if (!*a)
        return NULL;
    prism_reader_callbacks cb;
    prism_analysis_callbacks(&cb);
    prism_reader *r = prism_reader_new(&cb, *a);
    if (!r) {
        prism_analysis_free(*a);
        *a = NULL;
        return NULL;
    }
    prism_analysis_attach(*a, r);
    return r;
}

/* The end of input declared unless the feed already failed; the status. */
static inline prism_status fuzz_reader_finish(prism_reader *r, prism_status st)
{
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    return st;
}

static inline void fuzz_reader_free(prism_analysis *a, prism_reader *r)
{
    prism_analysis_free(a);
    prism_reader_free(r);
}

/* data[0..size) read whole into a new analysis, refreshed (*r: its reader,
 * for fuzz_reader_free); NULL when neither could be made. */
static inline prism_analysis *fuzz_read_all(const uint8_t *data, size_t size, prism_reader **r)
{
    prism_analysis *a;
    *r = fuzz_reader_new(&a);
    if (!*r)
        return NULL;
    prism_status st = prism_reader_feed(*r, data, size);
    (void)fuzz_reader_finish(*r, st);
    prism_analysis_refresh(a);
    return a;
}

#endif

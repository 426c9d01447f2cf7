/*
 * report_text.h - analyze's report of an analysis, text or JSON, into a
 * malloc'd string (the caller frees it), for the tests that read it.
 */
#ifndef PRISM_TESTS_REPORT_TEXT_H
#define PRISM_TESTS_REPORT_TEXT_H

#include <stdio.h>

#include "reports.h"

/* Not inline: inlined, GCC takes buf, which the stream updates, for a
 * pointer to the callee's frame (-Wdangling-pointer). */
__attribute__((noinline, unused)) static char *report_text_of(const prism_analysis *a, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    if (json)
        assert_true(analyze_write_json(f, "t.cbor", a));
    else
        analyze_write_txt(f, "t.cbor", a);
    fclose(f);
    return buf;
}

#endif

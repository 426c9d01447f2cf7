/*
 * errinfo.h - pb_error, the one error value of the parsers and readers
 * (the profile reader, the importer, the summary parser): a status code,
 * the byte offset where it was found, and a message for the user.
 *
 * pb_error_set fills one (the message formatted as printf, cut to fit);
 * pb_error_vset is the same for a caller that holds a va_list (a helper of
 * its own with printf arguments).  Both return the code.  Which error wins
 * (the first, the last) is the caller's rule.  No allocation; errinfo.c
 * uses nothing else of base/, so libprism (format/) links it alone.
 */
#ifndef PRISM_BASE_ERRINFO_H
#define PRISM_BASE_ERRINFO_H

#include <stdarg.h>
#include <stdint.h>

#define PB_ERROR_MSG 256

typedef struct pb_error {
    int code;                   /* 0: none (PRISM_OK) */
    uint64_t offset;            /* byte offset of the input where it was found */
    char msg[PB_ERROR_MSG];
} pb_error;

int pb_error_set(pb_error *e, int code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pb_error_vset(pb_error *e, int code, uint64_t offset, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

#endif

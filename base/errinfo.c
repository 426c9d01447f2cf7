/*
 * errinfo.c - pb_error_set (see errinfo.h).  Depends on nothing else of
 * base/: libprism (format/reader.c) links this object alone.
 */
#include "errinfo.h"

#include <stdio.h>

int pb_error_vset(pb_error *e, int code, uint64_t offset, const char *fmt, va_list ap)
{
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    e->code = code;
    e->offset = offset;
    return code;
}

int pb_error_set(pb_error *e, int code, uint64_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pb_error_vset(e, code, offset, fmt, ap);
    va_end(ap);
    return code;
}

/*
 * export.c - collect.h's inline calls as real functions of libprism, under
 * their public names, for callers that cannot inline them: dlopen, ctypes,
 * function pointers, other languages.  The header makes each name a
 * function-like macro for the inline version; a parenthesised name is not
 * expanded, so each definition below is the real function around the same
 * inline code a compiled-in call runs.
 */
#include "prism/collect.h"

void (prism_push_id)(uint32_t id)
{
    prism_push_id(id);
}

void (prism_pop)(void)
{
    prism_pop();
}

void (prism_mark_id)(uint32_t id)
{
    prism_mark_id(id);
}

void (prism_counter_i)(uint32_t id, int64_t value)
{
    prism_counter_i(id, value);
}

void (prism_counter_f)(uint32_t id, double value)
{
    prism_counter_f(id, value);
}

void (prism_zone_begin)(prism_site *site)
{
    prism_zone_begin(site);
}

void (prism_zone_end)(void)
{
    prism_zone_end();
}

/*
 * units.h - figures as people read them, one style for the explorer and
 * the report commands: "12.3 ms", "4.51 s", "850 ns", "1.2 GB", "1.2 G".
 * Microseconds are "\u00b5s" once fmt_set_utf8(true) was called (the
 * explorer does when the terminal's locale is UTF-8), "us" otherwise.
 */
#ifndef PRISM_PRESENT_UNITS_H
#define PRISM_PRESENT_UNITS_H

#include <stdbool.h>
#include <stddef.h>

void fmt_set_utf8(bool on);
/* A duration in nanoseconds; negative and NaN print as 0.  From 1000 s
 * on in minutes ("16.7 min"), from 100 min in hours ("1.67 h"). */
void fmt_ns(char *buf, size_t cap, double ns);
/* A change of duration in the same style with its sign: "+141.2 ms",
 * "-2.22 s"; no sign when it rounds to "0 ns" (NaN: 0). */
void fmt_ns_signed(char *buf, size_t cap, double ns);
/* A size in bytes (binary multiples: KB = 1024 B). */
void fmt_bytes(char *buf, size_t cap, double bytes);
/* A count: exact below 10000, then "12.3 k", "480 M", "1.2 G". */
void fmt_count(char *buf, size_t cap, double n);

/* Columns a UTF-8 string takes (one per character; the units use none
 * wider than one). */
int fmt_width(const char *s);
/* s right-aligned in `width` columns (printf's %9s counts bytes, and "µs"
 * is two bytes in one column). */
void fmt_rpad(char *buf, size_t cap, const char *s, int width);

#endif

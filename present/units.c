/*
 * units.c - figures as people read them, shared by the explorer and the
 * report commands: durations, sizes and counts in one style.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

static bool units_utf8;

void fmt_set_utf8(bool on)
{
    units_utf8 = on;
}

void fmt_ns(char *buf, size_t cap, double ns)
{
    /* thresholds where the rounded figure would need the next unit */
    if (!(ns >= 0))
        ns = 0;
    if (ns >= 18446744073709549568.0) { /* a 64-bit sum that saturated (the
                                         * largest double below 2^64 and up) */
        snprintf(buf, cap, "saturated");
        return;
    }
    if (ns < 999.5)
        snprintf(buf, cap, "%.0f ns", ns);
    else if (ns < 999950.0)
        snprintf(buf, cap, "%.1f %s", ns / 1e3, units_utf8 ? "\xc2\xb5s" : "us");
    else if (ns < 99995000.0)
        snprintf(buf, cap, "%.2f ms", ns / 1e6);
    else if (ns < 999950000.0)
        snprintf(buf, cap, "%.1f ms", ns / 1e6);
    else if (ns < 999.995e9)
        snprintf(buf, cap, "%.2f s", ns / 1e9);
    else if (ns < 99.95 * 60e9)                 /* 1000 s .. 100 min */
        snprintf(buf, cap, "%.1f min", ns / 60e9);
    else if (ns < 99.995 * 3600e9)
        snprintf(buf, cap, "%.2f h", ns / 3600e9);
    else
        snprintf(buf, cap, "%.1f h", ns / 3600e9);
}

void fmt_ns_signed(char *buf, size_t cap, double ns)
{
    char t[32];
    if (ns != ns)
        ns = 0;
    fmt_ns(t, sizeof t, ns < 0 ? -ns : ns);
    snprintf(buf, cap, "%s%s", !strcmp(t, "0 ns") ? "" : ns < 0 ? "-" : "+", t);
}

void fmt_bytes(char *buf, size_t cap, double b)
{
    static const char *const units[] = { "TB", "PB", "EB" };
    if (!(b >= 0))
        b = 0;
    if (b < 1024) {
        snprintf(buf, cap, "%.0f B", b);
    } else if (b < 1048576.0) {
        snprintf(buf, cap, "%.1f KB", b / 1024);
    } else if (b < 1073741824.0) {
        snprintf(buf, cap, "%.1f MB", b / 1048576.0);
    } else if (b < 1099511627776.0) {
        snprintf(buf, cap, "%.2f GB", b / 1073741824.0);
    } else {
        double v = b / 1099511627776.0;
        size_t i = 0;
        while (v >= 1024 && i + 1 < sizeof units / sizeof units[0]) {
            v /= 1024;
            i++;
        }
        snprintf(buf, cap, v < 1000 ? "%.1f %s" : "%.0e %s", v, units[i]);
    }
}

void fmt_count(char *buf, size_t cap, double n)
{
    static const char *const suffix[] = { "", " k", " M", " G", " T", " P" };
    if (!(n >= 0))
        n = 0;
    if (n < 10000) {
        snprintf(buf, cap, "%.0f", n);
        return;
    }
    int k = 0;
    while (n >= 999.95 && k < 5) {
        n /= 1000;
        k++;
    }
    snprintf(buf, cap, n < 99.95 ? "%.1f%s" : "%.0f%s", n, suffix[k]);
}

int fmt_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        w += (*p & 0xC0) != 0x80;      /* count characters, not bytes */
    return w;
}

void fmt_rpad(char *buf, size_t cap, const char *s, int width)
{
    int pad = width - fmt_width(s);
    snprintf(buf, cap, "%*s%s", pad > 0 ? pad : 0, "", s);
}

/*
 * opts.c - the option parsing the subcommands share (see cli.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int opt_value(const char *cmd, int argc, char **argv, int *i, const char *shrt,
              const char *lng, const char **val)
{
    const char *a = argv[*i];
    size_t ll = strlen(lng);
    if (!strncmp(a, lng, ll) && a[ll] == '=') {
        *val = a + ll + 1;
        return 1;
    }
    if (strcmp(a, lng) && (!shrt || strcmp(a, shrt)))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "prism-top %s: option '%s' needs a value\n", cmd, a);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

bool opt_is_help(const char *arg)
{
    return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

bool opt_nonneg(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0) {
        fprintf(stderr, "prism-top %s: %s wants a number >= 0, not '%s'\n", cmd, opt, s);
        return false;
    }
    *out = v;
    return true;
}

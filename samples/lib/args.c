/*
 * args.c - command-line parsing shared by the samples (see args.h).
 */
#include "args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int args_flag_value(int argc, char **argv, int *i, char *flag, size_t cap, const char **val)
{
    const char *a = argv[*i], *eq = strchr(a, '=');
    if (eq && (size_t)(eq - a) < cap) {
        memcpy(flag, a, (size_t)(eq - a));
        flag[eq - a] = '\0';
        *val = eq + 1;
        return 0;
    }
    if (!eq && strlen(a) < cap && *i + 1 < argc) {
        strcpy(flag, a);
        *val = argv[++*i];
        return 0;
    }
    return -1;
}

int args_unsigned(const char *s, unsigned long long lo, unsigned long long hi,
                  unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || !*s || *end || *s == '-' || *v < lo || *v > hi ? -1 : 0;
}

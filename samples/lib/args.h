/*
 * args.h - command-line parsing shared by the samples: an option as
 * "--flag=value" or "--flag value", and unsigned decimal values in a range.
 */
#ifndef PRISM_SAMPLES_ARGS_H
#define PRISM_SAMPLES_ARGS_H

#include <stddef.h>

/*
 * argv[*i] as a flag and its value: "--flag=value", or "--flag value"
 * (the value is argv[*i + 1]; *i is advanced past it).  flag holds cap
 * bytes.  0, or -1 when argv[*i] is neither (the flag does not fit, or no
 * value follows).
 */
int args_flag_value(int argc, char **argv, int *i, char *flag, size_t cap, const char **val);

/* s as an unsigned decimal in [lo, hi] into *v: 0, or -1 when it is not one
 * (empty, signed, trailing characters, out of range). */
int args_unsigned(const char *s, unsigned long long lo, unsigned long long hi,
                  unsigned long long *v);

#endif

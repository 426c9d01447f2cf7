/*
 * refprofile - write a reference profile with the format library's writer.
 *   refprofile [-o OUT] [--seed N] [--steps N] [--threads N] [--extremes]
 *              [--no-footer] [--chunk-bytes N] [--stall-ns N] [--cpu]
 *              [--rss-kb N]   (host RSS growth per step, KiB; default 1024)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refgen.h"

static int usage(void)
{
    fprintf(stderr, "usage: refprofile [-o OUT] [--seed N] [--steps N] [--layers N] "
                    "[--threads N] [--chunk-bytes N] [--stall-ns N] [--extremes] [--no-footer] "
                    "[--cpu] [--rss-kb N]\n");
    return 1;
}

static int num(const char *s, unsigned long long *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || !*s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
    refgen_opts o = refgen_defaults();
    const char *out = "reference.cbor";
    for (int i = 1; i < argc; i++) {
        unsigned long long v = 0;
        const char *a = argv[i];
        if (!strcmp(a, "--extremes")) { o.extremes = true; continue; }
        if (!strcmp(a, "--no-footer")) { o.footer = false; continue; }
        if (!strcmp(a, "--cpu")) { o.cpu = true; continue; }
        if (i + 1 >= argc)
            return usage();
        const char *val = argv[++i];
        if (!strcmp(a, "-o")) { out = val; continue; }
        if (num(val, &v))
            return usage();
        if (!strcmp(a, "--seed")) o.seed = v;
        else if (!strcmp(a, "--steps") && v <= 10000000) o.steps = (unsigned)v;
        else if (!strcmp(a, "--layers") && v <= 64) o.layers = (unsigned)v;
        else if (!strcmp(a, "--threads") && v >= 1 && v <= 60) o.threads = (unsigned)v;
        else if (!strcmp(a, "--chunk-bytes") && v >= 256 && v <= PRISM_MAX_CHUNK_PAYLOAD) o.chunk_bytes = v;
        else if (!strcmp(a, "--stall-ns") && v <= 10000000000ull) o.stall_ns = v;
        else if (!strcmp(a, "--rss-kb") && v <= (1u << 30)) o.rss_kb_per_step = v;
        else return usage();
    }
    refgen_out r;
    if (refgen_build(&o, &r)) {
        fprintf(stderr, "refprofile: could not build the profile\n");
        return 1;
    }
    if (refgen_write_file(out, &r)) {
        fprintf(stderr, "refprofile: %s: %s\n", out, strerror(errno));
        free(r.data);
        return 1;
    }
    printf("refprofile: wrote %s: %zu bytes, %llu chunks, %llu region events\n", out,
           r.len, (unsigned long long)r.chunks, (unsigned long long)r.region_events);
    free(r.data);
    return 0;
}

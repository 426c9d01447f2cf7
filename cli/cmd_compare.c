/*
 * cmd_compare.c - `prism-top compare A B`: its options and usage text; the
 * report is written by reports/compare.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports.h"

#define DEFAULT_TOP 20

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top compare A B [-o OUT] [--format txt|json] [--top N]\n"
        "                         [--threshold PCT] [--leak-threshold MB] [--ridge F]\n"
        "Compare profile B against profile A (the baseline): steps, time, memory,\n"
        "whether the whole run moved by one factor (a slower machine, not the code),\n"
        "per-region deltas with speedup, the change of per-step medians, the share\n"
        "of the step, and a Mann-Whitney rank test over per-step times (* marks a\n"
        "change beyond step-to-step noise: p < 0.01, the per-step median moved by\n"
        "3%% or more and by 0.5%% of the median step or more; after a whole-run\n"
        "shift, beyond the run's factor), new and vanished regions and bottlenecks.\n"
        "\n"
        "  -o, --output OUT       write the report to OUT (written whole or not at all)\n"
        "  --format txt|json      text (default) or JSON (schema prism.compare/1)\n"
        "  --top N                text: show the N largest region changes, new and\n"
        "                         vanished regions (default %d, 0 = all); JSON always\n"
        "                         holds every region\n"
        "  --threshold PCT, --leak-threshold MB, --ridge F\n"
        "                         as for analyze, for both profiles\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input\n", DEFAULT_TOP);
}

int cmd_compare(int argc, char **argv, FILE *out)
{
    const char *paths[2] = { NULL, NULL }, *output = NULL, *format = "txt", *v;
    prism_analysis_opts opts = { -1, -1, 0 };
    size_t top = DEFAULT_TOP;
    int np = 0;
    for (int i = 1; i < argc; i++) {
        int m;
        double d;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            return EXIT_OK;
        }
        if ((m = opt_value("compare", argc, argv, &i, "-o", "--output", &output)) != 0 ||
            (m = opt_value("compare", argc, argv, &i, NULL, "--format", &format)) != 0) {
            if (m < 0)
                return EXIT_USAGE;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--top", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--top", v, &d))
                return EXIT_USAGE;
            if (d != floor(d) || d > 1e9) {
                fprintf(stderr, "prism-top compare: --top wants a whole number, not '%s'\n", v);
                return EXIT_USAGE;
            }
            top = (size_t)d;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--threshold", v, &opts.bottleneck_threshold_pct))
                return EXIT_USAGE;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--leak-threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--leak-threshold", v, &opts.leak_threshold_mb))
                return EXIT_USAGE;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--ridge", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--ridge", v, &opts.ridge_flop_per_byte))
                return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top compare: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else if (np < 2) {
            paths[np++] = argv[i];
        } else {
            fprintf(stderr, "prism-top compare: two files only\n");
            return EXIT_USAGE;
        }
    }
    bool json = !strcmp(format, "json");
    if (!json && strcmp(format, "txt")) {
        fprintf(stderr, "prism-top compare: --format is txt or json, not '%s'\n", format);
        return EXIT_USAGE;
    }
    if (np != 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    return rp_compare_files(paths[0], paths[1], output, json, top, &opts, out);
}

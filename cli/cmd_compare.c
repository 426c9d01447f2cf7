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
#define GATE_TOP 5

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top compare A B [-o OUT] [--format txt|json|html] [--top N]\n"
        "                         [--threshold PCT] [--leak-threshold MB] [--ridge F]\n"
        "       prism-top compare --gate [--max-slowdown PCT] [--fail-on-shift]\n"
        "                         [--format txt|markdown|json] [-o OUT] [--top N] BASE... NEW\n"
        "Compare profile B against profile A (the baseline): steps, time, memory,\n"
        "whether the whole run moved by one factor (a slower machine, not the code),\n"
        "per-region deltas with speedup, the change of per-step medians, the share\n"
        "of the step, and a Mann-Whitney rank test over per-step times (* marks a\n"
        "change beyond step-to-step noise: p < 0.01, the per-step median moved by\n"
        "3%% or more and by 0.5%% of the median step or more; after a whole-run\n"
        "shift, beyond the run's factor), new and vanished regions and bottlenecks.\n"
        "\n"
        "  -o, --output OUT       write the report to OUT (written whole or not at all)\n"
        "  --format txt|json|html text (default), JSON (schema prism.compare/1) or one\n"
        "                         self-contained HTML page (the changes by region and\n"
        "                         the new run's flame graph coloured by its change)\n"
        "  --top N                text: show the N largest region changes, new and\n"
        "                         vanished regions (default %d, 0 = all); JSON always\n"
        "                         holds every region\n"
        "  --threshold PCT, --leak-threshold MB, --ridge F\n"
        "                         as for analyze, for both profiles\n"
        "\n"
        "The regression gate (--gate): is NEW slower than the baselines beyond noise?\n"
        "Each BASE is a profile or a folder of them (*.cbor, *.json, *.json.gz), up\n"
        "to %d runs of the baseline code.  The step and every call path are tested\n"
        "as compare tests them, against each baseline; one fails when its per-step\n"
        "median is slower by more than its limit (PCT, or the largest change seen\n"
        "between two baselines where larger) and significantly slower, beyond the\n"
        "limit too, against at least half of the baselines.  A whole-run shift\n"
        "(every region alike) fails only with --fail-on-shift.\n"
        "  --max-slowdown PCT     the limit, %% slower (default %.0f)\n"
        "  --fail-on-shift        a whole run slower beyond the limit fails too\n"
        "  --format markdown      a summary for a pull-request comment; json:\n"
        "                         schema prism.gate/1 with the decision\n"
        "  --top N                rows shown beyond the step and the failures (default\n"
        "                         %d, 0 = all)\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input;\n"
        "  with --gate: 0 pass, 1 a regression, 2 an error (usage included)\n",
        DEFAULT_TOP, RP_GATE_MAX_BASELINES, PRISM_GATE_DEFAULT_PCT, GATE_TOP);
}

int cmd_compare(int argc, char **argv, FILE *out)
{
    const char *output = NULL, *format = "txt", *v;
    prism_analysis_opts opts = { -1, -1, 0, 0 };
    prism_gate_opts gopts = { PRISM_GATE_DEFAULT_PCT, false };
    size_t top = DEFAULT_TOP;
    bool gate = false, top_given = false;
    int np = 0;
    char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths) {
        fprintf(stderr, "prism-top: out of memory\n");
        return EXIT_BADINPUT;
    }
    for (int i = 1; i < argc; i++)
        gate |= !strcmp(argv[i], "--gate");
    int usage_rc = gate ? EXIT_BADINPUT : EXIT_USAGE, rc = usage_rc;
    for (int i = 1; i < argc; i++) {
        int m;
        double d;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            rc = EXIT_OK;
            goto done;
        }
        if (!strcmp(argv[i], "--gate")) {
            continue;
        } else if (!strcmp(argv[i], "--fail-on-shift")) {
            gopts.fail_on_shift = true;
        } else if ((m = opt_value("compare", argc, argv, &i, "-o", "--output", &output)) != 0 ||
                   (m = opt_value("compare", argc, argv, &i, NULL, "--format", &format)) != 0) {
            if (m < 0)
                goto done;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--top", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--top", v, &d))
                goto done;
            if (d != floor(d) || d > 1e9) {
                fprintf(stderr, "prism-top compare: --top wants a whole number, not '%s'\n", v);
                goto done;
            }
            top = (size_t)d;
            top_given = true;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--max-slowdown", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--max-slowdown", v, &gopts.max_slowdown_pct))
                goto done;
            if (!(gopts.max_slowdown_pct > 0) || gopts.max_slowdown_pct > 1e6) {
                fprintf(stderr, "prism-top compare: --max-slowdown wants a percentage above 0, "
                        "not '%s'\n", v);
                goto done;
            }
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--threshold", v, &opts.bottleneck_threshold_pct))
                goto done;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--leak-threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--leak-threshold", v, &opts.leak_threshold_mb))
                goto done;
        } else if ((m = opt_value("compare", argc, argv, &i, NULL, "--ridge", &v)) != 0) {
            if (m < 0 || !opt_nonneg("compare", "--ridge", v, &opts.ridge_flop_per_byte))
                goto done;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top compare: unknown option '%s'\n", argv[i]);
            goto done;
        } else {
            paths[np++] = argv[i];
        }
    }
    if (!gate && (gopts.fail_on_shift || gopts.max_slowdown_pct != PRISM_GATE_DEFAULT_PCT)) {
        fprintf(stderr, "prism-top compare: --max-slowdown and --fail-on-shift go with --gate\n");
        goto done;
    }
    bool json = !strcmp(format, "json"), md = !strcmp(format, "markdown");
    bool html = !gate && !strcmp(format, "html");
    if (!json && !md && !html && strcmp(format, "txt")) {
        fprintf(stderr, "prism-top compare: --format is txt, json%s, not '%s'\n",
                gate ? " or markdown" : " or html", format);
        goto done;
    }
    if (md && !gate) {
        fprintf(stderr, "prism-top compare: --format markdown goes with --gate\n");
        goto done;
    }
    if (gate) {
        if (np < 2) {
            usage(stderr);
            goto done;
        }
        rc = rp_gate_files(paths, (size_t)np, output, format, top_given ? top : GATE_TOP,
                           &gopts, &opts, out);
        goto done;
    }
    if (np != 2) {
        if (np > 2)
            fprintf(stderr, "prism-top compare: two files only (--gate takes several "
                    "baselines)\n");
        else
            usage(stderr);
        goto done;
    }
    rc = rp_compare_files(paths[0], paths[1], output, html ? RP_HTML : json ? RP_JSON : RP_TXT,
                          top, &opts, out);
done:
    free(paths);
    return rc;
}

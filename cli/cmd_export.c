/*
 * cmd_export.c - `prism-top export FILE --format F [-o OUT]`: its options;
 * the formats, their names in the usage text and the errors come from the
 * report writers' table (reports.h: rp_export_find), the exports are
 * written by reports/export*.c, and what --steps, --threads and
 * --min-duration keep is reports/export_scope.h's, the same in every
 * format.
 */
#include <stdint.h>
#include <string.h>

#include "cli.h"
#include "reports.h"

static void usage(FILE *f)
{
    fputs("usage: prism-top export FILE --format FORMAT [-o OUT] [--unit ns|us|ms]\n"
          "                        [--steps A-B] [--threads NAME|TID[,...]]\n"
          "                        [--min-duration DUR]\n"
          "Convert a profile for other tools.  FORMAT is one of:\n"
          "\n", f);
    const rp_export_format *x;
    for (size_t i = 0; (x = rp_export_at(i)) != NULL; i++)
        fprintf(f, "  --format %-12s  %s", x->name, x->description);
    fputs("  -o, --output OUT       write to OUT, whole or not at all (default: stdout,\n"
          "                         as with -o -)\n"
          "  --unit ns|us|ms        the unit of folded values (default ns)\n"
          "\n"
          "What to keep, the same in every format (default: everything):\n"
          "  --steps A-B            steps A to B (by index; N alone: one step) and\n"
          "                         what happened from A's start to B's end; a\n"
          "                         region crossing either end is cut there\n"
          "  --threads LIST         the events of these threads only: names (as\n"
          "                         analyze shows them) or OS thread ids, by\n"
          "                         commas; steps, memory and GPU device work stay\n"
          "  --min-duration DUR     leave out regions and GPU spans shorter than\n"
          "                         DUR (50us, 1.5ms, 2s; ns us ms s), with what\n"
          "                         they hold: their time stays in their parent\n"
          "\n"
          "exit status: 0 ok, 1 usage error, 2 bad input (also a step range or\n"
          "thread the file does not have)\n", f);
}

/* The first format that takes --unit ("folded"). */
static const char *unit_format(void)
{
    const rp_export_format *x;
    for (size_t i = 0; (x = rp_export_at(i)) != NULL; i++)
        if (x->has_unit)
            return x->name;
    return "?";
}

int cmd_export(int argc, char **argv, FILE *out)
{
    const char *path = NULL, *output = NULL, *format = NULL, *unit = NULL;
    const char *steps = NULL, *threads = NULL, *mindur = NULL;
    char names[256];
    for (int i = 1; i < argc; i++) {
        int m;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            return EXIT_OK;
        }
        if ((m = opt_value("export", argc, argv, &i, "-o", "--output", &output)) != 0 ||
            (m = opt_value("export", argc, argv, &i, "-f", "--format", &format)) != 0 ||
            (m = opt_value("export", argc, argv, &i, NULL, "--unit", &unit)) != 0 ||
            (m = opt_value("export", argc, argv, &i, NULL, "--steps", &steps)) != 0 ||
            (m = opt_value("export", argc, argv, &i, NULL, "--threads", &threads)) != 0 ||
            (m = opt_value("export", argc, argv, &i, NULL, "--min-duration", &mindur)) != 0) {
            if (m < 0)
                return EXIT_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top export: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else if (!path) {
            path = argv[i];
        } else {
            fprintf(stderr, "prism-top export: one file only\n");
            return EXIT_USAGE;
        }
    }
    rp_export_names(names, sizeof names, ", ");
    if (!path) {
        fprintf(stderr, "prism-top export: which file? (see --help)\n");
        return EXIT_USAGE;
    }
    if (!format) {
        fprintf(stderr, "prism-top export: --format is required (%s)\n", names);
        return EXIT_USAGE;
    }
    const rp_export_format *fmt = rp_export_find(format);
    if (!fmt) {
        fprintf(stderr, "prism-top export: unknown format '%s' (%s)\n", format, names);
        return EXIT_USAGE;
    }
    uint64_t unit_ns = 1;
    if (unit) {
        unit_ns = !strcmp(unit, "ns") ? 1 : !strcmp(unit, "us") ? 1000
                : !strcmp(unit, "ms") ? 1000000 : 0;
        if (!fmt->has_unit) {
            fprintf(stderr, "prism-top export: --unit is for --format %s\n", unit_format());
            return EXIT_USAGE;
        }
        if (!unit_ns) {
            fprintf(stderr, "prism-top export: --unit is ns, us or ms\n");
            return EXIT_USAGE;
        }
    }
    rp_export_scope scope = { .threads = threads };
    char err[256];
    if ((steps && !(scope.steps = rp_scope_parse_steps(steps, &scope.first_step,
                                                       &scope.last_step, err, sizeof err))) ||
        (threads && !rp_scope_parse_threads(threads, err, sizeof err)) ||
        (mindur && !rp_scope_parse_duration(mindur, &scope.min_ns, err, sizeof err))) {
        fprintf(stderr, "prism-top export: %s\n", err);
        return EXIT_USAGE;
    }
    return rp_export_file(path, fmt, unit_ns, &scope, output, out);
}

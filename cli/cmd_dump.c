/*
 * cmd_dump.c - `prism-top dump FILE [--chunks]` and `prism-top convert
 * TRACE -o OUT`: their options and usage texts; the work is done by
 * reports/dump.c and reports/convert.c.
 */
#include <string.h>

#include "cli.h"
#include "reports.h"
#include "prism/profile.h"

int cmd_dump(int argc, char **argv, FILE *out)
{
    const char *path = NULL;
    bool chunks = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--chunks"))
            chunks = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: prism-top dump FILE [--chunks]\n"
                   "Print a profile's header and every record in file order; with --chunks,\n"
                   "one line per chunk (offset, size, kind, stream, sequence, records, status).\n");
            return EXIT_OK;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top dump: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else if (!path)
            path = argv[i];
        else {
            fprintf(stderr, "prism-top dump: one file only\n");
            return EXIT_USAGE;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: prism-top dump FILE [--chunks]\n");
        return EXIT_USAGE;
    }
    return rp_dump_file(path, chunks, out);
}

/* ---- convert ---- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top convert TRACE -o OUT\n"
        "Write a PRISM profile (format %d.%d, checksummed) of TRACE: a torch.profiler\n"
        "trace (Kineto or legacy Chrome-trace JSON, plain or .gz) or a PRISM profile\n"
        "(rewritten).  What the trace holds beyond what PRISM understands is left out;\n"
        "`prism-top analyze` gives the same report for TRACE and OUT.\n"
        "\n"
        "  -o, --output OUT       the profile to write (written whole or not at all)\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input\n",
        PRISM_FORMAT_MAJOR, PRISM_FORMAT_MINOR);
}

int cmd_convert(int argc, char **argv, FILE *out)
{
    const char *in = NULL, *outpath = NULL;
    (void)out;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            return EXIT_OK;
        }
        if ((r = opt_value("convert", argc, argv, &i, "-o", "--output", &v)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            outpath = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top convert: unknown option '%s'\n", argv[i]);
            return EXIT_USAGE;
        } else if (!in) {
            in = argv[i];
        } else {
            fprintf(stderr, "prism-top convert: one input only ('%s')\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!in || !outpath || !strcmp(outpath, "-")) {
        usage(stderr);
        return EXIT_USAGE;
    }
    return rp_convert_file(in, outpath);
}

/*
 * prism-top - explore PRISM profiles.  main() only dispatches: each
 * subcommand lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "prism/profile.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top COMMAND [ARGS]\n"
        "\n"
        "commands:\n"
        "  dump FILE [--chunks]   print the header and every record of a profile\n"
        "                         (--chunks: one line per chunk)\n"
        "\n"
        "options:\n"
        "  -h, --help             this help\n"
        "  -V, --version          version and file format version\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input (damaged, truncated or foreign file)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        printf("prism-top %s (profile format %d.%d)\n", PRISM_VERSION_STRING,
               PRISM_FORMAT_MAJOR, PRISM_FORMAT_MINOR);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "dump"))
        return cmd_dump(argc - 1, argv + 1, stdout);
    fprintf(stderr, "prism-top: unknown command '%s' (try prism-top --help)\n", cmd);
    return EXIT_USAGE;
}

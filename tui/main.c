/*
 * prism-top - explore PRISM profiles.  main() only dispatches: each
 * subcommand lives in its own file.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ui.h"
#include "prism/import.h"
#include "prism/profile.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top [--follow|--no-follow] FILE\n"
        "                         explore a profile (curses; a report when not a terminal);\n"
        "                         a profile still being written is followed live\n"
        "       prism-top BASE NEW       compare two profiles side by side\n"
        "       prism-top COMMAND [ARGS]\n"
        "\n"
        "commands:\n"
        "  analyze FILE [-o OUT] [--format txt|json] [--threshold PCT] [--leak-threshold MB]\n"
        "                         report: summary, step times, top operations,\n"
        "                         bottlenecks, memory leak verdict, GPU activity\n"
        "  compare A B [-o OUT] [--format txt|json] [--top N]\n"
        "                         B against the baseline A: metrics, per-region deltas\n"
        "                         with significance, new/vanished regions and bottlenecks\n"
        "  export FILE --format chrome-trace|csv|folded|json -o OUT\n"
        "                         convert: Chrome trace (Perfetto), call tree as CSV,\n"
        "                         folded stacks (flame graphs), call tree as JSON\n"
        "  dump FILE [--chunks]   print the header and every record of a profile\n"
        "                         (--chunks: one line per chunk)\n"
        "  convert TRACE -o OUT   write a PRISM profile of a torch.profiler trace\n"
        "                         (or rewrite a profile): compact, checksummed\n"
        "\n"
        "  prism-top COMMAND --help   the options of one command\n"
        "\n"
        "options:\n"
        "  -h, --help             this help\n"
        "  -V, --version          version and file format version\n"
        "\n"
        "FILE may be a PRISM profile or a torch.profiler trace (Kineto or legacy\n"
        "Chrome-trace JSON, plain or .gz), told apart by content.\n"
        "\n"
        "exit status: 0 ok, 1 usage error, 2 bad input (damaged, truncated or foreign file)\n");
}

int main(int argc, char **argv)
{
    prism_import_register();            /* every command reads traces too */
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
    if (!strcmp(cmd, "analyze"))
        return cmd_analyze(argc - 1, argv + 1, stdout);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 1, argv + 1, stdout);
    if (!strcmp(cmd, "export"))
        return cmd_export(argc - 1, argv + 1, stdout);
    if (!strcmp(cmd, "convert"))
        return cmd_convert(argc - 1, argv + 1, stdout);
    if (!strcmp(cmd, "--follow") || !strcmp(cmd, "--no-follow")) {
        if (argc != 3) {
            fprintf(stderr, "usage: prism-top [--follow|--no-follow] FILE\n");
            return EXIT_USAGE;
        }
        return explore_main(argv[2], !strcmp(cmd, "--follow") ? 1 : 2, NULL);
    }
    if (cmd[0] != '-' && argc == 2)
        return explore_main(cmd, 0, NULL);
    if (cmd[0] != '-' && argc == 3 && argv[2][0] != '-')
        return explore_compare(cmd, argv[2], NULL);
    fprintf(stderr, "prism-top: unknown command '%s' (try prism-top --help)\n", cmd);
    return EXIT_USAGE;
}

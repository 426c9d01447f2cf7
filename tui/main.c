/*
 * prism-top - explore PRISM profiles.  main() only dispatches: each
 * subcommand lives in its own file.
 */
#include <signal.h>
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
        "  export FILE --format chrome-trace|speedscope|csv|folded|json [-o OUT]\n"
        "                         [--unit ns|us|ms]\n"
        "                         convert: Chrome trace (Perfetto), speedscope, call\n"
        "                         tree as CSV, folded stacks (flame graphs; values in\n"
        "                         ns unless --unit), call tree as JSON\n"
        "  dump FILE [--chunks]   print the header and every record of a profile\n"
        "                         (--chunks: one line per chunk)\n"
        "  convert TRACE -o OUT   write a PRISM profile of a torch.profiler trace\n"
        "                         (or rewrite a profile): compact, checksummed\n"
        "\n"
        "  prism-top COMMAND --help   the options of one command\n"
        "  Reports and exports go to stdout without -o (or with -o -).\n"
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

/* What is wrong with a command line that is no command: too many files, or
 * an option where a file or command was expected. */
static int usage_error(int argc, char **argv)
{
    int files = 0;
    const char *opt = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (!opt)
                opt = argv[i];
        } else {
            files++;
        }
    }
    if (opt && opt == argv[1])
        fprintf(stderr, "prism-top: unknown option '%s' (try prism-top --help)\n", opt);
    else if (opt)
        fprintf(stderr, "prism-top: '%s': options belong to a command, as in prism-top "
                "analyze FILE %s (try prism-top --help)\n", opt, opt);
    else
        fprintf(stderr, "prism-top: %d files given: explore takes one profile, compare "
                "takes two (try prism-top --help)\n", files);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    prism_import_register();            /* every command reads traces too */
    /* `prism-top export ... | head`: a closed pipe ends the run quietly, as
     * it ends cat, even when the caller ignored SIGPIPE */
    signal(SIGPIPE, SIG_DFL);
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
    return usage_error(argc, argv);
}

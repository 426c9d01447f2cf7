/*
 * prism-top - explore PRISM profiles.  main() only dispatches: each
 * subcommand lives in its own file.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_job.h"
#include "cli.h"
#include "job_view.h"
#include "ui.h"
#include "prism/import.h"
#include "prism/profile.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top [--follow|--no-follow] [--pane NAME] [--step INDEX] FILE\n"
        "                         explore a profile (curses; a report when not a terminal);\n"
        "                         a profile still being written is followed live\n"
        "       prism-top [--compare] BASE NEW\n"
        "                         compare two profiles side by side (--compare: even\n"
        "                         two ranks of one job)\n"
        "       prism-top [--job] FILE|DIR...\n"
        "                         the job view: one profile per rank of a distributed\n"
        "                         run (3+ files, two ranks of one job, a directory,\n"
        "                         a rank summary, or --job), stragglers\n"
        "       prism-top COMMAND [ARGS]\n"
        "\n"
        "commands:\n"
        "  analyze FILE [-o OUT] [--format txt|json] [--threshold PCT] [--leak-threshold MB]\n"
        "                         report: summary, step times, top operations,\n"
        "                         bottlenecks, memory leak verdict, GPU activity\n"
        "  analyze FILE|DIR... [-o OUT] [--format txt|json] [--steps] [--threads N]\n"
        "                         a job (two or more rank files, or a directory):\n"
        "                         the job's step time, skew, a table of the ranks,\n"
        "                         stragglers with the region that makes the difference\n"
        "  analyze --summary [-o OUT] FILE\n"
        "                         a rank's small summary, merged later like profiles\n"
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
                "takes two, the job view any number (try prism-top --help)\n", files);
    return EXIT_USAGE;
}

/* The explorer's own options, before the files: --follow, --no-follow,
 * --pane NAME, --step INDEX (where to open: the job view's Enter), --job
 * (the files are ranks of one job, even one or two), --compare (two files
 * side by side, even two ranks of one job: the job view's c), -- (files
 * follow). */
typedef struct top_opts {
    int mode;                   /* 0 auto, 1 follow, 2 no follow            */
    explore_at at;
    bool job, compare, have_pane;
    int first;                  /* argv index of the first file             */
} top_opts;

/* Parse them; -1 (a message printed) on a bad value, 0 otherwise (what is
 * not one of them is left at argv[o->first]). */
static int parse_top(int argc, char **argv, top_opts *o)
{
    *o = (top_opts){ .at = { .pane = -1 } };
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--follow") || !strcmp(a, "--no-follow")) {
            o->mode = !strcmp(a, "--follow") ? 1 : 2;
        } else if (!strcmp(a, "--job")) {
            o->job = true;
        } else if (!strcmp(a, "--compare")) {
            o->compare = true;
        } else if ((!strcmp(a, "--pane") || !strcmp(a, "--step")) && i + 1 == argc) {
            fprintf(stderr, "prism-top: %s needs a value (try prism-top --help)\n", a);
            return -1;
        } else if (!strcmp(a, "--pane") || !strcmp(a, "--step")) {
            const char *val = argv[++i];
            if (a[2] == 'p') {
                o->at.pane = ui_pane_by_name(val);
                o->have_pane = true;
                if (o->at.pane < 0) {
                    fprintf(stderr, "prism-top: --pane %s: no such pane (summary, tree, flame, "
                            "ops, memory, gpu, bottlenecks, timeline)\n", val);
                    return -1;
                }
            } else {
                char *end;
                o->at.step = strtoull(val, &end, 10);
                o->at.have_step = true;
                if (!*val || *end || val[0] == '-') {
                    fprintf(stderr, "prism-top: --step %s: not a step index\n", val);
                    return -1;
                }
            }
        } else {
            break;
        }
    }
    o->first = i;
    return 0;
}

/* prism-top [OPTIONS] FILE...: the explorer, compare or the job view. */
static int open_files(int argc, char **argv)
{
    top_opts o;
    if (parse_top(argc, argv, &o) < 0)
        return EXIT_USAGE;
    int n = argc - o.first;
    char **files = argv + o.first;
    bool dashdash = o.first > 1 && !strcmp(argv[o.first - 1], "--");
    for (int i = 0; i < n && !dashdash; i++)
        if (files[i][0] == '-' && files[i][1])
            return usage_error(argc, argv);
    bool dir = false;                   /* a directory or a rank summary */
    for (int i = 0; i < n; i++)
        dir = dir || job_args_are_job((const char *const *)&files[i], 1);
    if (n == 2 && o.compare && !o.job && !o.mode && !o.have_pane && !o.at.have_step)
        return explore_compare(files[0], files[1], NULL);
    if (n == 2 && !o.mode && !o.have_pane && !o.at.have_step)
        dir = dir || job_two_ranks(files[0], files[1]);    /* prism-top rank*.cbor */
    if (n >= 1 && (o.job || dir || n >= 3)) {
        if (o.mode || o.have_pane || o.at.have_step) {
            fprintf(stderr, "prism-top: --follow, --no-follow, --pane and --step open one "
                    "profile, not a job\n");
            return EXIT_USAGE;
        }
        return job_main(n, files);
    }
    if (n == 1)
        return explore_main_at(files[0], o.mode, NULL, &o.at);
    if (n == 2 && !o.mode && !o.have_pane && !o.at.have_step)
        return explore_compare(files[0], files[1], NULL);
    fprintf(stderr, "usage: prism-top [--follow|--no-follow] [--pane NAME] [--step INDEX] FILE\n"
            "       prism-top --job FILE|DIR...\n");
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
    static const char *const top_options[] = { "--follow", "--no-follow", "--pane", "--step",
                                                "--job", "--compare", "--" };
    bool known = cmd[0] != '-' || !cmd[1];
    for (size_t i = 0; i < sizeof top_options / sizeof top_options[0]; i++)
        known = known || !strcmp(cmd, top_options[i]);
    return known ? open_files(argc, argv) : usage_error(argc, argv);
}

/*
 * prism-top - explore PRISM profiles.  main() only dispatches, from the
 * table of subcommands below (each lives in its own cmd_*.c file); the
 * top-level usage text is made from the same table.  Files without a
 * command open the explorer (top.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports.h"
#include "prism/import.h"
#include "prism/profile.h"

#define HELP_COL 25             /* where the descriptions start */

static const cli_cmd_entry commands[] = {
    { "analyze", NULL, {
        { "FILE [-o OUT] [--format txt|json] [--threshold PCT] [--leak-threshold MB]",
          "report: summary, step times, top operations,\n"
          "bottlenecks, memory leak verdict, GPU activity" },
        { "FILE|DIR... [-o OUT] [--format txt|json] [--steps] [--threads N]",
          "a job (two or more rank files, or a directory):\n"
          "the job's step time, skew, a table of the ranks,\n"
          "stragglers with the region that makes the difference" },
        { "--summary [-o OUT] FILE",
          "a rank's small summary, merged later like profiles" } },
      cmd_analyze },
    { "compare", NULL, {
        { "A B [-o OUT] [--format txt|json] [--top N]",
          "B against the baseline A: metrics, per-region deltas\n"
          "with significance, new/vanished regions and bottlenecks" } },
      cmd_compare },
    { "export", NULL, {
        { "FILE --format {formats} [-o OUT]\n"
          "[--unit ns|us|ms] [--steps A-B] [--threads LIST]\n"
          "[--min-duration DUR]",
          "convert: Chrome trace (Perfetto), speedscope, call\n"
          "tree as CSV, folded stacks (flame graphs; values in\n"
          "ns unless --unit), call tree as JSON; only some\n"
          "steps, threads, or spans as long as DUR" } },
      cmd_export },
    { "dump", NULL, {
        { "FILE [--chunks]",
          "print the header and every record of a profile\n"
          "(--chunks: one line per chunk)" } },
      cmd_dump },
    { "convert", NULL, {
        { "TRACE -o OUT",
          "write a PRISM profile of a torch.profiler trace\n"
          "(or rewrite a profile): compact, checksummed" } },
      cmd_convert },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* s's lines, each after the first on a new line indented to HELP_COL;
 * "{formats}" becomes the export formats joined by '|'. */
static void put_lines(FILE *f, const char *s)
{
    static const char token[] = "{formats}";
    for (; *s; s++) {
        if (*s == '\n') {
            fprintf(f, "\n%*s", HELP_COL, "");
        } else if (!strncmp(s, token, sizeof token - 1)) {
            char names[256];
            fputs(rp_export_names(names, sizeof names, "|"), f);
            s += sizeof token - 2;
        } else {
            fputc(*s, f);
        }
    }
}

/* "  NAME USAGE" and its description: beside it from HELP_COL when the
 * usage is one line that ends before, else on the lines below. */
static void put_form(FILE *f, const char *name, const cli_cmd_form *x)
{
    int len = fprintf(f, "  %s ", name);
    bool beside = !strchr(x->usage, '\n') && !strstr(x->usage, "{formats}") &&
                  len + (int)strlen(x->usage) < HELP_COL - 1;
    put_lines(f, x->usage);
    if (beside)
        fprintf(f, "%*s", HELP_COL - len - (int)strlen(x->usage), "");
    else
        fprintf(f, "\n%*s", HELP_COL, "");
    put_lines(f, x->description);
    fputc('\n', f);
}

static void usage(FILE *f)
{
    fputs("usage: prism-top [--follow|--no-follow] [--pane NAME] [--step INDEX] FILE\n"
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
          "commands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        for (size_t k = 0; k < 3 && commands[i].forms[k].usage; k++)
            put_form(f, commands[i].name, &commands[i].forms[k]);
    fputs("\n"
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
          "exit status: 0 ok, 1 usage error, 2 bad input (damaged, truncated or foreign file)\n",
          f);
}

static const cli_cmd_entry *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name) ||
            (commands[i].alias && !strcmp(name, commands[i].alias)))
            return &commands[i];
    return NULL;
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
    const cli_cmd_entry *e = find_command(cmd);
    if (e)
        return e->exec(argc - 1, argv + 1, stdout);
    static const char *const top_options[] = { "--follow", "--no-follow", "--pane", "--step",
                                                "--job", "--compare", "--" };
    bool known = cmd[0] != '-' || !cmd[1];
    for (size_t i = 0; i < sizeof top_options / sizeof top_options[0]; i++)
        known = known || !strcmp(cmd, top_options[i]);
    return known ? cli_open_files(argc, argv) : cli_usage_error(argc, argv);
}

/* cli.h - prism-top's command line: the subcommands (reports and tools),
 * their option parsing and usage texts, the table main() dispatches from.
 *
 * Each command takes its own argv (argv[0] is the command name) and writes
 * its normal output to `out` unless told to write a file; errors go to
 * stderr as one line.  Returns an exit code (present/exit.h).  The work is
 * done by the report writers (reports/reports.h). */
#ifndef PRISM_CLI_H
#define PRISM_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "exit.h"

/* prism-top dump FILE [--chunks] */
int cmd_dump(int argc, char **argv, FILE *out);
/* prism-top analyze FILE [-o OUT] [--format txt|json] [--threshold PCT]
 *                   [--leak-threshold MB]
 * prism-top analyze FILE|DIR... [-o OUT] [--format txt|json] [--steps]
 *                   [--threads N]        a job
 * prism-top analyze --summary [-o OUT] FILE */
int cmd_analyze(int argc, char **argv, FILE *out);
/* prism-top compare A B [-o OUT] [--format txt|json] [--top N] */
int cmd_compare(int argc, char **argv, FILE *out);
/* prism-top export FILE --format FORMAT [-o OUT] (reports.h's table) */
int cmd_export(int argc, char **argv, FILE *out);
/* prism-top convert TRACE -o OUT: a PRISM profile of what the reader reads */
int cmd_convert(int argc, char **argv, FILE *out);

/* prism-top [OPTIONS] FILE...: the explorer, compare or the job view on a
 * terminal, the matching report otherwise (top.c).  argv[0] is the
 * program. */
int cli_open_files(int argc, char **argv);

/* What is wrong with a command line that is no command (too many files,
 * an option where a file or command was expected): one line on stderr,
 * EXIT_USAGE (top.c). */
int cli_usage_error(int argc, char **argv);

/* One form of a subcommand in the top-level usage: its arguments (after
 * "  NAME "; "{formats}" stands for the export formats joined by '|') and
 * what it does; each may hold several lines ('\n' between them), indented
 * to column 25 when printed. */
typedef struct cli_cmd_form {
    const char *usage;
    const char *description;
} cli_cmd_form;

/* A subcommand, in the style of tmux's cmd_entry: main() dispatches on
 * name (or alias), and the top-level usage lists its forms (main.c). */
typedef struct cli_cmd_entry {
    const char *name;
    const char *alias;          /* NULL: none                                */
    cli_cmd_form forms[3];      /* the first with usage NULL ends them       */
    int (*exec)(int argc, char **argv, FILE *out);
} cli_cmd_entry;

/* ---- option parsing (opts.c) ---- */

/*
 * Match argv[*i] against a value option: "-o X", "--output X",
 * "--output=X" (short may be NULL).  Returns 1 and sets *val (advancing *i
 * past a separate value), 0 when argv[*i] is not this option, -1 when the
 * value is missing (one line on stderr already printed, naming cmd).
 */
int opt_value(const char *cmd, int argc, char **argv, int *i, const char *shrt,
              const char *lng, const char **val);
/* "-h" or "--help". */
bool opt_is_help(const char *arg);
/* A finite number >= 0; false (one line on stderr) otherwise. */
bool opt_nonneg(const char *cmd, const char *opt, const char *s, double *out);

#endif

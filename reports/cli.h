/* cli.h - prism-top's command-line subcommands (reports and tools).
 *
 * Each command takes its own argv (argv[0] is the command name) and writes
 * its normal output to `out` unless told to write a file; errors go to
 * stderr as one line.  Returns an exit code. */
#ifndef PRISM_TUI_CLI_H
#define PRISM_TUI_CLI_H

#include <stdio.h>

/* Exit codes, documented in prism-top(1). */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2 };

/* prism-top dump FILE [--chunks] */
int cmd_dump(int argc, char **argv, FILE *out);
/* prism-top analyze FILE [-o OUT] [--format txt|json] [--threshold PCT]
 *                   [--leak-threshold MB]
 * prism-top analyze FILE|DIR... [-o OUT] [--format txt|json] [--steps]
 *                   [--threads N]        a job (reports/analyze_job.h)
 * prism-top analyze --summary [-o OUT] FILE */
int cmd_analyze(int argc, char **argv, FILE *out);
/* prism-top compare A B [-o OUT] [--format txt|json] [--top N] */
int cmd_compare(int argc, char **argv, FILE *out);
/* prism-top export FILE --format chrome-trace|csv|folded|json -o OUT */
int cmd_export(int argc, char **argv, FILE *out);
/* prism-top convert TRACE -o OUT: a PRISM profile of what the reader reads */
int cmd_convert(int argc, char **argv, FILE *out);

#endif

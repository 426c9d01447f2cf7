/* cli.h - prism-top's command-line subcommands (reports and tools). */
#ifndef PRISM_TUI_CLI_H
#define PRISM_TUI_CLI_H

#include <stdio.h>

/* Exit codes, documented in prism-top(1). */
enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2 };

/* prism-top dump FILE [--chunks] */
int cmd_dump(int argc, char **argv, FILE *out);

#endif

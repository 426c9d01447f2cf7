/* exit.h - prism-top's exit codes, documented in prism-top(1): shared by
 * the report writers (reports/), the explorer (tui/) and the command line
 * (cli/). */
#ifndef PRISM_PRESENT_EXIT_H
#define PRISM_PRESENT_EXIT_H

enum { EXIT_OK = 0, EXIT_USAGE = 1, EXIT_BADINPUT = 2 };
/* `compare --gate`: 1 is its verdict (a regression), and a usage error
 * there is EXIT_BADINPUT (CI tells "slower" from "could not tell"). */
enum { EXIT_REGRESSED = 1 };

#endif

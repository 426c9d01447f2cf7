/*
 * quitsig.h - the explorer's quit signals and their deadline.
 *
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT set a flag the main loop reads
 * (getch is woken: no SA_RESTART) and arm a deadline of QUITSIG_GRACE_S:
 * a loop held up by a long read or refresh of a big file does not see the
 * flag in time, so SIGALRM restores the terminal and exits with status 0,
 * as the loop would have.  Fatal signals (SEGV, BUS, ABRT, FPE) restore
 * the terminal and die of the signal.  SIGPIPE is ignored.
 */
#ifndef PRISM_TUI_QUITSIG_H
#define PRISM_TUI_QUITSIG_H

#include <signal.h>

#define QUITSIG_GRACE_S 1u

/* Install the handlers; restore() gives the terminal back (called from
 * the deadline's and the fatal signals' handlers, and by the caller on
 * its own exit paths). */
void quitsig_install(void (*restore)(void));

/* Nonzero (the signal) once a quit signal arrived. */
const volatile sig_atomic_t *quitsig_flag(void);

/* Leaving anyway: no deadline any more (async-signal-safe). */
void quitsig_disarm(void);

#endif

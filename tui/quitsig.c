/*
 * quitsig.c - see quitsig.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "quitsig.h"

static volatile sig_atomic_t got_signal;
static void (*restore_fn)(void);

static void on_quit_signal(int sig)
{
    if (!got_signal)                    /* a deadline for the loop: */
        alarm(QUITSIG_GRACE_S);         /* (async-signal-safe) */
    got_signal = sig;
}

/* The loop did not end within QUITSIG_GRACE_S of the quit signal (a long
 * read or refresh holds it): the terminal back and out now. */
static void on_quit_late(int sig)
{
    (void)sig;
    /* not async-signal-safe, as on_fatal_signal: a dead terminal is worse */
    if (restore_fn)
        restore_fn();
    _exit(EXIT_SUCCESS);
}

static void on_fatal_signal(int sig)
{
    /* not async-signal-safe, but the alternative is a dead terminal */
    if (restore_fn)
        restore_fn();
    signal(sig, SIG_DFL);
    raise(sig);
}

void quitsig_install(void (*restore)(void))
{
    restore_fn = restore;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_quit_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;                    /* no SA_RESTART: wake getch */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    sa.sa_handler = on_quit_late;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

const volatile sig_atomic_t *quitsig_flag(void)
{
    return &got_signal;
}

void quitsig_disarm(void)
{
    alarm(0);
}

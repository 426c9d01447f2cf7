/*
 * hogs.h - CPU hogs for the tests that check verdicts on a busy machine:
 * busy-loop processes, at least two and at least one a core, killed and
 * reaped by hogs_stop.
 */
#ifndef PRISM_TEST_HOGS_H
#define PRISM_TEST_HOGS_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Start them into pid[0..max); returns how many run (fewer if fork fails). */
static inline size_t hogs_start(pid_t *pid, size_t max)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = cores > 2 ? (size_t)cores : 2, i;
    n = n > max ? max : n;
    for (i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] < 0)
            break;
        if (pid[i] == 0) {
            volatile unsigned long x = 0;
            for (;;)
                x++;
        }
    }
    return i;
}

static inline void hogs_stop(const pid_t *pid, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kill(pid[i], SIGKILL);
    for (size_t i = 0; i < n; i++)
        waitpid(pid[i], NULL, 0);
}

#endif

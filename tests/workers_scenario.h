/*
 * workers_scenario.h - a training process with worker processes (as a
 * DataLoader without persistent workers starts them each epoch), for the
 * tests of the explorer's worker view: tests/workers_view_test.c (C) and
 * tests/workers_workload.c (the screen test's program).  Header-only.
 *
 * ws_run records a session of its own (call it in a process of its own):
 * a "setup" region of 5 ms, then `steps` steps, each a region "wait for
 * batches" holding fork()s of `workers` processes, ids 0..workers-1, and
 * the wait for them, then "forward" (2 ms).  Each worker records, through
 * prism_init_worker into "<output>.workers/w<id>-<pid>.prism", thread
 * "DataLoader": `batches` regions "DataLoader batch", each holding two
 * "ToyDataset.__getitem__" (1 ms) and one "collate (default_collate)".
 * Worker k interns k names of its own first, so that the files' string ids
 * differ.  With `stray`, one more process writes "w7-<pid>.prism" naming
 * the parent's pid but another start (a file of another run): thread
 * "Stray", region "stray region".  The naps are the workload, never
 * synchronisation: the parent waits for its workers with waitpid.
 */
#ifndef PRISM_TESTS_WORKERS_SCENARIO_H
#define PRISM_TESTS_WORKERS_SCENARIO_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prism/collect.h"

#define WS_MAX_WORKERS 16

typedef struct ws_opts {
    const char *output;
    int steps, workers, batches;
    bool stray;
} ws_opts;

/* Leave a region through libprism's real function, not the inline one:
 * built with the sanitizers, the inline exit's null check on the
 * thread's TLS record reads the flags of an `add` that the linker turns
 * into a `lea` (initial-exec TLS defined in the executable), and fires at
 * random in whatever caller the flags happen to be set for. */
static inline void ws_pop(void)
{
    (prism_pop)();
}

static inline void ws_nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A worker process's life: never returns. */
static inline void ws_worker(const char *dir, uint64_t ppid, uint64_t pstart, uint64_t id,
                             int batches, bool stray)
{
    char path[4400], name[64];
    prism_config cfg;
    if (snprintf(path, sizeof path, "%s/w%llu-%ld.prism", dir, (unsigned long long)id,
                 (long)getpid()) >= (int)sizeof path)
        _exit(6);
    prism_config_default(&cfg);
    cfg.output = path;
    if (prism_init_worker(&cfg, &(prism_worker_of){ ppid, pstart, id }) != 0)
        _exit(5);
    prism_thread_name(stray ? "Stray" : "DataLoader");
    for (uint64_t k = 0; k < id; k++) {          /* ids of its own */
        snprintf(name, sizeof name, "worker %llu name %llu", (unsigned long long)id,
                 (unsigned long long)k);
        prism_name(name);
    }
    for (int b = 0; b < batches; b++) {
        if (stray) {
            prism_push("stray region");
            ws_nap_ms(1);
            ws_pop();
            continue;
        }
        prism_push("DataLoader batch");
        for (int i = 0; i < 2; i++) {
            prism_push("ToyDataset.__getitem__");
            ws_nap_ms(1);
            ws_pop();
        }
        prism_push("collate (default_collate)");
        ws_pop();
        ws_pop();
    }
    prism_shutdown();
    _exit(0);
}

/* Start a worker process; its pid, or -1. */
static inline pid_t ws_spawn(const char *dir, uint64_t ppid, uint64_t pstart, uint64_t id,
                             int batches, bool stray)
{
    fflush(NULL);
    pid_t p = fork();
    if (p == 0)
        ws_worker(dir, ppid, pstart, id, batches, stray);
    return p;
}

/* Wait for a worker process: true when it exited 0. */
static inline bool ws_reap(pid_t p)
{
    int status;
    pid_t w;
    do
        w = waitpid(p, &status, 0);
    while (w < 0 && errno == EINTR);
    return w == p && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The scenario; 0 on success, else a small number saying what failed. */
static inline int ws_run(const ws_opts *o)
{
    char dir[4200];
    prism_config cfg;
    if (o->workers < 1 || o->workers > WS_MAX_WORKERS ||
        snprintf(dir, sizeof dir, "%s.workers", o->output) >= (int)sizeof dir)
        return 2;
    prism_config_default(&cfg);
    cfg.output = o->output;
    if (prism_init(&cfg) != 0)
        return 1;
    prism_thread_name("main");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return 3;
    uint64_t ppid = (uint64_t)getpid(), start = prism_session_start_ns();
    bool ok = start != 0;
    prism_push("setup");
    ws_nap_ms(5);
    ws_pop();
    for (int s = 0; s < o->steps && ok; s++) {
        pid_t pids[WS_MAX_WORKERS];
        prism_step_begin();
        prism_push("wait for batches");
        for (int k = 0; k < o->workers; k++)
            pids[k] = ws_spawn(dir, ppid, start, (uint64_t)k, o->batches, false);
        for (int k = 0; k < o->workers; k++)
            ok = (pids[k] > 0 && ws_reap(pids[k])) && ok;
        ws_pop();
        prism_push("forward");
        ws_nap_ms(2);
        ws_pop();
        prism_step_end();
    }
    if (ok && o->stray) {                       /* another run's file */
        pid_t p = ws_spawn(dir, ppid, start + 1, 7, 1, true);
        ok = p > 0 && ws_reap(p);
    }
    prism_shutdown();
    return ok ? 0 : 4;
}

#endif

/*
 * loop_profile.h - a training-loop-shaped profile written by libcollect
 * itself (the real writer: 64 KiB per-thread chunks, steps, memory
 * samples, INFO steps.thread), for the benches that read profiles
 * (analysis_bench, export_bench).  Header only: every bench/NAME.c is one
 * binary.
 */
#ifndef PRISM_BENCH_LOOP_PROFILE_H
#define PRISM_BENCH_LOOP_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prism/collect.h"

/* A training-loop-shaped stream written by libcollect itself (the real
 * writer: 64 KiB per-thread chunks, steps, memory samples), in a child
 * process because a session is once per process. */
static inline void loop_profile_child(const char *path, uint64_t events, bool work)
{
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.output = path;
    cfg.policy = PRISM_POLICY_WAIT;
    cfg.buffer_mb = 256;
    if (prism_init(&cfg) != 0)
        _exit(1);
    static const char *const names[] = { "data_loading", "forward", "attention", "mlp",
                                         "loss", "backward", "grad", "optimizer_step", "norm" };
    uint32_t id[9], layer[24];
    for (int i = 0; i < 9; i++)
        id[i] = prism_name(names[i]);
    for (int i = 0; i < 24; i++) {
        char n[32];
        snprintf(n, sizeof n, "layer.%d", i);
        layer[i] = prism_name(n);
    }
    /* work counters make the analysis keep region transitions (as GPU
     * records do): the other figure */
    uint32_t flops = work ? prism_name("flops") : 0, bytes = work ? prism_name("bytes") : 0;
    for (uint64_t done = 0; done < events;) {
        prism_step_begin();
        prism_push_id(id[0]); prism_pop();
        if (work) {
            prism_counter_i(flops, 1 << 20);
            prism_counter_i(bytes, 1 << 18);
        }
        prism_push_id(id[1]);
        for (int l = 0; l < 24; l++) {
            prism_push_id(layer[l]);
            prism_push_id(id[8]); prism_pop();
            prism_push_id(id[2]); prism_pop();
            prism_push_id(id[3]); prism_pop();
            prism_pop();
        }
        prism_pop();
        prism_push_id(id[4]); prism_pop();
        prism_push_id(id[5]);
        for (int l = 23; l >= 0; l--) {
            prism_push_id(layer[l]);
            prism_push_id(id[6]); prism_pop();
            prism_pop();
        }
        prism_pop();
        prism_push_id(id[7]); prism_pop();
        prism_step_end();
        done += 2 * (1 + 1 + 24 * 4 + 1 + 1 + 24 * 2 + 1);
    }
    prism_shutdown();
    _exit(0);
}

/* Write about `events` region events to path, in a child process (a
 * session is once per process).  0 on success. */
static inline int loop_profile_write(const char *path, uint64_t events, bool work)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0)
        loop_profile_child(path, events, work);
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return -1;
    return 0;
}

#endif

/*
 * steps_workload.c - a small instrumented program for the screen tests of
 * the time outside regions and the slow steps (tests/screen/outside.sh):
 * STEPS steps (default 30), each a region "forward" (8 ms asleep), 4 ms
 * that no region holds, and a region "backward" (8 ms asleep); every 10th
 * step (9, 19, 29, ...) sleeps 100 ms more outside its regions, so those
 * steps are slow and the excess is `(outside regions)`.  Sleeps, not
 * work: the timings are the program's own, whatever else the cores do.
 *
 * Usage: steps_workload OUTPUT [STEPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "prism/collect.h"

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: steps_workload OUTPUT [STEPS]\n");
        return 2;
    }
    long steps = argc > 2 ? strtol(argv[2], NULL, 10) : 30;
    if (steps < 1 || steps > 100000) {
        fprintf(stderr, "steps_workload: STEPS: 1 to 100000\n");
        return 2;
    }
    prism_config cfg;
    prism_config_default(&cfg);
    cfg.output = argv[1];
    if (prism_init(&cfg) != 0)
        return 1;
    for (long i = 0; i < steps; i++) {
        prism_step_begin();
        prism_push("forward");
        nap_ms(8);
        prism_pop();
        nap_ms(i % 10 == 9 ? 104 : 4);      /* no region holds it */
        prism_push("backward");
        nap_ms(8);
        prism_pop();
        prism_step_end();
    }
    prism_shutdown();
    return 0;
}

/*
 * steps_workload.c - a small instrumented program for the screen tests of
 * the time outside regions and the slow steps (tests/screen/outside.sh):
 * STEPS steps (default 30), each a region "forward" (8 ms asleep), 4 ms
 * that no region holds, and a region "backward" (8 ms asleep); every 10th
 * step (9, 19, 29, ...) sleeps 100 ms more outside its regions, so those
 * steps are slow and the excess is `(outside regions)`.  Sleeps, not
 * work: the timings are the program's own, whatever else the cores do.
 *
 * With "ops" (tests/screen/opwindow.sh) steps 2 and 3 are flagged as the
 * operator window's (PRISM_STEP_OPS, as the Python module's window flags
 * them) and hold an operator region "aten::mm [64x32, 32x64] f32" (4 ms)
 * inside "forward".
 *
 * Usage: steps_workload OUTPUT [STEPS [ops]]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prism/collect.h"
#include "prism/profile.h"

void prism__step_flag(uint32_t bits);   /* libcollect/internal.h */

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: steps_workload OUTPUT [STEPS [ops]]\n");
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
    bool ops = argc > 3 && !strcmp(argv[3], "ops");
    for (long i = 0; i < steps; i++) {
        prism_step_begin();
        bool window = ops && (i == 2 || i == 3);
        if (window)
            prism__step_flag(PRISM_STEP_OPS);
        prism_push("forward");
        nap_ms(8);
        if (window) {
            prism_push("aten::mm [64x32, 32x64] f32");
            nap_ms(4);
            prism_pop();
        }
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

/*
 * workers_workload.c - a training process with worker processes, for the
 * screen test of the explorer's worker view (tests/screen/workers.sh):
 * tests/workers_scenario.h's scenario, STEPS steps (default 2) each
 * starting WORKERS worker processes (default 2) of 3 batches, and a file of
 * another run in the workers folder.
 *
 * Usage: workers_workload OUTPUT [STEPS [WORKERS]]
 */
#include <stdio.h>
#include <stdlib.h>

#include "workers_scenario.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: workers_workload OUTPUT [STEPS [WORKERS]]\n");
        return 2;
    }
    ws_opts o = { .output = argv[1], .steps = 2, .workers = 2, .batches = 3, .stray = true };
    if (argc > 2)
        o.steps = atoi(argv[2]);
    if (argc > 3)
        o.workers = atoi(argv[3]);
    if (o.steps < 1 || o.steps > 1000 || o.workers < 1 || o.workers > WS_MAX_WORKERS) {
        fprintf(stderr, "workers_workload: STEPS 1 to 1000, WORKERS 1 to %d\n", WS_MAX_WORKERS);
        return 2;
    }
    int rc = ws_run(&o);
    if (rc)
        fprintf(stderr, "workers_workload: failed (%d)\n", rc);
    return rc;
}

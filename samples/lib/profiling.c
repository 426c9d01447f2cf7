/*
 * profiling.c - how the samples start (or refuse) a profiling session (see
 * profiling.h).
 */
#include "profiling.h"

#include <stdio.h>
#include <stdlib.h>

void profiling_off(const char *prog)
{
    if (prism_recording()) {
        prism_shutdown();
        fprintf(stderr, "%s: --no-profile: stopped the session started from "
                        "PRISM_* variables (its file holds no events)\n", prog);
    }
}

void profiling_config(prism_config *cfg, const char *output, const char *dflt)
{
    prism_config_default(cfg);
    prism_config_from_env(cfg);
    const char *env = getenv("PRISM_OUTPUT");
    cfg->output = output ? output : env && *env ? env : dflt;
}

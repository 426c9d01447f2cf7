/*
 * profiling.h - how the samples start (or refuse) a profiling session:
 * the same PRISM_* variables and --output / --no-profile behaviour in each.
 */
#ifndef PRISM_SAMPLES_PROFILING_H
#define PRISM_SAMPLES_PROFILING_H

#include "prism/collect.h"

/* --no-profile: PRISM_OUTPUT or PRISM_ENABLED=1 start the library when it
 * loads; stop such a session, saying so on stderr (as prog). */
void profiling_off(const char *prog);

/* The configuration a sample records with: the defaults, then the PRISM_*
 * variables; the output is `output` when given, else $PRISM_OUTPUT when set
 * and not empty, else dflt. */
void profiling_config(prism_config *cfg, const char *output, const char *dflt);

#endif

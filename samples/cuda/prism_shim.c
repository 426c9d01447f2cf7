/*
 * prism_shim.c - the PRISM calls samples/cuda_train.cu makes, as plain C
 * functions.  prism/collect.h is C (its hot path uses C11 _Atomic, which
 * C++ does not accept), so the CUDA sample, compiled as C++ by nvcc, calls
 * these instead of including it.
 */
#include <stddef.h>

#include "prism/collect.h"

void sample_prism_init(void);
void sample_prism_push(const char *name);
void sample_prism_pop(void);
void sample_prism_step_begin(void);
void sample_prism_step_end(void);
void sample_prism_shutdown(void);
const char *sample_prism_output(void);

/* A session started from PRISM_* when the program loaded waits for the CUDA
 * driver before it attaches CUPTI; calling prism_init again once CUDA is
 * initialised attaches it now, before the first kernel.  Without PRISM_*
 * variables nothing is started: the unprofiled baseline. */
void sample_prism_init(void)
{
    if (prism_recording())
        prism_init(NULL);
}

void sample_prism_push(const char *name)
{
    prism_push(name);
}

void sample_prism_pop(void)
{
    prism_pop();
}

void sample_prism_step_begin(void)
{
    prism_step_begin();
}

void sample_prism_step_end(void)
{
    prism_step_end();
}

void sample_prism_shutdown(void)
{
    prism_shutdown();
}

const char *sample_prism_output(void)
{
    return prism_recording() ? prism_output_path() : NULL;
}

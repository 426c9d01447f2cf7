/*
 * loader.h - the synthetic data set and data-loader workers of the
 * `trainloop` sample.
 *
 * A "data set" of epoch_batches * batch samples, each sample generated
 * from (seed, sample index) the way a file would be decoded, labelled by a
 * fixed random teacher so that a model can learn it.  Batch g (counted over
 * the whole run) holds the samples of epoch g / epoch_batches in a shuffled
 * order.  A batch's content depends only on (seed, g), so a run gives the
 * same numbers with or without worker threads.
 *
 * Regions recorded (libcollect): load_batch > read (only with slow_ms),
 * decode, augment.
 */
#ifndef PRISM_SAMPLES_LOADER_H
#define PRISM_SAMPLES_LOADER_H

#include <stdint.h>

#define LOADER_MAX_DIM 1024

typedef struct loader_data {
    uint64_t seed;
    unsigned batch;          /* samples per batch                           */
    unsigned dim;            /* features per sample                         */
    unsigned classes;        /* labels are 0 .. classes-1                   */
    unsigned epoch_batches;  /* batches per epoch                           */
    unsigned slow_ms;        /* extra latency per batch ("slow storage")    */
    float *teacher;          /* dim x classes, owned                        */
} loader_data;

/* Fill in *d and build its teacher.  0 on success, -1 when out of memory
 * or when a size is 0 or dim > LOADER_MAX_DIM.
 * Free with loader_data_free(). */
int loader_data_init(loader_data *d, uint64_t seed, unsigned batch, unsigned dim,
                     unsigned classes, unsigned epoch_batches, unsigned slow_ms);
void loader_data_free(loader_data *d);

/* Produce training batch g into x (batch x dim) and y (batch) on the
 * calling thread.  Thread-safe: d is only read. */
void loader_fill(const loader_data *d, uint64_t g, float *x, int32_t *y);

/* A held-out batch (samples outside the training set, no augmentation). */
void loader_fill_eval(const loader_data *d, float *x, int32_t *y);

/* Worker threads producing batches 0, 1, 2, ... ahead of the consumer into
 * a bounded queue of `depth` batches.  Each names itself "loader.K".
 * d is borrowed until loader_stop().  NULL when out of memory or when a
 * thread could not start. */
typedef struct loader loader;
loader *loader_start(const loader_data *d, unsigned workers, unsigned depth);

/* Copy the next batch (in order) into x and y, waiting for the workers. */
void loader_next(loader *l, float *x, int32_t *y);

/* Stop and join the workers, free everything.  NULL is fine. */
void loader_stop(loader *l);

#endif

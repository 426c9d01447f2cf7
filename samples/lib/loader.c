/*
 * loader.c - synthetic data set and data-loader worker threads for the
 * trainloop sample (see loader.h).
 */
#include "loader.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prism/collect.h"

/* ---- deterministic random numbers ----------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix64(*s);
}

/* Uniform in [-1, 1). */
static float rng_unit(uint64_t *s)
{
    return (float)(rng_next(s) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

/* ---- the data set ---------------------------------------------------- */

int loader_data_init(loader_data *d, uint64_t seed, unsigned batch, unsigned dim,
                     unsigned classes, unsigned epoch_batches, unsigned slow_ms)
{
    *d = (loader_data){ seed, batch, dim, classes, epoch_batches, slow_ms, NULL };
    if (!batch || !dim || dim > LOADER_MAX_DIM || !classes || !epoch_batches)
        return -1;
    d->teacher = malloc((size_t)dim * classes * sizeof *d->teacher);
    if (!d->teacher)
        return -1;
    uint64_t s = mix64(seed ^ 0x7465616368657221ull);
    for (size_t i = 0; i < (size_t)dim * classes; i++)
        d->teacher[i] = rng_unit(&s);
    return 0;
}

void loader_data_free(loader_data *d)
{
    free(d->teacher);
    d->teacher = NULL;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* "Decode" sample `id` into x (dim floats); returns its label. */
static int32_t decode_sample(const loader_data *d, uint64_t id, float *x)
{
    uint64_t s = mix64(d->seed ^ mix64(id + 1));
    unsigned n = d->dim;
    uint8_t raw[LOADER_MAX_DIM];
    for (unsigned j = 0; j < n; j += 8) {
        uint64_t r = rng_next(&s);
        for (unsigned b = 0; b < 8 && j + b < n; b++)
            raw[j + b] = (uint8_t)(r >> (8 * b));
    }
    /* bytes to floats, then a 3-tap smoothing pass */
    for (unsigned j = 0; j < n; j++) {
        float l = raw[j ? j - 1 : j], c = raw[j], r = raw[j + 1 < n ? j + 1 : j];
        x[j] = ((l + 2.0f * c + r) * 0.25f - 127.5f) * (1.0f / 48.0f);
    }
    int32_t best = 0;
    float best_v = 0.0f;
    for (unsigned k = 0; k < d->classes; k++) {
        float v = 0.0f;
        for (unsigned j = 0; j < n; j++)
            v += x[j] * d->teacher[(size_t)j * d->classes + k];
        if (k == 0 || v > best_v) {
            best_v = v;
            best = (int32_t)k;
        }
    }
    return best;
}

void loader_fill(const loader_data *d, uint64_t g, float *x, int32_t *y)
{
    PRISM_ZONE("load_batch");
    uint64_t n = (uint64_t)d->epoch_batches * d->batch;
    uint64_t epoch = g / d->epoch_batches, first = (g % d->epoch_batches) * d->batch;
    uint64_t s = mix64(d->seed ^ mix64(~epoch));
    uint64_t a = rng_next(&s) % n, c = rng_next(&s) % n;   /* shuffle: a*p + c mod n */
    if (a == 0)
        a = 1;
    while (gcd64(a, n) != 1)
        a = a + 1 < n ? a + 1 : 1;
    if (d->slow_ms) {
        PRISM_ZONE("read");
        sleep_ms(d->slow_ms);
    }
    {
        PRISM_ZONE("decode");
        for (unsigned k = 0; k < d->batch; k++)
            y[k] = decode_sample(d, (a * (first + k) + c) % n, x + (size_t)k * d->dim);
    }
    {
        PRISM_ZONE("augment");
        uint64_t t = mix64(d->seed ^ mix64(g) ^ 0x6175676dull);
        for (unsigned k = 0; k < d->batch; k++) {
            float *row = x + (size_t)k * d->dim;
            float scale = 1.0f + 0.1f * rng_unit(&t);
            for (unsigned j = 0; j < d->dim; j++)
                row[j] = row[j] * scale + 0.05f * rng_unit(&t);
        }
    }
}

void loader_fill_eval(const loader_data *d, float *x, int32_t *y)
{
    uint64_t n = (uint64_t)d->epoch_batches * d->batch;
    for (unsigned k = 0; k < d->batch; k++)
        y[k] = decode_sample(d, n + k, x + (size_t)k * d->dim);
}

/* ---- worker threads -------------------------------------------------- */

typedef struct loader_slot {
    float *x;
    int32_t *y;
    uint64_t index;
    bool ready;
} loader_slot;

typedef struct loader_worker {
    struct loader *l;
    unsigned k;
    pthread_t th;
} loader_worker;

struct loader {
    const loader_data *d;
    unsigned depth, started;
    loader_slot *slots;
    loader_worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t ready, space;
    uint64_t next_claim;      /* next batch a worker will produce            */
    uint64_t next_take;       /* next batch the consumer will take           */
    bool stop;
};

static void *worker_main(void *arg)
{
    loader_worker *w = arg;
    loader *l = w->l;
    char name[16];
    snprintf(name, sizeof name, "loader.%u", w->k);
    pthread_setname_np(pthread_self(), name);
    prism_thread_name(name);
    for (;;) {
        pthread_mutex_lock(&l->mu);
        while (!l->stop && l->next_claim >= l->next_take + l->depth)
            pthread_cond_wait(&l->space, &l->mu);
        if (l->stop) {
            pthread_mutex_unlock(&l->mu);
            return NULL;
        }
        uint64_t g = l->next_claim++;
        pthread_mutex_unlock(&l->mu);

        /* Slot g % depth last held batch g - depth, already taken. */
        loader_slot *s = &l->slots[g % l->depth];
        loader_fill(l->d, g, s->x, s->y);

        pthread_mutex_lock(&l->mu);
        s->index = g;
        s->ready = true;
        pthread_cond_broadcast(&l->ready);
        pthread_mutex_unlock(&l->mu);
    }
}

loader *loader_start(const loader_data *d, unsigned workers, unsigned depth)
{
    if (workers == 0)
        return NULL;
    if (depth < workers)
        depth = workers;
    loader *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->d = d;
    l->depth = depth;
    l->slots = calloc(depth, sizeof *l->slots);
    l->workers = calloc(workers, sizeof *l->workers);
    if (!l->slots || !l->workers)
        goto fail;
    for (unsigned i = 0; i < depth; i++) {
        l->slots[i].x = malloc((size_t)d->batch * d->dim * sizeof(float));
        l->slots[i].y = malloc((size_t)d->batch * sizeof(int32_t));
        if (!l->slots[i].x || !l->slots[i].y)
            goto fail;
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->ready, NULL);
    pthread_cond_init(&l->space, NULL);
    for (unsigned i = 0; i < workers; i++) {
        l->workers[i] = (loader_worker){ l, i, 0 };
        if (pthread_create(&l->workers[i].th, NULL, worker_main, &l->workers[i])) {
            loader_stop(l);
            return NULL;
        }
        l->started++;
    }
    return l;
fail:
    if (l->slots)
        for (unsigned i = 0; i < depth; i++) {
            free(l->slots[i].x);
            free(l->slots[i].y);
        }
    free(l->slots);
    free(l->workers);
    free(l);
    return NULL;
}

void loader_next(loader *l, float *x, int32_t *y)
{
    size_t xn = (size_t)l->d->batch * l->d->dim, yn = l->d->batch;
    pthread_mutex_lock(&l->mu);
    loader_slot *s = &l->slots[l->next_take % l->depth];
    while (!(s->ready && s->index == l->next_take))
        pthread_cond_wait(&l->ready, &l->mu);
    memcpy(x, s->x, xn * sizeof *x);
    memcpy(y, s->y, yn * sizeof *y);
    s->ready = false;
    l->next_take++;
    pthread_cond_broadcast(&l->space);
    pthread_mutex_unlock(&l->mu);
}

void loader_stop(loader *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->space);
    pthread_cond_broadcast(&l->ready);
    pthread_mutex_unlock(&l->mu);
    for (unsigned i = 0; i < l->started; i++)
        pthread_join(l->workers[i].th, NULL);
    pthread_cond_destroy(&l->ready);
    pthread_cond_destroy(&l->space);
    pthread_mutex_destroy(&l->mu);
    for (unsigned i = 0; i < l->depth; i++) {
        free(l->slots[i].x);
        free(l->slots[i].y);
    }
    free(l->slots);
    free(l->workers);
    free(l);
}

/*
 * trainloop - a simulated training loop that does real CPU work (an MLP
 * trained with SGD on a synthetic data set), instrumented with libcollect,
 * with flags that plant known bottlenecks.  See usage() for the flags.
 *
 * Per step: data_loading > [load_batch > read, decode, augment]
 *           forward > layer.N > matmul, activation
 *           loss, [history]
 *           backward > layer.N.grad > matmul, activation
 *           [synchronize], optimizer_step, [measurement > forward > ...],
 *           [logging]
 * Region names and nesting are what the profile and the tests rely on.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "loader.h"
#include "mono_time.h"
#include "profiling.h"
#include "prism/collect.h"

#define NLAYERS 4
#define BATCH 32
static const unsigned dims[NLAYERS + 1] = { 256, 256, 256, 256, 16 };
#define MAXDIM 256

static const float learning_rate = 0.02f, momentum = 0.9f;

typedef struct opts {
    uint64_t seed;
    unsigned epochs, steps;           /* epochs, steps per epoch            */
    double duration;                  /* > 0: run epochs until this is spent */
    unsigned leak_mb, sync_ms, slow_ms, workers, membound_mb;
    unsigned log_every, measure_every;
    bool no_profile, verbose;
    const char *output;
} opts;

typedef struct layer {
    float *w, *b;                     /* in x out, out                      */
    float *gw, *gb, *vw, *vb;         /* gradients, momentum                */
} layer;

typedef struct model {
    layer l[NLAYERS];
    float *act[NLAYERS + 1];          /* act[0] = input, act[i+1] = output of layer i */
    float *grad_a, *grad_b;           /* BATCH x MAXDIM gradient scratch    */
    int32_t *y;
} model;

/* Interned ids for the push/pop style regions and the counters. */
static struct {
    uint32_t layer[NLAYERS], grad[NLAYERS], matmul, activation;
    uint32_t loss, samples, accuracy;
    uint32_t flops, bytes;            /* work counters: compute intensity   */
} ids;

/* The planted memory-bound op's buffer. */
static struct {
    float *x;
    size_t n;
} membound;

/* The planted leak: blocks that are never freed. */
static struct {
    void **blocks;
    size_t n, cap;
    bool failed;
} leak;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: trainloop [options]\n"
        "  --seed N           random seed (default 1)\n"
        "  --epochs N         epochs to run (default 3)\n"
        "  --steps N          steps per epoch (default 60)\n"
        "  --duration S       run epochs until S seconds are spent (ignores --epochs)\n"
        "  --workers N        N data-loader threads feeding a bounded queue (default 0)\n"
        "  --log-every N      logging every N steps (default 10)\n"
        "  --measure-every N  accuracy measurement every N steps (default 5)\n"
        "  --output PATH      profile path (default $PRISM_OUTPUT, else trainloop.cbor)\n"
        "  --no-profile       same work, without starting the profiler\n"
        "  --verbose          print the log lines on stderr\n"
        "planted bottlenecks (all off by default):\n"
        "  --leak-mb N        leak N MB of host memory per step (region \"history\")\n"
        "  --sync-stall-ms N  busy-wait N ms per step in region \"synchronize\"\n"
        "  --slow-data-ms N   each batch takes N ms longer to load (region \"read\";\n"
        "                     with --workers it delays the workers instead)\n"
        "  --memory-bound-mb N  stream N MB per step through an element-wise op\n"
        "                     (region \"normalize\", 0.375 FLOP/byte by its counters)\n"
        "Work counters \"flops\" and \"bytes\" are recorded inside matmul, activation\n"
        "and normalize, so the analysis can judge their compute intensity.\n");
}

/* 0 ok, 1 --help, -1 bad command line. */
static int parse_args(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (!strcmp(a, "--no-profile")) { o->no_profile = true; continue; }
        if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) { o->verbose = true; continue; }
        char flag[32];
        const char *val;
        if (args_flag_value(argc, argv, &i, flag, sizeof flag, &val)) {
            fprintf(stderr, "trainloop: bad argument: %s\n", a);
            return -1;
        }
        unsigned long long v = 0;
        if (!strcmp(flag, "--output")) {
            if (!*val) return -1;
            o->output = val;
        } else if (!strcmp(flag, "--duration")) {
            char *end;
            errno = 0;
            o->duration = strtod(val, &end);
            if (errno || end == val || *end || !(o->duration > 0 && o->duration < 1e7))
                return -1;
        } else if (!strcmp(flag, "--seed")) {
            if (args_unsigned(val, 0, UINT64_MAX, &v)) return -1;
            o->seed = v;
        } else {
            const struct { const char *name; unsigned *dst; unsigned lo, hi; } u[] = {
                { "--epochs", &o->epochs, 1, 1000000 },
                { "--steps", &o->steps, 1, 1000000 },
                { "--workers", &o->workers, 0, 64 },
                { "--leak-mb", &o->leak_mb, 0, 4096 },
                { "--sync-stall-ms", &o->sync_ms, 0, 60000 },
                { "--slow-data-ms", &o->slow_ms, 0, 60000 },
                { "--memory-bound-mb", &o->membound_mb, 0, 4096 },
                { "--log-every", &o->log_every, 1, 1000000 },
                { "--measure-every", &o->measure_every, 1, 1000000 },
            };
            size_t k = 0;
            while (k < sizeof u / sizeof u[0] && strcmp(flag, u[k].name))
                k++;
            if (k == sizeof u / sizeof u[0] || args_unsigned(val, u[k].lo, u[k].hi, &v)) {
                fprintf(stderr, "trainloop: bad option or value: %s %s\n", flag, val);
                return -1;
            }
            *u[k].dst = (unsigned)v;
        }
    }
    return 0;
}

/* ---- the model -------------------------------------------------------- */

static float *falloc(size_t n)
{
    return calloc(n, sizeof(float));
}

static int model_init(model *m, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 0x243f6a8885a308d3ull;
    for (int i = 0; i < NLAYERS; i++) {
        layer *L = &m->l[i];
        size_t nw = (size_t)dims[i] * dims[i + 1], nb = dims[i + 1];
        L->w = falloc(nw); L->gw = falloc(nw); L->vw = falloc(nw);
        L->b = falloc(nb); L->gb = falloc(nb); L->vb = falloc(nb);
        if (!L->w || !L->gw || !L->vw || !L->b || !L->gb || !L->vb)
            return -1;
        float scale = sqrtf(6.0f / (float)dims[i]);
        for (size_t j = 0; j < nw; j++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;    /* xorshift64 */
            L->w[j] = scale * ((float)(s >> 40) * (2.0f / 16777216.0f) - 1.0f);
        }
    }
    for (int i = 0; i <= NLAYERS; i++)
        if (!(m->act[i] = falloc((size_t)BATCH * dims[i])))
            return -1;
    m->grad_a = falloc((size_t)BATCH * MAXDIM);
    m->grad_b = falloc((size_t)BATCH * MAXDIM);
    m->y = calloc(BATCH, sizeof *m->y);
    return m->grad_a && m->grad_b && m->y ? 0 : -1;
}

static void model_free(model *m)
{
    for (int i = 0; i < NLAYERS; i++) {
        layer *L = &m->l[i];
        free(L->w); free(L->gw); free(L->vw); free(L->b); free(L->gb); free(L->vb);
    }
    for (int i = 0; i <= NLAYERS; i++)
        free(m->act[i]);
    free(m->grad_a);
    free(m->grad_b);
    free(m->y);
}

/* c[m x n] = a[m x k] * b[k x n] + bias */
static void matmul(const float *restrict a, const float *restrict b, const float *restrict bias,
                   float *restrict c, unsigned m, unsigned k, unsigned n)
{
    for (unsigned i = 0; i < m; i++) {
        float *row = c + (size_t)i * n;
        memcpy(row, bias, n * sizeof *row);
        for (unsigned p = 0; p < k; p++) {
            float av = a[(size_t)i * k + p];
            const float *br = b + (size_t)p * n;
            for (unsigned j = 0; j < n; j++)
                row[j] += av * br[j];
        }
    }
}

static void forward(model *m)
{
    PRISM_ZONE("forward");
    for (int i = 0; i < NLAYERS; i++) {
        unsigned in = dims[i], out = dims[i + 1];
        float *y = m->act[i + 1];
        prism_push_id(ids.layer[i]);
        prism_push_id(ids.matmul);
        matmul(m->act[i], m->l[i].w, m->l[i].b, y, BATCH, in, out);
        /* multiply-adds; a, w, bias read once, the output written once */
        prism_counter_i(ids.flops, 2 * (int64_t)BATCH * in * out);
        prism_counter_i(ids.bytes, (int64_t)sizeof(float) *
                                       ((int64_t)BATCH * in + (int64_t)in * out + out +
                                        (int64_t)BATCH * out));
        prism_pop();
        if (i + 1 < NLAYERS) {
            prism_push_id(ids.activation);
            for (size_t j = 0; j < (size_t)BATCH * out; j++)
                y[j] = y[j] > 0.0f ? y[j] : 0.0f;            /* ReLU */
            prism_counter_i(ids.flops, (int64_t)BATCH * out);
            prism_counter_i(ids.bytes, 2 * (int64_t)sizeof(float) * BATCH * out);
            prism_pop();
        }
        prism_pop();
    }
}

/* Softmax cross-entropy over the logits; leaves dloss/dlogits in grad_a.
 * Returns the mean loss; *correct counts right predictions. */
static float loss_and_grad(model *m, unsigned *correct)
{
    unsigned c = dims[NLAYERS];
    double total = 0.0;
    *correct = 0;
    for (unsigned i = 0; i < BATCH; i++) {
        const float *z = m->act[NLAYERS] + (size_t)i * c;
        float *g = m->grad_a + (size_t)i * c, mx = z[0], sum = 0.0f;
        unsigned arg = 0;
        for (unsigned k = 1; k < c; k++)
            if (z[k] > mx) { mx = z[k]; arg = k; }
        for (unsigned k = 0; k < c; k++)
            sum += g[k] = expf(z[k] - mx);
        for (unsigned k = 0; k < c; k++)
            g[k] = (g[k] / sum - (k == (unsigned)m->y[i] ? 1.0f : 0.0f)) / BATCH;
        total += log(sum) - (z[m->y[i]] - mx);
        *correct += arg == (unsigned)m->y[i];
    }
    return (float)(total / BATCH);
}

static void backward(model *m)
{
    PRISM_ZONE("backward");
    float *dy = m->grad_a, *dx = m->grad_b;
    for (int i = NLAYERS - 1; i >= 0; i--) {
        unsigned in = dims[i], out = dims[i + 1];
        const float *x = m->act[i], *w = m->l[i].w;
        float *gw = m->l[i].gw, *gb = m->l[i].gb;
        prism_push_id(ids.grad[i]);
        prism_push_id(ids.matmul);
        memset(gw, 0, (size_t)in * out * sizeof *gw);
        memset(gb, 0, out * sizeof *gb);
        for (unsigned r = 0; r < BATCH; r++) {                 /* gw = x^T dy */
            const float *dr = dy + (size_t)r * out;
            for (unsigned p = 0; p < in; p++) {
                float xv = x[(size_t)r * in + p];
                if (xv == 0.0f)
                    continue;
                for (unsigned j = 0; j < out; j++)
                    gw[(size_t)p * out + j] += xv * dr[j];
            }
            for (unsigned j = 0; j < out; j++)
                gb[j] += dr[j];
        }
        if (i > 0)                                             /* dx = dy w^T */
            for (unsigned r = 0; r < BATCH; r++)
                for (unsigned p = 0; p < in; p++) {
                    float acc = 0.0f;
                    for (unsigned j = 0; j < out; j++)
                        acc += dy[(size_t)r * out + j] * w[(size_t)p * out + j];
                    dx[(size_t)r * in + p] = acc;
                }
        prism_pop();
        if (i > 0) {
            prism_push_id(ids.activation);                     /* ReLU mask */
            for (size_t j = 0; j < (size_t)BATCH * in; j++)
                if (x[j] <= 0.0f)
                    dx[j] = 0.0f;
            prism_pop();
            float *t = dy;
            dy = dx;
            dx = t;
        }
        prism_pop();
    }
}

static void optimizer_step(model *m)
{
    PRISM_ZONE("optimizer_step");
    for (int i = 0; i < NLAYERS; i++) {
        layer *L = &m->l[i];
        size_t nw = (size_t)dims[i] * dims[i + 1];
        for (size_t j = 0; j < nw; j++) {
            L->vw[j] = momentum * L->vw[j] + L->gw[j];
            L->w[j] -= learning_rate * L->vw[j];
        }
        for (size_t j = 0; j < dims[i + 1]; j++) {
            L->vb[j] = momentum * L->vb[j] + L->gb[j];
            L->b[j] -= learning_rate * L->vb[j];
        }
    }
}

/* ---- planted bottlenecks ---------------------------------------------- */

static void leak_step(unsigned mb)
{
    PRISM_ZONE("history");
    if (leak.failed)
        return;
    if (leak.n == leak.cap) {
        size_t cap = leak.cap ? 2 * leak.cap : 64;
        void **p = realloc(leak.blocks, cap * sizeof *p);
        if (!p) {
            leak.failed = true;
            fprintf(stderr, "trainloop: --leak-mb: out of memory; leaking stops\n");
            return;
        }
        leak.blocks = p;
        leak.cap = cap;
    }
    size_t n = (size_t)mb << 20;
    void *b = malloc(n);
    if (!b) {
        leak.failed = true;
        fprintf(stderr, "trainloop: --leak-mb: out of memory; leaking stops\n");
        return;
    }
    memset(b, (int)(leak.n & 0xff) | 1, n);    /* touch every page */
    leak.blocks[leak.n++] = b;
}

/* Element-wise over a large buffer: 2 FLOP per 8 bytes read and written. */
static void normalize_step(void)
{
    PRISM_ZONE("normalize");
    float *x = membound.x;
    for (size_t i = 0; i < membound.n; i++)
        x[i] = (x[i] - 0.5f) * 0.999f + 0.5f;
    prism_counter_i(ids.flops, 3 * (int64_t)membound.n);
    prism_counter_i(ids.bytes, 2 * (int64_t)sizeof(float) * (int64_t)membound.n);
}

static void sync_stall(unsigned ms)
{
    PRISM_ZONE("synchronize");
    double until = now_s() + ms * 1e-3;
    while (now_s() < until)
        ;                                       /* spin like a blocking sync */
}

/* ---- main ------------------------------------------------------------- */

int main(int argc, char **argv)
{
    opts o = { .seed = 1, .epochs = 3, .steps = 60, .log_every = 10, .measure_every = 5 };
    int pr = parse_args(argc, argv, &o);
    if (pr) {
        usage(pr > 0 ? stdout : stderr);
        return pr > 0 ? 0 : 1;
    }

    char path[4096] = "none";
    if (o.no_profile) {
        profiling_off("trainloop");
    } else {
        if (o.output && prism_recording())
            fprintf(stderr, "trainloop: --output ignored: the session already started "
                            "from PRISM_* variables\n");
        prism_config cfg;
        profiling_config(&cfg, o.output, "trainloop.cbor");
        if (prism_init(&cfg) == 0 && prism_output_path())
            snprintf(path, sizeof path, "%s", prism_output_path());
    }
    prism_thread_name("main");
    for (int i = 0; i < NLAYERS; i++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d", i);
        ids.layer[i] = prism_name(name);
        snprintf(name, sizeof name, "layer.%d.grad", i);
        ids.grad[i] = prism_name(name);
    }
    ids.matmul = prism_name("matmul");
    ids.activation = prism_name("activation");
    ids.loss = prism_name("loss");
    ids.samples = prism_name("samples_seen");
    ids.accuracy = prism_name("accuracy");
    ids.flops = prism_name("flops");
    ids.bytes = prism_name("bytes");
    if (o.membound_mb) {
        membound.n = ((size_t)o.membound_mb << 20) / sizeof(float);
        if (!(membound.x = falloc(membound.n))) {
            fprintf(stderr, "trainloop: out of memory\n");
            return 1;
        }
    }

    model m;
    loader_data data;
    float *eval_x = falloc((size_t)BATCH * dims[0]);
    int32_t *eval_y = calloc(BATCH, sizeof *eval_y);
    if (model_init(&m, o.seed) || !eval_x || !eval_y ||
        loader_data_init(&data, o.seed, BATCH, dims[0], dims[NLAYERS], o.steps, o.slow_ms)) {
        fprintf(stderr, "trainloop: out of memory\n");
        return 1;
    }
    loader_fill_eval(&data, eval_x, eval_y);
    loader *ld = NULL;
    if (o.workers && !(ld = loader_start(&data, o.workers, 2 * o.workers))) {
        fprintf(stderr, "trainloop: could not start the data-loader workers\n");
        return 1;
    }

    double t0 = now_s();
    uint64_t step = 0, samples = 0;
    float loss = 0.0f, accuracy = 0.0f;
    unsigned epoch = 0;
    bool done = false;
    for (; !done && (o.duration > 0 || epoch < o.epochs); epoch++) {
        prism_epoch(epoch);
        for (unsigned s = 0; s < o.steps && !done; s++, step++) {
            unsigned correct;
            prism_step_begin();
            {
                PRISM_ZONE("data_loading");
                if (ld)
                    loader_next(ld, m.act[0], m.y);
                else
                    loader_fill(&data, step, m.act[0], m.y);
            }
            forward(&m);
            PRISM_REGION_BEGIN("loss");
            loss = loss_and_grad(&m, &correct);
            PRISM_REGION_END();
            if (o.leak_mb)
                leak_step(o.leak_mb);
            backward(&m);
            if (o.sync_ms)
                sync_stall(o.sync_ms);
            if (o.membound_mb)
                normalize_step();
            optimizer_step(&m);
            samples += BATCH;
            if ((step + 1) % o.measure_every == 0) {
                PRISM_ZONE("measurement");
                memcpy(m.act[0], eval_x, (size_t)BATCH * dims[0] * sizeof *eval_x);
                memcpy(m.y, eval_y, BATCH * sizeof *eval_y);
                forward(&m);
                loss_and_grad(&m, &correct);
                accuracy = (float)correct / BATCH;
                prism_counter_f(ids.accuracy, accuracy);
            }
            if ((step + 1) % o.log_every == 0) {
                PRISM_ZONE("logging");
                char line[160];
                prism_mark_name("log");
                prism_counter_f(ids.loss, loss);
                prism_counter_i(ids.samples, (int64_t)samples);
                snprintf(line, sizeof line, "epoch %u step %llu loss %.4f accuracy %.3f\n",
                         epoch, (unsigned long long)step + 1, loss, accuracy);
                if (o.verbose)
                    fputs(line, stderr);
            }
            prism_step_end();
            if (o.duration > 0 && now_s() - t0 >= o.duration)
                done = true;
        }
    }
    double wall = now_s() - t0;

    loader_stop(ld);
    prism_shutdown();
    printf("trainloop: steps=%llu epochs=%u wall_s=%.3f loss=%.4f accuracy=%.3f profile=%s\n",
           (unsigned long long)step, epoch, wall, loss, accuracy, path);
    loader_data_free(&data);
    model_free(&m);
    free(eval_x);
    free(eval_y);
    free(membound.x);
    return 0;
}

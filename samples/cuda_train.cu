/*
 * cuda_train.cu - a small training-like loop on the GPU, instrumented with
 * PRISM regions and steps, for the GPU checks (tests/gpu/run_gpu_checks.sh).
 *
 * Each step: "data" (a pageable and a pinned host-to-device copy),
 * "forward" and "backward" (tiled matrix-multiply kernels, one NVTX range
 * per layer with --nvtx), "optimizer" (an update kernel and a memset of
 * the gradients), "sync" (cudaDeviceSynchronize: the planted stall), and
 * "loss" (a device-to-host copy).  --leak-mb N allocates N MB of device
 * memory every step and never frees it.  --launch-bench N times N empty
 * kernel launches on the host (the host cost of one launch).
 *
 * At the end it prints what it issued, one line, for the checks:
 *   cuda_train: steps=S kernels=K memcpy=C memset=M launch_host_ns=L loop_ms=T wall_ms=W
 * (loop_ms: the training loop alone, the figure the overhead check compares).
 *
 * It includes <prism/collect.h> directly (C++: PRISM_ZONE is a scoped
 * object).  Built by the Makefile only where nvcc exists; compiled with
 * -DCUDA_TRAIN_PLAIN it is built with PRISM_DISABLE: every PRISM call
 * compiles to nothing and no library is linked (the unmodified program the
 * checks profile through prism-run).
 */
#ifdef CUDA_TRAIN_PLAIN
#define PRISM_DISABLE 1
#endif
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <prism/collect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TILE 16

#define CHECK(call) do { \
        cudaError_t e_ = (call); \
        if (e_ != cudaSuccess) { \
            fprintf(stderr, "cuda_train: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(2); \
        } \
    } while (0)

static unsigned long long n_kernels, n_memcpy, n_memset;

__global__ void matmul(const float *a, const float *b, float *c, int n)
{
    __shared__ float ta[TILE][TILE], tb[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += TILE) {
        ta[threadIdx.y][threadIdx.x] = row < n && t + threadIdx.x < n ? a[row * n + t + threadIdx.x] : 0;
        tb[threadIdx.y][threadIdx.x] = col < n && t + threadIdx.y < n ? b[(t + threadIdx.y) * n + col] : 0;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n)
        c[row * n + col] = acc;
}

__global__ void sgd(float *w, const float *g, float lr, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count)
        w[i] -= lr * g[i] * 1e-6f;
}

__global__ void empty_kernel(void) {}

static void launch_matmul(const float *a, const float *b, float *c, int n, cudaStream_t st)
{
    dim3 block(TILE, TILE), grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul<<<grid, block, 0, st>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    n_kernels++;
}

static void copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t st,
                 bool async)
{
    if (async)
        CHECK(cudaMemcpyAsync(dst, src, bytes, kind, st));
    else
        CHECK(cudaMemcpy(dst, src, bytes, kind));
    n_memcpy++;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Host ns per launch of an empty kernel, averaged over `count`. */
static double launch_bench(int count, cudaStream_t st)
{
    if (count <= 0)
        return 0;
    for (int i = 0; i < 100; i++)        /* warm: module load, first launch */
        empty_kernel<<<1, 1, 0, st>>>();
    n_kernels += 100;
    CHECK(cudaStreamSynchronize(st));
    double t0 = now_ms();
    for (int i = 0; i < count; i++)
        empty_kernel<<<1, 1, 0, st>>>();
    double t1 = now_ms();
    n_kernels += (unsigned long long)count;
    CHECK(cudaStreamSynchronize(st));
    return (t1 - t0) * 1e6 / count;
}

static void usage(void)
{
    fprintf(stderr, "usage: cuda_train [--steps N] [--size N] [--layers N] [--leak-mb MB] "
                    "[--nvtx] [--launch-bench N]\n");
    exit(1);
}

int main(int argc, char **argv)
{
    int steps = 50, n = 1024, layers = 4, leak_mb = 0, bench = 0;
    bool nvtx = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--nvtx"))
            nvtx = true;
        else if (i + 1 < argc && !strcmp(argv[i], "--steps"))
            steps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--size"))
            n = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--layers"))
            layers = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--leak-mb"))
            leak_mb = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--launch-bench"))
            bench = atoi(argv[++i]);
        else
            usage();
    }
    if (steps < 1 || n < TILE || layers < 1 || leak_mb < 0 || bench < 0)
        usage();
    double t0 = now_ms();
    CHECK(cudaFree(0));                 /* initialise CUDA, then attach PRISM's GPU side */
    /* A session started from PRISM_* when the program loaded waits for the
     * CUDA driver before it attaches CUPTI; prism_init again, once CUDA is
     * up, attaches it now, before the first kernel.  Without PRISM_*
     * variables nothing is started: the unprofiled baseline. */
    if (prism_recording())
        prism_init(NULL);

    size_t elems = (size_t)n * n, bytes = elems * sizeof(float);
    float *pageable = (float *)malloc(bytes), *pinned, *w, *x, *y, *g;
    if (!pageable)
        return 2;
    CHECK(cudaMallocHost((void **)&pinned, bytes));
    CHECK(cudaMalloc((void **)&w, bytes * layers));
    CHECK(cudaMalloc((void **)&x, bytes));
    CHECK(cudaMalloc((void **)&y, bytes));
    CHECK(cudaMalloc((void **)&g, bytes * layers));
    for (size_t i = 0; i < elems; i++)
        pageable[i] = pinned[i] = (float)(i % 97) / 97.0f;
    for (int l = 0; l < layers; l++)
        copy(w + (size_t)l * elems, pageable, bytes, cudaMemcpyHostToDevice, 0, false);
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st));
    double launch_ns = launch_bench(bench, st);

    CHECK(cudaDeviceSynchronize());
    double loop0 = now_ms();
    for (int s = 0; s < steps; s++) {
        prism_step_begin();
        {
            PRISM_ZONE("data");
            copy(x, pageable, bytes, cudaMemcpyHostToDevice, st, false);    /* pageable */
            copy(y, pinned, bytes, cudaMemcpyHostToDevice, st, true);       /* pinned */
        }

        prism_push("forward");
        for (int l = 0; l < layers; l++) {
            if (nvtx)
                nvtxRangePushA("layer");
            launch_matmul(l % 2 ? y : x, w + (size_t)l * elems, l % 2 ? x : y, n, st);
            if (nvtx)
                nvtxRangePop();
        }
        prism_pop();

        prism_push("backward");
        for (int l = layers - 1; l >= 0; l--)
            launch_matmul(x, y, g + (size_t)l * elems, n, st);
        prism_pop();

        prism_push("optimizer");
        for (int l = 0; l < layers; l++) {
            int count = (int)elems;
            sgd<<<(count + 255) / 256, 256, 0, st>>>(w + (size_t)l * elems, g + (size_t)l * elems,
                                                       0.01f, count);
            CHECK(cudaGetLastError());
            n_kernels++;
        }
        CHECK(cudaMemsetAsync(g, 0, bytes * layers, st));
        n_memset++;
        prism_pop();

        {
            PRISM_ZONE("sync");          /* the stall: the CPU waits for all of it */
            CHECK(cudaDeviceSynchronize());
        }
        {
            PRISM_ZONE("loss");
            copy(pinned, y, sizeof(float) * 256, cudaMemcpyDeviceToHost, st, false);
        }

        if (leak_mb) {                   /* never freed: the leak detector's case */
            void *leak;
            CHECK(cudaMalloc(&leak, (size_t)leak_mb << 20));
            CHECK(cudaMemset(leak, 1, (size_t)leak_mb << 20));
            n_memset++;
        }
        prism_step_end();
    }
    CHECK(cudaDeviceSynchronize());
    double end = now_ms();
    printf("cuda_train: steps=%d kernels=%llu memcpy=%llu memset=%llu launch_host_ns=%.1f "
           "loop_ms=%.1f wall_ms=%.1f\n", steps, n_kernels, n_memcpy, n_memset, launch_ns,
           end - loop0, end - t0);
    fflush(stdout);
    CHECK(cudaStreamDestroy(st));
    cudaFree(w);
    cudaFree(x);
    cudaFree(y);
    cudaFree(g);
    cudaFreeHost(pinned);
    free(pageable);
    prism_shutdown();
    return 0;
}

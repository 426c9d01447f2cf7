/*
 * reader_fuzz.c - libFuzzer target for the chunk reader alone: the input is
 * a whole profile file image, fed to prism_reader in one call, then the end
 * of input declared.  Every callback reads every byte it is handed (records,
 * strings, values), so that ASan sees a batch or a string that points past
 * its storage; the reader's own accessors are called afterwards.  No
 * importer is registered: JSON or gzip input goes down the CBOR path.
 *
 *   make fuzz                                  (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/reader_replay [FILE|DIR]...   (make test: tests/corpus/reader/)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "prism/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t g_sum;

/* Reads n bytes at p (an out-of-bounds batch shows up under ASan). */
static void touch(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + b[i];
    g_sum += h;
}

static void touch_str(const char *s)
{
    if (s)
        touch(s, strlen(s));
}

static void touch_value(const prism_value *v)
{
    touch(v, sizeof *v);
    if (v->type == PRISM_VAL_TEXT)
        touch_str(v->v.s);
}

/* The header and every string it points to. */
static void touch_header(const prism_header *h)
{
    touch(h, sizeof *h);
    touch_str(h->producer);
    touch_str(h->host);
    touch_str(h->clock);
    for (size_t i = 0; h->argv && i < h->argc; i++)
        touch_str(h->argv[i]);
    for (size_t i = 0; h->config && i < h->nconfig; i++) {
        touch_str(h->config[i].key);
        touch_value(&h->config[i].value);
    }
}

static void on_header(void *ctx, const prism_header *h) { (void)ctx; touch_header(h); }
static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    (void)ctx;
    g_sum += id;
    touch(s, len);
}
static void on_thread(void *ctx, const prism_thread *t)
{
    (void)ctx;
    touch(t, sizeof *t);
    touch_str(t->name);
}
static void on_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *ev,
                       size_t n)
{
    (void)ctx;
    g_sum += stream + depth;
    touch(ev, n * sizeof *ev);
}
static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    (void)ctx;
    g_sum += stream;
    touch(m, n * sizeof *m);
}
static void on_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    (void)ctx;
    g_sum += stream;
    touch(c, n * sizeof *c);
}
static void on_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    (void)ctx;
    g_sum += stream;
    touch(s, n * sizeof *s);
}
static void on_memory(void *ctx, const prism_memory_sample *m) { (void)ctx; touch(m, sizeof *m); }
static void on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    (void)ctx;
    touch(g, n * sizeof *g);
}
static void on_dropped(void *ctx, const prism_dropped *d) { (void)ctx; touch(d, sizeof *d); }
static void on_info(void *ctx, const char *key, const prism_value *v)
{
    (void)ctx;
    touch_str(key);
    touch_value(v);
}
static void on_footer(void *ctx, const prism_footer *f) { (void)ctx; touch(f, sizeof *f); }
static void on_cpu(void *ctx, const prism_cpu_sample *s, size_t n)
{
    (void)ctx;
    touch(s, n * sizeof *s);
}
static void on_chunk(void *ctx, const prism_chunk_info *c) { (void)ctx; touch(c, sizeof *c); }
static void on_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    (void)ctx;
    g_sum += stream;
    touch(u, n * sizeof *u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const prism_reader_callbacks cb = {
        .header = on_header, .string = on_string, .thread = on_thread,
        .regions = on_regions, .marks = on_marks, .counters = on_counters,
        .steps = on_steps, .memory = on_memory, .gpu = on_gpu,
        .dropped = on_dropped, .info = on_info, .footer = on_footer,
        .cpu = on_cpu, .chunk = on_chunk, .unrecorded = on_unrecorded,
    };
    prism_reader *r = prism_reader_new(&cb, NULL);
    if (!r)
        return 0;
    prism_status st = prism_reader_feed(r, data, size);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    const char *msg = NULL;
    uint64_t at = 0;
    if (prism_reader_error(r, &msg, &at) != PRISM_OK && msg)
        touch_str(msg);
    touch(prism_reader_stats_get(r), sizeof(prism_reader_stats));
    g_sum += prism_reader_input_offset(r) + prism_reader_good_offset(r);
    const prism_header *h = prism_reader_header(r);
    if (h)
        touch_header(h);
    for (uint32_t id = 0; id < 64; id++) {
        size_t len = 0;
        const char *s = prism_reader_string(r, id, &len);
        if (s)
            touch(s, len);
    }
    prism_reader_free(r);
    return 0;
}

/*
 * import_test.c - the torch.profiler importer (import/) through the reader,
 * on small inline traces: nesting repair (overlaps to an overflow track,
 * rounding clipped), steps from ProfilerStep#N, GPU records and their
 * runtime calls, memory samples per step, gzip, a trace cut off, caps on
 * hostile input with the byte offset, and that how the bytes are cut into
 * pieces never changes what is delivered.  Black-box and real traces:
 * tests/python/test_torch_trace.py, tests/fixtures/kineto/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "prism/import.h"
#include "test_util.h"

/* ---- a collector of what the reader delivers ---- */

typedef struct ev {
    uint32_t stream, kind, name;
    uint64_t ts;
} ev;

typedef struct got {
    prism_reader *r;
    ev ev[256];
    size_t nev;
    prism_step steps[16];
    size_t nsteps;
    prism_gpu_record gpu[16];
    size_t ngpu;
    prism_memory_sample mem[16];
    size_t nmem;
    prism_thread th[16];
    char thname[16][64];
    size_t nth;
    uint32_t steps_thread;
    bool footer, header_first, any;
} got;

static void g_header(void *ctx, const prism_header *h)
{
    got *g = ctx;
    (void)h;
    g->header_first = !g->any;
    g->any = true;
}

static void g_regions(void *ctx, uint32_t stream, uint32_t depth, const prism_region_event *e,
                      size_t n)
{
    got *g = ctx;
    (void)depth;
    g->any = true;
    for (size_t i = 0; i < n && g->nev < 256; i++)
        g->ev[g->nev++] = (ev){ stream, e[i].kind, e[i].name, e[i].ts };
}

static void g_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    got *g = ctx;
    (void)stream;
    for (size_t i = 0; i < n && g->nsteps < 16; i++)
        g->steps[g->nsteps++] = s[i];
}

static void g_gpu(void *ctx, const prism_gpu_record *r, size_t n)
{
    got *g = ctx;
    for (size_t i = 0; i < n && g->ngpu < 16; i++)
        g->gpu[g->ngpu++] = r[i];
}

static void g_memory(void *ctx, const prism_memory_sample *m)
{
    got *g = ctx;
    if (g->nmem < 16)
        g->mem[g->nmem++] = *m;
}

static void g_thread(void *ctx, const prism_thread *t)
{
    got *g = ctx;
    if (g->nth < 16) {
        g->th[g->nth] = *t;
        snprintf(g->thname[g->nth], sizeof g->thname[0], "%s", t->name);
        g->nth++;
    }
}

static void g_info(void *ctx, const char *key, const prism_value *v)
{
    got *g = ctx;
    if (!strcmp(key, "steps.thread"))
        g->steps_thread = (uint32_t)v->v.u;
}

static void g_footer(void *ctx, const prism_footer *f)
{
    got *g = ctx;
    (void)f;
    g->footer = true;
}

static prism_status read_all(got *g, const void *p, size_t n)
{
    prism_reader_callbacks cb = {
        .header = g_header, .regions = g_regions, .steps = g_steps, .gpu = g_gpu,
        .memory = g_memory, .thread = g_thread, .info = g_info, .footer = g_footer,
    };
    memset(g, 0, sizeof *g);
    prism_import_register();
    g->r = prism_reader_new(&cb, g);
    assert_non_null(g->r);
    prism_status st = prism_reader_feed(g->r, p, n);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(g->r);
    return st;
}

static const char *name(got *g, uint32_t id)
{
    const char *s = prism_reader_string(g->r, id, NULL);
    return s ? s : "?";
}

static uint64_t config_u(got *g, const char *key)
{
    const prism_header *h = prism_reader_header(g->r);
    for (size_t i = 0; h && i < h->nconfig; i++)
        if (!strcmp(h->config[i].key, key))
            return h->config[i].value.v.u;
    return 0;
}

#define X(name, ts, dur, tid) \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":7,\"tid\":" #tid \
    ",\"ts\":" #ts ",\"dur\":" #dur "}"

/* ---- tests ---- */

/* A parent, its child, and an event overlapping the parent's end: the
 * overlap goes to an overflow track of the same thread. */
static void test_overlap_to_own_track(void **state)
{
    (void)state;
    const char *t = "{\"traceEvents\":[" X("parent", 0, 10, 1) "," X("child", 2, 3, 1) ","
                    X("straddle", 8, 10, 1) "]}";
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    assert_true(g.header_first);
    assert_true(g.footer);
    assert_int_equal(config_u(&g, "import.overlapping_moved"), 1);
    assert_int_equal(g.nth, 2);
    assert_string_equal(g.thname[0], "thread 1");
    assert_string_equal(g.thname[1], "thread 1 (overlap 1)");
    /* stream 1: parent enter, child enter, child exit, parent exit */
    size_t k = 0;
    uint32_t want_kind[] = { PRISM_REGION_ENTER, PRISM_REGION_ENTER, PRISM_REGION_EXIT,
                             PRISM_REGION_EXIT };
    uint64_t want_ts[] = { 0, 2000, 5000, 10000 };
    for (size_t i = 0; i < g.nev; i++) {
        if (g.ev[i].stream != g.th[0].stream)
            continue;
        assert_true(k < 4);
        assert_int_equal(g.ev[i].kind, want_kind[k]);
        assert_int_equal(g.ev[i].ts, want_ts[k]);
        k++;
    }
    assert_int_equal(k, 4);
    bool straddle = false;
    for (size_t i = 0; i < g.nev; i++)
        if (g.ev[i].stream == g.th[1].stream && g.ev[i].kind == PRISM_REGION_ENTER)
            straddle = !strcmp(name(&g, g.ev[i].name), "straddle");
    assert_true(straddle);
    prism_reader_free(g.r);
}

/* A child ending within 1 us after its parent (rounding) is cut to it. */
static void test_rounding_clipped(void **state)
{
    (void)state;
    const char *t = "[" X("p", 0, 10, 1) "," X("c", 5, 5.5, 1) "]";
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    assert_int_equal(config_u(&g, "import.clipped"), 1);
    assert_int_equal(config_u(&g, "import.overlapping_moved"), 0);
    assert_int_equal(g.nth, 1);
    assert_int_equal(g.nev, 4);
    assert_int_equal(g.ev[2].ts, 10000);            /* the child exits with its parent */
    prism_reader_free(g.r);
}

/* ProfilerStep#N: steps with their index (not regions), steps.thread. */
static void test_steps(void **state)
{
    (void)state;
    const char *t = "[" X("ProfilerStep#5", 100, 50, 3) "," X("work", 110, 20, 3) ","
                    X("ProfilerStep#6", 150, 50, 3) "]";
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    assert_int_equal(g.nsteps, 2);
    assert_int_equal(g.steps[0].index, 5);
    assert_int_equal(g.steps[1].index, 6);
    assert_int_equal(g.steps[0].start, 0);          /* the origin: the first event */
    assert_int_equal(g.steps[0].end, 50000);
    assert_int_equal(g.steps[1].start, 50000);
    assert_true(g.steps[0].flags & PRISM_STEP_SAMPLED);
    assert_int_equal(g.steps_thread, g.th[0].stream);
    assert_int_equal(g.nev, 2);                     /* a step is no region */
    assert_string_equal(name(&g, g.ev[0].name), "work");
    prism_reader_free(g.r);
}

/* A kernel after its launch in the file's order or not: the runtime call is
 * an API record on the launching thread's stream, the kernel keeps device,
 * stream, grid, block and the correlation; a copy its kinds and bytes. */
static void test_gpu_records(void **state)
{
    (void)state;
    const char *t =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sgemm\",\"pid\":0,\"tid\":7,\"ts\":20,"
        "\"dur\":30,\"args\":{\"device\":0,\"stream\":7,\"correlation\":42,"
        "\"grid\":[128,1,1],\"block\":[256,1,1],\"shared memory\":4096,"
        "\"registers per thread\":64}},"
        X("aten::mm", 0, 15, 9) ","
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":7,"
        "\"tid\":9,\"ts\":5,\"dur\":4,\"args\":{\"cbid\":211,\"correlation\":42}},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\","
        "\"pid\":0,\"tid\":20,\"ts\":60,\"dur\":10,\"args\":{\"device\":0,\"stream\":20,"
        "\"correlation\":43,\"bytes\":1048576}}],"
        "\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100\"}],"
        "\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8}}";
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    assert_int_equal(g.ngpu, 3);
    const prism_gpu_record *api = &g.gpu[0], *k = &g.gpu[1], *cp = &g.gpu[2];
    assert_int_equal(api->type, PRISM_GPU_API);
    assert_int_equal(api->stream, g.th[0].stream);
    assert_int_equal(api->correlation, 42);
    assert_string_equal(name(&g, api->name), "cudaLaunchKernel");
    assert_int_equal(k->type, PRISM_GPU_KERNEL);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 42);
    assert_int_equal(k->grid[0], 128);
    assert_int_equal(k->block[0], 256);
    assert_int_equal(k->shared_mem, 4096);
    assert_int_equal(k->registers, 64);
    assert_int_equal(k->end - k->start, 30000);
    assert_int_equal(cp->type, PRISM_GPU_MEMCPY);
    assert_int_equal(cp->copy_kind, PRISM_COPY_HTOD);
    assert_int_equal(cp->src_kind, PRISM_MEM_PINNED);
    assert_int_equal(cp->dst_kind, PRISM_MEM_DEVICE);
    assert_int_equal(cp->bytes, 1048576);
    const prism_header *h = prism_reader_header(g.r);
    assert_int_equal(h->rank, 3);
    bool gpu_name = false;
    for (size_t i = 0; i < h->nconfig; i++)
        gpu_name |= !strcmp(h->config[i].key, "gpu.0.name") &&
                    !strcmp(h->config[i].value.v.s, "NVIDIA H100");
    assert_true(gpu_name);
    prism_reader_free(g.r);
}

/* The legacy layout's CUDA kernels: linked to the op that launched them
 * through the cpu_to_cuda flows (an API record at the op's start). */
static void test_legacy_flows(void **state)
{
    (void)state;
    const char *t =
        "[{\"name\":\"aten::mm\",\"ph\":\"X\",\"ts\":10,\"dur\":5,\"tid\":1,"
        "\"pid\":\"CPU functions\",\"args\":{}},"
        "{\"name\":\"aten::mm\",\"ph\":\"s\",\"ts\":10,\"tid\":1,\"pid\":\"CPU functions\","
        "\"id\":3,\"cat\":\"cpu_to_cuda\",\"args\":{}},"
        "{\"name\":\"gemm\",\"ph\":\"f\",\"ts\":12,\"tid\":0,\"pid\":\"CUDA functions\","
        "\"id\":3,\"cat\":\"cpu_to_cuda\",\"args\":{}},"
        "{\"name\":\"gemm\",\"ph\":\"X\",\"ts\":12,\"dur\":20,\"tid\":0,"
        "\"pid\":\"CUDA functions\",\"args\":{}}]";
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    assert_int_equal(g.ngpu, 2);
    assert_int_equal(g.gpu[0].type, PRISM_GPU_API);
    assert_int_equal(g.gpu[0].stream, g.th[0].stream);
    assert_int_equal(g.gpu[0].start, 0);
    assert_int_equal(g.gpu[1].type, PRISM_GPU_KERNEL);
    assert_int_equal(g.gpu[1].correlation, g.gpu[0].correlation);
    assert_int_equal(g.gpu[1].start, 2000);
    prism_reader_free(g.r);
}

/* [memory] events: a sample tagged with each step, the state at its end. */
static void test_memory_per_step(void **state)
{
    (void)state;
    char t[4096];
    int n = snprintf(t, sizeof t, "[" X("ProfilerStep#0", 0, 100, 1) "," X("ProfilerStep#1", 100, 100, 1));
    for (int i = 0; i < 4; i++)
        n += snprintf(t + n, sizeof t - (size_t)n,
                      ",{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":7,"
                      "\"tid\":1,\"ts\":%d,\"args\":{\"Total Reserved\":%d,\"Total Allocated\":%d,"
                      "\"Bytes\":-8,\"Device Id\":0,\"Device Type\":1}}",
                      10 + 50 * i, 4096, 1000 * (i + 1));
    snprintf(t + n, sizeof t - (size_t)n, "]");
    got g;
    assert_int_equal(read_all(&g, t, strlen(t)), PRISM_OK);
    size_t tagged = 0;
    for (size_t i = 0; i < g.nmem; i++) {
        if (g.mem[i].step == PRISM_NO_STEP)
            continue;
        assert_int_equal(g.mem[i].ngpu, 1);
        /* step 0 ends at 100 us: events at 10 and 60 us seen, 2000 bytes */
        assert_int_equal(g.mem[i].gpu[0].used, g.mem[i].step == 0 ? 2000 : 4000);
        assert_int_equal(g.mem[i].gpu[0].reserved, 4096);
        tagged++;
    }
    assert_int_equal(tagged, 2);
    prism_reader_free(g.r);
}

static size_t gzip_buf(const char *in, uint8_t *out, size_t cap)
{
    z_stream z = { 0 };
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)strlen(in);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

/* The same trace gzipped: the same records; cut short: what it holds. */
static void test_gzip_and_cut(void **state)
{
    (void)state;
    const char *t = "[" X("a", 0, 10, 1) "," X("b", 20, 10, 1) "," X("c", 40, 10, 1) "]";
    uint8_t gz[1024];
    size_t n = gzip_buf(t, gz, sizeof gz);
    got g;
    assert_int_equal(read_all(&g, gz, n), PRISM_OK);
    assert_int_equal(g.nev, 6);
    assert_true(g.footer);
    assert_int_equal(config_u(&g, "import.gzip"), 1);
    prism_reader_free(g.r);

    /* cut inside the third event: two regions, no footer, truncated said */
    size_t cut = (size_t)(strstr(t, "\"c\"") - t);
    assert_int_equal(read_all(&g, t, cut), PRISM_OK);
    assert_int_equal(g.nev, 4);
    assert_false(g.footer);
    assert_int_equal(config_u(&g, "import.truncated"), cut);
    prism_reader_free(g.r);
}

/* The delivered records do not depend on how the input is cut. */
static void test_pieces(void **state)
{
    (void)state;
    char big[9000];
    int n = snprintf(big, sizeof big, "  \n{\"traceEvents\":[" X("ProfilerStep#1", 0, 100, 1));
    for (int i = 0; i < 40; i++)
        n += snprintf(big + n, sizeof big - (size_t)n,
                      ",{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"f\\u00e9\\\"%d\","
                      "\"pid\":7,\"tid\":1,\"ts\":%d.%03d,\"dur\":1.5}", i % 7, 1 + 2 * i, i);
    snprintf(big + n, sizeof big - (size_t)n, "],\"baseTimeNanoseconds\":1700000000000000000}");
    prism_import_register();
    prism_reader_callbacks cb = tlog_callbacks();
    tlog whole, piece;
    tlog_init(&whole);
    prism_reader *r = prism_reader_new(&cb, &whole);
    assert_int_equal(prism_reader_feed(r, big, strlen(big)), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_non_null(prism_reader_foreign(r));
    assert_int_equal(prism_reader_header(r)->start_unix_ns, 1700000000000000000ull);
    prism_reader_free(r);
    size_t cuts[] = { 1, 2, 3, 7, 64 };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        tlog_init(&piece);
        r = prism_reader_new(&cb, &piece);
        for (size_t i = 0; i < strlen(big); i += cuts[c]) {
            size_t k = strlen(big) - i < cuts[c] ? strlen(big) - i : cuts[c];
            prism_status st = prism_reader_feed(r, big + i, k);
            assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
        }
        assert_int_equal(prism_reader_finish(r), PRISM_OK);
        assert_int_equal(piece.len, whole.len);
        assert_memory_equal(piece.b, whole.b, whole.len);
        prism_reader_free(r);
        tlog_free(&piece);
    }
    tlog_free(&whole);
}

/* Hostile input: one error with its offset, or a counted cut. */
static void test_hostile(void **state)
{
    (void)state;
    got g;
    const char *bad = "[{\"ph\":\"X\"} }";
    assert_int_equal(read_all(&g, bad, strlen(bad)), PRISM_E_NOT_PRISM);
    const char *msg;
    uint64_t off;
    prism_reader_error(g.r, &msg, &off);
    assert_int_equal(off, 12);
    prism_reader_free(g.r);

    char deep[200];
    memset(deep, '[', sizeof deep);
    assert_int_equal(read_all(&g, deep, sizeof deep), PRISM_E_LIMIT);
    prism_reader_error(g.r, &msg, &off);
    assert_int_equal(off, 64);
    prism_reader_free(g.r);

    /* a name of 200 KiB fed in small pieces: cut, counted, no error */
    size_t len = 200 * 1024;
    char *t = malloc(len + 200);
    assert_non_null(t);
    int n = snprintf(t, 200, "[{\"ph\":\"X\",\"name\":\"");
    memset(t + n, 'x', len);
    snprintf(t + n + len, 200, "\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]");
    prism_import_register();
    prism_reader_callbacks cb = { .regions = g_regions };
    memset(&g, 0, sizeof g);
    prism_reader *r = prism_reader_new(&cb, &g);
    g.r = r;
    for (size_t i = 0; i < strlen(t); i += 4096) {
        size_t k = strlen(t) - i < 4096 ? strlen(t) - i : 4096;
        prism_status st = prism_reader_feed(r, t + i, k);
        assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
    }
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_true(config_u(&g, "import.long_strings") >= 1);
    size_t nlen = 0;
    assert_non_null(prism_reader_string(r, g.ev[0].name, &nlen));
    assert_int_equal(nlen, PRISM_MAX_STRING_BYTES - 1);
    prism_reader_free(r);
    free(t);

    /* a name of escapes only (\u0041 x 40000): cut after a whole escape */
    len = 40000 * 6;
    t = malloc(len + 200);
    assert_non_null(t);
    n = snprintf(t, 200, "[{\"ph\":\"X\",\"name\":\"");
    for (size_t i = 0; i < 40000; i++)
        memcpy(t + n + 6 * i, "\\u0041", 6);
    snprintf(t + n + len, 200, "\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]");
    memset(&g, 0, sizeof g);
    r = prism_reader_new(&cb, &g);
    g.r = r;
    for (size_t i = 0; i < strlen(t); i += 1000) {
        size_t k = strlen(t) - i < 1000 ? strlen(t) - i : 1000;
        prism_status st = prism_reader_feed(r, t + i, k);
        assert_true(st == PRISM_OK || st == PRISM_NEED_MORE);
    }
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_true(config_u(&g, "import.long_strings") >= 1);
    assert_int_equal(g.nev, 2);
    prism_reader_free(r);
    free(t);

    /* not a trace at all: the CBOR reader's answer, as before */
    assert_int_equal(read_all(&g, "hello", 5), PRISM_E_NOT_PRISM);
    assert_null(prism_reader_foreign(g.r));
    prism_reader_free(g.r);
}

/* A file that is neither a profile nor a trace: with a .json name (or a
 * '{') the error speaks of JSON, at the first byte that is wrong; any other
 * name keeps the CBOR reader's words, saying it is no JSON trace either. */
static void test_not_json_words(void **state)
{
    (void)state;
    static const struct {
        const char *name, *bytes, *want;
        uint64_t off;
    } cases[] = {
        { "t.json", "not json at all\n", "not JSON: a JSON trace starts with '{' or '[', this "
                                         "file with 'n'", 0 },
        { "T.JSON", "  \n\x01x", "not JSON: a JSON trace starts with '{' or '[', this file "
                                 "with 0x01", 3 },
        { "t.json", "   ", "not JSON: the file holds only blanks", 3 },
        { "t.json.gz", "hello", "not gzip: a .json.gz trace starts with the gzip magic 1f 8b, "
                                "this file with 'h'", 0 },
        { "t.cbor", "hello", "not a PRISM profile (no CBOR self-describe tag) nor a JSON trace "
                             "(no '{' or '[')", 0 },
        { NULL, "hello", "not a PRISM profile (no CBOR self-describe tag) nor a JSON trace "
                         "(no '{' or '[')", 0 },
    };
    char dir[] = "/tmp/prism_notjson_XXXXXX";
    assert_non_null(mkdtemp(dir));
    prism_import_register();
    prism_reader_callbacks cb = { 0 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg;
        uint64_t off = 99;
        prism_reader *r = prism_reader_new(&cb, NULL);
        assert_non_null(r);
        prism_status st;
        if (cases[i].name) {        /* by path, as prism_read_file reads */
            char path[256];
            snprintf(path, sizeof path, "%s/%s", dir, cases[i].name);
            FILE *f = fopen(path, "wb");
            assert_non_null(f);
            fputs(cases[i].bytes, f);
            fclose(f);
            st = prism_reader_read_path(r, path);
            if (st == PRISM_OK || st == PRISM_NEED_MORE)
                st = prism_reader_finish(r);
            remove(path);
        } else {                    /* fed, no name */
            st = prism_reader_feed(r, cases[i].bytes, strlen(cases[i].bytes));
            if (st == PRISM_OK || st == PRISM_NEED_MORE)
                st = prism_reader_finish(r);
        }
        assert_int_equal(st, PRISM_E_NOT_PRISM);
        prism_reader_error(r, &msg, &off);
        assert_string_equal(msg, cases[i].want);
        assert_int_equal(off, cases[i].off);
        prism_reader_free(r);
    }
    /* fed in slices after prism_reader_name, as the explorer does */
    prism_reader *r = prism_reader_new(&cb, NULL);
    prism_reader_name(r, "x/run.json");
    prism_status st = prism_reader_feed(r, "oops", 4);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    assert_int_equal(st, PRISM_E_NOT_PRISM);
    const char *msg;
    uint64_t off;
    prism_reader_error(r, &msg, &off);
    assert_non_null(strstr(msg, "not JSON"));
    prism_reader_free(r);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap_to_own_track),
        cmocka_unit_test(test_rounding_clipped),
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_gpu_records),
        cmocka_unit_test(test_legacy_flows),
        cmocka_unit_test(test_memory_per_step),
        cmocka_unit_test(test_gzip_and_cut),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_not_json_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

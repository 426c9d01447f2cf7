/*
 * hostile_files_test.c - the hostile profiles of issue 16 as files: the
 * generators of format_hostile_test.c and analysis_hostile_test.c (a payload
 * above the 1 MiB limit, a 16-byte pattern framing a candidate every 16
 * bytes, a sequence number and dropped totals of 2^64-1, depth 2^32-2,
 * steps and memory samples in reverse order), step sums past 2^64, names
 * holding terminal controls, string and stream ids crafted to collide in
 * the hashes the reader once used, a cut file, random bytes after a header, a
 * header alone and an empty file.  Each is written to a directory and read
 * back through prism_analyze_file and analyze's text report under a
 * watchdog (alarm: a hang guard, not a timing assertion); the report holds
 * no raw ESC, BEL or C1 CSI.
 *
 *   hostile_files_test                    (make test: small sizes, temp dir)
 *   PRISM_HOSTILE_DIR=dir hostile_files_test  (full sizes, files kept in dir:
 *                                          bench/hostile_table.sh)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostile.h"
#include "report.h"

static char g_dir[512];
static bool g_keep;             /* PRISM_HOSTILE_DIR given: full sizes, kept */

static const char *const plain[] = { "work" };

static void put_file(const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void put_built(const char *name, pbuild *b)
{
    pb_flush(b);
    put_file(name, b->data, b->len);
    free(b->data);
    b->data = NULL;
}

static void gen_format(void)
{
    size_t body = g_keep ? 16u << 20 : 1u << 20;
    uint8_t *p = malloc(4096 + body + (2u << 20));
    assert_non_null(p);
    size_t n = hostile_header(p, 4096);
    n += hostile_big_chunk(p + n, 2u << 20);
    put_file("payload-2MiB.cbor", p, n);

    n = hostile_header(p, 4096);
    n += hostile_pattern(p + n, body);
    put_file(g_keep ? "pattern-16MiB.cbor" : "pattern-1MiB.cbor", p, n);

    n = hostile_header(p, 4096);
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < (1u << 20); i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p[n++] = (uint8_t)s;
    }
    put_file("random-1MiB.cbor", p, n);
    put_file("header-only.cbor", p, hostile_header(p, 4096));
    put_file("empty.cbor", p, 0);
    free(p);
}

/* analysis_hostile_test.c's profiles. */
static void gen_analysis(void)
{
    pbuild b;
    hostile_seq_max(&b, plain);
    put_built("seq-max.cbor", &b);

    hostile_dropped(&b, plain);
    put_built("dropped-max.cbor", &b);

    hostile_depth(&b, plain, 64);
    put_built("depth-max.cbor", &b);

    hostile_steps(&b, plain, g_keep ? 400000 : 20000, true);
    put_built(g_keep ? "steps-reversed-400k.cbor" : "steps-reversed-20k.cbor", &b);

    pb_init(&b, plain, 1, 6);
    pb_thread(&b, 1, "main");
    prism_step s1 = { 1, UINT64_MAX - 16, 0, 1, PRISM_STEP_SAMPLED };
    prism_step s2 = { 2, UINT64_MAX - 15, 1, 1, PRISM_STEP_SAMPLED };
    pb_step(&b, &s1);
    pb_step(&b, &s2);
    put_built("steps-sum-past-2^64.cbor", &b);
}

/* Names and a thread name holding terminal controls; a profile cut in the
 * middle of a chunk. */
static void gen_names(void)
{
    static const char *const evil[] = {
        "clear\x1b[2J\x1b[H", "title\x1b]0;owned\x07", "bidi\xe2\x80\xae" "cba",
        "fmt%n%s%x", "c1\xc2\x9b" "31m", "bad\xff\xfe utf8", "nl\r\nx\tz",
    };
    size_t ne = sizeof evil / sizeof *evil;
    pbuild b;
    pb_init(&b, evil, ne, 7);
    pb_thread(&b, 1, "thr\x1b[31m");
    uint64_t now = 1000;
    for (size_t i = 0; i < 200; i++) {
        prism_step st = { now, now + 10000, i, 0, PRISM_STEP_SAMPLED };
        for (uint32_t id = 1; id <= ne; id++) {
            pb_enter(&b, 1, now + id * 10, id);
            pb_exit(&b, 1, now + id * 10 + 5);
        }
        now += 10000;
        pb_step(&b, &st);
    }
    pb_flush(&b);
    size_t len = b.len;
    put_file("names-controls.cbor", b.data, len);
    put_file("cut-half.cbor", b.data, len / 2 + 3);
    free(b.data);
}

/* Ids crafted against the fixed hashes the reader used before its tables
 * were keyed (base/hseed.c): string ids whose Fibonacci slots
 * ((id * 0x9E3779B97F4A7C15) >> 32) fall in 1 % of the final table (ids
 * end below 2^24),
 * and stream ids whose murmur-finalizer slots do the same.  Read back with
 * the fixed hashes, each insertion walked the whole cluster (80 k strings:
 * 5.7 s against 0.15 s); keyed, they spread (bench/hostile_table.sh prints
 * the time and RSS of both files). */
static uint64_t old_stream_slot(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static void gen_crafted_ids(void)
{
    size_t n = g_keep ? 80000 : 4000;
    size_t cap = 64;                    /* the idmap's table once n are in */
    while ((n + 2) * 2 > cap)
        cap *= 2;
    pbuild b;
    pb_init(&b, plain, 1, 8);
    pb_thread(&b, 1, "main");
    /* string ids end below 2^24: the cluster is as narrow as they allow */
    uint64_t win = 2 * (uint64_t)n * cap / PRISM_MAX_STRINGS;
    win = win < 64 ? 64 : win;
    size_t got = 0;
    char name[32];
    for (uint64_t k = 2; got < n && k < PRISM_MAX_STRINGS; k++) {
        if ((((k * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1)) >= win)
            continue;
        pb_begin(&b, PRISM_CHUNK_STRINGS, 0, k);
        snprintf(name, sizeof name, "s%llu", (unsigned long long)k);
        assert_int_equal(prism_enc_string(&b.e, name, strlen(name)), PRISM_OK);
        if (got % 64 == 0) {            /* some of them used */
            pb_enter(&b, 1, 1000 + got * 10, (uint32_t)k);
            pb_exit(&b, 1, 1005 + got * 10);
        }
        got++;
    }
    assert_int_equal(got, n);
    put_built(g_keep ? "ids-crafted-80k.cbor" : "ids-crafted-4k.cbor", &b);

    n = g_keep ? 80000 : 2000;          /* streams: a THREADS record and a region each */
    for (cap = 64; (n + 2) * 2 > cap;)
        cap *= 2;
    pb_init(&b, plain, 1, 9);
    got = 0;
    for (uint64_t k = 2; got < n && k < UINT32_MAX; k++) {
        if ((old_stream_slot(k) & (cap - 1)) >= 64)
            continue;
        if (k < sizeof b.seq / sizeof b.seq[0])
            continue;                   /* pbuild's own streams */
        prism_thread t = { .stream = (uint32_t)k, .os_tid = 100 + k, .name = "t" };
        PB_PUT(&b, PRISM_CHUNK_THREADS, 0, 0, prism_enc_thread(&b.e, &t));
        got++;
    }
    pb_flush(&b);
    uint8_t chunk[256];                 /* then a region on each stream */
    got = 0;
    for (uint64_t k = 8; got < n && k < UINT32_MAX; k++) {
        if ((old_stream_slot(k) & (cap - 1)) >= 64)
            continue;
        prism_enc e;
        size_t len;
        assert_int_equal(prism_enc_begin(&e, chunk, sizeof chunk, PRISM_CHUNK_REGIONS,
                                         (uint32_t)k, 0, 1000, 0), PRISM_OK);
        assert_int_equal(prism_enc_enter(&e, 1000 + got, 1), PRISM_OK);
        assert_int_equal(prism_enc_exit(&e, 1010 + got), PRISM_OK);
        assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
        pb_bytes(&b, chunk, len);
        got++;
    }
    assert_int_equal(got, n);
    put_built(g_keep ? "streams-crafted-80k.cbor" : "streams-crafted-2k.cbor", &b);
}

static bool has_control(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b || c == 0x07 || (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] == 0x9b))
            return true;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file read back, reported, under the watchdog. */
static void test_read_back(void **state)
{
    (void)state;
    gen_format();
    gen_analysis();
    gen_names();
    gen_crafted_ids();
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    assert_int_equal(n, 14);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", g_dir, names[i]);
        alarm(120);                     /* watchdog: minutes once */
        prism_status st;
        char msg[256];
        uint64_t off;
        prism_analysis *a = prism_analyze_file(path, NULL, &st, msg, sizeof msg, &off);
        if (a) {
            char *buf = NULL;
            size_t len = 0;
            FILE *m = open_memstream(&buf, &len);
            assert_non_null(m);
            analyze_write_txt(m, names[i], a);
            assert_int_equal(fclose(m), 0);
            if (has_control(buf, len)) {
                print_error("%s: raw terminal control in the report\n", names[i]);
                fail();
            }
            free(buf);
            prism_analysis_free(a);
        }
        alarm(0);
        if (!g_keep)
            unlink(path);
        free(names[i]);
    }
}

int main(void)
{
    const char *keep = getenv("PRISM_HOSTILE_DIR");
    if (keep && *keep) {
        g_keep = true;
        snprintf(g_dir, sizeof g_dir, "%s", keep);
        mkdir(g_dir, 0755);
    } else {
        snprintf(g_dir, sizeof g_dir, "/tmp/prism-hostile-XXXXXX");
        if (!mkdtemp(g_dir))
            return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_back),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (!g_keep)
        rmdir(g_dir);
    return rc;
}

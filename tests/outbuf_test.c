/*
 * outbuf_test.c - the exports' output buffer (reports/outbuf.c): integers
 * and microseconds as printf writes them, numbers as a JSON reader reads
 * them back (ob_double's exact form of multiples of
 * 2^-20, %.17g for the rest, null for what is not finite), and the blocks
 * handed to the writer thread: many blocks reach the file whole and in
 * order, what the caller writes after ob_flush follows them, an output
 * smaller than a block never starts a thread, a full disk stays in ferror,
 * and a closed pipe's EPIPE reaches the caller's errno.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../reports/outbuf.h"

/* An ob over a memory stream: mem_open, write, then mem_close for the
 * bytes (the caller frees them). */
typedef struct mem_out {
    char *text;
    size_t len;
    FILE *f;
    ob o;
} mem_out;

static void mem_open(mem_out *m)
{
    m->text = NULL;
    m->len = 0;
    m->f = open_memstream(&m->text, &m->len);
    assert_non_null(m->f);
    assert_true(ob_open(&m->o, m->f));
}

static char *mem_close(mem_out *m)
{
    ob_close(&m->o);
    assert_int_equal(fclose(m->f), 0);
    return m->text;
}

/* ob's bytes for one double. */
static char *double_text(double v)
{
    mem_out m;
    mem_open(&m);
    ob_double(&m.o, v);
    return mem_close(&m);
}

static void reads_back(double v)
{
    char *t = double_text(v);
    char *end;
    double r = strtod(t, &end);
    if (*end || memcmp(&r, &v, sizeof r))
        fail_msg("%.17g written as \"%s\"", v, t);
    free(t);
}

static void test_double_exact(void **state)
{
    (void)state;
    static const struct {
        double v;
        const char *text;
    } known[] = {
        { 0.0, "0" }, { -0.0, "-0" }, { 1.0, "1" }, { -3.0, "-3" }, { 0.5, "0.5" },
        { 1536.25, "1536.25" }, { 1.0 / 1048576, "0.00000095367431640625" },
        { -2.75, "-2.75" }, { 999999999.0, "999999999" }, { 1e9, "1000000000" },
        { 0.1, "0.10000000000000001" }, { 1e300, "1.0000000000000001e+300" },
        { NAN, "null" }, { INFINITY, "null" }, { -INFINITY, "null" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char *t = double_text(known[i].v);
        assert_string_equal(t, known[i].text);
        free(t);
    }
    /* MiB of whole bytes (the memory counters), and other doubles */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        reads_back((double)(x % (1ull << 50)) / 1048576.0);
        reads_back(-(double)(x % 100000) / 1024.0);
        double d;
        memcpy(&d, &x, sizeof d);
        if (isfinite(d))
            reads_back(d);
        reads_back((double)(x % 1000000) / 1000.0);
    }
}

/* Integers and microseconds as printf writes them, at every digit count. */
static void test_integers(void **state)
{
    (void)state;
    char got[OB_NUM_MAX + 1], want[64];
    uint64_t v = 1;
    for (int d = 0; d < 20; d++, v *= 10) {
        uint64_t cases[] = { v - 1, v, v + 1, v * 3 + 7, UINT64_MAX - v };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            *ob_fmt_u64(got, cases[i]) = '\0';
            snprintf(want, sizeof want, "%" PRIu64, cases[i]);
            assert_string_equal(got, want);
            *ob_fmt_us(got, cases[i]) = '\0';
            uint64_t f = cases[i] % 1000;
            int n = snprintf(want, sizeof want, "%" PRIu64 ".%03u", cases[i] / 1000, (unsigned)f);
            while (want[n - 1] == '0')
                want[--n] = '\0';
            if (want[n - 1] == '.')
                want[--n] = '\0';
            assert_string_equal(got, want);
        }
    }
    *ob_fmt_u64(got, UINT64_MAX) = '\0';
    assert_string_equal(got, "18446744073709551615");
}

/* Blocks of several MiB through the writer: byte for byte, in order. */
static void test_many_blocks(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    ob o;
    assert_true(ob_open(&o, f));
    const size_t n = 600000;            /* about 5 MiB: five blocks and more */
    for (size_t i = 0; i < n; i++) {
        ob_u64(&o, i);
        ob_putc(&o, ',');
        if (i % 100000 == 0) {
            static char big[OB_CAP / 2];
            memset(big, 'x', sizeof big);
            ob_big(&o, big, sizeof big);    /* in place, after the queue */
            ob_putc(&o, ',');
        }
    }
    assert_true(o.w != NULL || o.sync);     /* the writer took blocks */
    ob_flush(&o);
    fputs("tail", f);                   /* the caller's own, after the flush */
    ob_close(&o);
    assert_false(ferror(f));
    rewind(f);
    char num[32];
    for (size_t i = 0; i < n; i++) {
        int c, k = 0;
        while ((c = fgetc(f)) != ',' && c != EOF && k < 31)
            num[k++] = (char)c;
        num[k] = '\0';
        assert_int_equal(strtoull(num, NULL, 10), i);
        if (i % 100000 == 0) {
            for (size_t j = 0; j < OB_CAP / 2; j++)
                assert_int_equal(fgetc(f), 'x');
            assert_int_equal(fgetc(f), ',');
        }
    }
    char rest[8] = { 0 };
    assert_int_equal(fread(rest, 1, sizeof rest, f), 4);
    assert_string_equal(rest, "tail");
    fclose(f);
}

/* Less than a block: written at the flush, no thread started. */
static void test_small_no_thread(void **state)
{
    (void)state;
    mem_out m;
    mem_open(&m);
    OB_LIT(&m.o, "{\"ts\":");
    ob_us(&m.o, 1234567);
    ob_putc(&m.o, '}');
    assert_null(m.o.w);
    char *text = mem_close(&m);
    assert_string_equal(text, "{\"ts\":1234.567}");
    free(text);
}

/* A full disk: the writer thread's fwrite fails; ferror says so. */
static void test_full_disk(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    ob o;
    assert_true(ob_open(&o, f));
    for (int i = 0; i < 3 * (int)(OB_CAP / 8); i++)
        OB_LIT(&o, "12345678");
    ob_close(&o);
    assert_true(ferror(f));
    fclose(f);
}

/* The reader of a pipe left (SIGPIPE ignored, as in Python): the writer
 * thread's EPIPE reaches the caller's errno after ob_close, so that the
 * export ends quietly (report.c outfile_close). */
static void test_closed_pipe_errno(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    close(fds[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    FILE *f = fdopen(fds[1], "w");
    assert_non_null(f);
    ob o;
    assert_true(ob_open(&o, f));
    for (int i = 0; i < 3 * (int)(OB_CAP / 8); i++)
        OB_LIT(&o, "12345678");
    assert_non_null(o.w);
    errno = 0;
    ob_close(&o);
    assert_int_equal(errno, EPIPE);
    assert_true(ferror(f));
    fclose(f);
    signal(SIGPIPE, old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_double_exact),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_many_blocks),
        cmocka_unit_test(test_small_no_thread),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_closed_pipe_errno),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

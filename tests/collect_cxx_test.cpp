/*
 * collect_cxx_test.cpp - collect.h from C++ (built as C++11 by the Makefile):
 * the shared structs keep C's layout; PRISM_ZONE is a scoped object whose
 * destructor leaves the region on every way out of a block (end, return,
 * break, continue, an exception); push/pop, marks and counters inline and
 * through the real functions libprism exports under the same names; the
 * defaults filled by prism_config_default.  A profile is recorded in a
 * forked child (one session per process) and its region events read back,
 * in order, in the parent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {                      /* cmocka.h has no extern "C" of its own */
#include <cmocka.h>
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prism/collect.h"
#include "prism/profile.h"

extern "C" size_t cxx_layout_c(size_t i);      /* collect_cxx_layout.c */

static void test_layout_matches_c(void **state)
{
    (void)state;
    const size_t v[] = {
        sizeof(prism_site), alignof(prism_site), offsetof(prism_site, id),
        sizeof(prism__tls), alignof(prism__tls), offsetof(prism__tls, th),
        sizeof(prism__event), sizeof(prism_config), alignof(prism_config),
        offsetof(prism_config, output), offsetof(prism_config, memory_leak_threshold_mb),
        sizeof(prism__on), alignof(prism__on),
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (v[i] != cxx_layout_c(i))
            fprintf(stderr, "layout item %zu: C++ %zu, C %zu\n", i, v[i], cxx_layout_c(i));
        assert_int_equal(v[i], cxx_layout_c(i));
    }
    assert_int_equal(cxx_layout_c(sizeof v / sizeof v[0]), (size_t)-1);  /* same count */
}

static void test_config_defaults(void **state)
{
    (void)state;
    prism_config c;
    memset(&c, 0xa5, sizeof c);
    prism_config_default(&c);
    assert_true(c.enabled && c.collect_timing);
    assert_true(c.sample_rate == 1.0);
    assert_int_equal(c.buffer_events, 16384);
    assert_int_equal(c.policy, PRISM_POLICY_DROP);
    assert_string_equal(c.output, "prism-%p.cbor");
    assert_null(c.output_dir);
}

/* ---- the recorded scenario (in the child) ---------------------------- */

static int early_return(int x)
{
    PRISM_ZONE("early");
    if (x > 0)
        return 1;                   /* the zone ends here */
    return 0;
}

static void scenario(uint32_t id, uint32_t ctr)
{
    {
        PRISM_ZONE("outer");
        PRISM_ZONE("inner");        /* two zones in one block: both end, inner first */
    }
    early_return(1);
    for (int i = 0; i < 3; i++) {
        PRISM_ZONE("loop");
        if (i == 1)
            continue;
        if (i == 2)
            break;
    }
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
        PRISM_ZONE("throws");
        {
            PRISM_ZONE("deep");
            throw 42;
        }
    } catch (int) {
        PRISM_ZONE("caught");       /* both zones above were left by unwinding */
    }
#endif
    static prism_site site = { "object", __FILE__, __LINE__, 0 };
    {
        prism::zone z(&site);
    }
    prism_push_id(id);              /* inline */
    prism_mark_id(id);
    prism_counter_i(ctr, -7);
    prism_counter_f(ctr, 2.5);
    prism_pop();
    (prism_push_id)(id);            /* the exported functions */
    (prism_mark_id)(id);
    (prism_counter_i)(ctr, 9);
    (prism_counter_f)(ctr, -0.5);
    (prism_pop)();
    void (*begin)(prism_site *) = &prism_zone_begin;
    void (*end)(void) = &prism_zone_end;
    begin(&site);
    end();
}

static int child_record(const char *path)
{
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    c.collect_memory = false;
    c.collect_gpu_ops = false;
    c.cpu_interval_ms = 0;
    if (prism_init(&c) != 0 || !prism_recording())
        return 2;
    uint32_t id = prism_name("by_id"), ctr = prism_name("ctr");
    if (!id || !ctr)
        return 3;
    prism_step_begin();
    scenario(id, ctr);
    prism_step_end();
    prism_shutdown();
    return 0;
}

/* ---- reading it back ------------------------------------------------- */

#define MAXEV 64
struct readback {
    prism_region_event ev[MAXEV];
    size_t nev;
    uint32_t stream;                /* the stream of the first region event */
    size_t marks;
    prism_counter ctr[8];
    size_t nctr;
};

static void on_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    readback *rb = static_cast<readback *>(ctx);
    (void)depth;
    if (rb->nev == 0)
        rb->stream = stream;
    for (size_t i = 0; i < n && rb->nev < MAXEV; i++)
        if (stream == rb->stream)
            rb->ev[rb->nev++] = ev[i];
}

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    (void)stream;
    (void)m;
    static_cast<readback *>(ctx)->marks += n;
}

static void on_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    readback *rb = static_cast<readback *>(ctx);
    (void)stream;
    for (size_t i = 0; i < n && rb->nctr < 8; i++)
        rb->ctr[rb->nctr++] = c[i];
}

/* The events as text: "+name" for an enter, "-" for an exit. */
static void events_text(const readback *rb, const prism_reader *r, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < rb->nev && len + 1 < cap; i++) {
        int w;
        if (rb->ev[i].kind == PRISM_REGION_ENTER) {
            size_t nlen = 0;
            const char *s = prism_reader_string(r, rb->ev[i].name, &nlen);
            w = snprintf(out + len, cap - len, "%s+%.*s", len ? " " : "", (int)nlen, s ? s : "?");
        } else {
            w = snprintf(out + len, cap - len, "%s-", len ? " " : "");
        }
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

static void test_zones_and_calls_recorded(void **state)
{
    (void)state;
    char dir[] = "/tmp/prism-cxx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/cxx.cbor", dir);

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(30);
        _exit(child_record(path));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    readback rb;
    memset(&rb, 0, sizeof rb);
    prism_reader_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.regions = on_regions;
    cb.marks = on_marks;
    cb.counters = on_counters;
    prism_reader *r = NULL;
    assert_int_equal(prism_read_file(path, &cb, &rb, &r), PRISM_OK);
    assert_non_null(r);

    char got[1024];
    events_text(&rb, r, got, sizeof got);
    const char *want =
        "+outer +inner - - +early - +loop - +loop - +loop -"
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
        " +throws +deep - - +caught -"
#endif
        " +object - +by_id - +by_id - +object -";
    if (strcmp(got, want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
    assert_string_equal(got, want);

    assert_int_equal(rb.marks, 2);
    assert_int_equal(rb.nctr, 4);
    assert_false(rb.ctr[0].is_float);
    assert_int_equal(rb.ctr[0].v.i, -7);
    assert_true(rb.ctr[1].is_float && rb.ctr[1].v.f == 2.5);
    assert_int_equal(rb.ctr[2].v.i, 9);
    assert_true(rb.ctr[3].is_float && rb.ctr[3].v.f == -0.5);

    prism_reader_free(r);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_c),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_zones_and_calls_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

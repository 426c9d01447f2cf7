/*
 * collect_gpumem_test.c - prism_gpu_memory: the program's own reading of a
 * GPU's memory in the memory samples.
 *
 * Each scenario runs in a child (one session per process) on a machine
 * without a CUDA driver loaded, so NVML contributes nothing: every GPU
 * figure in the file is one the program reported.
 *   - samples taken after a report carry it, for each reported device;
 *     ordinals from 16 up are ignored; samples before any report have none;
 *   - collect_gpu_ops off (no CUPTI, no NVML) still carries the reports;
 *   - a report made before prism_init is in the first samples;
 *   - two threads reporting the same device concurrently never produce a
 *     sample mixing one report's used with the other's reserved.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>

#include "collect_util.h"

#define STEPS 12u
#define MB (1ull << 20)

static const prism_gpu_mem *dev_of(const prism_memory_sample *m, uint32_t device)
{
    for (uint32_t i = 0; i < m->ngpu; i++)
        if (m->gpu[i].device == device)
            return &m->gpu[i];
    return NULL;
}

static void spin(unsigned n)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < n; i++)
        x = x + i;
}

typedef struct scenario {
    char path[512];
    bool gpu_ops;                   /* collect_gpu_ops                    */
    bool before_init;               /* a first report before prism_init   */
} scenario;

/* Step i reports device 0: used (i+1) MB, reserved twice that; device 3:
 * 7 MB / 9 MB; device 16 and UINT32_MAX: ignored. */
static int steps_child(void *arg)
{
    const scenario *sc = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = sc->path;
    c.collect_gpu_ops = sc->gpu_ops;
    c.memory_interval_ms = 3600000;      /* periodic: at start and end only */
    if (sc->before_init)
        prism_gpu_memory(5, 5 * MB, 6 * MB);
    CHILD_CHECK(prism_init(&c) == 0);
    for (uint32_t i = 0; i < STEPS; i++) {
        prism_step_begin();
        prism_push("work");
        spin(20000);
        prism_pop();
        prism_gpu_memory(0, (i + 1) * MB, 2 * (i + 1) * MB);
        prism_gpu_memory(3, 7 * MB, 9 * MB);
        prism_gpu_memory(16, 1, 1);
        prism_gpu_memory(UINT32_MAX, 1, 1);
        prism_step_end();
    }
    prism_shutdown();
    return 0;
}

static void check_steps(const scenario *sc)
{
    psum *p = psum_from_child(steps_child, (void *)sc, sc->path, false);
    assert_int_equal(p->nsteps, STEPS);
    size_t tagged = 0;
    for (size_t i = 0; i < p->nmem; i++) {
        const prism_memory_sample *m = &p->mem[i];
        const prism_gpu_mem *d0 = dev_of(m, 0), *d3 = dev_of(m, 3), *d5 = dev_of(m, 5);
        assert_true(m->ngpu <= 3);
        assert_null(dev_of(m, 16));
        if (sc->before_init) {
            assert_non_null(d5);        /* reported before the session began */
            assert_int_equal(d5->used, 5 * MB);
            assert_int_equal(d5->reserved, 6 * MB);
        }
        if (m->step == PRISM_NO_STEP && !d0)
            continue;                   /* before the first report */
        if (m->step != PRISM_NO_STEP) {
            /* taken after step `step` ended: its report or a later one */
            assert_non_null(d0);
            assert_true(d0->used >= (m->step + 1) * MB);
            tagged++;
        }
        assert_non_null(d0);
        assert_non_null(d3);
        assert_int_equal(d0->used % MB, 0);
        assert_true(d0->used >= MB && d0->used <= STEPS * MB);
        assert_int_equal(d0->reserved, 2 * d0->used);
        assert_int_equal(d3->used, 7 * MB);
        assert_int_equal(d3->reserved, 9 * MB);
        assert_int_equal(m->ngpu, sc->before_init ? 3 : 2);
    }
    assert_true(tagged >= 1);           /* at least the one at shutdown */
    psum_free(p);
}

static void test_reports_in_samples(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    scenario sc = { "", true, false };
    tdir_file(&d, "gpumem.cbor", sc.path, sizeof sc.path);
    check_steps(&sc);
    tdir_remove(&d);
}

static void test_reports_without_gpu_ops(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    scenario sc = { "", false, false };
    tdir_file(&d, "nogpu.cbor", sc.path, sizeof sc.path);
    check_steps(&sc);
    tdir_remove(&d);
}

static void test_report_before_init(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    scenario sc = { "", true, true };
    tdir_file(&d, "early.cbor", sc.path, sizeof sc.path);
    check_steps(&sc);
    tdir_remove(&d);
}

/* ---- concurrent reports ------------------------------------------------- */

#define RACE_REPORTS 200000u

static void *reporter(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 1; i <= RACE_REPORTS; i++)
        prism_gpu_memory(1, base + i, 2 * (base + i));
    return NULL;
}

static int race_child(void *arg)
{
    prism_config c;
    prism_config_default(&c);
    c.output = arg;
    c.memory_interval_ms = 1;            /* samples while the reports race */
    CHILD_CHECK(prism_init(&c) == 0);
    pthread_t a, b;
    CHILD_CHECK(pthread_create(&a, NULL, reporter, (void *)(uintptr_t)0) == 0);
    CHILD_CHECK(pthread_create(&b, NULL, reporter, (void *)(uintptr_t)(1ull << 40)) == 0);
    for (uint32_t i = 0; i < 50; i++) {
        prism_step_begin();
        spin(20000);
        prism_step_end();
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    prism_shutdown();
    return 0;
}

static void test_concurrent_reports_never_mix(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "race.cbor", path, sizeof path);
    psum *p = psum_from_child(race_child, path, path, false);
    size_t with = 0;
    for (size_t i = 0; i < p->nmem; i++) {
        const prism_gpu_mem *g = dev_of(&p->mem[i], 1);
        if (!g)
            continue;
        with++;
        assert_int_equal(g->reserved, 2 * g->used);
    }
    assert_true(with >= 1);             /* the one at shutdown at least */
    psum_free(p);
    tdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reports_in_samples),
        cmocka_unit_test(test_reports_without_gpu_ops),
        cmocka_unit_test(test_report_before_init),
        cmocka_unit_test(test_concurrent_reports_never_mix),
    };
    unsetenv("PRISM_OUTPUT");
    unsetenv("PRISM_ENABLED");
    return cmocka_run_group_tests(tests, NULL, NULL);
}

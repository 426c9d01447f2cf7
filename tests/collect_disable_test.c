/*
 * collect_disable_test.c - with PRISM_DISABLE defined before collect.h,
 * every macro and call compiles (warning-free, in code written the way a
 * program instruments itself) and does nothing: no session starts, no file
 * is written, step indices stay 0.  Nothing here can start a session, so it
 * runs in the test process itself.
 */
#define PRISM_DISABLE 1

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "collect_util.h"

static unsigned calls;

/* Counts its calls: an argument a disabled macro must not evaluate. */
static const char *counted(const char *s)
{
    calls++;
    return s;
}

static void forward(uint32_t layer_id)
{
    PRISM_ZONE("forward");
    PRISM_ZONE("forward.inner");
    prism_push_id(layer_id);
    prism_pop();
}

static void test_macros_do_nothing(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "disabled-%p.cbor", path, sizeof path);
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    assert_int_equal(prism_init(&c), 0);
    assert_int_equal(prism_init(NULL), 0);
    assert_false(prism_recording());
    uint32_t layer = prism_name("layer");
    uint32_t loss = prism_name("loss");
    assert_int_equal(layer, 0);
    prism_thread_name("main");
    static prism_site site = { "site", __FILE__, __LINE__, 0 };
    calls = 0;
    for (int step = 0; step < 100; step++) {
        prism_epoch(step / 10);
        prism_step_begin();
        forward(layer);
        prism_push(counted("backward"));
        PRISM_REGION_BEGIN("optimizer");
        prism_mark_name(counted("update"));
        prism_mark_id(layer);
        PRISM_REGION_END();
        prism_zone_begin(&site);
        prism_zone_end();
        prism_pop();
        prism_counter_i(loss, step);
        prism_counter_f(loss, 1.0 / (step + 1));
        prism_step_end();
        assert_int_equal(prism_step_index(), 0);
    }
    prism_shutdown();
    prism_shutdown();
    assert_int_equal(calls, 0);                 /* arguments not even evaluated */
    assert_false(prism_recording());
    assert_null(prism_output_path());
    prism_system_reading sr;
    assert_int_equal(prism_system_read(&sr), -1);   /* nothing read: no library */
    assert_int_equal(tdir_count(&d), 0);
    tdir_remove(&d);
}

/* prism_config_default still fills in the defaults (inline: no library). */
static void test_config_functions_still_declared(void **state)
{
    (void)state;
    prism_config c;
    prism_config_default(&c);
    assert_true(c.enabled);
    assert_true(c.sample_rate == 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_macros_do_nothing),
        cmocka_unit_test(test_config_functions_still_declared),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

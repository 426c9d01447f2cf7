/*
 * advice_test.c - advice that fits what the program already does:
 *   - a hot data_loading region on the training thread of a program whose
 *     DataLoader already has worker processes: the time is taking the
 *     batches over from the workers, not "move it to loader threads or
 *     processes" (a real profile: tests/fixtures/handover);
 *   - a hot forward and backward of a program whose forward runs under
 *     torch.autocast (INFO torch.autocast): not "use mixed precision";
 *   - slow steps held by the backward (every 10th batch 4x longer): larger
 *     inputs come first, not only checkpoints and gc; held by a checkpoint
 *     region, the list of periodic work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "prism/analysis.h"
#include "pbuild.h"

static void test_handover_advice(void **state)
{
    (void)state;
    prism_status st;
    char msg[256];
    uint64_t off;
    prism_analysis *a =
        prism_analyze_file("tests/fixtures/handover/handover.cbor", NULL, &st, msg, sizeof msg, &off);
    assert_non_null(a);
    size_t n = 0;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_bottleneck *hot = NULL;
    for (size_t i = 0; i < n; i++)
        if (b[i].type == PRISM_BN_HOT_OPERATION && strstr(b[i].description, "'data_loading'"))
            hot = &b[i];
    assert_non_null(hot);
    assert_non_null(strstr(hot->recommendation, "The workers make the batches; this is taking "
                                                "them over"));
    assert_null(strstr(hot->recommendation, "move it to loader threads"));
    prism_analysis_free(a);
}

/* A Python program's profile (its producer says so: the advice is
 * torch's), one thread, "MainThread", which steps. */
static void py_profile(pbuild *b, const char *const *names, size_t n, uint64_t seed)
{
    prism_header h = { .producer = "prism-python 0.1", .host = "test", .rank = -1,
                       .clock = "test" };
    pb_init_header(b, &h, names, n, seed);
    pb_thread(b, 1, "MainThread");
    pb_info_uint(b, "steps.thread", 1);
}

/* 20 steps of Net.forward 6 ms then backward 9 ms (a python producer);
 * amp: INFO torch.autocast "cpu bfloat16". */
static loaded amp_profile(const char *amp)
{
    static const char *const names[] = { "Net.forward", "backward" };
    pbuild b;
    py_profile(&b, names, 2, 5);
    if (amp)
        pb_info_text(&b, "torch.autocast", amp);
    uint64_t t = 1000000;
    for (uint64_t k = 0; k < 20; k++) {
        uint64_t t0 = t;
        pb_leaf(&b, 1, &t, 1, 6000000);
        pb_leaf(&b, 1, &t, 2, 9000000);
        prism_step st = { t0, t, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    return pb_load(&b);
}

static const prism_bottleneck *hot_on(const prism_analysis *a, const char *name)
{
    size_t n = 0;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    char q[64];
    snprintf(q, sizeof q, "'%s'", name);
    for (size_t i = 0; i < n; i++)
        if (b[i].type == PRISM_BN_HOT_OPERATION && strstr(b[i].description, q))
            return &b[i];
    return NULL;
}

static void test_autocast_advice(void **state)
{
    (void)state;
    loaded l = amp_profile(NULL);
    const prism_bottleneck *f = hot_on(l.a, "Net.forward"), *bw = hot_on(l.a, "backward");
    assert_non_null(f);
    assert_non_null(bw);
    assert_non_null(strstr(f->recommendation, "Use mixed precision"));
    assert_non_null(strstr(bw->recommendation, "Use mixed precision"));
    /* checkpointing only as a condition: this program does not checkpoint
     * (it said "drop it" to every backward, a user's trial) */
    assert_null(strstr(bw->recommendation, "gradient checkpointing saves"));
    assert_non_null(strstr(bw->recommendation, "where the model checkpoints activations"));
    unload(&l);
    l = amp_profile("cpu bfloat16");
    f = hot_on(l.a, "Net.forward");
    bw = hot_on(l.a, "backward");
    assert_non_null(f);
    assert_non_null(bw);
    assert_null(strstr(f->recommendation, "mixed precision"));
    assert_null(strstr(bw->recommendation, "mixed precision"));
    assert_non_null(strstr(f->recommendation, "already runs under torch.autocast (cpu bfloat16)"));
    assert_non_null(strstr(bw->recommendation, "already runs under torch.autocast"));
    unload(&l);
}

/* 40 steps of Net.forward 3 ms, backward 5 ms, save 0.2 ms (a python
 * producer); every 10th step the backward (big) or the save (!big) takes
 * 30 ms more. */
static loaded slow_profile(bool big)
{
    static const char *const names[] = { "Net.forward", "backward", "save_checkpoint" };
    pbuild b;
    py_profile(&b, names, 3, 9);
    uint64_t t = 1000000;
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t t0 = t, more = k % 10 == 7 ? 30000000 : 0;
        pb_leaf(&b, 1, &t, 1, 3000000);
        pb_leaf(&b, 1, &t, 2, 5000000 + (big ? more : 0));
        pb_leaf(&b, 1, &t, 3, 200000 + (big ? 0 : more));
        prism_step st = { t0, t, k, 0, PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    return pb_load(&b);
}

static void test_slow_steps_advice(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        loaded l = slow_profile(big);
        size_t n = 0;
        const prism_bottleneck *b = prism_analysis_bottlenecks(l.a, &n), *s = NULL;
        for (size_t i = 0; i < n; i++)
            if (b[i].type == PRISM_BN_SLOW_STEPS)
                s = &b[i];
        assert_non_null(s);
        if (big) {
            assert_non_null(strstr(s->recommendation, "'backward' itself takes longer on those "
                                                      "steps: larger inputs"));
        } else {
            assert_null(strstr(s->recommendation, "larger inputs"));
            assert_non_null(strstr(s->recommendation, "Look at what runs only on those steps"));
        }
        unload(&l);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handover_advice),
        cmocka_unit_test(test_autocast_advice),
        cmocka_unit_test(test_slow_steps_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

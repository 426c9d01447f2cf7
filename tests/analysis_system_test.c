/*
 * analysis_system_test.c - the run's system figures (analysis/system.c)
 * from hand-placed format 1.3 readings: totals over the readings' span,
 * CPU and memory shares, GPU utilisation and energy summed over devices,
 * per-step figures interpolated between readings, unknown figures staying
 * unknown, a GPU's energy in only some readings (as NVML's rides them),
 * readings that arrive out of order, carbon only from an intensity given,
 * and a profile without readings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "pbuild.h"

#define MS 1000000ull
#define MB (1024.0 * 1024.0)

static const char *const names[] = { "(unknown)", "step" };

/* Reading k of 11 at k * 100 ms: every 100 ms 1 MiB read, 2 MiB written,
 * 10 kB received, 5 kB sent, 50 ms user and 10 ms system CPU, 1 J of CPU
 * energy and 100 mJ per GPU (two of them, 40 % and 60 % busy); RSS 100 +
 * 10k bytes of a 1000-byte machine (so 10 % .. 20 %). */
static prism_memory_sample reading(unsigned k)
{
    prism_memory_sample m = { .ts = k * 100 * MS, .step = PRISM_NO_STEP, .rss = 100 + 10 * k,
                              .cpu_permille = PRISM_NO_CPU, .ngpu = 2, .have_sys = 1 };
    m.io_read_bytes = k * (uint64_t)MB;
    m.io_write_bytes = 2 * k * (uint64_t)MB;
    m.net_rx_bytes = k * 10000u;
    m.net_tx_bytes = k * 5000u;
    m.cpu_user_ns = k * 50 * MS;
    m.cpu_sys_ns = k * 10 * MS;
    m.mem_total = 1000;
    m.cpu_energy_uj = k * 1000000u;
    m.gpu[0] = (prism_gpu_mem){ 0, 1, 1, 40, k * 100u };
    m.gpu[1] = (prism_gpu_mem){ 1, 1, 1, 60, k * 100u };
    return m;
}

static void near(double got, double want)
{
    if (got < want - 1e-6 * (want < 0 ? -want : want) - 1e-9 ||
        got > want + 1e-6 * (want < 0 ? -want : want) + 1e-9)
        fail_msg("%.9g, want %.9g", got, want);
}

static void test_figures(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 1);
    /* out of order: the odd readings first, in a chunk of their own (time
     * never falls inside a chunk) */
    for (unsigned k = 1; k <= 10; k += 2) {
        prism_memory_sample m = reading(k);
        pb_memory(&b, &m);
    }
    pb_flush(&b);
    for (unsigned k = 0; k <= 10; k += 2) {
        prism_memory_sample m = reading(k);
        pb_memory(&b, &m);
    }
    /* steps of 50 ms from 125 ms; one past the last reading is left out */
    for (unsigned i = 0; i < 18; i++) {
        prism_step s = { .start = 125 * MS + i * 50 * MS, .end = 175 * MS + i * 50 * MS,
                         .index = i, .flags = PRISM_STEP_SAMPLED };
        pb_step(&b, &s);
    }
    prism_step late = { .start = 990 * MS, .end = 1100 * MS, .index = 18,
                        .flags = PRISM_STEP_SAMPLED };
    pb_step(&b, &late);
    prism_analysis_opts o = { -1, -1, 0, 400 };     /* g CO2e per kWh, as given */
    loaded l = pb_load_with(&b, &o, false);
    const prism_system_stats *s = prism_analysis_system(l.a);
    assert_int_equal(s->count, 11);
    for (size_t i = 0; i < s->count; i++)
        assert_int_equal(s->samples[i].ts, i * 100 * MS);
    assert_int_equal(s->span_ns, 1000 * MS);
    assert_int_equal(s->io_read_bytes, 10 * (uint64_t)MB);
    assert_int_equal(s->io_write_bytes, 20 * (uint64_t)MB);
    assert_int_equal(s->net_rx_bytes, 100000);
    assert_int_equal(s->net_tx_bytes, 50000);
    near(s->cpu_user_pct, 50);
    near(s->cpu_sys_pct, 10);
    assert_int_equal(s->mem_total, 1000);
    near(s->mem_peak_pct, 20);
    near(s->mem_mean_pct, 15);
    near(s->gpu_util_pct, 50);
    assert_int_equal(s->cpu_energy_uj, 10000000);
    assert_int_equal(s->gpu_energy_mj, 2000);
    near(s->energy_j, 12);
    near(s->carbon_g_per_kwh, 400);
    near(s->carbon_g, 12 / 3.6e6 * 400);
    assert_int_equal(s->steps, 17);     /* those ending by 1000 ms; the two past it are not */
    near(s->step_io_read_bytes, MB / 2);
    near(s->step_io_write_bytes, MB);
    near(s->step_net_bytes, 7500);
    near(s->step_energy_j, 0.5 + 0.1);  /* CPU 1 J and GPUs 200 mJ per 100 ms */
    unload(&l);
}

/* A figure unknown at an end of the run is unknown over it; the rest are
 * not.  One GPU without energy makes the GPUs' sum unknown. */
static void test_unknown(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 2);
    for (unsigned k = 0; k <= 4; k++) {
        prism_memory_sample m = reading(k);
        if (k == 4)
            m.net_rx_bytes = PRISM_NO_VALUE;
        m.cpu_energy_uj = PRISM_NO_VALUE;
        m.gpu[1].energy_mj = PRISM_NO_VALUE;
        m.gpu[1].util_pct = PRISM_NO_CPU;
        m.mem_total = PRISM_NO_VALUE;
        pb_memory(&b, &m);
    }
    prism_step st = { .start = 150 * MS, .end = 250 * MS, .index = 0,
                      .flags = PRISM_STEP_SAMPLED };
    pb_step(&b, &st);
    loaded l = pb_load(&b);
    const prism_system_stats *s = prism_analysis_system(l.a);
    assert_int_equal(s->count, 5);
    assert_int_equal(s->io_read_bytes, 4 * (uint64_t)MB);
    assert_true(s->net_rx_bytes == PRISM_NO_VALUE);
    assert_int_equal(s->net_tx_bytes, 20000);
    assert_true(s->cpu_energy_uj == PRISM_NO_VALUE && s->gpu_energy_mj == PRISM_NO_VALUE);
    assert_true(s->energy_j < 0 && s->carbon_g < 0);  /* no intensity given, no energy */
    assert_true(s->mem_total == PRISM_NO_VALUE && s->mem_peak_pct < 0 && s->mem_mean_pct < 0);
    near(s->gpu_util_pct, 40);          /* the device that says */
    assert_int_equal(s->steps, 1);
    near(s->step_io_read_bytes, MB);
    near(s->step_net_bytes, 10000 + 5000);  /* the step lies before the unknown reading */
    assert_true(s->step_energy_j < 0);
    unload(&l);
}

/* A GPU's energy as the GPU run recorded it: no GPU in the first reading
 * (before CUDA), then NVML's counter only in every other reading (the
 * readings copied at each step's end carry memory, not energy): the run's
 * energy from the first reading that has it to the last, a step's
 * interpolated between the nearest readings that have it. */
static void test_sparse_gpu_energy(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 4);
    for (unsigned k = 0; k <= 10; k++) {
        prism_memory_sample m = reading(k);
        m.cpu_energy_uj = PRISM_NO_VALUE;
        m.ngpu = k ? 1 : 0;
        if (k % 2 == 0 || k == 1) {     /* known at 1, 3, 5, 7, 9 */
            m.gpu[0].energy_mj = k == 1 ? 100 : PRISM_NO_VALUE;
            m.gpu[0].util_pct = PRISM_NO_CPU;
        }
        pb_memory(&b, &m);
    }
    for (unsigned i = 0; i < 4; i++) {  /* 150-250, 350-450, ... ms */
        prism_step st = { .start = (150 + 200 * i) * MS, .end = (250 + 200 * i) * MS,
                          .index = i, .flags = PRISM_STEP_SAMPLED };
        pb_step(&b, &st);
    }
    loaded l = pb_load(&b);
    const prism_system_stats *s = prism_analysis_system(l.a);
    assert_int_equal(s->gpu_energy_mj, 900 - 100);     /* readings 1 and 9 */
    near(s->energy_j, 0.8);
    near(s->step_energy_j, 0.1);        /* 100 mJ per 100 ms, between known readings */
    unload(&l);
}

/* Reading k at k * 10 ms of a long run: counters that grow faster and
 * faster (interpolation matters), a GPU's energy only in odd readings from
 * k = 20 on, the CPU's energy unknown after k = 150 (so later steps are
 * never final for it). */
static prism_memory_sample long_reading(unsigned k)
{
    prism_memory_sample m = reading(0);
    m.ts = k * 10 * MS;
    m.io_read_bytes = (uint64_t)k * k * 1000u;
    m.io_write_bytes = (uint64_t)k * 7000u;
    m.net_rx_bytes = (uint64_t)k * k * 10u;
    m.net_tx_bytes = (uint64_t)k * 3u;
    m.cpu_energy_uj = k <= 150 ? (uint64_t)k * k * 100u : PRISM_NO_VALUE;
    m.ngpu = 1;
    m.gpu[0].energy_mj = k >= 20 && k % 2 ? (uint64_t)k * 50u : PRISM_NO_VALUE;
    return m;
}

/* The per-step figures are kept from one refresh to the next for the
 * steps no later reading can change (a refresh of 4.3 M steps took 1.2 s
 * in the explorer): a profile fed in pieces with a refresh after each,
 * its readings and steps partly out of order, ends with exactly the
 * figures of one read of the whole file. */
static void test_refreshed_in_pieces(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 5);
    unsigned next = 0;
    /* 30 blocks of 10 steps; blocks 3, 8, 13, ... written after the block
     * that follows them (steps land among those summed); every tenth block
     * of readings with its second half first */
    for (unsigned blk = 0; blk < 30; blk++) {
        unsigned order = blk % 5 == 2 && blk + 1 < 30 ? blk + 1 : blk % 5 == 3 ? blk - 1 : blk;
        uint64_t until = 3 * MS + (order * 10 + 10) * 6500000ull;
        if (blk % 10 == 4) {
            for (unsigned k = next + 5; k < next + 10 && k <= 200; k++) {
                prism_memory_sample m = long_reading(k);
                pb_memory(&b, &m);
            }
            pb_flush(&b);
            for (unsigned k = next; k < next + 5 && k <= 200; k++) {
                prism_memory_sample m = long_reading(k);
                pb_memory(&b, &m);
            }
            next += 10;
        }
        while (next <= 200 && next * 10 * MS <= until) {
            prism_memory_sample m = long_reading(next++);
            pb_memory(&b, &m);
        }
        pb_flush(&b);
        for (unsigned i = order * 10; i < order * 10 + 10; i++) {
            uint64_t start = 3 * MS + i * 6500000ull;
            prism_step st = { start, start + 6 * MS, i, 0, PRISM_STEP_SAMPLED };
            pb_step(&b, &st);
        }
        pb_flush(&b);
    }
    while (next <= 200) {
        prism_memory_sample m = long_reading(next++);
        pb_memory(&b, &m);
    }
    pb_flush(&b);
    loaded whole = pb_load_with(&b, NULL, true);
    loaded part = pb_load_in_pieces(&b, 61, 5, 2039, 31);
    prism_analysis_refresh(part.a);     /* nothing new: the same again */
    free(b.data);
    const prism_system_stats *x = prism_analysis_system(whole.a), *y = prism_analysis_system(part.a);
    printf("  whole: %llu steps, read %.6f, write %.6f, net %.6f, energy %.9f J\n",
           (unsigned long long)x->steps, x->step_io_read_bytes, x->step_io_write_bytes,
           x->step_net_bytes, x->step_energy_j);
    assert_int_equal(x->count, 201);
    assert_true(x->steps > 250);
    assert_true(x->step_energy_j > 0);
    assert_int_equal(y->count, x->count);
    assert_int_equal(y->steps, x->steps);
    assert_true(y->step_io_read_bytes == x->step_io_read_bytes);
    assert_true(y->step_io_write_bytes == x->step_io_write_bytes);
    assert_true(y->step_net_bytes == x->step_net_bytes);
    assert_true(y->step_energy_j == x->step_energy_j);
    unload(&whole);
    unload(&part);
}

/* Samples without readings (format 1.2): nothing, all unknown. */
static void test_none(void **state)
{
    (void)state;
    pbuild b;
    pb_init(&b, names, 2, 3);
    for (unsigned k = 0; k < 3; k++) {
        prism_memory_sample m = { .ts = k * 100 * MS, .step = PRISM_NO_STEP, .rss = 1,
                                  .cpu_permille = 10, .ncpu = 2, .host_busy_permille = 100,
                                  .children_cpu_permille = 0 };
        pb_memory(&b, &m);
    }
    loaded l = pb_load(&b);
    const prism_system_stats *s = prism_analysis_system(l.a);
    assert_int_equal(s->count, 0);
    assert_true(s->io_read_bytes == PRISM_NO_VALUE && s->cpu_user_pct < 0 &&
                s->step_energy_j < 0 && s->gpu_util_pct < 0);
    unload(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_sparse_gpu_energy),
        cmocka_unit_test(test_refreshed_in_pieces),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

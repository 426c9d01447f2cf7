/*
 * sysread_bench - what the system readings of format 1.3 cost the writer
 * thread (libcollect/sysread.c: /proc/self/io and the children's, the
 * network interfaces, getrusage, RAPL), against the memory sample it rides
 * (a /proc/self/statm read, the baseline), interleaved in the same run,
 * and the share of one core they take at the writer's cadence (every
 * HOSTLOAD_EVERY_MS, 50 ms).  Also prism_system_read, the one-shot reading
 * a program takes around a block.  Prints figures; never fails on time.
 *
 *   sysread_bench [RUNS]        default 7 rounds of 2000 readings each
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "../libcollect/sampler.h"
#include "../libcollect/sysread.h"

#define READS 2000u

typedef struct ctx {
    sys_reader sys;
    host_load load;
    mem_sampler mem;
} ctx;

static uint64_t sys_reads(void *arg)
{
    ctx *c = arg;
    uint64_t s = 0;
    for (unsigned i = 0; i < READS; i++) {
        prism_memory_sample m = { 0 };
        pc_sysread_read(&c->sys, &c->load, &m);
        s += m.cpu_user_ns;
    }
    return s;
}

static uint64_t statm_reads(void *arg)
{
    ctx *c = arg;
    uint64_t s = 0;
    for (unsigned i = 0; i < READS; i++) {
        uint64_t rss;
        uint32_t cpu;
        if (pc_sampler_read(&c->mem, &rss, &cpu) == 0)
            s += rss;
    }
    return s;
}

static uint64_t oneshot_reads(void *arg)
{
    (void)arg;
    uint64_t s = 0;
    for (unsigned i = 0; i < READS; i++) {
        prism_system_reading r;
        prism_system_read(&r);
        s += r.rss;
    }
    return s;
}

int main(int argc, char **argv)
{
    unsigned runs = argc > 1 ? (unsigned)atoi(argv[1]) : 7u;
    if (runs == 0 || runs > BENCH_MAX_RUNS)
        runs = 7;
    static ctx c;
    pc_sysread_init(&c.sys);
    pc_hostload_init(&c.load);
    c.mem = (mem_sampler){ .statm = -1, .page = 4096 };
    double sys[BENCH_MAX_RUNS], base[BENCH_MAX_RUNS], one[BENCH_MAX_RUNS];
    bench_sink(sys_reads(&c) + statm_reads(&c) + oneshot_reads(&c));     /* warm */
    for (unsigned r = 0; r < runs; r++) {       /* interleaved, the order rotating */
        for (unsigned k = 0; k < 3; k++) {
            unsigned which = (r + k) % 3;
            uint64_t t0 = bench_now_ns();
            bench_sink(which == 0 ? sys_reads(&c) : which == 1 ? statm_reads(&c)
                                                                : oneshot_reads(&c));
            double us = (double)(bench_now_ns() - t0) / 1e3 / READS;
            (which == 0 ? sys : which == 1 ? base : one)[r] = us;
        }
    }
    bench_stat s = bench_stat_of(sys, runs), b = bench_stat_of(base, runs),
               o = bench_stat_of(one, runs);
    printf("sysread_bench: the system readings (format 1.3) per reading, %u rounds of %u "
           "interleaved\n", runs, READS);
    char extra[160];
    snprintf(extra, sizeof extra, "median of %u; %.2fx a statm read (%.2f us, the baseline); "
             "%.3f%% of a core every %u ms", runs, b.median > 0 ? s.median / b.median : 0,
             b.median, s.median / (HOSTLOAD_EVERY_MS * 10.0), HOSTLOAD_EVERY_MS);
    bench_row_value("sysread: writer's reading", s.median, "us", extra, "<= 0.1% of a core");
    snprintf(extra, sizeof extra, "median of %u; %.2fx the writer's (files opened each time)",
             runs, s.median > 0 ? o.median / s.median : 0);
    bench_row_value("prism_system_read", o.median, "us", extra, NULL);
    pc_sysread_close(&c.sys);
    pc_hostload_close(&c.load);
    if (c.mem.statm >= 0)              /* (its load and readers were never opened) */
        close(c.mem.statm);
    return 0;
}

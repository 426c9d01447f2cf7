/*
 * timeline_bench - the Timeline pane's span loader (prism/timeline.h) on a
 * big profile written by the collector: 200 steps of 50 000 regions each
 * by default (the first argument sets the regions per step), 20 M events.
 * Prints: the analysis' one pass for comparison, the first window (the
 * chunk index is built then), a step's window through the index (mean of
 * 20 steps) and its bytes, the same step read whole, a cached load, and
 * the peak RSS.  The file is written under the build directory and
 * deleted.  Prints figures; never fails on time.
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/analysis.h"
#include "prism/collect.h"
#include "prism/timeline.h"

static double ms_since(uint64_t t0) { return (double)(bench_now_ns() - t0) / 1e6; }

int main(int argc, char **argv)
{
    int per = argc > 1 ? atoi(argv[1]) : 50000, steps = 200;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", argv[0]);
    snprintf(path, sizeof path, "%s/timeline_bench.cbor", dirname(dir));
    prism_config c;
    prism_config_default(&c);
    c.output = path;
    if (per < 1 || prism_init(&c) != 0) {
        fprintf(stderr, "timeline_bench: cannot start the collector on %s\n", path);
        return 1;
    }
    uint32_t work = prism_name("work"), a = prism_name("op_a"), b = prism_name("op_b");
    for (int s = 0; s < steps; s++) {
        prism_step_begin();
        prism_push_id(work);
        for (int i = 0; i < per; i++) {
            prism_push_id(i % 2 ? a : b);
            prism_pop();
        }
        prism_pop();
        prism_step_end();
    }
    prism_shutdown();
    struct stat sb;
    if (stat(path, &sb) != 0)
        return 1;

    prism_status err;
    char msg[256];
    uint64_t off, t0 = bench_now_ns();
    prism_analysis *an = prism_analyze_file(path, NULL, &err, msg, sizeof msg, &off);
    if (!an) {
        fprintf(stderr, "timeline_bench: %s\n", msg);
        return 1;
    }
    double t_an = ms_since(t0);
    const prism_step_stats *ss = prism_analysis_steps(an);
    printf("profile: %.1f MB, %llu events, %zu steps\n", (double)sb.st_size / 1048576.0,
           (unsigned long long)prism_analysis_events(an), ss->nseries);
    printf("analysis, one pass:            %8.1f ms\n", t_an);
    prism_timeline *t = prism_timeline_new(0);
    size_t k = ss->nseries / 2;
    t0 = bench_now_ns();
    prism_timeline_load(t, path, ss->series[k].start, ss->series[k].end);
    printf("first window (builds index):   %8.1f ms\n", ms_since(t0));
    const prism_lane *l = prism_timeline_lane(t, 0);
    if (l)
        printf("  lane 0: %zu spans kept, %llu merged into aggregates\n", l->nspans,
               (unsigned long long)l->merged);
    t0 = bench_now_ns();
    size_t n = ss->nseries < 20 ? ss->nseries : 20;
    for (size_t i = 0; i < n; i++)
        prism_timeline_load(t, path, ss->series[i].start, ss->series[i].end);
    printf("a step through the index:      %8.2f ms (mean of %zu), %llu bytes read\n",
           ms_since(t0) / (double)n, n, (unsigned long long)prism_timeline_bytes_read(t));
    t0 = bench_now_ns();
    prism_timeline_load(t, path, ss->series[n - 1].start, ss->series[n - 1].end);
    printf("the same step again (cached):  %8.3f ms\n", ms_since(t0));
    prism_timeline_use_index(t, false);
    t0 = bench_now_ns();
    prism_timeline_load(t, path, ss->series[k].start, ss->series[k].end);
    printf("a step read whole (no index):  %8.1f ms, %llu bytes read\n", ms_since(t0),
           (unsigned long long)prism_timeline_bytes_read(t));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS (analysis + timeline): %ld KB\n", ru.ru_maxrss);
    prism_timeline_free(t);
    prism_analysis_free(an);
    unlink(path);
    return 0;
}

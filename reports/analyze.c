/*
 * analyze.c - the profile report (`prism-top analyze FILE`).  The text form
 * follows the reference report (banner, summary, top operations,
 * bottlenecks) and adds the GPU and file-health sections; the JSON form is
 * written by analyze_json.c (schema in docs/JSON.md).
 *
 * Only figures taken from the file appear in the report: nothing depends on
 * the host it is run on or the time it is run, so a report is reproducible.
 */
#include <inttypes.h>
#include <time.h>

#include "escape.h"
#include "units.h"
#include "report.h"
#include "verdict.h"
#include "prism/import.h"

#define RULE "============================================================\n"
#define TOP_OPS 10
#define TOP_KERNELS 5

/* ---- summary ---- */

static void header_lines(FILE *f, const prism_header *h)
{
    if (!h)
        return;
    fputs("  Producer: ", f);
    esc_fputs(h->producer ? h->producer : "?", f);
    fputs("\n  Host: ", f);
    esc_fputs(h->host ? h->host : "?", f);
    fprintf(f, ", pid %" PRIu64, h->pid);
    if (h->rank >= 0)
        fprintf(f, ", rank %" PRId64, h->rank);
    fputc('\n', f);
    if (h->argc) {
        fputs("  Command:", f);
        for (size_t i = 0; i < h->argc; i++) {
            fputc(' ', f);
            esc_fputs(h->argv[i], f);
        }
        fputc('\n', f);
    }
    time_t secs = (time_t)(h->start_unix_ns / 1000000000u);
    struct tm tm;
    char when[64];
    if (h->start_unix_ns && gmtime_r(&secs, &tm) &&
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm))
        fprintf(f, "  Started: %s\n", when);
}

/* One rank of a larger job: the single-rank report says so. */
static void job_line(FILE *f, const prism_analysis *a)
{
    int64_t rank;
    uint64_t world;
    if (!prism_analysis_job_rank(a, &rank, &world))
        return;
    fputs("  Job: ", f);
    if (rank >= 0)
        fprintf(f, "rank %" PRId64, rank);
    else
        fputs("one rank", f);
    if (world)
        fprintf(f, " of %" PRIu64 " ranks", world);
    else
        fputs(" of a distributed job", f);
    fputs(": this report sees this rank alone; its waits in collectives are\n"
          "       the others' lateness: analyze every rank's profile together (prism-top\n"
          "       analyze DIR) for the job's straggler\n", f);
}

/* File health: a missing footer, damage, a torn tail. */
static void status_lines(FILE *f, const prism_analysis *a)
{
    const prism_reader_stats *s = prism_analysis_reader_stats(a);
    char st[PRISM_IMPORT_NOTE];         /* a trace has no footer: its own words */
    if (prism_import_status(prism_analysis_header(a), prism_analysis_complete(a), st,
                            sizeof st)) {
        char *more = prism_analysis_complete(a) ? NULL : strstr(st, " (");
        if (more)                       /* the why on a line of its own */
            *more++ = '\0';
        fprintf(f, "  Status: %s%s\n", prism_analysis_complete(a) ? "" : "INCOMPLETE - ", st);
        if (more)
            fprintf(f, "          %s\n", more);
    } else if (prism_analysis_complete(a))
        fputs("  Status: complete (footer present)\n", f);
    else
        fputs("  Status: INCOMPLETE - no footer: the profile is still being written or its\n"
              "          writer died; the figures cover what was read\n", f);
    char notes[16][PRISM_IMPORT_NOTE];         /* a torch.profiler trace: what was repaired */
    size_t nnotes = prism_import_notes(prism_analysis_header(a), notes, 16);
    for (size_t i = 0; i < nnotes; i++) {
        fprintf(f, "  %s ", i ? "       " : "Import:");
        esc_fputs(notes[i], f);
        fputc('\n', f);
    }
    if (!s)
        return;
    if (s->damaged || s->malformed || s->seq_gaps)
        fprintf(f, "  Damage: %" PRIu64 " damaged run(s) (%" PRIu64 " bytes skipped), %" PRIu64
                " malformed chunk(s),\n          %" PRIu64 " chunk(s) missing by sequence;"
                " the figures leave them out\n", s->damaged, s->skipped_bytes, s->malformed,
                s->seq_gaps);
    if (s->torn_bytes)
        fprintf(f, "  Torn tail: %" PRIu64 " bytes of an incomplete last chunk\n", s->torn_bytes);
    if (s->unknown)
        fprintf(f, "  Skipped: %" PRIu64 " chunk(s) of a kind this version does not know\n",
                s->unknown);
}

/* One memory series: "    host RSS: LEAK (steady, significant rise): +2.00+-0.01
 * MB/step  +998.0 MB (+97.5%) over 499 steps; r2 1.00, 500 points; ..." */
static void fit_line(FILE *f, const char *what, const prism_leak *l)
{
    if (!l->have_fit) {
        fprintf(f, "    %s: too few step samples to fit (%zu)\n", what, l->points);
        return;
    }
    char facts[160], fit[64], out[96];
    verdict_facts(facts, sizeof facts, l, false);
    verdict_fit(fit, sizeof fit, l);
    verdict_outlook(out, sizeof out, l);
    fprintf(f, "    %s: %s (%s): %s; %s; %s\n", what, verdict_word(l, NULL),
            l->reason ? l->reason : "?", facts, fit, out);
}

static void memory_lines(FILE *f, const prism_memory_stats *m)
{
    if (!m->count) {
        fputs("  Memory: no samples\n", f);
        if (!m->have_gpu_alloc)
            return;
    }
    char b1[32], b2[32];
    fmt_bytes(b1, sizeof b1, (double)m->peak_rss);
    const char *host = prism_memory_host_name(m, false);
    if (m->count)
        fprintf(f, "  %s: %s\n", prism_memory_host_name(m, true), b1);
    if (m->have_gpu) {
        fmt_bytes(b1, sizeof b1, (double)m->peak_gpu_used);
        fmt_bytes(b2, sizeof b2, (double)m->peak_gpu_reserved);
        fprintf(f, "  Peak GPU memory: %s used, %s reserved\n", b1, b2);
    }
    const char *what = NULL;
    const prism_leak *g = prism_memory_gpu_leak(m, &what);
    bool hl = m->host.leak, gl = g && g->leak;
    bool hg = m->host.verdict == PRISM_LEAK_GROWING, gg = g && g->verdict == PRISM_LEAK_GROWING;
    if (hl || gl)
        fprintf(f, "  Memory leak: DETECTED (%s%s%s)\n", hl ? host : "",
                hl && gl ? ", " : "", gl ? what : "");
    else if (hg || gg)
        fprintf(f, "  Memory leak: not proven (%s%s%s growing)\n", hg ? host : "",
                hg && gg ? ", " : "", gg ? what : "");
    else
        fputs("  Memory leak: none\n", f);
    if (m->count)
        fit_line(f, host, &m->host);
    if (m->have_gpu_alloc)      /* live bytes of the CUDA allocations at step ends */
        fit_line(f, "GPU allocations", &m->gpu_alloc);
    if (m->have_gpu)
        fit_line(f, "GPU used", &m->gpu);
}

/* "a, b" of two byte figures, or "unknown". */
static void two_bytes(char *buf, size_t cap, const char *x, uint64_t a, const char *y, uint64_t b)
{
    char b1[32], b2[32];
    if (a == PRISM_NO_VALUE || b == PRISM_NO_VALUE) {
        snprintf(buf, cap, "unknown");
        return;
    }
    fmt_bytes(b1, sizeof b1, (double)a);
    fmt_bytes(b2, sizeof b2, (double)b);
    snprintf(buf, cap, "%s %s, %s %s", b1, x, b2, y);
}

/* The system readings (format 1.3): nothing for an older profile. */
static void system_lines(FILE *f, const prism_system_stats *s)
{
    if (!s->count)
        return;
    char buf[128], b1[32];
    fprintf(f, "  System (%zu readings over %.2f s):\n", s->count, (double)s->span_ns / 1e9);
    two_bytes(buf, sizeof buf, "read", s->io_read_bytes, "written", s->io_write_bytes);
    fprintf(f, "    disk I/O (process and workers): %s", buf);
    if (s->step_io_read_bytes >= 0) {
        fmt_bytes(b1, sizeof b1, s->step_io_read_bytes);
        fprintf(f, "; %s read per step", b1);
    }
    fputc('\n', f);
    two_bytes(buf, sizeof buf, "received", s->net_rx_bytes, "sent", s->net_tx_bytes);
    fprintf(f, "    network (the machine's interfaces): %s\n", buf);
    if (s->cpu_user_pct >= 0)
        fprintf(f, "    process CPU: %.1f %% user, %.1f %% system (100 %% = one core)\n",
                s->cpu_user_pct, s->cpu_sys_pct);
    if (s->mem_peak_pct >= 0) {
        fmt_bytes(b1, sizeof b1, (double)s->mem_total);
        fprintf(f, "    memory: peak %.1f %%, mean %.1f %% of %s\n", s->mem_peak_pct,
                s->mem_mean_pct, b1);
    }
    if (s->gpu_util_pct >= 0)
        fprintf(f, "    GPU utilisation: %.0f %% (mean of NVML's readings)\n", s->gpu_util_pct);
    bool ce = s->cpu_energy_uj != PRISM_NO_VALUE, ge = s->gpu_energy_mj != PRISM_NO_VALUE;
    if (ce || ge) {
        fputs("    energy:", f);
        if (ce)
            fprintf(f, " CPU packages %.1f J", (double)s->cpu_energy_uj / 1e6);
        if (ge)
            fprintf(f, "%s GPUs %.1f J", ce ? "," : "", (double)s->gpu_energy_mj / 1e3);
        if (s->step_energy_j >= 0)
            fprintf(f, "; %.3f J per step", s->step_energy_j);
        fputc('\n', f);
        if (s->carbon_g >= 0)
            fprintf(f, "    carbon: %.3g g CO2e (%.1f J at the %g g/kWh given)\n", s->carbon_g,
                    s->energy_j, s->carbon_g_per_kwh);
    } else {
        fputs("    energy: not readable here (RAPL needs /sys/class/powercap, GPUs NVML)\n", f);
        if (s->carbon_g_per_kwh > 0)
            fputs("    carbon: unknown (no energy was measured)\n", f);
    }
}

/* The threads that lost the most regions, at most four. */
static void dropped_by_thread(FILE *f, const prism_analysis *a)
{
    size_t top[4], ntop = 0, n = prism_analysis_thread_count(a);
    uint64_t val[4];
    for (size_t i = 0; i < n; i++) {
        uint32_t stream = 0;
        prism_analysis_thread_tree(a, i, &stream, NULL);
        uint64_t v = prism_analysis_thread_dropped_regions(a, stream);
        if (!v || (ntop == 4 && v <= val[3]))
            continue;
        size_t k = ntop < 4 ? ntop++ : 3;   /* full: the last one goes */
        for (; k > 0 && val[k - 1] < v; k--) {
            top[k] = top[k - 1];
            val[k] = val[k - 1];
        }
        top[k] = i;
        val[k] = v;
    }
    if (ntop < 2)
        return;
    fputs("    by thread:", f);
    for (size_t j = 0; j < ntop; j++) {
        const char *name = NULL;
        prism_analysis_thread_tree(a, top[j], NULL, &name);
        fprintf(f, "%s ", j ? "," : "");
        esc_fputs(name ? name : "?", f);
        fprintf(f, " %" PRIu64, val[j]);
    }
    fputc('\n', f);
}

/* A sum the analysis saturated at 2^64-1 ns is no figure (issue 16). */
static void total_line(FILE *f, uint64_t ns, const char *what)
{
    char b[48];
    if (ns == UINT64_MAX)
        fprintf(f, "  Total time: saturated (> 584 years, %s)\n", what);
    else
        fprintf(f, "  Total time: %s (%s)\n", report_ns(b, sizeof b, (double)ns, 0), what);
}

/* prism.torch's adaptive module regions: how many modules lost their
 * regions after which step, and which (the first ones, one line). */
static void folded_line(FILE *f, const prism_analysis *a)
{
    prism_folded fo;
    if (!prism_analysis_folded(a, &fo))
        return;
    if (!fo.folded && fo.why[0]) {
        fputs("  Modules folded: none (", f);
        esc_fputs(fo.why, f);
        fputs(")\n", f);
        return;
    }
    char b1[32], b2[32], when[48];
    const prism_step_stats *st = prism_analysis_steps(a);
    if (st && st->count)
        snprintf(when, sizeof when, "after step %" PRIu64, fo.after_steps);
    else                        /* decided after root forwards, no steps */
        snprintf(when, sizeof when, "after their first calls");
    fprintf(f, "  Modules folded: %" PRIu64 " of %" PRIu64 " module regions %s"
            " (a forward under %s a call, %" PRIu64 " x PRISM's %s); from then on their time is"
            " their parents' self time (PRISM_TORCH_MODULES=all keeps them)\n",
            fo.folded, fo.folded + fo.kept, when,
            report_ns(b1, sizeof b1, (double)fo.threshold_ns, 0),
            fo.cost_ns ? (fo.threshold_ns + fo.cost_ns / 2) / fo.cost_ns : 0,
            report_ns(b2, sizeof b2, (double)fo.cost_ns, 0));
    if (fo.names[0]) {
        /* the first names of the list (", " between them; up to 4000
         * bytes), each whole: the list ends after the name that passes
         * 300 bytes */
        const char *p = fo.names, *sep;
        uint64_t shown = 0;
        fputs("    folded: ", f);
        for (;;) {
            sep = strstr(p, ", ");
            size_t len = sep ? (size_t)(sep - p) : strlen(p);
            char name[PRISM_MAX_STRING_BYTES + 1];
            memcpy(name, p, len);
            name[len] = '\0';
            fputs(shown ? ", " : "", f);
            esc_fputs(name, f);
            shown++;
            if (!sep)
                break;
            p = sep + 2;
            if ((size_t)(p - fo.names) > 300) {
                if (fo.folded > shown)
                    fprintf(f, ", ... (%" PRIu64 " more)", fo.folded - shown);
                else
                    fputs(", ...", f);
                break;
            }
        }
        fputc('\n', f);
    }
}

/* How much of the wall span the steps cover, and what holds the rest. */
static void outside_lines(FILE *f, const prism_analysis *a)
{
    prism_outside o;
    char b1[48], b2[48], b3[48];
    if (!prism_analysis_outside(a, &o) || !o.span_ns) {
        /* no steps: no coverage, but the folded modules still want saying
         * (a layer with a third of its siblings' calls read as "it ran
         * less") */
        folded_line(f, a);
        return;
    }
    fprintf(f, "  Steps cover: %.1f%% of the wall span (before the first %s, between steps %s, "
            "after the last %s)\n", 100.0 * (double)o.steps_ns / (double)o.span_ns,
            report_ns(b1, sizeof b1, (double)o.before_ns, 0),
            report_ns(b2, sizeof b2, (double)o.between_ns, 0),
            report_ns(b3, sizeof b3, (double)o.after_ns, 0));
    if (o.nregions) {
        fputs("  Outside steps:", f);
        for (size_t i = 0; i < o.nregions; i++) {
            fprintf(f, "%s '", i ? "," : "");
            esc_fputs(o.regions[i].name ? o.regions[i].name : "?", f);
            fprintf(f, "' %s", report_ns(b1, sizeof b1, (double)o.regions[i].ns, 0));
        }
        fputc('\n', f);
    }
    if (o.eval_passes) {
        uint64_t ev = 0;                /* the eval region's own figure */
        for (size_t i = 0; i < o.nregions; i++)
            if (o.regions[i].name && !strcmp(o.regions[i].name, "eval"))
                ev = o.regions[i].ns;
        fprintf(f, "  Eval passes: %" PRIu64 ", %s from each one's first forward or batch to "
                "the end of its last", o.eval_passes,
                report_ns(b1, sizeof b1, (double)o.eval_span_ns, 0));
        if (ev)
            fprintf(f, " ('eval' holds their forwards, batches and sync calls, %s; the rest is "
                    "the program's own code between them)", report_ns(b2, sizeof b2, (double)ev, 0));
        fputc('\n', f);
    }
    if (o.sampled[0]) {
        fprintf(f, "  Sampled outside steps (%s): ",
                report_ns(b1, sizeof b1, o.sampled_ns, 0));
        esc_fputs(o.sampled, f);
        fputc('\n', f);
    }
    prism_stacks_info si;
    if (prism_analysis_stacks_info(a, &si)) {
        fprintf(f, "  Stack samples: %llu (", (unsigned long long)si.samples);
        esc_fputs(si.status && si.status[0] ? si.status : "sampler state unknown", f);
        fputs(")\n", f);
    }
    folded_line(f, a);
}

/* Who used the CPUs, in cores: where the file has CPU samples or the
 * machine's load (a file with neither gets no line). */
/* The DataLoader's worker processes, when their files were merged. */
static void workers_line(FILE *f, const prism_analysis *a)
{
    const prism_worker_stats *w = prism_analysis_workers(a);
    const prism_reader_stats *rs = prism_analysis_reader_stats(a);
    char s1[48];
    if (w->workers) {
        fprintf(f, "  Workers: %u DataLoader worker%s (%u process%s, %u thread%s)", w->workers,
                w->workers == 1 ? "" : "s", w->processes, w->processes == 1 ? "" : "es",
                w->threads, w->threads == 1 ? "" : "s");
        if (w->batches)
            fprintf(f, ": %" PRIu64 " batches, %s each", w->batches,
                    report_ns(s1, sizeof s1, w->batch_ns, 0));
        if (w->busy >= 0)
            fprintf(f, ", busy %.0f%%", 100.0 * w->busy);
        fputc('\n', f);
    }
    if (rs && rs->workers_damaged)
        fprintf(f, "  Worker files damaged: %u (what they held is read)\n", rs->workers_damaged);
    if (rs && rs->workers_other)
        fprintf(f, "  Worker files of another run: %u (left out)\n", rs->workers_other);
    if (rs && rs->workers_left)
        fprintf(f, "  Worker files past the first 65536: %u (not read)\n", rs->workers_left);
}

static void cpu_load_line(FILE *f, const prism_cpu_load *l)
{
    if (l->process < 0 || (l->machine < 0 && l->training < 0))
        return;
    fputs("  CPU load (cores): ", f);
    if (l->machine >= 0)
        fprintf(f, "machine %.1f of %u; ", l->machine, l->ncpu);
    fprintf(f, "this process %.1f", l->process);
    if (l->training >= 0)
        fprintf(f, " (training thread %.1f, other threads %.1f, unrecorded threads %.1f)",
                l->training, l->other_threads, l->unrecorded >= 0 ? l->unrecorded : 0);
    if (l->machine >= 0)
        fprintf(f, "; its worker processes %.1f; other processes %.1f\n", l->workers, l->others);
    else
        fputs("; worker processes and the rest of the machine: not recorded\n", f);
}

void analyze_write_summary(FILE *f, const char *path, const prism_analysis *a)
{
    const prism_step_stats *st = prism_analysis_steps(a);
    const prism_tree *t = prism_analysis_tree(a);
    fputs("  File: ", f);
    esc_fputs(path, f);
    fputc('\n', f);
    header_lines(f, prism_analysis_header(a));
    job_line(f, a);
    status_lines(f, a);
    if (st->count) {
        if (st->op_steps)
            fprintf(f, "  Steps: %" PRIu64 " (%" PRIu64 " sampled; %" PRIu64 " in the operator "
                    "window, left out of the step times)\n", st->count, st->sampled, st->op_steps);
        else
            fprintf(f, "  Steps: %" PRIu64 " (%" PRIu64 " sampled)\n", st->count, st->sampled);
        if (prism_analysis_torch_inference(a))
            fputs("  Steps are an inference loop's iterations: no optimizer, nothing trained "
                  "(prism.torch began one at each batch or forward of the model)\n", f);
        uint64_t nopt = prism_analysis_torch_optimizers(a);
        if (nopt > 1)
            fprintf(f, "  Optimizers: %" PRIu64 " stepped; each optimizer step ends a step, so an "
                    "iteration that steps several is several steps\n", nopt);
        char bad[4][VERDICT_LINE];
        int nbad = verdict_step_problems(st, bad, 4);
        for (int i = 0; i < nbad; i++)
            fprintf(f, "  Step problem: %s\n", bad[i]);
        total_line(f, st->total_ns, "sum of step durations");
        char b1[48], b2[48], b3[48], b4[48];
        fprintf(f, "  Step time: mean %s, p50 %s, p95 %s, max %s\n",
                report_ns(b1, sizeof b1, st->mean_ns, 0), report_ns(b2, sizeof b2, st->p50_ns, 0),
                report_ns(b3, sizeof b3, st->p95_ns, 0), report_ns(b4, sizeof b4, st->max_ns, 0));
    } else {
        fputs("  Steps: none recorded\n", f);
        total_line(f, t->total_ns, "recorded regions, all threads");
    }
    char b1[48], b2[48];
    fprintf(f, "  Wall span: %s\n",
            report_ns(b1, sizeof b1, (double)prism_analysis_span_ns(a), 0));
    outside_lines(f, a);
    fprintf(f, "  Events: %s (%s dropped)\n",
            report_count(b1, sizeof b1, (double)prism_analysis_events(a), 0),
            report_count(b2, sizeof b2, (double)prism_analysis_dropped(a), 0));
    uint64_t deep = prism_analysis_too_deep(a);
    if (deep)
        fprintf(f, "  Nested too deep: %" PRIu64 " regions below level %u, counted in the time "
                "of their ancestor at that level (the call tree stops there)\n", deep,
                PRISM_ANALYSIS_MAX_DEPTH);
    bool whole;
    uint64_t placed, regions = prism_analysis_dropped_regions(a, &whole, &placed);
    if (regions && whole) {
        fprintf(f, "  Not recorded: %" PRIu64 " whole regions (%" PRIu64 " counted under their "
                "parent); the call tree is intact\n", regions, placed);
        dropped_by_thread(f, a);
    }
    else if (prism_analysis_dropped(a) && !whole)
        fputs("  Not recorded: single events (a writer before format 1.1); the nesting after "
              "a drop may be wrong\n", f);
    fprintf(f, "  Threads: %zu\n", prism_analysis_thread_count(a));
    workers_line(f, a);
    cpu_load_line(f, prism_analysis_cpu_load(a));
    memory_lines(f, prism_analysis_memory(a));
    system_lines(f, prism_analysis_system(a));
    const prism_work_stats *wk = prism_analysis_work(a);
    if (wk->present) {
        fprintf(f, "  Compute intensity: ");
        if (wk->bytes > 0)
            fprintf(f, "%.2f FLOP/byte", wk->intensity);
        else
            fprintf(f, "unknown (no bytes counter)");
        fprintf(f, " (%.3g GFLOP, %.3g GB from work counters; ridge %g)\n", wk->flops / 1e9,
                wk->bytes / 1e9, wk->ridge);
    }
}

/* ---- operations and bottlenecks ---- */

/* The first columns of the operation and kernel tables ("  12  "), and the
 * name column they start from. */
#define ROW_LEAD 7
#define NAME_COL 32

static void top_ops(FILE *f, const prism_analysis *a, int width)
{
    size_t n;
    const prism_op *ops = prism_analysis_ops(a, &n);
    fputs("Top Operations:\n", f);
    if (!n || !ops) {
        fputs("  none (no regions recorded)\n", f);
        return;
    }
    /* total, calls, share and self after the name: 44 columns */
    int col = NAME_COL, room = width - ROW_LEAD - 44;
    for (size_t i = 0; i < n && i < TOP_OPS; i++)
        col = report_widen(col, room, report_cols(ops[i].name));
    char tot[48], calls[32], self[48];
    fprintf(f, "  %3s  %-*s %12s %10s %7s %11s\n", "#", col, "operation", "total", "calls",
            "share", "self");
    for (size_t i = 0; i < n && i < TOP_OPS; i++) {
        fprintf(f, "  %3zu  ", i + 1);
        report_cell(f, ops[i].name, ROW_LEAD, col);
        fprintf(f, " %s %s %6.1f%% %s\n",
                report_ns(tot, sizeof tot, (double)ops[i].total_ns, 12),
                report_count(calls, sizeof calls, (double)ops[i].calls, 10),
                ops[i].share * 100, report_ns(self, sizeof self, (double)ops[i].self_ns, 11));
    }
    fprintf(f, "  (%zu operation%s; shares of %s recorded region time, all threads)\n", n,
            n == 1 ? "" : "s",
            report_ns(tot, sizeof tot, (double)prism_analysis_tree(a)->total_ns, 0));
}

static void bottlenecks(FILE *f, const prism_analysis *a)
{
    size_t n;
    const prism_bottleneck *b = prism_analysis_bottlenecks(a, &n);
    const prism_tree *t = prism_analysis_tree(a);
    pb_buf path = { 0 };
    fputs("Bottlenecks Detected:\n", f);
    uint64_t nsteps;
    double denom = prism_analysis_step_denominator(a, &nsteps);
    size_t ti = prism_analysis_training_thread(a);
    const char *tname = NULL;
    if (ti != SIZE_MAX)
        prism_analysis_thread_tree(a, ti, NULL, &tname);
    char dn[32];
    fmt_ns(dn, sizeof dn, denom);
    if (nsteps) {
        fprintf(f, "  (shares are of step time: %llu sampled steps, %s",
                (unsigned long long)nsteps, dn);
        if (tname) {            /* a name from the profile */
            fputs(", training thread '", f);
            esc_fputs(tname, f);
            fputc('\'', f);
        }
        fputs("; ", f);
    } else {
        fprintf(f, "  (shares are of run time: %s, no steps; ", dn);
    }
    fputs(prism_analysis_cpu_present(a) ? "wait vs work measured from CPU samples)\n"
                                        : "no CPU samples: waits judged by region names)\n",
          f);
    if (!n || !b)
        fputs("  none\n", f);
    for (size_t i = 0; b && i < n; i++) {
        fprintf(f, "  [%s] %s: ", prism_severity_name(b[i].severity),
                prism_bottleneck_name(b[i].type));
        esc_fputs(b[i].description, f);         /* these quote region names */
        fputc('\n', f);
        if (b[i].node != PRISM_NO_NODE && b[i].node < t->count) {
            report_path(t, b[i].node, '/', false, &path);
            fputs("    Region: ", f);
            esc_fputs(pb_buf_str(&path), f);
            fputc('\n', f);
        }
        if (b[i].evidence[0]) {
            fputs("    Evidence: ", f);
            esc_fputs(b[i].evidence, f);
            fputc('\n', f);
        }
        if (b[i].inside[0]) {
            fputs("    Inside: ", f);
            esc_fputs(b[i].inside, f);
            fputc('\n', f);
        }
        if (b[i].step_without_ns > 0) {
            char s1[48], s2[48];
            fprintf(f, "    Worth: the step %s -> %s if the wait were zero (x%.2f steps/s)",
                    report_ns(s1, sizeof s1, b[i].step_ns, 0),
                    report_ns(s2, sizeof s2, b[i].step_without_ns, 0),
                    b[i].step_ns / b[i].step_without_ns);
            if (b[i].workers_to)
                fprintf(f, "; with %u workers (now %u) %s (x%.2f)", b[i].workers_to,
                        b[i].workers_now, report_ns(s2, sizeof s2, b[i].step_with_workers_ns, 0),
                        b[i].step_ns / b[i].step_with_workers_ns);
            fputc('\n', f);
        }
        if (b[i].recommendation[0]) {
            fputs("    Fix: ", f);
            esc_fputs(b[i].recommendation, f);
            fputc('\n', f);
        }
    }
    pb_buf_free(&path);
}

/* ---- GPU ---- */

/* The five heaviest kernels. */
static void kernel_table(FILE *f, const prism_gpu_stats *g, int width)
{
    size_t n = g->nkernels < TOP_KERNELS ? g->nkernels : TOP_KERNELS;
    bool comm = false;
    for (size_t i = 0; i < n; i++)
        comm |= g->kernels[i].comm;
    /* total, count, mean and share after the name: 44 columns; "  comm" */
    int col = NAME_COL, room = width - ROW_LEAD - 44 - (comm ? 6 : 0);
    char sym[REPORT_SYMBOL_MAX + 1];
    for (size_t i = 0; i < n; i++) {
        const char *name = report_symbol(g->kernels[i].name, sym, sizeof sym);
        col = report_widen(col, room, report_cols(name ? name : "?"));
    }
    char b1[48], b2[48], b3[48];
    fprintf(f, "  %3s  %-*s %12s %10s %11s %7s\n", "#", col, "kernel", "total", "count",
            "mean", "share");
    for (size_t i = 0; i < n; i++) {
        const prism_kernel_stat *k = &g->kernels[i];
        fprintf(f, "  %3zu  ", i + 1);
        const char *name = report_symbol(k->name, sym, sizeof sym);
        report_cell(f, name ? name : "?", ROW_LEAD, col);
        fprintf(f, " %s %s %s %6.1f%%%s\n",
                report_ns(b1, sizeof b1, (double)k->total_ns, 12),
                report_count(b2, sizeof b2, (double)k->count, 10),
                report_ns(b3, sizeof b3, k->mean_ns, 11), k->share * 100,
                k->comm ? "  comm" : "");
    }
    if (g->nkernels > TOP_KERNELS)
        fprintf(f, "  (%zu kernels in all)\n", g->nkernels);
}

static void gpu(FILE *f, const prism_analysis *a, int width)
{
    const prism_gpu_stats *g = prism_analysis_gpu(a);
    fputs("GPU:\n", f);
    if (!g->present) {
        if (g->status && g->status[0]) {
            fputs("  no GPU data (gpu.status: ", f);
            esc_fputs(g->status, f);
            fputs(")\n", f);
        } else {
            fputs("  no GPU data in this profile\n", f);
        }
        return;
    }
    if (g->status && g->status[0]) {
        fputs("  Status: ", f);
        esc_fputs(g->status, f);
        fputc('\n', f);
    }
    char b1[48], b2[48], b3[48], b4[48];
    fprintf(f, "  Kernels: %s launches, %s total, %s shorter than %s\n",
            report_count(b1, sizeof b1, (double)g->launches, 0),
            report_ns(b2, sizeof b2, (double)g->kernel_ns, 0),
            report_count(b3, sizeof b3, (double)g->small_kernels, 0),
            report_ns(b4, sizeof b4, 10000, 0));
    if (g->comm_launches)
        fprintf(f, "  Of which communication (NCCL): %s launches, %s (%.1f%% of kernel time); "
                "compute %s\n",
                report_count(b1, sizeof b1, (double)g->comm_launches, 0),
                report_ns(b2, sizeof b2, (double)g->comm_kernel_ns, 0),
                g->kernel_ns ? 100.0 * (double)g->comm_kernel_ns / (double)g->kernel_ns : 0.0,
                report_ns(b3, sizeof b3, (double)(g->kernel_ns - g->comm_kernel_ns), 0));
    if (g->nkernels)
        kernel_table(f, g, width);
    if (g->ncopies) {
        fputs("  Transfers:\n", f);
        for (size_t i = 0; i < g->ncopies; i++) {
            const prism_copy_stat *c = &g->copies[i];
            char sz[32];
            fmt_bytes(sz, sizeof sz, (double)c->bytes);
            fprintf(f, "    %-4s from %-8s %s copies %12s %s %10.2f GB/s\n",
                    report_copy_kind(c->copy_kind), report_mem_kind(c->src_kind),
                    report_count(b1, sizeof b1, (double)c->count, 8), sz,
                    report_ns(b2, sizeof b2, (double)c->total_ns, 12), c->gb_per_s);
        }
    }
    fprintf(f, "  Memset %s, synchronization %s, runtime API %s\n",
            report_ns(b1, sizeof b1, (double)g->memset_ns, 0),
            report_ns(b2, sizeof b2, (double)g->sync_ns, 0),
            report_ns(b3, sizeof b3, (double)g->api_ns, 0));
    fprintf(f, "  Busy: %s of a %s span (idle %.1f%%)\n",
            report_ns(b1, sizeof b1, (double)g->busy_ns, 0),
            report_ns(b2, sizeof b2, (double)g->span_ns, 0), g->idle_share * 100);
    if (g->dropped)
        fprintf(f, "  Dropped GPU records: %s\n",
                report_count(b1, sizeof b1, (double)g->dropped, 0));
}

void analyze_write_txt(FILE *f, const char *path, const prism_analysis *a)
{
    int width = report_width(f);
    fputs(RULE "PRISM Training Profile Report\n" RULE "\n", f);
    fputs("Summary:\n", f);
    analyze_write_summary(f, path, a);
    fputc('\n', f);
    top_ops(f, a, width);
    fputc('\n', f);
    analyze_ops_txt(f, a);
    bottlenecks(f, a);
    fputc('\n', f);
    gpu(f, a, width);
    fputs("\n" RULE, f);
}

int rp_analyze_file(const char *path, const char *output, int format,
                    const prism_analysis_opts *opts, FILE *out)
{
    prism_analysis *a = report_load(path, opts);
    if (!a)
        return EXIT_BADINPUT;
    outfile o;
    if (outfile_open(&o, output, out)) {
        prism_analysis_free(a);
        return EXIT_BADINPUT;
    }
    bool ok = true;
    if (format == RP_JSON) {
        ok = analyze_write_json(o.f, path, a);
    } else if (format == RP_HTML) {
        ok = analyze_write_html(o.f, path, a);
    } else {
        report_units_for(o.f);
        analyze_write_txt(o.f, path, a);
    }
    if (!ok)
        fprintf(stderr, "prism-top: %s: internal error writing %s (or out of memory)\n", path,
                format == RP_HTML ? "HTML" : "JSON");
    int rc = outfile_close(&o, ok);
    prism_analysis_free(a);
    return rc;
}

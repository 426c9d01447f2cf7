/*
 * analyze_job.c - `prism-top analyze FILE...` for a distributed job (two or
 * more rank files, or a directory): the files read on a pool of threads
 * behind a progress line, then the job report as text (here) or JSON
 * (analyze_job_json.c).
 *
 * The text report answers, in order: how many ranks and steps, which files
 * could not be read, how long the job's step is (the slowest rank sets it),
 * how far apart the ranks are, each rank's figures, then the stragglers
 * with their evidence: the steps they slowed, the region that makes the
 * difference and what the others did meanwhile (waiting, not working).
 * Only figures from the files appear: a report is reproducible.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ropen.h"
#include "reports.h"
#include "escape.h"
#include "report.h"
#include "units.h"

#define RULE "============================================================\n"
#define TABLE_ALL 64       /* more ranks: the slowest and fastest only    */
#define TABLE_SLOW 16
#define TABLE_FAST 8
#define LIST_STEPS 8       /* slowed steps named per straggler            */
#define MORE_DELTAS 4      /* deltas shown beside the cause               */

bool job_args_are_job(const char *const *args, size_t n)
{
    if (n >= 2)
        return true;
    struct stat st;
    if (n != 1 || stat(args[0], &st) != 0)
        return false;
    if (S_ISDIR(st.st_mode))
        return true;
    /* one rank summary: a job of one rank (it is no profile) */
    uint8_t head[256];
    FILE *f = S_ISREG(st.st_mode) ? pb_fopen_read(args[0]) : NULL;
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    return prism_rank_summary_probe(head, got);
}

/* The header rank of a PRISM profile from its first 64 KiB; -1 when it
 * has none or is no profile (a trace's rank needs the whole trace). */
static int64_t header_rank(const char *path)
{
    const size_t cap = PRISM_MAX_HEADER_BYTES + 64;
    int64_t rank = -1;
    prism_reader_callbacks cb = { 0 };
    struct stat sb;                     /* a FIFO would block the open */
    uint8_t *buf = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? malloc(cap) : NULL;
    FILE *f = buf ? pb_fopen_read(path) : NULL;
    prism_reader *r = f ? prism_reader_new(&cb, NULL) : NULL;
    size_t n = r ? fread(buf, 1, cap, f) : 0;
    prism_status st = n ? prism_reader_feed(r, buf, n) : PRISM_E_EMPTY;
    if ((st == PRISM_OK || st == PRISM_NEED_MORE) && prism_reader_header(r))
        rank = prism_reader_header(r)->rank;
    prism_reader_free(r);
    if (f)
        fclose(f);
    free(buf);
    return rank;
}

bool job_two_ranks(const char *a, const char *b)
{
    int64_t ra = header_rank(a), rb = header_rank(b);
    return ra >= 0 && rb >= 0 && ra != rb;
}

/* ---- loading ---- */

/* "\rprism-top: reading rank files: 12/64 (1 failed), 120.0 MB of 512.0 MB"
 * on stderr, redrawn ten times a second while the loader works. */
static void progress_line(prism_job_progress p, int *width)
{
    char done[32], total[32], line[160];
    fmt_bytes(done, sizeof done, (double)p.bytes_done);
    fmt_bytes(total, sizeof total, (double)p.bytes_total);
    int n = snprintf(line, sizeof line, "prism-top: reading rank files: %zu/%zu", p.done,
                     p.total);
    if (p.failed && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " (%zu failed)", p.failed);
    if (n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, ", %s of %s", done, total);
    if (n < 0)
        return;
    /* pad over a longer line drawn before */
    fprintf(stderr, "\r%s%*s", line, *width > n ? *width - n : 0, "");
    if (n > *width)
        *width = n;
    fflush(stderr);
}

static prism_job *load(char **paths, size_t n, unsigned threads, const prism_job_opts *jo)
{
    prism_job_loader *l = prism_job_loader_start((const char *const *)paths, n, threads);
    if (!l)
        return NULL;
    if (isatty(STDERR_FILENO)) {
        int width = 0;
        for (;;) {
            prism_job_progress p = prism_job_loader_progress(l);
            if (p.finished)
                break;
            progress_line(p, &width);
            struct timespec ts = { 0, 100 * 1000 * 1000 };   /* a redraw, not a wait */
            nanosleep(&ts, NULL);
        }
        if (width)
            fprintf(stderr, "\r%*s\r", width, "");
    }
    return prism_job_loader_finish(l, jo);
}

int job_analyze(const char *const *args, size_t n, const job_report_opts *o, FILE *out)
{
    char msg[512], **paths = NULL;
    size_t npaths = 0;
    if (prism_job_expand(args, n, &paths, &npaths, msg, sizeof msg) != PRISM_OK) {
        char m[1024];
        fprintf(stderr, "prism-top: %s\n", esc_str(msg, m, sizeof m));
        return EXIT_BADINPUT;
    }
    if (!npaths) {
        fputs("prism-top analyze: no rank files found\n", stderr);
        prism_job_paths_free(paths, npaths);
        return EXIT_BADINPUT;
    }
    prism_job_opts jo;
    prism_job_opts_default(&jo);
    prism_job *j = load(paths, npaths, o->threads, &jo);
    prism_job_paths_free(paths, npaths);
    if (!j) {
        fputs("prism-top analyze: out of memory reading the job\n", stderr);
        return EXIT_BADINPUT;
    }
    for (size_t i = 0; i < j->nfailed; i++)
        report_error(j->failed[i].source, j->failed[i].status, j->failed[i].message,
                     j->failed[i].offset);
    int rc = EXIT_BADINPUT;
    if (j->nranks) {
        outfile of;
        rc = EXIT_BADINPUT;
        if (!outfile_open(&of, o->output, out)) {
            bool ok = true;
            if (o->json) {
                ok = job_write_json(of.f, j, o->steps);
            } else if (o->html) {
                ok = job_write_html(of.f, j);
            } else {
                report_units_for(of.f);
                job_write_txt(of.f, j);
            }
            if (!ok)
                fprintf(stderr, "prism-top: internal error writing the job's %s (or out of "
                        "memory)\n", o->html ? "HTML" : "JSON");
            rc = outfile_close(&of, ok);
        }
    } else {
        fputs("prism-top analyze: no rank file could be read\n", stderr);
    }
    prism_job_free(j);
    return rc;
}

/* ---- text ---- */

/* "rank file X: MSG at byte N", as report_error words it. */
static void failure_line(FILE *f, const prism_job_failure *x)
{
    fputs("  Failed: rank file ", f);
    esc_fputs(x->source, f);
    fputs(": ", f);
    esc_fputs(x->message, f);
    if (!(x->status == PRISM_E_IO && x->offset == 0))
        fprintf(f, " at byte %" PRIu64, x->offset);
    fputc('\n', f);
}

static void job_lines(FILE *f, const prism_job *j)
{
    char b1[48], b2[48], b3[48];
    fprintf(f, "Job: %zu rank%s, %zu aligned step%s\n", j->nranks, j->nranks == 1 ? "" : "s",
            j->nsteps, j->nsteps == 1 ? "" : "s");
    for (size_t i = 0; i < j->nfailed; i++)
        failure_line(f, &j->failed[i]);
    if (j->ids_from_order)
        fputs("  Ranks numbered by file order: header ranks missing or repeated\n", f);
    if (!j->nsteps) {
        fputs("  Steps: none recorded: no step time, skew or stragglers\n", f);
        return;
    }
    fprintf(f, "  Job step (the slowest rank's, per step): median %s, mean %s, total %s\n",
            report_ns(b1, sizeof b1, j->job_step_median_ns, 0),
            report_ns(b2, sizeof b2, j->job_step_mean_ns, 0),
            report_ns(b3, sizeof b3, j->job_step_total_ns, 0));
    fprintf(f, "  Skew (slowest - fastest rank, per step): step median %s, max %s;"
            " work median %s\n", report_ns(b1, sizeof b1, j->skew_median_ns, 0),
            report_ns(b2, sizeof b2, j->skew_max_ns, 0),
            report_ns(b3, sizeof b3, j->work_skew_median_ns, 0));
}

/* A figure of the table, "-" when it does not exist (a rank without
 * steps): 0 ns would be a figure. */
static const char *cell(char *buf, size_t cap, double ns, bool sign)
{
    if (!isfinite(ns)) {
        snprintf(buf, cap, "%10s", "-");
        return buf;
    }
    return sign ? report_ns_signed(buf, cap, ns, 10) : report_ns(buf, cap, ns, 10);
}

/* The host column: at least 16 wide, after "  RANK* " (10 columns). */
#define HOST_COL 16
#define ROW_LEAD 10

static void rank_row(FILE *f, const prism_job_rank *r, int col)
{
    char b1[48], b2[48], b3[48], b4[48];
    fprintf(f, "  %6" PRId64 "%c ", r->id, r->straggler ? '*' : ' ');
    report_cell(f, r->sum.host, ROW_LEAD, col);
    fprintf(f, " %6zu %s %s %s %s %7" PRIu64 "\n",
            r->sum.nsteps, cell(b1, sizeof b1, r->step_median_ns, false),
            cell(b2, sizeof b2, r->work_median_ns, false),
            cell(b3, sizeof b3, r->wait_median_ns, false),
            cell(b4, sizeof b4, r->excess_median_ns, true), r->slowed);
}

/* Rank indices by work median, slowest first (ties by index); qsort_r. */
static int by_work(const void *pa, const void *pb, void *job)
{
    const prism_job *j = job;
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    double wa = j->ranks[a].work_median_ns, wb = j->ranks[b].work_median_ns;
    if (isnan(wa) != isnan(wb))
        return isnan(wa) ? 1 : -1;
    if (wa != wb && !isnan(wa))
        return wa > wb ? -1 : 1;
    return (a > b) - (a < b);
}

/* The ranks the table shows: all of them, or the TABLE_SLOW slowest and
 * TABLE_FAST fastest by work median (order: NULL when all are shown). */
static size_t table_rank(const prism_job *j, const size_t *order, size_t i)
{
    if (!order)
        return i;
    return order[i < TABLE_SLOW ? i : j->nranks - TABLE_FAST - TABLE_SLOW + i];
}

static void rank_table(FILE *f, const prism_job *j, int width)
{
    size_t *order = NULL, shown = j->nranks;
    if (j->nranks > TABLE_ALL) {
        order = malloc(j->nranks * sizeof *order);
        if (!order) {
            fputs("Ranks:\n  (out of memory sorting the ranks)\n", f);
            return;
        }
        for (size_t i = 0; i < j->nranks; i++)
            order[i] = i;
        qsort_r(order, j->nranks, sizeof *order, by_work, (void *)j);
        shown = TABLE_SLOW + TABLE_FAST;
    }
    /* steps, four figures and slowed after the host: 59 columns */
    int col = HOST_COL, room = width - ROW_LEAD - 59;
    for (size_t i = 0; i < shown; i++)
        col = report_widen(col, room, report_cols(j->ranks[table_rank(j, order, i)].sum.host));
    fprintf(f, "Ranks:\n  %7s %-*s %6s %10s %10s %10s %10s %7s\n", "rank", col, "host", "steps",
            "step med", "work med", "wait med", "excess", "slowed");
    for (size_t i = 0; i < shown; i++) {
        if (order && i == TABLE_SLOW)
            fprintf(f, "  ... %zu more\n", j->nranks - TABLE_SLOW - TABLE_FAST);
        rank_row(f, &j->ranks[table_rank(j, order, i)], col);
    }
    if (order)
        fprintf(f, "  (the %d slowest and %d fastest by work median of %zu ranks)\n",
                TABLE_SLOW, TABLE_FAST, j->nranks);
    free(order);
    fputs("  (medians per step; work = step - waiting; excess = work - the others' median;\n"
          "   slowed = steps it was an outlier in; * = straggler)\n", f);
}

/* A delta's region: its path when it has one, else its name; escaped. */
static void delta_name(FILE *f, const prism_job_delta *d)
{
    esc_fputs(d->path[0] ? d->path : d->name, f);
}

/* When ranks are numbered by file order, a straggler is named by its file
 * too, and by the rank its header gave ("rank 721" was header rank 777). */
static void straggler_file(FILE *f, const prism_job *j, const prism_straggler *s)
{
    if (!j->ids_from_order || s->index >= j->nranks)
        return;
    const prism_rank_summary *sum = &j->ranks[s->index].sum;
    fputs(" (file ", f);
    esc_fputs(sum->source ? sum->source : "?", f);
    if (sum->rank >= 0)
        fprintf(f, ", header rank %" PRId64, sum->rank);
    fputc(')', f);
}

static void straggler_lines(FILE *f, const prism_job *j, const prism_straggler *s)
{
    char b1[48], b2[48], b3[48], rel[32];
    /* the others mostly waited: their work is small, and "+16957 %" says
     * less than "171x" */
    if (s->excess_pct >= 900)
        snprintf(rel, sizeof rel, "%.0fx", 1 + s->excess_pct / 100);
    else
        snprintf(rel, sizeof rel, "%+.0f %%", s->excess_pct);
    fprintf(f, "  rank %" PRId64, s->rank);
    straggler_file(f, j, s);
    fprintf(f, " is a straggler: its work per step is %s (%s) over the "
            "median of the others in %" PRIu64 " of %" PRIu64 " steps (steps",
            report_ns_signed(b1, sizeof b1, s->excess_ns, 0), rel, s->slowed, s->steps);
    size_t shown = s->nslowed_index < LIST_STEPS ? s->nslowed_index : LIST_STEPS;
    for (size_t i = 0; i < shown; i++)
        fprintf(f, "%s %" PRIu64, i ? "," : "", s->slowed_index[i]);
    fputs(shown < s->slowed ? ", ...)\n" : ")\n", f);
    if (s->have_cause) {
        fputs("    the difference: ", f);
        delta_name(f, &s->cause);
        fprintf(f, " %s per step (rank %" PRId64 ": %s, median %s)\n",
                report_ns_signed(b1, sizeof b1, s->cause.delta_ns, 0), s->rank,
                report_ns(b2, sizeof b2, s->cause.rank_ns, 0),
                report_ns(b3, sizeof b3, s->cause.median_ns, 0));
    } else {
        fputs("    the difference: no single region (the excess is spread)\n", f);
    }
    size_t more = 0;
    for (size_t i = 0; i < s->ndeltas && more < MORE_DELTAS; i++) {
        const prism_job_delta *d = &s->deltas[i];
        if ((s->have_cause && d->path_hash == s->cause.path_hash) || !(d->delta_ns > 0))
            continue;
        fputs(more++ ? ", " : "    other differences: ", f);
        delta_name(f, d);
        fprintf(f, " %s", report_ns_signed(b1, sizeof b1, d->delta_ns, 0));
    }
    if (more)
        fputs(" per step\n", f);
    if (s->have_wait_region) {
        fputs("    the other ranks wait for it: ", f);
        delta_name(f, &s->wait_region);
        fprintf(f, ", %s per step (median; rank %" PRId64 ": %s) - waiting for the slowest "
                "rank, not work\n", report_ns(b1, sizeof b1, s->wait_region.median_ns, 0),
                s->rank, report_ns(b2, sizeof b2, s->wait_region.rank_ns, 0));
    } else if (s->others_wait_ns > 0) {
        fprintf(f, "    the other ranks wait %s per step (median) - waiting for the slowest "
                "rank, not work\n", report_ns(b1, sizeof b1, s->others_wait_ns, 0));
    }
}

/* "No straggler: ranks within X %": the largest excess of a rank over the
 * others, in % of the median rank's work. */
static void no_straggler(FILE *f, const prism_job *j)
{
    double worst = 0, base = j->nranks ? j->ranks[j->median_rank].work_median_ns : NAN;
    for (size_t i = 0; i < j->nranks; i++)
        if (j->ranks[i].excess_median_ns > worst)
            worst = j->ranks[i].excess_median_ns;
    if (base > 0)
        fprintf(f, "  No straggler: ranks within %.1f %% (work per step over the others' "
                "median)\n", worst / base * 100);
    else
        fputs("  No straggler\n", f);
}

void job_write_txt(FILE *f, const prism_job *j)
{
    fputs(RULE "PRISM Job Report\n" RULE "\n", f);
    job_lines(f, j);
    fputc('\n', f);
    rank_table(f, j, report_width(f));
    fputs("\nStragglers:\n", f);
    if (!j->nstragglers)
        no_straggler(f, j);
    for (size_t i = 0; i < j->nstragglers; i++)
        straggler_lines(f, j, &j->stragglers[i]);
    fputs("\n" RULE, f);
}

/*
 * cmd_analyze.c - `prism-top analyze`: its options and usage text; the
 * reports are written by reports/ (the profile report: analyze.c, a job's:
 * analyze_job.c, a rank summary: summary.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reports.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: prism-top analyze FILE [-o OUT] [--format txt|json|html]\n"
        "                         [--threshold PCT] [--leak-threshold MB] [--ridge F]\n"
        "                         [--carbon-intensity G]\n"
        "       prism-top analyze FILE|DIR... [-o OUT] [--format txt|json] [--steps]\n"
        "                         [--threads N]\n"
        "       prism-top analyze --summary [-o OUT] FILE\n"
        "Print a report of a profile: summary, step times, top operations,\n"
        "bottlenecks with evidence and a fix, memory leak verdict, GPU activity.\n"
        "Two or more files or a directory are the ranks of one job (profiles,\n"
        "torch traces or rank summaries): the job report gives the job's step time\n"
        "(the slowest rank's), the skew between ranks, a table of the ranks and\n"
        "the stragglers with the region that makes the difference.\n"
        "\n"
        "  -o, --output OUT       write the report to OUT (written whole or not at all)\n"
        "  --format txt|json|html text (default), JSON (schema prism.analyze/1, a\n"
        "                         job's prism.job/1; docs/JSON.md) or one self-contained\n"
        "                         HTML page (summary, findings, operations, step and\n"
        "                         memory charts, a flame graph; docs/REPORTS.md)\n"
        "  --threshold PCT        an operation above PCT %% of the time is a hot\n"
        "                         operation (default: the file's setting, else 10)\n"
        "  --leak-threshold MB    memory growth above MB per step with a good fit is\n"
        "                         a leak by itself; slower growth is one when it is\n"
        "                         steady and significant and adds up to 64 MB or 5 %%\n"
        "                         (default: the file's setting, else 10)\n"
        "  --ridge F              work below F FLOP per byte (from counters named\n"
        "                         flops and bytes) is memory-bound (default 10; an\n"
        "                         H100's ridge is ~20 in FP32, ~300 with tensor cores)\n"
        "  --carbon-intensity G   grams of CO2e per kWh of your electricity: the\n"
        "                         System lines add the run's carbon (its measured\n"
        "                         energy times G; PRISM never guesses an intensity)\n"
        "job:\n"
        "  --threads N            read the rank files on N threads (default: one per CPU)\n"
        "  --steps                JSON: add the rank x step matrix of step and work time\n"
        "  --summary              write FILE's rank summary (small, docs/SUMMARY.md) instead\n"
        "                         of a report; `analyze` merges summaries like profiles\n"
        "  A DIR holds the ranks' files (its profiles, traces and summaries, by name).\n"
        "  A file that cannot be read is one line on stderr; the others are reported.\n"
        "\n"
        "exit status: 0 ok (a job: at least one rank read), 1 usage error, 2 bad input\n");
}

/* The options of a job (several files or a directory) and of --summary;
 * the single-profile report ignores them. */
typedef struct job_args {
    bool summary;
    job_report_opts o;
} job_args;

/* 1: argv[*i] was one of them, 0: it was not, -1: a usage error (said). */
static int job_option(int argc, char **argv, int *i, job_args *ja)
{
    const char *v;
    int m;
    if (!strcmp(argv[*i], "--summary")) {
        ja->summary = true;
        return 1;
    }
    if (!strcmp(argv[*i], "--steps")) {
        ja->o.steps = true;
        return 1;
    }
    if ((m = opt_value("analyze", argc, argv, i, NULL, "--threads", &v)) == 0)
        return 0;
    double t;
    if (m < 0 || !opt_nonneg("analyze", "--threads", v, &t))
        return -1;
    if (t != (double)(unsigned)t || t > 4096) {
        fprintf(stderr, "prism-top analyze: --threads takes a whole number up to 4096\n");
        return -1;
    }
    ja->o.threads = (unsigned)t;
    return 1;
}

int cmd_analyze(int argc, char **argv, FILE *out)
{
    const char *output = NULL, *format = "txt", *v;
    const char **paths = calloc((size_t)argc, sizeof *paths);
    size_t npaths = 0;
    job_args ja = { 0 };
    prism_analysis_opts opts = { -1, -1, 0, 0 };
    int rc = EXIT_USAGE;
    if (!paths) {
        fputs("prism-top analyze: out of memory\n", stderr);
        return EXIT_BADINPUT;
    }
    for (int i = 1; i < argc; i++) {
        int m;
        if (opt_is_help(argv[i])) {
            usage(stdout);
            rc = EXIT_OK;
            goto done;
        }
        if ((m = job_option(argc, argv, &i, &ja)) != 0) {
            if (m < 0)
                goto done;
        } else if ((m = opt_value("analyze", argc, argv, &i, "-o", "--output", &output)) != 0 ||
            (m = opt_value("analyze", argc, argv, &i, NULL, "--format", &format)) != 0) {
            if (m < 0)
                goto done;
        } else if ((m = opt_value("analyze", argc, argv, &i, NULL, "--threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("analyze", "--threshold", v, &opts.bottleneck_threshold_pct))
                goto done;
        } else if ((m = opt_value("analyze", argc, argv, &i, NULL, "--leak-threshold", &v)) != 0) {
            if (m < 0 || !opt_nonneg("analyze", "--leak-threshold", v, &opts.leak_threshold_mb))
                goto done;
        } else if ((m = opt_value("analyze", argc, argv, &i, NULL, "--ridge", &v)) != 0) {
            if (m < 0 || !opt_nonneg("analyze", "--ridge", v, &opts.ridge_flop_per_byte))
                goto done;
        } else if ((m = opt_value("analyze", argc, argv, &i, NULL, "--carbon-intensity",
                                  &v)) != 0) {
            if (m < 0 || !opt_nonneg("analyze", "--carbon-intensity", v, &opts.carbon_g_per_kwh))
                goto done;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "prism-top analyze: unknown option '%s'\n", argv[i]);
            goto done;
        } else {
            paths[npaths++] = argv[i];
        }
    }
    ja.o.json = !strcmp(format, "json");
    ja.o.output = output;
    bool html = !strcmp(format, "html");
    if (!ja.o.json && !html && strcmp(format, "txt")) {
        fprintf(stderr, "prism-top analyze: --format is txt, json or html, not '%s'\n", format);
    } else if (!npaths) {
        usage(stderr);
    } else if (ja.summary && npaths != 1) {
        fprintf(stderr, "prism-top analyze: --summary takes one file\n");
    } else if (ja.summary) {
        rc = rp_summary_file(paths[0], output, out);
    } else if (job_args_are_job(paths, npaths)) {
        ja.o.html = html;
        rc = job_analyze(paths, npaths, &ja.o, out);
    } else {
        rc = rp_analyze_file(paths[0], output, html ? RP_HTML : ja.o.json ? RP_JSON : RP_TXT,
                             &opts, out);
    }
done:
    free(paths);
    return rc;
}

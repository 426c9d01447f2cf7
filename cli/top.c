/*
 * top.c - `prism-top [OPTIONS] FILE...`: which files open what (one
 * profile: the explorer, two: compare, a job: the job view), and on a
 * terminal or not: the explorer (tui/explore.h) on a terminal, the report
 * (the analyze and compare commands) for scripts and pipes.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explore.h"
#include "reports.h"

/* One profile: the explorer, or (not a terminal) the analyze report. */
static int open_one(const char *path, int mode, const explore_at *at)
{
    if (!ui_want_tui()) {               /* scripts and pipes get the report */
        char *argv[] = { (char *)"analyze", (char *)path, NULL };
        return cmd_analyze(2, argv, stdout);
    }
    return explore_main_at(path, mode, NULL, at);
}

/* Two profiles side by side, or (not a terminal) the compare report. */
static int open_compare(const char *base, const char *cur)
{
    if (!ui_want_tui()) {
        char *argv[] = { (char *)"compare", (char *)base, (char *)cur, NULL };
        return cmd_compare(3, argv, stdout);
    }
    return explore_compare(base, cur, NULL);
}

/* The ranks of a job: the job view, or (not a terminal) the job report. */
static int open_job(int n, char **args)
{
    if (!ui_want_tui() && !job_args_are_job((const char *const *)args, (size_t)n)) {
        job_report_opts o = { 0 };      /* --job with one file: still a job */
        return job_analyze((const char *const *)args, (size_t)n, &o, stdout);
    }
    if (!ui_want_tui()) {               /* scripts and pipes get the report */
        char **argv = calloc((size_t)n + 2, sizeof *argv);
        if (!argv)
            return EXIT_BADINPUT;
        argv[0] = (char *)"analyze";
        memcpy(argv + 1, args, (size_t)n * sizeof *argv);
        int rc = cmd_analyze(n + 1, argv, stdout);
        free(argv);
        return rc;
    }
    return job_main(n, args, job_write_txt);
}

/* What is wrong with a command line that is no command: too many files, or
 * an option where a file or command was expected. */
int cli_usage_error(int argc, char **argv)
{
    int files = 0;
    const char *opt = NULL;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1]) {
            if (!opt)
                opt = argv[i];
        } else {
            files++;
        }
    }
    if (opt && opt == argv[1])
        fprintf(stderr, "prism-top: unknown option '%s' (try prism-top --help)\n", opt);
    else if (opt)
        fprintf(stderr, "prism-top: '%s': options belong to a command, as in prism-top "
                "analyze FILE %s (try prism-top --help)\n", opt, opt);
    else
        fprintf(stderr, "prism-top: %d files given: explore takes one profile, compare "
                "takes two, the job view any number (try prism-top --help)\n", files);
    return EXIT_USAGE;
}

/* The explorer's own options, before the files: --follow, --no-follow,
 * --pane NAME, --step INDEX (where to open: the job view's Enter), --job
 * (the files are ranks of one job, even one or two), --compare (two files
 * side by side, even two ranks of one job: the job view's c), -- (files
 * follow). */
typedef struct top_opts {
    int mode;                   /* 0 auto, 1 follow, 2 no follow            */
    explore_at at;
    bool job, compare, have_pane;
    int first;                  /* argv index of the first file             */
} top_opts;

/* Parse them; -1 (a message printed) on a bad value, 0 otherwise (what is
 * not one of them is left at argv[o->first]). */
static int parse_top(int argc, char **argv, top_opts *o)
{
    *o = (top_opts){ .at = { .pane = -1 } };
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--follow") || !strcmp(a, "--no-follow")) {
            o->mode = !strcmp(a, "--follow") ? 1 : 2;
        } else if (!strcmp(a, "--job")) {
            o->job = true;
        } else if (!strcmp(a, "--compare")) {
            o->compare = true;
        } else if ((!strcmp(a, "--pane") || !strcmp(a, "--step")) && i + 1 == argc) {
            fprintf(stderr, "prism-top: %s needs a value (try prism-top --help)\n", a);
            return -1;
        } else if (!strcmp(a, "--pane") || !strcmp(a, "--step")) {
            const char *val = argv[++i];
            if (a[2] == 'p') {
                o->at.pane = ui_pane_by_name(val);
                o->have_pane = true;
                if (o->at.pane < 0) {
                    char names[256];
                    fprintf(stderr, "prism-top: --pane %s: no such pane (%s)\n", val,
                            ui_pane_names(names, sizeof names, ", "));
                    return -1;
                }
            } else {
                char *end;
                o->at.step = strtoull(val, &end, 10);
                o->at.have_step = true;
                if (!*val || *end || val[0] == '-') {
                    fprintf(stderr, "prism-top: --step %s: not a step index\n", val);
                    return -1;
                }
            }
        } else {
            break;
        }
    }
    o->first = i;
    return 0;
}

int cli_open_files(int argc, char **argv)
{
    top_opts o;
    if (parse_top(argc, argv, &o) < 0)
        return EXIT_USAGE;
    int n = argc - o.first;
    char **files = argv + o.first;
    bool dashdash = o.first > 1 && !strcmp(argv[o.first - 1], "--");
    for (int i = 0; i < n && !dashdash; i++)
        if (files[i][0] == '-' && files[i][1])
            return cli_usage_error(argc, argv);
    bool dir = false;                   /* a directory or a rank summary */
    for (int i = 0; i < n; i++)
        dir = dir || job_args_are_job((const char *const *)&files[i], 1);
    if (n == 2 && o.compare && !o.job && !o.mode && !o.have_pane && !o.at.have_step)
        return open_compare(files[0], files[1]);
    if (n == 2 && !o.mode && !o.have_pane && !o.at.have_step)
        dir = dir || job_two_ranks(files[0], files[1]);    /* prism-top rank*.cbor */
    if (n >= 1 && (o.job || dir || n >= 3)) {
        if (o.mode || o.have_pane || o.at.have_step) {
            fprintf(stderr, "prism-top: --follow, --no-follow, --pane and --step open one "
                    "profile, not a job\n");
            return EXIT_USAGE;
        }
        return open_job(n, files);
    }
    if (n == 1)
        return open_one(files[0], o.mode, &o.at);
    if (n == 2 && !o.mode && !o.have_pane && !o.at.have_step)
        return open_compare(files[0], files[1]);
    fprintf(stderr, "usage: prism-top [--follow|--no-follow] [--pane NAME] [--step INDEX] FILE\n"
            "       prism-top --job FILE|DIR...\n");
    return EXIT_USAGE;
}


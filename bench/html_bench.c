/*
 * html_bench - analyze --format html on profiles of about 10 MB, 100 MB and
 * 1 GB (training-loop streams written by libcollect itself): the page's
 * size, the time to write it against the JSON report of the same file
 * (the baseline, interleaved), and, where chromium is installed, the time
 * the page takes to open (headless chromium printing the page's DOM once
 * its script has run) against a blank page opened the same way.  Prints
 * figures; never fails on time.  The 1 GB profile is skipped when the temp
 * directory has less than 3 GB free.
 *
 *   html_bench [ROUNDS]            default 3 interleaved rounds
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "loop_profile.h"
#include "../cli/cli.h"

extern char **environ;

#define BYTES_PER_EVENT 1.61    /* the loop stream's size on disk */

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* analyze PATH --format FORMAT -o OUT: seconds (wall), < 0 on failure. */
static double report(const char *path, const char *format, const char *out)
{
    char *argv[] = { (char *)"analyze", (char *)path, (char *)"--format", (char *)format,
                     (char *)"-o", (char *)out, NULL };
    FILE *devnull = fopen("/dev/null", "w");
    uint64_t t0 = bench_now_ns();
    int rc = cmd_analyze(6, argv, devnull ? devnull : stdout);
    double s = (double)(bench_now_ns() - t0) * 1e-9;
    if (devnull)
        fclose(devnull);
    return rc == 0 ? s : -1;
}

/* chromium --headless --dump-dom file://PAGE: seconds until it exits
 * (the load event and the page's script done), < 0 on failure. */
static double open_page(const char *chromium, const char *page, const char *profile_dir)
{
    char url[700], udd[700];
    snprintf(url, sizeof url, "file://%s", page);
    snprintf(udd, sizeof udd, "--user-data-dir=%s", profile_dir);
    char *argv[] = { (char *)chromium, (char *)"--headless=new", (char *)"--no-sandbox",
                     (char *)"--disable-gpu", (char *)"--no-first-run", udd,
                     (char *)"--dump-dom", url, NULL };
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    uint64_t t0 = bench_now_ns();
    int rc = posix_spawn(&pid, chromium, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int st = 0;
    if (rc != 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return (double)(bench_now_ns() - t0) * 1e-9;
}

static const char *find_chromium(void)
{
    static const char *const where[] = { "/usr/bin/chromium", "/usr/bin/chromium-browser" };
    for (size_t i = 0; i < sizeof where / sizeof *where; i++)
        if (access(where[i], X_OK) == 0)
            return where[i];
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 3u;
    if (rounds == 0 || rounds > BENCH_MAX_RUNS)
        rounds = 3;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512];
    snprintf(dir, sizeof dir, "%s/prism-html-bench-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        fprintf(stderr, "html_bench: no temp dir\n");
        return 1;
    }
    const char *chromium = find_chromium();
    printf("html_bench: analyze --format html on loop profiles, %u rounds interleaved with the "
           "JSON report%s\n", rounds, chromium ? "; opened in headless chromium" :
           "; no chromium here: open times skipped");
    char blank[600], udd[600];
    snprintf(blank, sizeof blank, "%s/blank.html", dir);
    snprintf(udd, sizeof udd, "%s/chromium", dir);
    FILE *bf = fopen(blank, "w");
    if (bf) {
        fputs("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>blank</title></head>"
              "<body><p>blank</p></body></html>\n", bf);
        fclose(bf);
    }
    static const double mb[] = { 10, 100, 1000 };
    for (size_t k = 0; k < sizeof mb / sizeof *mb; k++) {
        struct statvfs vs;
        if (mb[k] >= 1000 && (statvfs(dir, &vs) != 0 ||
                              (double)vs.f_bavail * (double)vs.f_frsize < 3e9)) {
            printf("  %4.0f MB profile: skipped (less than 3 GB free in %s)\n", mb[k], tmp);
            continue;
        }
        char prof[600], page[600], js[600];
        snprintf(prof, sizeof prof, "%s/p%.0f.cbor", dir, mb[k]);
        snprintf(page, sizeof page, "%s/p%.0f.html", dir, mb[k]);
        snprintf(js, sizeof js, "%s/p%.0f.json", dir, mb[k]);
        if (loop_profile_write(prof, (uint64_t)(mb[k] * 1e6 / BYTES_PER_EVENT), false) != 0) {
            printf("  %4.0f MB profile: could not be written\n", mb[k]);
            continue;
        }
        double th[BENCH_MAX_RUNS], tj[BENCH_MAX_RUNS], to[BENCH_MAX_RUNS], tb[BENCH_MAX_RUNS];
        unsigned nh = 0, nj = 0, no = 0, nb = 0;
        for (unsigned r = 0; r < rounds; r++) {
            for (unsigned i = 0; i < 2; i++) {          /* the order rotates */
                bool html = (r + i) % 2 == 0;
                double s = report(prof, html ? "html" : "json", html ? page : js);
                if (s >= 0)
                    (html ? th : tj)[html ? nh++ : nj++] = s;
            }
            if (!chromium || !nh)
                continue;
            for (unsigned i = 0; i < 2; i++) {
                bool real = (r + i) % 2 == 0;
                double s = open_page(chromium, real ? page : blank, udd);
                if (s >= 0)
                    (real ? to : tb)[real ? no++ : nb++] = s;
            }
        }
        if (!nh || !nj) {
            printf("  %4.0f MB profile: the reports failed\n", mb[k]);
            unlink(prof);
            continue;
        }
        bench_stat sh = bench_stat_of(th, nh), sj = bench_stat_of(tj, nj);
        char what[64], extra[200];
        snprintf(what, sizeof what, "html: %.0f MB profile", (double)file_size(prof) / 1e6);
        snprintf(extra, sizeof extra, "page %.0f KB (JSON report %.1f MB); written in %.2fx the "
                 "JSON report's %.2f s", (double)file_size(page) / 1e3,
                 (double)file_size(js) / 1e6, sj.median > 0 ? sh.median / sj.median : 0,
                 sj.median);
        bench_row_value(what, sh.median, "s", extra, "page bounded");
        if (no && nb) {
            bench_stat so = bench_stat_of(to, no), sb = bench_stat_of(tb, nb);
            snprintf(what, sizeof what, "  opened in chromium");
            snprintf(extra, sizeof extra, "median of %u; a blank page %.2f s the same way: the "
                     "page's own %.2f s", no, sb.median, so.median - sb.median);
            bench_row_value(what, so.median, "s", extra, "page's own < 2 s at 1 GB");
        }
        unlink(prof);
        unlink(page);
        unlink(js);
    }
    unlink(blank);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "html_bench: could not remove %s\n", dir);
    return 0;
}

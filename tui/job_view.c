/*
 * job_view.c - the job view's life: the files expanded, the ranks loaded on
 * a thread pool while the screen shows the progress and keys are answered
 * (q or Ctrl-C cancel at once), the loop, and the explorer run as a child
 * for one rank (Enter, t) or two (c).
 *
 * The terminal is the explorer's (ui_term_open): restored on every exit
 * path and on fatal signals; SIGINT/SIGTERM/SIGHUP/SIGQUIT end the loop
 * (ui_stop_flag), and a terminal that went away (POLLHUP, readable with
 * nothing to read) ends it too.  While a child runs the parent ignores
 * SIGINT and SIGQUIT (they are the child's) and has left curses.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ropen.h"
#include "escape.h"
#include "frame.h"
#include "job_view.h"

#define KEY_WAIT_MS 50          /* how often the loading line is redrawn */
#define CANCEL_WAITS 30         /* 10 ms each: the threads' time to stop  */

/* ---- loading ---- */

static void draw_loading(jv *v, const prism_job_progress *p)
{
    getmaxyx(stdscr, v->u.rows, v->u.cols);
    erase();
    char done[24], total[24], line[160];
    fmt_bytes(done, sizeof done, (double)p->bytes_done);
    fmt_bytes(total, sizeof total, (double)p->bytes_total);
    int o = snprintf(line, sizeof line, "LOADING %zu/%zu ranks, %s of %s", p->done, p->total,
                     done, total);
    if (p->failed && o > 0 && (size_t)o < sizeof line)
        snprintf(line + o, sizeof line - (size_t)o, ", %zu failed", p->failed);
    ui_rect r = { 0, 0, v->u.rows, v->u.cols };
    ui_print(&r, 0, 0, A_BOLD, line);
    ui_print(&r, 1, 0, A_NORMAL, "q: cancel");
    refresh();
}

/* Load the files, the progress on screen.  NULL when cancelled (q, a
 * signal, the terminal gone) or out of memory (*oom set). */
static prism_job *load(jv *v, char **paths, size_t n, bool *oom)
{
    const volatile sig_atomic_t *stop = ui_stop_flag();
    prism_job_loader *l = prism_job_loader_start((const char *const *)paths, n, 0);
    *oom = !l;
    if (!l)
        return NULL;
    bool cancel = false;
    int idle = 0;
    prism_job_progress p = prism_job_loader_progress(l);
    while (!p.finished && !cancel && !*stop) {
        draw_loading(v, &p);
        struct pollfd pf = { STDIN_FILENO, POLLIN, 0 };
        int k = poll(&pf, 1, KEY_WAIT_MS);
        if ((k < 0 && errno != EINTR) || (k > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL))))
            break;                      /* the terminal went away */
        int ch, keys = 0;
        while ((ch = getch()) != ERR) {
            keys++;
            if (ch == 'q' || ch == 'Q' || ch == 3)
                cancel = true;
        }
        if (k > 0 && keys == 0 && ++idle > 100)
            break;                      /* readable but nothing to read: gone */
        p = prism_job_loader_progress(l);
    }
    if (!p.finished) {
        /* q means now: the threads stop after their current file, but one
         * may hang on it (a FIFO, a dead NFS server).  Give them a moment;
         * past it the loader is left to the process's exit, which follows. */
        prism_job_loader_cancel(l);
        for (int i = 0; i < CANCEL_WAITS && !p.finished; i++) {
            poll(NULL, 0, 10);
            p = prism_job_loader_progress(l);
        }
        if (p.finished)
            (void)prism_job_loader_finish(l, NULL);
        return NULL;
    }
    prism_job_opts o;
    prism_job_opts_default(&o);
    prism_job *j = prism_job_loader_finish(l, &o);
    *oom = !j;
    return j;
}

/* ---- children: the explorer on one rank or two ---- */

/* Is the rank's profile here to open?  A job made from summaries names
 * profiles that may lie on another machine. */
static bool profile_here(const jv *v, size_t r)
{
    const char *src = v->job->ranks[r].sum.source;
    int fd = src && *src ? pb_open_read(src) : -1;
    if (fd < 0)
        return false;
    uint8_t head[64];
    ssize_t k = read(fd, head, sizeof head);
    close(fd);
    return k > 0 && !prism_rank_summary_probe(head, (size_t)k);
}

/* Leave curses, run prism-top with argv (argv[0] is replaced by this
 * program), wait for it, come back.  Returns its exit status, -1 when it
 * could not be started. */
static int run_child(char **argv)
{
    struct sigaction ign, old_int, old_quit;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    def_prog_mode();
    endwin();
    fflush(stdout);
    sigaction(SIGINT, &ign, &old_int);  /* Ctrl-C belongs to the child now */
    sigaction(SIGQUIT, &ign, &old_quit);
    int status = -1;
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    if (pid > 0) {
        int st = 0;
        pid_t w;
        while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;                           /* a quit signal: the child decides */
        if (w == pid)
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    reset_prog_mode();
    ui_mouse_start();                   /* the child turned reporting off */
    clearok(stdscr, TRUE);
    refresh();
    return status == 127 ? -1 : status;
}

/* The message for a child that failed. */
static void child_result(jv *v, int rc)
{
    if (rc < 0)
        ui_message(&v->u, "could not run prism-top (/proc/self/exe)");
    else if (rc != 0 && rc < 128)
        ui_message(&v->u, "prism-top ended with status %d", rc);
}

void jv_open_rank(jv *v, size_t r, size_t step, const char *pane)
{
    char id[24];
    if (r >= v->job->nranks)
        return;
    if (!profile_here(v, r)) {
        ui_message(&v->u, "rank %s: its profile is not on this machine",
                   jv_rank_name(v, r, id, sizeof id));
        return;
    }
    char index[24];
    bool have = step < v->job->nsteps;
    snprintf(index, sizeof index, "%llu",
             have ? (unsigned long long)v->job->step_index[step] : 0ULL);
    char *argv[10];
    int k = 0;
    argv[k++] = (char *)"prism-top";
    argv[k++] = (char *)"--no-follow";
    argv[k++] = (char *)"--pane";
    argv[k++] = (char *)pane;
    if (have) {
        argv[k++] = (char *)"--step";
        argv[k++] = index;
    }
    argv[k++] = (char *)"--";
    argv[k++] = v->job->ranks[r].sum.source;
    argv[k] = NULL;
    child_result(v, run_child(argv));
}

void jv_compare(jv *v, size_t base, size_t cur)
{
    char a[24], b[24];
    if (base >= v->job->nranks || cur >= v->job->nranks)
        return;
    jv_rank_name(v, base, a, sizeof a);
    jv_rank_name(v, cur, b, sizeof b);
    if (base == cur) {
        ui_message(&v->u, "rank %s is the base: select another rank (or m: mark a base)", a);
        return;
    }
    size_t gone = !profile_here(v, base) ? base : !profile_here(v, cur) ? cur : SIZE_MAX;
    if (gone != SIZE_MAX) {
        ui_message(&v->u, "rank %s: its profile is not on this machine",
                   jv_rank_name(v, gone, a, sizeof a));
        return;
    }
    char *argv[] = { (char *)"prism-top", (char *)"--compare", (char *)"--",
                     v->job->ranks[base].sum.source,
                     v->job->ranks[cur].sum.source, NULL };
    int rc = run_child(argv);
    child_result(v, rc);
    if (!v->u.msg[0])
        ui_message(&v->u, "compared rank %s (base%s) with rank %s", a,
                   v->marked && v->mark == base ? ", marked" : ": the median rank", b);
}

/* The Stragglers tab shows the findings as `analyze` words them: its
 * report's "Stragglers:" section (already escaped), kept once. */
static void findings(jv *v, job_text_fn text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = text ? open_memstream(&buf, &len) : NULL;
    if (!f)
        return;
    text(f, v->job);
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return;
    }
    char *at = strstr(buf, "\nStragglers:\n");
    char *end = at ? strstr(at + 13, "\n\n") : NULL;
    if (at) {
        if (end)
            end[1] = '\0';
        memmove(buf, at + 13, strlen(at + 13) + 1);
        v->findings = buf;
    } else {
        free(buf);
    }
}

/* ---- the loop ---- */

static int run(jv *v)
{
    const volatile sig_atomic_t *stop = ui_stop_flag();
    int idle = 0;
    jv_draw(v);
    while (!*stop) {
        struct pollfd pf = { STDIN_FILENO, POLLIN, 0 };
        int k = poll(&pf, 1, -1);
        if (*stop)
            break;
        if ((k < 0 && errno != EINTR) || (k > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL))))
            break;                      /* the terminal went away */
        int ch, keys = 0;
        while ((ch = getch()) != ERR) { /* keys, and KEY_RESIZE after SIGWINCH */
            keys++;
            if (jv_key(v, ch) & UI_QUIT || *stop)
                return 0;
        }
        if (k > 0 && keys == 0) {
            if (++idle > 100)           /* readable but nothing to read: gone */
                break;
            continue;
        }
        idle = 0;
        jv_draw(v);
    }
    return 0;
}

/* The failures of a job that has no rank, on stderr (escaped). */
static void print_failures(const prism_job *j)
{
    for (size_t i = 0; j && i < j->nfailed; i++) {
        char buf[ESC_CAP(256) + 256];
        fprintf(stderr, "prism-top: %s: ", esc_str(j->failed[i].source, buf, sizeof buf));
        fprintf(stderr, "%s\n", esc_str(j->failed[i].message, buf, sizeof buf));
    }
}

int job_main(int n, char **args, job_text_fn text)
{
    char **paths = NULL, msg[256];
    size_t np = 0;
    if (prism_job_expand((const char *const *)args, (size_t)n, &paths, &np, msg, sizeof msg) !=
        PRISM_OK) {
        char buf[ESC_CAP(256)];
        fprintf(stderr, "prism-top: %s\n", esc_str(msg, buf, sizeof buf));
        return EXIT_BADINPUT;
    }
    if (!np) {
        fprintf(stderr, "prism-top: no profile to open\n");
        prism_job_paths_free(paths, np);
        return EXIT_BADINPUT;
    }
    jv v;
    memset(&v, 0, sizeof v);
    v.u.jump_pane = -1;                 /* ui's defaults; no pane is used */
    if (!ui_term_open(&v.u)) {
        prism_job_paths_free(paths, np);
        return EXIT_USAGE;
    }
    bool oom = false;
    v.job = load(&v, paths, np, &oom);
    prism_job_paths_free(paths, np);
    int rc = EXIT_OK;
    if (v.job && v.job->nranks && jv_prepare(&v)) {
        findings(&v, text);
        run(&v);
        ui_term_close();
    } else {
        ui_term_close();
        if (oom || (v.job && v.job->nranks)) {
            fprintf(stderr, "prism-top: out of memory loading the job\n");
            rc = EXIT_BADINPUT;
        } else if (v.job) {
            print_failures(v.job);
            fprintf(stderr, "prism-top: no rank could be read\n");
            rc = EXIT_BADINPUT;
        }
    }
    free(v.order);
    free(v.findings);
    if (v.job)
        prism_job_free(v.job);
    return rc;
}

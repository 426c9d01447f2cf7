/*
 * explore_bench - the explorer's responsiveness, measured on a headless
 * curses screen (TERM=xterm, output to /dev/null) with the real panes:
 *   - a big profile (1 GB by default; the first argument sets the size in
 *     MB): time to the first screen (the explorer opens it at once and
 *     reads the rest in slices from its loop), time to the full figures,
 *     and the longest loop turn while it loads (how long a key may wait);
 *     the file is written under the build directory and deleted;
 *   - keypress -> redraw on a 100 k-node call tree (Tree and Flame panes);
 *   - live tail: event -> screen latency (median, p99) with the writer's
 *     default flush interval, and the follower's CPU while the file is idle.
 * Prints figures; never fails on time.
 *
 *   explore_bench [MB]                  the figures (MB: the big profile's size)
 *   explore_bench --write MB FILE       write the big profile alone (to time
 *                                       `prism-top analyze FILE`, or profile it)
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "prism/collect.h"
#include "source.h"
#include "ui.h"

static SCREEN *screen_open(void)
{
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    setenv("TERM", "xterm", 1);
    SCREEN *sc = out && in ? newterm("xterm", out, in) : NULL;
    if (sc) {
        resizeterm(50, 160);
        keypad(stdscr, TRUE);
    }
    return sc;
}

static void ui_setup(ui *u, prism_analysis *a, source *src)
{
    const ui_pane *panes[UI_NPANES] = { &pane_summary, &pane_tree, &pane_flame, &pane_ops,
                                        &pane_memory, &pane_gpu, &pane_bottlenecks, &pane_timeline,
                                        &pane_help };
    memset(u, 0, sizeof *u);
    memcpy(u->panes, panes, sizeof panes);
    u->a = a;
    u->src = src;
    u->path = "bench";
    u->jump_pane = -1;
    u->utf8 = true;
    u->rows = 50;
    u->cols = 160;
    const prism_tree *t = prism_analysis_tree(a);
    if (t->first_root != PRISM_NO_NODE)
        u->sel_hash = t->nodes[t->first_root].path_hash;
    for (int i = 0; i < UI_NPANES; i++)
        u->state[i] = u->panes[i]->init ? u->panes[i]->init(u) : NULL;
}

static void ui_teardown(ui *u)
{
    for (int i = 0; i < UI_NPANES; i++)
        if (u->panes[i]->free)
            u->panes[i]->free(u->state[i]);
}

static void frame(ui *u)
{
    erase();
    u->panes[u->pane]->draw(u, u->state[u->pane], 1, 0, 48, 160);
    refresh();
}

static int key(ui *u, int ch)
{
    const ui_pane *p = u->panes[u->pane];
    for (size_t i = 0; i < p->nkeys; i++)
        if (p->keys[i].key == ch)
            return p->keys[i].fn(u, u->state[u->pane], ch);
    return 0;
}

/* ---- profiles ---- */

/* Record a profile at path in a forked child (one session per process):
 * a WAIT-policy session around body(n).  0 when the child succeeded. */
static int record_in_child(const char *path, void (*body)(uint64_t n), uint64_t n)
{
    pid_t pid = fork();
    if (pid == 0) {
        prism_config c;
        prism_config_default(&c);
        c.output = path;
        c.policy = PRISM_POLICY_WAIT;
        if (prism_init(&c))
            _exit(1);
        body(n);
        prism_shutdown();
        _exit(0);
    }
    int st;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* A training-loop stream of about `events` region events. */
static void loop_body(uint64_t events)
{
    uint32_t id[6] = { prism_name("forward"), prism_name("attention"), prism_name("mlp"),
                       prism_name("backward"), prism_name("grad"), prism_name("optimizer") };
    for (uint64_t n = 0; n < events; n += 2 * (1 + 24 * 2 + 1 + 24 + 1)) {
        prism_step_begin();
        prism_push_id(id[0]);
        for (int l = 0; l < 24; l++) {
            prism_push_id(id[1]); prism_pop();
            prism_push_id(id[2]); prism_pop();
        }
        prism_pop();
        prism_push_id(id[3]);
        for (int l = 0; l < 24; l++) {
            prism_push_id(id[4]); prism_pop();
        }
        prism_pop();
        prism_push_id(id[5]); prism_pop();
        prism_step_end();
    }
}

/* A call tree of ~nodes distinct paths: 100 roots x 100 x 10. */
static void wide_body(uint64_t nodes)
{
    char name[32];
    unsigned made = 0;
    for (unsigned a = 0; a < 100 && made < nodes; a++) {
        snprintf(name, sizeof name, "module.%u", a);
        prism_push(name);
        made++;
        for (unsigned b = 0; b < 100 && made < nodes; b++) {
            snprintf(name, sizeof name, "block.%u", b);
            prism_push(name);
            made++;
            for (unsigned k = 0; k < 10 && made < nodes; k++, made++) {
                snprintf(name, sizeof name, "op.%u", k);
                prism_push(name);
                prism_pop();
            }
            prism_pop();
        }
        prism_pop();
    }
}

/* ---- measurements ---- */

/* The explorer on path (not followed): the profile read and analysed, the
 * panes set up.  False, after a line on stdout, when it cannot be opened. */
static bool explorer_open(const char *path, source *src, ui *u)
{
    if (source_open(src, path, SRC_NO_FOLLOW, NULL) != 0) {
        printf("  explore: cannot open the profile: %s\n", src->error);
        return false;
    }
    ui_setup(u, src->a, src);
    return true;
}

static void reload(ui *u, source *src)
{
    u->a = src->a;
    for (int i = 0; i < UI_NPANES; i++)
        if (u->panes[i]->reload)
            u->panes[i]->reload(u, u->state[i]);
}

/* The explorer's loop while a file loads, without the terminal: a slice
 * (30 ms), then the refresh and redraw the loader asks for. */
static double load_rest(ui *u, source *src, unsigned *redraws)
{
    double worst = 0;
    while (src->loading) {
        uint64_t t0 = bench_now_ns();
        int r = source_load_step(src, 30000000u);
        if (r & SRC_LOAD_FAILED)
            break;
        if (r) {
            if (source_sync(src) || (r & SRC_LOAD_CHANGED))
                reload(u, src);
            frame(u);
            (*redraws)++;
        }
        double turn = (double)(bench_now_ns() - t0) * 1e-6;
        worst = turn > worst ? turn : worst;
    }
    return worst;
}

static void first_screen(const char *path, unsigned runs)
{
    double t[BENCH_MAX_RUNS];
    uint64_t read_first = 0;
    for (unsigned i = 0; i < runs; i++) {   /* the first screen, then quit */
        uint64_t t0 = bench_now_ns();
        source src;
        ui u;
        if (!explorer_open(path, &src, &u))
            return;
        frame(&u);
        t[i] = (double)(bench_now_ns() - t0) * 1e-9;
        read_first = prism_reader_input_offset(src.r);
        ui_teardown(&u);
        source_close(&src);
    }
    bench_stat s = bench_stat_of(t, runs);
    source src;
    ui u;
    uint64_t t0 = bench_now_ns();
    if (!explorer_open(path, &src, &u))
        return;
    frame(&u);
    unsigned redraws = 0;
    double worst = load_rest(&u, &src, &redraws);
    reload(&u, &src);
    frame(&u);
    double full = (double)(bench_now_ns() - t0) * 1e-9;
    uint64_t bytes = prism_reader_input_offset(src.r), events = prism_analysis_events(src.a);
    double steps = (double)prism_analysis_steps(src.a)->count;
    bool ok = !src.loading && !src.error[0] && prism_analysis_complete(src.a);
    ui_teardown(&u);
    source_close(&src);
    char extra[128];
    snprintf(extra, sizeof extra, "%.0f MB, %.1f M events; %.0f MB read before it", bytes / 1e6,
             events / 1e6, read_first / 1e6);
    printf("  %-30s %8.3f %-12s", "explore: first screen", s.median, "s");
    bench_row_tail("(median of 3)", extra, "<= 1 s");
    snprintf(extra, sizeof extra, "%.0f MB/s, %.1f M events/s, %u redraws%s", bytes / 1e6 / full,
             events / 1e6 / full, redraws, ok ? "" : "; NOT COMPLETE");
    printf("  %-30s %8.3f %-12s", "explore: full figures", full, "s");
    bench_row_tail("(one run)", extra, NULL);
    printf("  %-30s %8.1f %-12s", "explore: longest turn loading", worst, "ms");
    snprintf(extra, sizeof extra, "a key waits at most this; %.1f M steps at the end",
             steps / 1e6);
    bench_row_tail("(slice + refresh + redraw)", extra, "<= 100 ms");
}

static void keys_bench(const char *path)
{
    source src;
    ui u;
    if (!explorer_open(path, &src, &u))
        return;
    u.pane = 1;
    key(&u, 'e');                       /* everything expanded: 100 k rows */
    frame(&u);
    static const struct { int ch; const char *what; int pane; } ks[] = {
        { 'j', "Tree: down (j)", 1 }, { KEY_NPAGE, "Tree: page down", 1 },
        { 's', "Tree: sort (s)", 1 }, { ' ', "Tree: fold/unfold", 1 },
        { 'l', "Flame: move right (l)", 2 }, { '\n', "Flame: zoom (Enter)", 2 },
    };
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
        double t[BENCH_MAX_RUNS];
        u.pane = ks[k].pane;
        frame(&u);
        for (unsigned i = 0; i < 15; i++) {
            uint64_t t0 = bench_now_ns();
            key(&u, ks[k].ch);
            frame(&u);
            t[i] = (double)(bench_now_ns() - t0) * 1e-6;
            if (ks[k].ch == '\n')
                key(&u, 27);            /* zoom out again */
        }
        bench_stat s = bench_stat_of(t, 15);
        double mx = 0;
        for (unsigned i = 0; i < 15; i++)
            mx = t[i] > mx ? t[i] : mx;
        char what[64], extra[64];
        snprintf(what, sizeof what, "explore: %s", ks[k].what);
        snprintf(extra, sizeof extra, "max %.2f ms; %zu nodes", mx,
                 prism_analysis_tree(src.a)->count);
        printf("  %-30s %8.2f %-12s", what, s.median, "ms");
        bench_row_tail("(median of 15)", extra, "<= 16 ms");
    }
    ui_teardown(&u);
    source_close(&src);
}

/* The writer: a mark every 50 ms, otherwise idle; the default flush. */
static pid_t start_marker(const char *path, unsigned marks)
{
    pid_t pid = fork();
    if (pid == 0) {
        prism_config c;
        prism_config_default(&c);
        c.output = path;
        c.collect_memory = false;       /* only the marks change the file */
        if (prism_init(&c))
            _exit(1);
        uint32_t id = prism_name("tick");
        for (unsigned i = 0; i < marks; i++) {
            prism_mark_id(id);
            usleep(50000);
        }
        pause();                        /* idle: nothing more is written */
        _exit(0);
    }
    return pid;
}

/* Every mark the follower has just put on screen: its latency. */
typedef struct marks_seen {
    double lat[256];
    unsigned n;
    uint64_t shown_at, origin;
} marks_seen;

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    marks_seen *ms = ctx;
    (void)stream;
    for (size_t i = 0; i < n && ms->n < 256; i++) {
        uint64_t t = ms->origin + m[i].ts;
        ms->lat[ms->n++] = ms->shown_at > t ? (double)(ms->shown_at - t) * 1e-6 : 0;
    }
}

static void on_header(void *ctx, const prism_header *h)
{
    ((marks_seen *)ctx)->origin = h->start_mono_ns;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void live_bench(const char *dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/live.cbor", dir);
    enum { MARKS = 60 };
    pid_t w = start_marker(path, MARKS);
    source src;
    if (w < 0 || source_open(&src, path, SRC_FOLLOW, NULL) != 0) {
        printf("  explore: live tail: cannot start\n");
        return;
    }
    ui u;
    ui_setup(&u, src.a, &src);
    /* a second reader of the same file sees each mark once, right after
     * the follower has drawn the update that contains it */
    static marks_seen ms;
    prism_reader_callbacks cb = { .header = on_header, .marks = on_marks };
    prism_reader *mr = prism_reader_new(&cb, &ms);
    int fd2 = -1;
    uint64_t deadline = bench_now_ns() + 10000000000ull;
    while (ms.n < MARKS && bench_now_ns() < deadline) {
        struct pollfd p = { src.notify_fd, POLLIN, 0 };
        poll(&p, 1, src.notify_fd >= 0 ? 1000 : 100);
        source_drain_notify(&src);
        if (!source_update(&src))
            continue;
        u.a = src.a;
        for (int i = 0; i < UI_NPANES; i++)
            if (u.panes[i]->reload)
                u.panes[i]->reload(&u, u.state[i]);
        frame(&u);                      /* the screen shows it now */
        ms.shown_at = bench_now_ns();
        if (fd2 < 0)
            fd2 = open(path, O_RDONLY | O_CLOEXEC);
        if (fd2 >= 0 && mr)
            prism_reader_read_fd(mr, fd2);
    }
    if (fd2 >= 0)
        close(fd2);
    prism_reader_free(mr);
    double *lat = ms.lat;
    unsigned n = ms.n;
    /* idle: CPU of the follower while nothing changes for 2 s */
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    uint64_t until = bench_now_ns() + 2000000000ull;
    while (bench_now_ns() < until) {
        struct pollfd p = { src.notify_fd, POLLIN, 0 };
        int left = (int)((until - bench_now_ns()) / 1000000u);
        if (poll(&p, 1, left > 1000 ? 1000 : left) > 0)
            source_drain_notify(&src);
        source_update(&src);
    }
    getrusage(RUSAGE_SELF, &r1);
    double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
                          r0.ru_stime.tv_sec) +
                 (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
                          r0.ru_stime.tv_usec) * 1e-6;
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
    bool inotify = src.notify_fd >= 0;
    ui_teardown(&u);
    source_close(&src);
    if (!n) {
        printf("  explore: live tail: no update seen\n");
        return;
    }
    qsort(lat, n, sizeof *lat, cmp_d);
    char extra[96];
    snprintf(extra, sizeof extra, "p99 %.1f ms over %u marks (flush every 100 ms, %s)",
             lat[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], n,
             inotify ? "inotify" : "polling");
    printf("  %-30s %8.1f %-12s", "live: event -> screen", lat[n / 2], "ms");
    bench_row_tail("(median)", extra, "<= 250 ms");
    printf("  %-30s %8.2f %-12s", "live: follower CPU, idle file", cpu / 2.0 * 100.0, "%");
    bench_row_tail("(2 s, one core = 100 %)", NULL, "~0");
}

/* A loop profile of about `mb` MB under the build directory (where this
 * program is, ../); its path in out. */
static int big_profile(const char *argv0, double mb, char *dir, size_t cap, char *out,
                       size_t ocap)
{
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv0);
    snprintf(dir, cap, "%s/../ebench-XXXXXX", dirname(self));
    if (!mkdtemp(dir))
        return -1;
    snprintf(out, ocap, "%s/big.cbor", dir);
    /* about 1.6 bytes an event in this loop (measured) */
    return record_in_child(out, loop_body, (uint64_t)(mb * 1e6 / 1.6));
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--write"))      /* the big profile alone */
        return record_in_child(argv[3], loop_body, (uint64_t)(atof(argv[2]) * 1e6 / 1.6)) ? 1 : 0;
    double mb = argc > 1 ? atof(argv[1]) : 1024.0;
    char dir[PATH_MAX + 32];
    char big[PATH_MAX + 64], wide[PATH_MAX + 64];
    uint64_t g0 = bench_now_ns();
    if (big_profile(argv[0], mb, dir, sizeof dir, big, sizeof big)) {
        fprintf(stderr, "explore_bench: cannot write the big profile\n");
        return 1;
    }
    double gen = (double)(bench_now_ns() - g0) * 1e-9;
    snprintf(wide, sizeof wide, "%s/wide.cbor", dir);
    if (record_in_child(wide, wide_body, 100000)) {
        fprintf(stderr, "explore_bench: cannot write the profiles\n");
        return 1;
    }
    SCREEN *sc = screen_open();
    if (!sc) {
        fprintf(stderr, "explore_bench: no headless terminal (TERM=xterm)\n");
        return 1;
    }
    struct stat st;
    printf("explore_bench: real panes on a headless 160x50 screen; %s: %.0f MB (written in %.1f s)\n",
           big, stat(big, &st) == 0 ? (double)st.st_size / 1e6 : 0, gen);
    first_screen(big, 3);
    unlink(big);
    keys_bench(wide);
    live_bench(dir);
    endwin();
    delscreen(sc);
    unlink(wide);
    char live[PATH_MAX + 64];
    snprintf(live, sizeof live, "%s/live.cbor", dir);
    unlink(live);
    rmdir(dir);
    return 0;
}

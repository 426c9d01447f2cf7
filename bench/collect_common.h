/*
 * collect_common.h - shared helpers of bench/collect_bench.c (header only:
 * every bench/NAME.c is one binary): running a measurement in a child
 * process (one session per process), reading a profile back, table rows.
 */
#ifndef PRISM_COLLECT_COMMON_H
#define PRISM_COLLECT_COMMON_H

/* ------------------------------------------------------------------ */
/* Helpers: a child per session, reading a profile back, table rows    */
/* ------------------------------------------------------------------ */

typedef int (*child_fn)(void *ctx, void *out);

/* Run fn(ctx, out) in a forked child; its `out` (size bytes) comes back
 * through a pipe.  0 when the child exited 0 and sent everything. */
static inline int in_child(child_fn fn, void *ctx, void *out, size_t size)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        int rc = fn(ctx, out);
        const char *b = out;
        for (size_t off = 0; rc == 0 && off < size;) {
            ssize_t n = write(p[1], b + off, size - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                rc = 1;
            else
                off += (size_t)n;
        }
        fflush(stdout);
        _exit(rc ? 1 : 0);
    }
    close(p[1]);
    size_t got = 0;
    char *b = out;
    while (got < size) {
        ssize_t n = read(p[0], b + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return got == size && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* What a profile holds, as the reader sees it. */
typedef struct counts {
    uint64_t regions, counters, steps, sampled_steps;
    uint64_t dropped;           /* sum over streams of the last cumulative total */
    uint64_t bytes;
    uint64_t damaged;
    bool footer, ok;
    struct { uint32_t stream, source; uint64_t total; } drop[64];
    unsigned ndrop;
} counts;

static inline void cb_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    (void)stream;
    (void)depth;
    (void)ev;
    ((counts *)ctx)->regions += n;
}

static inline void cb_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    (void)stream;
    (void)c;
    ((counts *)ctx)->counters += n;
}

static inline void cb_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    counts *c = ctx;
    (void)stream;
    c->steps += n;
    for (size_t i = 0; i < n; i++)
        c->sampled_steps += (s[i].flags & PRISM_STEP_SAMPLED) != 0;
}

/* DROPPED records carry cumulative totals: keep the last of each stream. */
static inline void cb_dropped(void *ctx, const prism_dropped *d)
{
    counts *c = ctx;
    unsigned i = 0;
    while (i < c->ndrop && (c->drop[i].stream != d->stream || c->drop[i].source != d->source))
        i++;
    if (i == c->ndrop) {
        if (c->ndrop == sizeof c->drop / sizeof c->drop[0])
            return;
        c->ndrop++;
        c->drop[i].stream = d->stream;
        c->drop[i].source = d->source;
        c->drop[i].total = 0;
    }
    if (d->total > c->drop[i].total)
        c->drop[i].total = d->total;
}

static inline void cb_footer(void *ctx, const prism_footer *f)
{
    (void)f;
    ((counts *)ctx)->footer = true;
}

static inline counts read_profile(const char *path)
{
    counts c;
    memset(&c, 0, sizeof c);
    prism_reader_callbacks cb = { .regions = cb_regions, .counters = cb_counters,
                                  .steps = cb_steps, .dropped = cb_dropped,
                                  .footer = cb_footer };
    prism_reader *r = NULL;
    prism_status st = prism_read_file(path, &cb, &c, &r);
    if (r)
        c.damaged = prism_reader_stats_get(r)->damaged;
    prism_reader_free(r);
    for (unsigned i = 0; i < c.ndrop; i++)
        c.dropped += c.drop[i].total;
    struct stat sb;
    if (stat(path, &sb) == 0)
        c.bytes = (uint64_t)sb.st_size;
    c.ok = st == PRISM_OK && c.footer && c.damaged == 0;
    return c;
}

static inline void profile_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s.cbor", tmpdir, name);
}

/* Correctness checks (never timing) that make the figures meaningless. */
static inline bool check(bool ok, const char *what)
{
    if (!ok)
        printf("  !! %s\n", what);
    return ok;
}

/* A row in ns: the median of n per-operation figures, best beside it. */
static inline void row_ns(const char *what, const double *ns, unsigned n, int prec,
                   const char *extra, const char *target)
{
    bench_stat st = bench_stat_of(ns, n);
    char how[64];
    snprintf(how, sizeof how, "(median of %u, best %.*f)", st.runs, prec, st.min);
    printf("  %-*s %8.*f %-12s", LABEL_W, what, prec, st.median, "ns");
    bench_row_tail(how, extra, target);
}

/* A row with one figure (a single run, or nothing timed). */
static inline void row_value(const char *what, double v, int prec, const char *unit,
                      const char *how, const char *extra, const char *target)
{
    printf("  %-*s %8.*f %-12s", LABEL_W, what, prec, v, unit);
    bench_row_tail(how ? how : "", extra, target);
}

static inline double median(const double *v, unsigned n)
{
    return bench_stat_of(v, n).median;
}

/* A session for this child, writing to tmpdir/name.cbor. */
static inline int start_session(prism_config *cfg, const char *name, char *path, size_t n)
{
    profile_path(path, n, name);
    cfg->output = path;
    cfg->output_dir = NULL;
    if (prism_init(cfg) != 0 || !prism_recording()) {
        fprintf(stderr, "collect_bench: cannot start a session writing %s\n", path);
        return -1;
    }
    return 0;
}


/* Remove dir and the files in it (profiles a failed child left behind). */
static inline void bench_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[PATH_MAX];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

#endif

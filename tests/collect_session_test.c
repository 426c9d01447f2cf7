/*
 * collect_session_test.c - the session's documented behaviour: failures
 * that must not hurt the program (an unwritable output, bad environment
 * values, init/shutdown called out of order, regions left open, pops
 * without pushes), the output path pattern, the configuration copied into
 * the header, step sampling (fixed and adaptive) and memory samples tagged
 * with steps (taken by the writer; one per step when the loop waits for
 * them: collect_step_test.c).
 *
 * Anything that starts a session runs in a forked child (one session per
 * process); the parent reads the profile.  prism_config_from_env starts
 * nothing, so the environment tests run in the test process itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>

#include "collect_util.h"

/* ---- helpers ---------------------------------------------------------- */

static const char *const prism_vars[] = {
    "PRISM_ENABLED", "PRISM_COLLECT_TIMING", "PRISM_COLLECT_MEMORY", "PRISM_COLLECT_GPU",
    "PRISM_SAMPLE_RATE", "PRISM_ADAPTIVE", "PRISM_ADAPTIVE_STEPS", "PRISM_WARMUP_STEPS",
    "PRISM_ACTIVE_STEPS", "PRISM_MEMORY_INTERVAL_MS", "PRISM_CPU_INTERVAL_MS",
    "PRISM_FLUSH_INTERVAL_MS",
    "PRISM_BUFFER_EVENTS", "PRISM_BUFFER_MB", "PRISM_POLICY", "PRISM_OUTPUT",
    "PRISM_OUTPUT_DIR", "PRISM_BOTTLENECK_PCT", "PRISM_LEAK_MB", "PRISM_CLOCK",
    "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK",
    "PRISM_RUN_PID", "PRISM_RUN_OUTPUT",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof prism_vars / sizeof prism_vars[0]; i++)
        unsetenv(prism_vars[i]);
}

/* Burn a little time so a step has a measurable duration. */
static void spin(unsigned n)
{
    volatile unsigned x = 0;
    for (unsigned i = 0; i < n; i++)
        x = x + i;
}

static bool cfg_equal(const prism_config *a, const prism_config *b)
{
    return a->enabled == b->enabled && a->collect_timing == b->collect_timing &&
           a->collect_memory == b->collect_memory && a->collect_gpu_ops == b->collect_gpu_ops &&
           a->sample_rate == b->sample_rate && a->adaptive_sampling == b->adaptive_sampling &&
           a->adaptive_steps == b->adaptive_steps && a->warmup_steps == b->warmup_steps &&
           a->active_steps == b->active_steps && a->memory_interval_ms == b->memory_interval_ms &&
           a->cpu_interval_ms == b->cpu_interval_ms &&
           a->flush_interval_ms == b->flush_interval_ms && a->buffer_events == b->buffer_events &&
           a->buffer_mb == b->buffer_mb && a->policy == b->policy &&
           a->bottleneck_threshold_pct == b->bottleneck_threshold_pct &&
           a->memory_leak_threshold_mb == b->memory_leak_threshold_mb &&
           ((!a->output && !b->output) || (a->output && b->output && !strcmp(a->output, b->output))) &&
           ((!a->output_dir && !b->output_dir) ||
            (a->output_dir && b->output_dir && !strcmp(a->output_dir, b->output_dir)));
}

/* prism_config_from_env on c with this process's stderr captured into err. */
static void from_env_captured(prism_config *c, char *err, size_t cap)
{
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
    prism_config_from_env(c);
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, cap - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
}

/* A child's session: a default config without periodic memory samples,
 * writing to path. */
static void child_config(prism_config *c, const char *path)
{
    prism_config_default(c);
    c->output = path;
    c->collect_memory = false;
}

/* ---- an output that cannot be opened ------------------------------------ */

typedef struct bad_out {
    char path[512];
} bad_out;

static int unwritable_child(void *arg)
{
    const bad_out *b = arg;
    prism_config c;
    child_config(&c, b->path);
    CHILD_CHECK(prism_init(&c) == -1);
    /* the program goes on, calling everything, unprofiled */
    CHILD_CHECK(!prism_recording());
    CHILD_CHECK(prism_output_path() == NULL);
    uint32_t id = prism_name("x");
    CHILD_CHECK(id == 0);
    for (int i = 0; i < 1000; i++) {
        prism_step_begin();
        prism_push_id(id);
        prism_push("by-name");
        { PRISM_ZONE("zone"); prism_mark_name("m"); }
        prism_pop();
        prism_pop();
        prism_pop();                    /* one too many */
        prism_counter_i(id, i);
        prism_counter_f(id, 0.5);
        prism_mark_id(id);
        prism_thread_name("still-running");
        prism_epoch(1);
        prism_step_end();
    }
    CHILD_CHECK(prism_step_index() == 0);
    prism_shutdown();
    prism_shutdown();
    CHILD_CHECK(!prism_recording());
    return 0;
}

static void test_unwritable_output(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    bad_out b;
    tdir_file(&d, "missing/sub/profile.cbor", b.path, sizeof b.path);
    char err[8192];
    child c = child_start(unwritable_child, &b, false, true);
    assert_child_ok(child_finish(&c, err, sizeof err), err);
    /* exactly one warning, one line, naming the path */
    assert_int_equal(count_lines(err), 1);
    assert_int_equal(count_lines_with(err, b.path), 1);
    assert_int_equal(count_lines_with(err, "prism"), 1);
    assert_int_equal(tdir_count(&d), 0);
    tdir_remove(&d);
}

/* ---- environment values ------------------------------------------------ */

typedef struct env_case {
    const char *var, *value;
} env_case;

static void test_bad_env_values_keep_defaults(void **state)
{
    (void)state;
    static const env_case bad[] = {
        { "PRISM_SAMPLE_RATE", "abc" },
        { "PRISM_SAMPLE_RATE", "0" },
        { "PRISM_SAMPLE_RATE", "1.5" },
        { "PRISM_SAMPLE_RATE", "nan" },
        { "PRISM_SAMPLE_RATE", "" },
        { "PRISM_FLUSH_INTERVAL_MS", "-5" },
        { "PRISM_FLUSH_INTERVAL_MS", "5ms" },
        { "PRISM_FLUSH_INTERVAL_MS", "0" },
        { "PRISM_FLUSH_INTERVAL_MS", "99999999999999999999999" },
        { "PRISM_BUFFER_EVENTS", "10" },
        { "PRISM_POLICY", "maybe" },
        { "PRISM_ENABLED", "perhaps" },
        { "PRISM_COLLECT_MEMORY", "2" },
        { "PRISM_ADAPTIVE_STEPS", "-1" },
        { "PRISM_BOTTLENECK_PCT", "150" },
        { "PRISM_CPU_INTERVAL_MS", "-1" },
        { "PRISM_CPU_INTERVAL_MS", "5ms" },
        { "PRISM_CPU_INTERVAL_MS", "" },
        { "PRISM_CPU_INTERVAL_MS", "3600001" },
    };
    prism_config def;
    prism_config_default(&def);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_env();
        assert_int_equal(setenv(bad[i].var, bad[i].value, 1), 0);
        prism_config c;
        prism_config_default(&c);
        char err[4096];
        from_env_captured(&c, err, sizeof err);
        if (count_lines(err) != 1 || count_lines_with(err, bad[i].var) != 1)
            print_error("%s=\"%s\": stderr was:\n%s\n", bad[i].var, bad[i].value, err);
        assert_int_equal(count_lines(err), 1);
        assert_int_equal(count_lines_with(err, bad[i].var), 1);
        assert_true(cfg_equal(&c, &def));
    }
    clear_env();
}

static void test_good_env_values_apply_silently(void **state)
{
    (void)state;
    clear_env();
    setenv("PRISM_SAMPLE_RATE", "0.5", 1);
    setenv("PRISM_FLUSH_INTERVAL_MS", "25", 1);
    setenv("PRISM_POLICY", "WAIT", 1);
    setenv("PRISM_ENABLED", "off", 1);
    setenv("PRISM_ADAPTIVE", "yes", 1);
    setenv("PRISM_BUFFER_EVENTS", "64", 1);
    setenv("PRISM_OUTPUT", "x-%p.cbor", 1);
    setenv("PRISM_OUTPUT_DIR", "/tmp/somewhere", 1);
    setenv("PRISM_CPU_INTERVAL_MS", "0", 1);
    prism_config c;
    prism_config_default(&c);
    char err[4096];
    from_env_captured(&c, err, sizeof err);
    assert_string_equal(err, "");
    assert_true(c.sample_rate == 0.5);
    assert_int_equal(c.flush_interval_ms, 25);
    assert_int_equal(c.policy, PRISM_POLICY_WAIT);
    assert_false(c.enabled);
    assert_true(c.adaptive_sampling);
    assert_int_equal(c.buffer_events, 64);
    assert_string_equal(c.output, "x-%p.cbor");
    assert_string_equal(c.output_dir, "/tmp/somewhere");
    assert_int_equal(c.cpu_interval_ms, 0);
    clear_env();
}

/* ---- init and shutdown out of order ------------------------------------ */

typedef struct two_paths {
    char a[512], b[512];
} two_paths;

static int init_twice_child(void *arg)
{
    const two_paths *p = arg;
    prism_config a, b;
    child_config(&a, p->a);
    a.flush_interval_ms = 37;
    child_config(&b, p->b);
    b.flush_interval_ms = 41;
    CHILD_CHECK(prism_init(&a) == 0);
    CHILD_CHECK(prism_init(&b) == 0);           /* running: does nothing */
    CHILD_CHECK(prism_init(NULL) == 0);
    CHILD_CHECK(prism_output_path() && !strcmp(prism_output_path(), p->a));
    CHILD_CHECK(access(p->b, F_OK) != 0);
    CHILD_CHECK(prism_recording());
    prism_push("work");
    prism_pop();
    prism_shutdown();
    CHILD_CHECK(!prism_recording());
    prism_shutdown();                           /* again: fine */
    /* a second session is refused, with one warning */
    CHILD_CHECK(prism_init(&b) == -1);
    CHILD_CHECK(!prism_recording());
    prism_push("after");
    prism_pop();
    prism_shutdown();
    CHILD_CHECK(access(p->b, F_OK) != 0);
    return 0;
}

static void test_init_twice_shutdown_twice_init_after(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    two_paths p;
    tdir_file(&d, "a.cbor", p.a, sizeof p.a);
    tdir_file(&d, "b.cbor", p.b, sizeof p.b);
    char err[8192];
    child c = child_start(init_twice_child, &p, false, true);
    assert_child_ok(child_finish(&c, err, sizeof err), err);
    assert_int_equal(count_lines(err), 1);                  /* init after shutdown */
    assert_int_equal(count_lines_with(err, "prism_init"), 1);
    assert_int_equal(tdir_count(&d), 1);
    psum *s = psum_read_sound(p.a, false);
    assert_int_equal(s->footers, 1);
    assert_true(s->footer.clean);
    const prism_value *v = psum_config(s, "flush_interval_ms");
    assert_non_null(v);
    assert_int_equal(v->v.u, 37);
    assert_int_equal(psum_id(s, "after"), 0);
    psum_free(s);
    tdir_remove(&d);
}

static int disabled_child(void *arg)
{
    prism_config c;
    child_config(&c, arg);
    c.enabled = false;
    CHILD_CHECK(prism_init(&c) == 0);           /* documented: 0, not recording */
    CHILD_CHECK(!prism_recording());
    prism_push("x");
    prism_pop();
    prism_step_begin();
    prism_step_end();
    prism_shutdown();
    return 0;
}

static void test_disabled_by_config(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "never.cbor", path, sizeof path);
    char err[4096];
    child c = child_start(disabled_child, path, false, true);
    assert_child_ok(child_finish(&c, err, sizeof err), err);
    assert_string_equal(err, "");
    assert_int_equal(tdir_count(&d), 0);
    tdir_remove(&d);
}

/* ---- unbalanced regions ---------------------------------------------- */

static int open_regions_child(void *arg)
{
    prism_config c;
    child_config(&c, arg);
    CHILD_CHECK(prism_init(&c) == 0);
    prism_push("one");
    prism_push("two");
    prism_push("three");
    return 0;                                   /* exit(): the atexit hook */
}

static void test_regions_open_at_exit(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "open.cbor", path, sizeof path);
    psum *p = psum_from_child(open_regions_child, path, path, false);
    assert_int_equal(p->footers, 1);
    uint64_t enters = 0, exits = 0;
    for (uint32_t i = 0; i < PS_STREAMS; i++) {
        enters += p->s[i].enters;
        exits += p->s[i].exits;
    }
    assert_int_equal(enters, 3);
    assert_int_equal(exits, 0);
    assert_true(psum_id(p, "one") && psum_id(p, "two") && psum_id(p, "three"));
    psum_free(p);
    tdir_remove(&d);
}

static int pop_without_push_child(void *arg)
{
    prism_pop();                                /* before any session */
    prism_config c;
    child_config(&c, arg);
    CHILD_CHECK(prism_init(&c) == 0);
    prism_pop();
    prism_pop();
    prism_pop();
    prism_push("a");
    prism_pop();
    prism_pop();
    prism_step_begin();
    prism_pop();
    prism_step_end();
    prism_push("b");
    prism_pop();
    prism_shutdown();
    return 0;
}

static void test_pop_without_push(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "pop.cbor", path, sizeof path);
    psum *p = psum_from_child(pop_without_push_child, path, path, false);
    assert_int_equal(p->footers, 1);
    uint64_t enters = 0, exits = 0, at_zero = 0;
    for (uint32_t i = 0; i < PS_STREAMS; i++) {
        enters += p->s[i].enters;
        exits += p->s[i].exits;
        at_zero += p->s[i].exits_at_zero;
        assert_int_equal(p->s[i].depth, 0);
    }
    assert_int_equal(enters, 2);
    /* an unmatched exit is either not written or written at depth 0 */
    assert_int_equal(exits - at_zero, 2);
    assert_true(exits <= 7);
    assert_int_equal(p->nsteps, 1);
    psum_free(p);
    tdir_remove(&d);
}

/* ---- the output path pattern ----------------------------------------- */

typedef struct pattern_case {
    const char *output;         /* PRISM_OUTPUT                              */
    const char *rank;           /* RANK, NULL: unset                         */
    bool use_dir;               /* PRISM_OUTPUT_DIR = the test directory     */
    const char *dir;            /* filled in: the test directory             */
    const char *run_pid;        /* PRISM_RUN_PID, NULL: unset                */
    const char *run_output;     /* PRISM_RUN_OUTPUT, NULL: unset             */
} pattern_case;

static int pattern_child(void *arg)
{
    const pattern_case *pc = arg;
    clear_env();
    setenv("PRISM_OUTPUT", pc->output, 1);
    if (pc->rank)
        setenv("RANK", pc->rank, 1);
    if (pc->use_dir)
        setenv("PRISM_OUTPUT_DIR", pc->dir, 1);
    if (pc->run_pid)
        setenv("PRISM_RUN_PID", pc->run_pid, 1);
    if (pc->run_output)
        setenv("PRISM_RUN_OUTPUT", pc->run_output, 1);
    setenv("PRISM_COLLECT_MEMORY", "0", 1);
    CHILD_CHECK(prism_init(NULL) == 0);
    CHILD_CHECK(prism_recording());
    /* the first session of a process tree claims its file for the tree */
    const char *claimed = getenv("PRISM_RUN_OUTPUT");
    CHILD_CHECK(claimed && claimed[0] == '/');
    if (!pc->run_output)
        CHILD_CHECK(!strcmp(claimed, prism_output_path()));
    prism_push("x");
    prism_pop();
    prism_shutdown();
    return 0;
}

static void check_run(const tdir *d, const char *output, const char *rank, bool use_dir,
                      const char *run_pid, const char *run_output, const char *want_name,
                      int64_t want_rank)
{
    char out[1024];
    pattern_case pc = { output, rank, use_dir, d->path, run_pid, run_output };
    if (!use_dir) {
        snprintf(out, sizeof out, "%s/%s", d->path, output);
        pc.output = out;
    }
    char err[4096];
    child c = child_start(pattern_child, &pc, false, true);
    pid_t pid = c.pid;
    assert_child_ok(child_finish(&c, err, sizeof err), err);
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    /* the expected name: %p and %h filled in here */
    char name[512], path[1024];
    size_t o = 0;
    for (const char *s = want_name; *s && o < sizeof name - 64; s++) {
        if (s[0] == '@' && s[1] == 'p') {
            o += (size_t)snprintf(name + o, sizeof name - o, "%ld", (long)pid);
            s++;
        } else if (s[0] == '@' && s[1] == 'h') {
            o += (size_t)snprintf(name + o, sizeof name - o, "%s", host);
            s++;
        } else {
            name[o++] = *s;
        }
    }
    name[o] = '\0';
    snprintf(path, sizeof path, "%s/%s", d->path, name);
    if (access(path, F_OK) != 0)
        print_error("expected %s\n", path);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(tdir_count(d), 1);
    psum *p = psum_read_sound(path, false);
    const prism_header *h = prism_reader_header(p->r);
    assert_int_equal(h->pid, (uint64_t)pid);
    assert_int_equal(h->rank, want_rank);
    assert_string_equal(h->host, host);
    psum_free(p);
    unlink(path);
}

static void check_pattern(const tdir *d, const char *output, const char *rank, bool use_dir,
                          const char *want_name, int64_t want_rank)
{
    check_run(d, output, rank, use_dir, NULL, NULL, want_name, want_rank);
}

static void test_output_pattern(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    /* '@p' / '@h' in the wanted name stand for the child's pid / host */
    check_pattern(&d, "o-%p-%h-%r-%%-%x.cbor", "3", false, "o-@p-@h-3-%-%x.cbor", 3);
    check_pattern(&d, "rel-%r-%p.cbor", NULL, true, "rel-0-@p.cbor", -1);
    check_pattern(&d, "100%%.cbor", "12", true, "100%.cbor", 12);
    tdir_remove(&d);
}

/* A process started from a profiled one (a spawned DataLoader worker, a
 * subprocess) inherits its output pattern: it writes its own file, never
 * the one its parent is writing. */
static void test_output_of_a_child_process(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    char first[1024];
    snprintf(first, sizeof first, "%s/run.cbor", d.path);
    /* the parent's file (PRISM_RUN_OUTPUT) is this one: the pid goes in */
    check_run(&d, "run.cbor", NULL, false, NULL, first, "run.@p.cbor", -1);
    /* another file than the parent's: its own name */
    check_run(&d, "other.cbor", NULL, false, NULL, first, "other.cbor", -1);
    /* under prism-run (PRISM_RUN_PID another process's): no %p, pid added */
    check_run(&d, "job.cbor", NULL, false, "1", NULL, "job.@p.cbor", -1);
    check_run(&d, "job", NULL, false, "1", NULL, "job.@p", -1);
    /* a pattern with %p is already per process */
    check_run(&d, "job-%p.cbor", NULL, false, "1", NULL, "job-@p.cbor", -1);
    tdir_remove(&d);
}

/* ---- configuration into the header ------------------------------------ */

static int config_child(void *arg)
{
    prism_config c;
    prism_config_default(&c);
    c.output = arg;
    c.collect_timing = false;
    c.collect_memory = false;
    c.collect_gpu_ops = false;
    c.sample_rate = 0.5;
    c.adaptive_sampling = true;
    c.adaptive_steps = 7;
    c.warmup_steps = 3;
    c.active_steps = 11;
    c.memory_interval_ms = 250;
    c.cpu_interval_ms = 7;
    c.flush_interval_ms = 20;
    c.buffer_events = 1000;
    c.buffer_mb = 3;
    c.policy = PRISM_POLICY_WAIT;
    c.bottleneck_threshold_pct = 12.5;
    c.memory_leak_threshold_mb = 33.25;
    CHILD_CHECK(prism_init(&c) == 0);
    prism_shutdown();
    return 0;
}

static void want_bool(const psum *p, const char *key, bool v)
{
    const prism_value *x = psum_config(p, key);
    if (!x)
        print_error("no config key %s\n", key);
    assert_non_null(x);
    assert_int_equal(x->type, PRISM_VAL_BOOL);
    assert_int_equal(x->v.b, v);
}

static void want_uint(const psum *p, const char *key, uint64_t v)
{
    const prism_value *x = psum_config(p, key);
    if (!x)
        print_error("no config key %s\n", key);
    assert_non_null(x);
    assert_int_equal(x->type, PRISM_VAL_UINT);
    assert_int_equal(x->v.u, v);
}

static void want_float(const psum *p, const char *key, double v)
{
    const prism_value *x = psum_config(p, key);
    if (!x)
        print_error("no config key %s\n", key);
    assert_non_null(x);
    assert_int_equal(x->type, PRISM_VAL_FLOAT);
    assert_true(x->v.f == v);
}

static void test_config_in_header(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "config.cbor", path, sizeof path);
    psum *p = psum_from_child(config_child, path, path, false);
    want_bool(p, "enabled", true);
    want_bool(p, "collect_timing", false);
    want_bool(p, "collect_memory", false);
    want_bool(p, "collect_gpu_ops", false);
    want_float(p, "sample_rate", 0.5);
    want_bool(p, "adaptive_sampling", true);
    want_uint(p, "adaptive_steps", 7);
    want_uint(p, "warmup_steps", 3);
    want_uint(p, "active_steps", 11);
    want_uint(p, "memory_interval_ms", 250);
    want_uint(p, "cpu_interval_ms", 7);
    want_uint(p, "flush_interval_ms", 20);
    want_uint(p, "buffer_events", 1000);
    want_uint(p, "buffer_mb", 3);
    want_float(p, "bottleneck_threshold_pct", 12.5);
    want_float(p, "memory_leak_threshold_mb", 33.25);
    const prism_value *x = psum_config(p, "policy");
    assert_non_null(x);
    assert_int_equal(x->type, PRISM_VAL_TEXT);
    assert_string_equal(x->v.s, "wait");
    psum_free(p);
    tdir_remove(&d);
}

/* ---- step sampling ------------------------------------------------------ */

#define STEPS 40u

typedef struct sampling {
    char path[512];
    double rate;
    bool adaptive;
    uint32_t adaptive_steps;
} sampling;

static int sampling_child(void *arg)
{
    const sampling *sp = arg;
    setenv("PRISM_CLOCK", "monotonic", 1);      /* one exact ns scale */
    prism_config c;
    child_config(&c, sp->path);
    c.sample_rate = sp->rate;
    c.adaptive_sampling = sp->adaptive;
    c.adaptive_steps = sp->adaptive_steps;
    CHILD_CHECK(prism_init(&c) == 0);
    uint32_t work = prism_name("work"), loss = prism_name("loss");
    for (uint32_t i = 0; i < STEPS; i++) {
        CHILD_CHECK(prism_step_index() == i);
        prism_epoch(i / 10);
        prism_step_begin();
        spin(2000);
        prism_push_id(work);
        spin(2000);
        prism_pop();
        prism_counter_f(loss, 1.0 / (i + 1));
        spin(2000);
        prism_step_end();
        spin(2000);
    }
    prism_shutdown();
    return 0;
}

static void check_sampling(const sampling *sp, bool (*want)(uint32_t idx))
{
    psum *p = psum_from_child(sampling_child, (void *)sp, sp->path, true);
    assert_int_equal(p->footers, 1);
    assert_int_equal(p->nsteps, STEPS);
    uint32_t nsampled = 0;
    for (uint32_t i = 0; i < STEPS; i++) {
        const prism_step *st = &p->steps[i];
        assert_int_equal(st->index, i);
        assert_int_equal(st->epoch, i / 10);
        assert_true(st->end > st->start);       /* every step has a duration */
        assert_int_equal(st->flags & PRISM_STEP_SAMPLED, want(i) ? PRISM_STEP_SAMPLED : 0);
        if (i)
            assert_true(st->start >= p->steps[i - 1].end);
        nsampled += want(i);
        /* regions inside the step's time range: one region iff sampled */
        size_t enters = 0, exits = 0;
        for (size_t k = 0; k < p->nev; k++) {
            if (p->ev[k].ts < st->start || p->ev[k].ts > st->end)
                continue;
            if (p->ev[k].kind == PRISM_REGION_ENTER)
                enters++;
            else
                exits++;
        }
        assert_int_equal(enters, want(i) ? 1 : 0);
        assert_int_equal(exits, want(i) ? 1 : 0);
    }
    /* and none outside any step */
    assert_int_equal(p->nev, 2 * nsampled);
    /* counters are recorded in every step, sampled or not */
    uint64_t counters = 0;
    for (uint32_t i = 0; i < PS_STREAMS; i++)
        counters += p->s[i].counters;
    assert_int_equal(counters, STEPS);
    psum_free(p);
}

static bool every_4th(uint32_t i) { return i % 4 == 0; }
static bool first5_then_10th(uint32_t i) { return i < 5 || (i - 5) % 10 == 0; }
static bool every_step(uint32_t i) { (void)i; return true; }

static void test_sample_rate(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    sampling sp = { "", 0.25, false, 0 };
    tdir_file(&d, "rate.cbor", sp.path, sizeof sp.path);
    check_sampling(&sp, every_4th);
    sampling all = { "", 1.0, false, 0 };
    tdir_file(&d, "all.cbor", all.path, sizeof all.path);
    check_sampling(&all, every_step);
    tdir_remove(&d);
}

static void test_adaptive_sampling(void **state)
{
    (void)state;
    tdir d;
    tdir_make(&d);
    sampling sp = { "", 0.1, true, 5 };
    tdir_file(&d, "adaptive.cbor", sp.path, sizeof sp.path);
    check_sampling(&sp, first5_then_10th);
    tdir_remove(&d);
}

/* ---- memory samples tagged with steps ----------------------------------- */

#define MEM_STEPS 20u

static int memory_child(void *arg)
{
    setenv("PRISM_CLOCK", "monotonic", 1);
    prism_config c;
    child_config(&c, arg);
    c.collect_memory = true;
    c.memory_interval_ms = 3600000;             /* periodic: at start and end only */
    CHILD_CHECK(prism_init(&c) == 0);
    for (uint32_t i = 0; i < MEM_STEPS; i++) {
        prism_step_begin();
        prism_push("work");
        spin(1000);
        prism_pop();
        prism_step_end();
    }
    prism_shutdown();
    return 0;
}

static void test_memory_at_step_boundaries(void **state)
{
    (void)state;
    tdir d;
    char path[512];
    tdir_make(&d);
    tdir_file(&d, "memory.cbor", path, sizeof path);
    psum *p = psum_from_child(memory_child, path, path, false);
    assert_int_equal(p->nsteps, MEM_STEPS);
    size_t at_step[MEM_STEPS] = { 0 };
    uint64_t prev = PRISM_NO_STEP;
    for (size_t i = 0; i < p->nmem; i++) {
        const prism_memory_sample *m = &p->mem[i];
        assert_true(m->rss > 0);
        if (m->step == PRISM_NO_STEP)
            continue;
        assert_true(m->step < MEM_STEPS);
        at_step[m->step]++;
        /* the writer reads memory once when it learns that steps ended,
         * tagged with the latest of them: after that step's end, and never
         * a step older than one already tagged */
        assert_true(m->ts >= p->steps[m->step].end);
        assert_true(prev == PRISM_NO_STEP || m->step > prev);
        prev = m->step;
    }
    for (uint32_t i = 0; i < MEM_STEPS; i++)
        assert_true(at_step[i] <= 1);
    assert_int_equal(at_step[MEM_STEPS - 1], 1);  /* the last: at shutdown, if not before */
    psum_free(p);
    tdir_remove(&d);
}

static int group_setup(void **state)
{
    (void)state;
    clear_env();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritable_output),
        cmocka_unit_test(test_bad_env_values_keep_defaults),
        cmocka_unit_test(test_good_env_values_apply_silently),
        cmocka_unit_test(test_init_twice_shutdown_twice_init_after),
        cmocka_unit_test(test_disabled_by_config),
        cmocka_unit_test(test_regions_open_at_exit),
        cmocka_unit_test(test_pop_without_push),
        cmocka_unit_test(test_output_pattern),
        cmocka_unit_test(test_output_of_a_child_process),
        cmocka_unit_test(test_config_in_header),
        cmocka_unit_test(test_sample_rate),
        cmocka_unit_test(test_adaptive_sampling),
        cmocka_unit_test(test_memory_at_step_boundaries),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}

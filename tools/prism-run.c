/*
 * prism-run - profile an unmodified program (a CUDA binary, `python
 * train.py`) with PRISM: set the environment, then exec the program.
 *
 *   prism-run [-o OUT] [options] -- program [args...]
 *
 * The CUDA driver loads libprism-inject.so (CUDA_INJECTION64_PATH) when the
 * program initialises CUDA; its InitializeInjection starts the session from
 * the PRISM_* variables set here and attaches CUPTI.  A program linked with
 * libprism starts its session from the same variables when it loads.
 * prism-run execs the program in place: same pid, signals and exit status.
 *
 * A Python program (the program is a python interpreter, or a script whose
 * #! line names one) gets `<root>/site:<root>` in front of PYTHONPATH, root
 * being the directory that holds the prism package: PRISM_PYTHONPATH, else
 * ../python next to this binary (the build), else ../lib/prism/python (an
 * install).  The sitecustomize there starts the session when the interpreter
 * starts and instruments PyTorch automatically.
 *
 * Exit status: the program's; 125 when prism-run itself fails (usage, no
 * injection library), 126 when the program cannot be executed, 127 when it
 * is not found.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 125

static const char usage[] =
    "usage: prism-run [-o OUT] [options] -- program [args...]\n"
    "Profile a program with PRISM (CPU regions of instrumented code, CUDA activity through\n"
    "CUPTI, NVTX ranges, memory), without changing it.\n"
    "\n"
    "  -o, --output PATTERN   profile file; %p pid, %h host, %r rank (default prism-%p.cbor)\n"
    "      --output-dir DIR   directory for a relative output (PRISM_OUTPUT_DIR)\n"
    "      --sample-rate R    fraction of steps whose regions are recorded, (0, 1]\n"
    "      --adaptive N       record the first N steps densely (PRISM_ADAPTIVE_STEPS)\n"
    "      --flush-ms MS      writer flush period (PRISM_FLUSH_INTERVAL_MS)\n"
    "      --memory-ms MS     memory sampling period (PRISM_MEMORY_INTERVAL_MS)\n"
    "      --no-memory        no memory sampling (PRISM_COLLECT_MEMORY=0)\n"
    "      --no-timing        no CPU regions (PRISM_COLLECT_TIMING=0)\n"
    "      --no-gpu           no CUPTI activity (PRISM_COLLECT_GPU=0)\n"
    "      --warmup-steps N   GPU activity only after N steps (PRISM_WARMUP_STEPS)\n"
    "      --active-steps N   ... and for N steps, 0 = all (PRISM_ACTIVE_STEPS)\n"
    "      --policy P         drop | wait when buffers run out (PRISM_POLICY)\n"
    "      --buffer-mb N      event buffers, all threads together (PRISM_BUFFER_MB)\n"
    "      --cupti PATH       the libcupti to use (PRISM_CUPTI_PATH, NVTX_INJECTION64_PATH)\n"
    "  -v, --verbose          print the variables set, on stderr\n"
    "  -h, --help             this text\n"
    "\n"
    "\n"
    "A Python program (python, python3, pythonX.Y, or a script whose #! line names python)\n"
    "gets PRISM's sitecustomize in front of PYTHONPATH: the session starts with the\n"
    "interpreter and PyTorch modules, steps and data waits are recorded automatically\n"
    "(PRISM_PYTHONPATH: the directory holding the prism package, if not found next to\n"
    "prism-run).\n"
    "\n"
    "Exit status: the program's; 125 prism-run failed, 126 cannot execute, 127 not found.\n";

typedef struct opt {
    const char *name;           /* long option, without "--" */
    const char *var;            /* PRISM_* variable it sets */
    const char *value;          /* fixed value, or NULL: takes an argument */
} opt;

static const opt opts[] = {
    { "output", "PRISM_OUTPUT", NULL },
    { "output-dir", "PRISM_OUTPUT_DIR", NULL },
    { "sample-rate", "PRISM_SAMPLE_RATE", NULL },
    { "adaptive", "PRISM_ADAPTIVE_STEPS", NULL },
    { "flush-ms", "PRISM_FLUSH_INTERVAL_MS", NULL },
    { "memory-ms", "PRISM_MEMORY_INTERVAL_MS", NULL },
    { "no-memory", "PRISM_COLLECT_MEMORY", "0" },
    { "no-timing", "PRISM_COLLECT_TIMING", "0" },
    { "no-gpu", "PRISM_COLLECT_GPU", "0" },
    { "warmup-steps", "PRISM_WARMUP_STEPS", NULL },
    { "active-steps", "PRISM_ACTIVE_STEPS", NULL },
    { "policy", "PRISM_POLICY", NULL },
    { "buffer-mb", "PRISM_BUFFER_MB", NULL },
    { "cupti", "PRISM_CUPTI_PATH", NULL },
};
#define NOPTS (sizeof opts / sizeof opts[0])

static bool verbose;

static void set(const char *var, const char *value)
{
    if (setenv(var, value, 1) != 0) {
        fprintf(stderr, "prism-run: cannot set %s: %s\n", var, strerror(errno));
        exit(EXIT_USAGE);
    }
    if (verbose)
        fprintf(stderr, "prism-run: %s=%s\n", var, value);
}

static void die_usage(const char *what, const char *arg)
{
    fprintf(stderr, "prism-run: %s%s%s\nTry 'prism-run --help'.\n", what, arg ? ": " : "",
            arg ? arg : "");
    exit(EXIT_USAGE);
}

/* Is path readable? */
static bool readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* A file of ours: the path in the environment variable var when set, else
 * the first of rel[] (relative to this binary's directory) that ok()
 * accepts; its real path into out. */
static bool find_beside(const char *var, const char *const *rel, size_t nrel,
                        bool (*ok)(const char *), char *out, size_t n)
{
    const char *env = getenv(var);
    if (env && *env)
        return strlen(env) < n && realpath(env, out) != NULL;
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return false;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    for (size_t i = 0; i < nrel; i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s/%s", self, rel[i]);
        if (n >= PATH_MAX && ok(cand) && realpath(cand, out))
            return true;
    }
    return false;
}

/* libprism-inject.so: PRISM_INJECT_LIB, or next to this binary
 * (../lib when installed, the build's lib/ when run from build/bin). */
static bool find_inject(char *out, size_t n)
{
    static const char *const rel[] = { "../lib/libprism-inject.so", "../lib64/libprism-inject.so",
                                       "libprism-inject.so" };
    return find_beside("PRISM_INJECT_LIB", rel, sizeof rel / sizeof rel[0], readable, out, n);
}

/* Parse options up to "--" or the first non-option; returns the index of
 * the program. */

/* --cupti may name a folder (libcupti.so.13/.12 inside, cupti_where.c) */
static bool folder(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int parse(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            return i + 1;
        if (a[0] != '-' || !a[1])
            return i;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            exit(0);
        }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = true;
            continue;
        }
        const char *name = !strcmp(a, "-o") ? "output" : (a[1] == '-' ? a + 2 : NULL);
        const char *val = NULL;
        char buf[64];
        if (name && strchr(name, '=')) {            /* --name=value */
            size_t k = (size_t)(strchr(name, '=') - name);
            snprintf(buf, sizeof buf, "%.*s", (int)(k < sizeof buf ? k : sizeof buf - 1), name);
            val = name + k + 1;
            name = buf;
        }
        const opt *o = NULL;
        for (size_t j = 0; name && j < NOPTS; j++)
            if (!strcmp(name, opts[j].name))
                o = &opts[j];
        if (!o)
            die_usage("unknown option", a);
        if (o->value) {
            if (val)
                die_usage("option takes no value", a);
            set(o->var, o->value);
            continue;
        }
        if (!val) {
            if (i + 1 >= argc)
                die_usage("option needs a value", a);
            val = argv[++i];
        }
        if (!*val)
            die_usage("empty value for option", a);
        set(o->var, val);
        if (!strcmp(o->name, "adaptive"))
            set("PRISM_ADAPTIVE", "1");
        else if (!strcmp(o->name, "cupti") && !folder(val))
            set("NVTX_INJECTION64_PATH", val);     /* a folder: the session names the file */
    }
    return i;
}

/* Does NAME (a base name) name a Python interpreter: python, python3,
 * python3.11, python3.11d? */
static bool python_name(const char *name)
{
    if (strncmp(name, "python", 6) != 0)
        return false;
    const char *p = name + 6;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        p++;
    return *p == '\0' || ((*p == 'd' || *p == 'm' || *p == 'u') && p[1] == '\0');
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The program's file: prog itself when it holds a '/', else its first
 * match on PATH; false when none. */
static bool resolve(const char *prog, char *out, size_t n)
{
    if (strchr(prog, '/'))
        return (size_t)snprintf(out, n, "%s", prog) < n;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *end = strchr(path, ':');
        size_t len = end ? (size_t)(end - path) : strlen(path);
        if ((size_t)snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", prog) < n &&
            access(out, X_OK) == 0)
            return true;
        path += len + (end ? 1 : 0);
    }
    return false;
}

/* Is the program a Python interpreter, or a script run by one (its #! line
 * names python: #!/usr/bin/python3, #!/usr/bin/env python3 -u)? */
static bool python_program(const char *prog)
{
    if (python_name(base_name(prog)))
        return true;
    char file[PATH_MAX];
    if (!resolve(prog, file, sizeof file))
        return false;
    FILE *f = fopen(file, "re");
    if (!f)
        return false;
    char line[256] = "";
    bool py = false;
    if (fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!') {
        /* the interpreter, and the program env runs */
        char *save = NULL, *tok = strtok_r(line + 2, " \t\r\n", &save);
        if (tok && !strcmp(base_name(tok), "env")) {
            tok = strtok_r(NULL, " \t\r\n", &save);
            while (tok && tok[0] == '-')                /* env -S, env -u ... */
                tok = strtok_r(NULL, " \t\r\n", &save);
        }
        py = tok && python_name(base_name(tok));
    }
    fclose(f);
    return py;
}

/* Does dir hold the prism package (dir/prism/__init__.py)? */
static bool has_package(const char *dir)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/prism/__init__.py", dir);
    return access(p, R_OK) == 0;
}

/* The directory holding the prism package: PRISM_PYTHONPATH, else next to
 * this binary (../python in the build, ../lib/prism/python installed). */
static bool find_python_root(char *out, size_t n)
{
    static const char *const rel[] = { "../python", "../lib/prism/python",
                                       "../lib64/prism/python" };
    return find_beside("PRISM_PYTHONPATH", rel, sizeof rel / sizeof rel[0], has_package, out, n);
}

/* A Python program: put <root>/site:<root> in front of PYTHONPATH.  Without
 * the package, one line says so and the program runs unprofiled. */
static void setup_python(void)
{
    char root[PATH_MAX];
    if (!find_python_root(root, sizeof root) || !has_package(root)) {
        fprintf(stderr, "prism-run: cannot find the prism Python package next to prism-run "
                        "(../python, ../lib/prism/python); set PRISM_PYTHONPATH: the Python "
                        "program runs unprofiled\n");
        return;
    }
    const char *old = getenv("PYTHONPATH");
    size_t n = 2 * strlen(root) + (old ? strlen(old) : 0) + 16;
    char *v = malloc(n);
    if (!v) {
        fprintf(stderr, "prism-run: out of memory\n");
        exit(EXIT_USAGE);
    }
    snprintf(v, n, "%s/site:%s%s%s", root, root, old && *old ? ":" : "", old && *old ? old : "");
    set("PYTHONPATH", v);
    free(v);
}

int main(int argc, char **argv)
{
    if (!getenv("PRISM_OUTPUT"))
        setenv("PRISM_OUTPUT", "prism-%p.cbor", 1);
    int first = parse(argc, argv);
    if (first >= argc)
        die_usage("no program to run", NULL);
    char inject[PATH_MAX];
    if (!find_inject(inject, sizeof inject)) {
        fprintf(stderr, "prism-run: cannot find libprism-inject.so next to prism-run "
                        "(../lib/); set PRISM_INJECT_LIB\n");
        return EXIT_USAGE;
    }
    const char *old = getenv("CUDA_INJECTION64_PATH");
    if (old && *old && strcmp(old, inject) != 0)
        fprintf(stderr, "prism-run: replacing CUDA_INJECTION64_PATH=%s\n", old);
    set("CUDA_INJECTION64_PATH", inject);
    /* NVTX ranges through the same library to PRISM's libcupti; a user's
     * own NVTX injection (Nsight) is left as it is */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!nvtx || !*nvtx)
        set("NVTX_INJECTION64_PATH", inject);
    if (verbose)
        fprintf(stderr, "prism-run: PRISM_OUTPUT=%s\n", getenv("PRISM_OUTPUT"));
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    set("PRISM_RUN_PID", pid);          /* exec keeps the pid: children differ */
    if (python_program(argv[first]))
        setup_python();
    execvp(argv[first], &argv[first]);
    int e = errno;
    if (e == ENOENT) {
        fprintf(stderr, "prism-run: %s: command not found\n", argv[first]);
        return 127;
    }
    fprintf(stderr, "prism-run: %s: %s\n", argv[first], strerror(e));
    return 126;
}

/*
 * inject.c - libprism-inject.so: the CUDA injection entry point.
 *
 * prism-run sets CUDA_INJECTION64_PATH to this library.  The CUDA driver
 * loads it inside cuInit (with its dependency libprism.so, whose
 * constructor sees that and leaves the start to us) and calls
 * InitializeInjection, where CUPTI may be set up: the session starts from
 * the PRISM_* environment and CUPTI attaches at once, before the program's
 * first kernel.
 *
 * One session per process:
 *   - a program that links libprism.so dynamically shares this copy: its
 *     session (started by the constructor before main) just gets CUPTI
 *     attached now;
 *   - a program that links libprism.a has its own copy, started before
 *     main; its writer thread ("prism-writer") is running, so this copy
 *     stays off and the program's copy attaches CUPTI itself (prism_init
 *     at start, or its writer when it sees the driver load);
 *   - a child process of the profiled program (a worker started with
 *     exec, not fork) that initialises CUDA too must not overwrite the
 *     parent's file: when PRISM_RUN_PID (set by prism-run) is not our pid
 *     and the output pattern has no %p, the pid goes in front of the
 *     extension (train.cbor -> train.12345.cbor).
 *
 * Built into libprism-inject.so only (not into libprism.a / libprism.so).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"

int InitializeInjection(void);

/* Is another copy of libcollect recording this process? */
static bool other_copy_running(void)
{
    if (prism_recording())
        return false;                   /* this copy: no other */
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            found = !strncmp(comm, "prism-writer", 12);
        fclose(f);
    }
    closedir(d);
    return found;
}

/* out: pattern with ".<pid>" before the extension (or at the end). */
static void per_process_output(const char *pattern, char *out, size_t n)
{
    const char *slash = strrchr(pattern, '/');
    const char *dot = strrchr(slash ? slash + 1 : pattern, '.');
    size_t stem = dot && dot != (slash ? slash + 1 : pattern) ? (size_t)(dot - pattern)
                                                                : strlen(pattern);
    snprintf(out, n, "%.*s.%ld%s", (int)stem, pattern, (long)getpid(), pattern + stem);
}

int InitializeInjection(void)
{
    if (other_copy_running())
        return 1;
    prism_config c;
    prism_config_default(&c);
    prism_config_from_env(&c);
    static char out[4096];              /* the session keeps the pointer */
    const char *root = getenv("PRISM_RUN_PID");
    if (root && atol(root) != (long)getpid() && c.output && !strstr(c.output, "%p")) {
        per_process_output(c.output, out, sizeof out);
        c.output = out;
    }
    prism_init(&c);
    session *s = prism__s;
    if (s && prism_recording())
        cupti_injected(s);
    return 1;                           /* the driver goes on either way */
}

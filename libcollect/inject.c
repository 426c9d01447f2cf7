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
 *     stays off and hands over: every loaded object that exports
 *     prism__cupti_attach_now (the Python module, a program built with
 *     -rdynamic) is asked to attach its CUPTI now, inside cuInit; a copy
 *     that cannot be reached attaches itself (prism_init at start, or its
 *     writer when it sees the driver load, up to one flush later);
 *   - a child process of the profiled program (a worker started with
 *     exec, not fork) that initialises CUDA too never overwrites the
 *     parent's file: its session writes its own (session.c, own_output).
 *
 * Built into libprism-inject.so only (not into libprism.a / libprism.so).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti.h"

/* CUPTI looks it up by name (dlsym): exported from libprism-inject.so */
PRISM_API int InitializeInjection(void);
/* NVTX looks this one up when prism-run's NVTX_INJECTION64_PATH names this
 * library: NVTX is handed on to the libcupti PRISM attaches (cupti.h). */
PRISM_API int InitializeInjectionNvtx2(const void *get_export_table);

int InitializeInjectionNvtx2(const void *get_export_table)
{
    return prism__nvtx_handoff(get_export_table);
}

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

/* The loaded objects' names, collected first: dlopen is not called from
 * inside dl_iterate_phdr (the loader's locks). */
typedef struct objects {
    char name[64][512];
    int n;
} objects;

static int collect_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    objects *o = arg;
    if (o->n < 64)
        snprintf(o->name[o->n++], sizeof o->name[0], "%s", info->dlpi_name ? info->dlpi_name : "");
    return 0;
}

/* Call every copy's prism__cupti_attach_now: this copy's (libprism.so's,
 * not recording) returns 0; comparing addresses would not tell them apart
 * (a program exporting the name interposes it here).  Returns how many
 * record. */
static int hand_over(void)
{
    objects *o = calloc(1, sizeof *o);
    if (!o)
        return 0;
    dl_iterate_phdr(collect_object, o);
    int n = 0;
    for (int i = 0; i < o->n; i++) {
        void *h = dlopen(o->name[i][0] ? o->name[i] : NULL, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        int (*now)(void);
        *(void **)&now = dlsym(h, "prism__cupti_attach_now");
        if (now)
            n += now();
        dlclose(h);
    }
    free(o);
    return n;
}

int InitializeInjection(void)
{
    if (cupti_inject_plan(prism_recording(), other_copy_running()) == CUPTI_HAND_OVER) {
        /* issue 27 (4): the copy that records (the Python module's, a
         * program's own) attaches now, inside cuInit, before any kernel:
         * its writer would see the driver only at its next flush */
        hand_over();
        return 1;
    }
    prism_config c;
    prism_config_default(&c);
    prism_config_from_env(&c);
    prism_init(&c);
    session *s = prism__s;
    if (s && prism_recording())
        prism__cupti_injected(s);
    return 1;                           /* the driver goes on either way */
}

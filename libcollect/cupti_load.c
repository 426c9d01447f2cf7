/*
 * cupti_load.c - libcupti opened at run time (never linked) and its entry
 * points resolved into cupti_fn, and which libraries the process has
 * loaded already (libcuda: may CUPTI attach now; libprism-inject: was this
 * library loaded by the injection).  Where libcupti is looked for:
 * cupti_where.c; when it is opened (attach): cupti.c.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"

/* ---- what the process has loaded (both builds) ------------------------ */

/* dl_iterate_phdr: is an object whose file name starts with arg loaded? */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    const char *base = slash ? slash + 1 : info->dlpi_name;
    return base && !strncmp(base, arg, strlen(arg));
}

bool cupti_loaded_by_injection(void)
{
    return dl_iterate_phdr(find_lib, (void *)"libprism-inject") != 0;
}

/* Not a failing dlopen(RTLD_NOLOAD): that leaves glibc's dlerror state
 * allocated on the writer thread, which a fork()ed child reports as leaked. */
bool cupti_libcuda_loaded(void)
{
    return dl_iterate_phdr(find_lib, (void *)"libcuda.so") != 0;
}

#ifdef PRISM_HAVE_CUPTI_HEADERS

/* ---- libcupti: opened, its entry points resolved ---------------------- */

cupti_fns cupti_fn;

/* dl_iterate_phdr: the path of a libcupti already loaded, into arg. */
static int loaded_cupti(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *slash = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!slash || strncmp(slash + 1, "libcupti.so", 11))
        return 0;
    snprintf(arg, CUPTI_PATH_MAX, "%s", info->dlpi_name);
    return 1;
}

/* Open libcupti in the order of cupti_where.c: PRISM_CUPTI_PATH only when
 * set; else one already in the process (a framework's own copy), the pip
 * wheels of site-packages, the loader's search path, then the usual CUDA
 * directories.  err receives why not. */
void *cupti_open(char *err, size_t en)
{
    char *sites = malloc(CUPTI_SITES_MAX), path[CUPTI_PATH_MAX];
    if (!sites) {
        snprintf(err, en, "cannot load libcupti: out of memory");
        return NULL;
    }
    cupti_where w;
    cupti_where_now(&w, sites, CUPTI_SITES_MAX);
    void *h = NULL;
    static const char *const names[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };
    if (w.explicit_path && *w.explicit_path) {
        /* a file, a folder's libcupti, else as given (a bare soname: the loader's) */
        if (!cupti_find_file(&w, cupti_readable, path, sizeof path))
            snprintf(path, sizeof path, "%s", w.explicit_path);
        if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(err, en, "cannot load libcupti: %s", dlerror());
        free(sites);
        return h;
    }
    for (size_t i = 0; !h && i < 3; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h && dl_iterate_phdr(loaded_cupti, path))
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    cupti_where wheels = { NULL, w.sites, { NULL, NULL, NULL } };
    if (!h && cupti_find_file(&wheels, cupti_readable, path, sizeof path))
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    for (size_t i = 0; !h && i < 3; i++)
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    cupti_where homes = { NULL, NULL, { w.homes[0], w.homes[1], w.homes[2] } };
    if (!h && cupti_find_file(&homes, cupti_readable, path, sizeof path))
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(err, en, "cannot load libcupti (not loaded, not in site-packages' nvidia/ "
                 "wheels, not on the library path nor under $CUDA_HOME or /usr/local/cuda; "
                 "set PRISM_CUPTI_PATH)");
    free(sites);
    return h;
}

int prism__nvtx_handoff(const void *get_export_table)
{
    char err[384];
    void *lib = cupti_open(err, sizeof err);    /* a reference kept: CUPTI stays */
    int (*init)(const void *) = NULL;
    if (lib)
        *(void **)&init = dlsym(lib, "InitializeInjectionNvtx2");
    return init ? init(get_export_table) : 0;
}

bool cupti_load_symbols(void *h, char *err, size_t en)
{
#define SYM(field, name, required) do { \
        *(void **)&cupti_fn.field = dlsym(h, name); \
        if (!cupti_fn.field && (required)) { \
            snprintf(err, en, "libcupti lacks %s (CUPTI 12 or later is needed)", name); \
            return false; \
        } \
    } while (0)
    SYM(GetVersion, "cuptiGetVersion", true);
    SYM(GetResultString, "cuptiGetResultString", true);
    SYM(Subscribe, "cuptiSubscribe", true);
    SYM(Unsubscribe, "cuptiUnsubscribe", true);
    SYM(EnableDomain, "cuptiEnableDomain", true);
    SYM(Enable, "cuptiActivityEnable", true);
    SYM(Disable, "cuptiActivityDisable", true);
    SYM(RegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
    SYM(FlushAll, "cuptiActivityFlushAll", true);
    SYM(GetNextRecord, "cuptiActivityGetNextRecord", true);
    SYM(GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", true);
    SYM(GetCallbackName, "cuptiGetCallbackName", true);
    SYM(Finalize, "cuptiFinalize", true);
    SYM(RegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", false);
    SYM(GetTimestamp, "cuptiGetTimestamp", false);
    SYM(SetThreadIdType, "cuptiSetThreadIdType", false);
    SYM(EnableRuntimeApi, "cuptiActivityEnableRuntimeApi", false);
#undef SYM
    return true;
}

#endif /* PRISM_HAVE_CUPTI_HEADERS */

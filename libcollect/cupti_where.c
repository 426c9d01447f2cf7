/*
 * cupti_where.c - where libcupti is, and when CUPTI attaches: the pure
 * decisions of the GPU backend, apart from cupti.c so that they build (and
 * are tested) with or without the CUPTI headers.
 *
 * Where (issue 27, defect 8).  In order, the first that exists:
 *   1. PRISM_CUPTI_PATH: a file, or a folder holding libcupti.so.13/.12/.so
 *      (when set, nothing else is tried: an explicit choice is never
 *      silently replaced);
 *   2. a libcupti already in the process (a framework's own copy: two
 *      copies in one process fight over the driver's callbacks);
 *   3. the pip wheels of the interpreter's site-packages folders:
 *      nvidia/cu13/lib/libcupti.so.13 (nvidia-cuda-cupti 13.x) and
 *      nvidia/cuda_cupti/lib/libcupti.so.12 (nvidia-cuda-cupti-cu12); the
 *      folders come from the Python module (sys.path,
 *      prism__cupti_search_dirs) and from every loaded object under a
 *      site-packages or dist-packages folder (torch's libraries: the
 *      injected copy under prism-run knows no sys.path);
 *   4. the loader's search path (dlopen of the sonames: cupti_load.c);
 *   5. $CUDA_HOME, $CUDA_PATH, /usr/local/cuda: extras/CUPTI/lib64, lib64,
 *      lib, targets/<arch>-linux/lib.
 * cupti_candidates lists 1, 3 and 5 (2 and 4 need the loader:
 * cupti_load.c).
 *
 * When (defect 4): see cupti_inject_plan and cupti_start_plan in cupti.h.
 *
 * Ownership: the search folders set by the Python module are copied into a
 * static buffer under a lock; everything else writes the caller's buffers.
 */
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cupti.h"

static const char *const sonames[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };
#define NSONAMES (sizeof sonames / sizeof *sonames)

/* The pip wheels' layouts under one site-packages folder. */
static const char *const wheel_files[] = {
    "nvidia/cu13/lib/libcupti.so.13",           /* nvidia-cuda-cupti 13.x        */
    "nvidia/cuda_cupti/lib/libcupti.so.13",
    "nvidia/cuda_cupti/lib/libcupti.so.12",     /* nvidia-cuda-cupti-cu12        */
};

static const char *const home_subs[] = { "extras/CUPTI/lib64", "lib64", "lib",
                                         "targets/x86_64-linux/lib", "targets/sbsa-linux/lib" };

static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static char py_dirs[8192];                      /* ':'-separated, from Python */

typedef struct list {
    char (*out)[CUPTI_PATH_MAX];
    size_t n, max;
} list;

static void add(list *l, const char *a, const char *b, const char *c)
{
    if (l->n >= l->max || !a || !*a)
        return;
    int k = snprintf(l->out[l->n], CUPTI_PATH_MAX, "%s%s%s%s%s", a, b ? "/" : "", b ? b : "",
                     c ? "/" : "", c ? c : "");
    if (k > 0 && k < CUPTI_PATH_MAX)
        l->n++;
}

/* Each element of a ':'-separated list, with the wheels' files. */
static void add_sites(list *l, const char *dirs)
{
    while (dirs && *dirs) {
        const char *end = strchr(dirs, ':');
        size_t len = end ? (size_t)(end - dirs) : strlen(dirs);
        char d[CUPTI_PATH_MAX];
        if (len > 0 && len < sizeof d) {
            memcpy(d, dirs, len);
            d[len] = '\0';
            for (size_t i = 0; i < sizeof wheel_files / sizeof *wheel_files; i++)
                add(l, d, wheel_files[i], NULL);
        }
        dirs = end ? end + 1 : NULL;
    }
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

size_t cupti_candidates(const cupti_where *w, char (*out)[CUPTI_PATH_MAX], size_t max)
{
    list l = { out, 0, max };
    if (w->explicit_path && *w->explicit_path) {
        if (is_dir(w->explicit_path))
            for (size_t i = 0; i < NSONAMES; i++)
                add(&l, w->explicit_path, sonames[i], NULL);
        else
            add(&l, w->explicit_path, NULL, NULL);
        return l.n;
    }
    add_sites(&l, w->sites);
    for (size_t h = 0; h < sizeof w->homes / sizeof *w->homes; h++)
        for (size_t s = 0; w->homes[h] && s < sizeof home_subs / sizeof *home_subs; s++)
            for (size_t i = 0; i < NSONAMES; i++)
                add(&l, w->homes[h], home_subs[s], sonames[i]);
    return l.n;
}

bool cupti_site_of(const char *path, char *out, size_t n)
{
    static const char *const marks[] = { "/site-packages/", "/dist-packages/" };
    for (size_t i = 0; path && i < 2; i++) {
        const char *m = strstr(path, marks[i]);
        if (m) {
            size_t len = (size_t)(m - path) + strlen(marks[i]) - 1;   /* no final '/' */
            if (len >= n)
                return false;
            memcpy(out, path, len);
            out[len] = '\0';
            return true;
        }
    }
    return false;
}

/* dl_iterate_phdr: the site folders of loaded objects, appended once each. */
static int collect_site(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    char site[CUPTI_PATH_MAX], *acc = arg;
    if (!cupti_site_of(info->dlpi_name, site, sizeof site))
        return 0;
    size_t have = strlen(acc), len = strlen(site);
    const char *p = acc;
    while ((p = strstr(p, site))) {                 /* already listed? */
        if ((p == acc || p[-1] == ':') && (p[len] == ':' || p[len] == '\0'))
            return 0;
        p += len;
    }
    if (have + len + 2 < CUPTI_SITES_MAX)
        snprintf(acc + have, CUPTI_SITES_MAX - have, "%s%s", have ? ":" : "", site);
    return 0;
}

void prism__cupti_search_dirs(const char *dirs)
{
    pthread_mutex_lock(&dirs_lock);
    snprintf(py_dirs, sizeof py_dirs, "%s", dirs ? dirs : "");
    pthread_mutex_unlock(&dirs_lock);
}

void cupti_where_now(cupti_where *w, char *sites, size_t n)
{
    pthread_mutex_lock(&dirs_lock);
    snprintf(sites, n, "%s", py_dirs);
    pthread_mutex_unlock(&dirs_lock);
    if (n >= CUPTI_SITES_MAX)
        dl_iterate_phdr(collect_site, sites);
    *w = (cupti_where){ getenv("PRISM_CUPTI_PATH"), sites,
                        { getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda" } };
}

bool cupti_find_file(const cupti_where *w, bool (*exists)(const char *), char *out, size_t n)
{
    char (*c)[CUPTI_PATH_MAX] = malloc(CUPTI_MAX_CANDIDATES * sizeof *c);
    if (!c)
        return false;
    size_t k = cupti_candidates(w, c, CUPTI_MAX_CANDIDATES);
    bool found = false;
    for (size_t i = 0; !found && i < k; i++)
        if ((found = exists(c[i])))
            snprintf(out, n, "%s", c[i]);
    free(c);
    return found;
}

bool cupti_readable(const char *path)
{
    return access(path, R_OK) == 0 && !is_dir(path);
}

/* ---- when ------------------------------------------------------------ */

int prism__cupti_attach_now(void)
{
    session *s = prism__s;
    if (!s || !prism_recording())
        return 0;
    prism__cupti_injected(s);
    return 1;
}

int cupti_start_plan(bool gpu_ops, bool idle_or_waiting, bool libcuda_loaded, bool injected)
{
    if (!gpu_ops)
        return CUPTI_OFF;
    if (!idle_or_waiting)
        return CUPTI_KEEP;               /* attached, failed or detached: as it is */
    return libcuda_loaded || injected ? CUPTI_ATTACH_HERE : CUPTI_WAIT;
}

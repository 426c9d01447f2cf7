/*
 * job_load.c - the files of a job: the command line expanded into paths
 * (directories listed in natural name order, files kept as given), then
 * each file reduced to its rank summary on a pool of threads, then merged
 * (prism_job_new).
 *
 * The pool is plain: each worker takes the next file by an atomic index,
 * so a slow file never holds a queue behind it, and writes only its own
 * slot of the results; the progress counters are atomics the caller reads
 * without a lock while the workers run.  Results are merged in file order,
 * whatever order the workers finished in, so 1 thread and 16 give the same
 * job.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ropen.h"
#include "prism/import.h"
#include "prism/job.h"
#include "array.h"             /* pb_qsort */

/* Bytes of a file's head that tell what it holds. */
#define HEAD_BYTES 4096

/* ---- the command line ---- */

/* What the file starting with p[0..n) holds: 1 a profile, a trace or a
 * summary, 0 anything else. */
static bool looks_like_job_file(const uint8_t *p, size_t n)
{
    static const uint8_t cbor_self_describe[3] = { 0xd9, 0xd9, 0xf7 };  /* docs/FORMAT.md */
    if (n >= 3 && !memcmp(p, cbor_self_describe, 3))
        return true;
    return prism_rank_summary_probe(p, n) || prism_import_probe(p, n, true) == 1;
}

/* Up to HEAD_BYTES of the file at path into buf; how many (0 on error). */
static size_t read_head(const char *path, uint8_t *buf)
{
    FILE *f = pb_fopen_read(path);
    if (!f)
        return 0;
    size_t n = fread(buf, 1, HEAD_BYTES, f);
    fclose(f);
    return n;
}

/* Names in natural order: digit runs compared as numbers ("rank9" before
 * "rank10"), the rest byte by byte; names equal that way ("r01", "r1") by
 * strcmp, so the order is total. */
static int natural_cmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            while (*x == '0')
                x++;
            while (*y == '0')
                y++;
            size_t lx = strspn((const char *)x, "0123456789");
            size_t ly = strspn((const char *)y, "0123456789");
            if (lx != ly)
                return lx < ly ? -1 : 1;
            int c = memcmp(x, y, lx);
            if (c)
                return c;
            x += lx;
            y += ly;
            continue;
        }
        if (*x != *y)
            return *x < *y ? -1 : 1;
        x++;
        y++;
    }
    if (*x || *y)
        return *x ? 1 : -1;
    return strcmp(a, b);
}

static int by_natural_name(const void *p, const void *q)
{
    return natural_cmp(*(char *const *)p, *(char *const *)q);
}

typedef struct plist {
    char **v;
    size_t n, cap;
} plist;

/* Takes path (malloc'ed) into the list; false (path freed) when out of
 * memory. */
static bool plist_add(plist *l, char *path)
{
    if (!path)
        return false;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(path);
            return false;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = path;
    return true;
}

/* The job files of directory dir onto l, in natural name order. */
static prism_status add_dir(plist *l, const char *dir, char *msg, size_t msglen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(msg, msglen, "cannot read directory %s: %s", dir, strerror(errno));
        return PRISM_E_IO;
    }
    size_t first = l->n;
    uint8_t *head = malloc(HEAD_BYTES);
    bool ok = head != NULL;
    const char *sep = dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/";
    struct dirent *e;
    while (ok && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *path;
        if (asprintf(&path, "%s%s%s", dir, sep, e->d_name) < 0) {
            ok = false;
            break;
        }
        struct stat st;
        size_t n;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(n = read_head(path, head)) ||
            !looks_like_job_file(head, n)) {
            free(path);
            continue;
        }
        ok = plist_add(l, path);
    }
    closedir(d);
    free(head);
    if (!ok) {
        snprintf(msg, msglen, "out of memory");
        return PRISM_E_NOMEM;
    }
    if (l->n == first) {
        snprintf(msg, msglen, "no profiles in %s", dir);
        return PRISM_E_NOT_PRISM;
    }
    pb_qsort(l->v + first, l->n - first, sizeof *l->v, by_natural_name);
    return PRISM_OK;
}

prism_status prism_job_expand(const char *const *args, size_t n, char ***out, size_t *nout,
                              char *msg, size_t msglen)
{
    plist l = { 0 };
    prism_status st = PRISM_OK;
    char spare[8];
    if (!msg || !msglen) {
        msg = spare;
        msglen = sizeof spare;
    }
    msg[0] = '\0';
    for (size_t i = 0; i < n && st == PRISM_OK; i++) {
        struct stat sb;
        size_t len = strlen(args[i]);
        /* "dir/" means a directory even when it is not there */
        bool want_dir = len && args[i][len - 1] == '/';
        if (stat(args[i], &sb) == 0 ? S_ISDIR(sb.st_mode) : want_dir)
            st = add_dir(&l, args[i], msg, msglen);
        else if (!plist_add(&l, strdup(args[i]))) {
            snprintf(msg, msglen, "out of memory");
            st = PRISM_E_NOMEM;
        }
    }
    if (st != PRISM_OK) {
        prism_job_paths_free(l.v, l.n);
        *out = NULL;
        *nout = 0;
        return st;
    }
    *out = l.v;
    *nout = l.n;
    return PRISM_OK;
}

void prism_job_paths_free(char **paths, size_t n)
{
    for (size_t i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

/* ---- the loader ---- */

typedef struct slot {
    prism_rank_summary sum;
    prism_job_failure fail;
    bool ok;
} slot;

struct prism_job_loader {
    char **paths;
    size_t n;
    uint64_t *sizes;
    slot *res;                  /* one per file, written by its worker only */
    pthread_t *th;
    unsigned nth;               /* threads started                           */
    uint64_t bytes_total;
    atomic_size_t next;         /* the next file to take                     */
    atomic_size_t done, failed;
    atomic_uint_least64_t bytes_done;
    atomic_uint running;        /* workers not yet returned                  */
    atomic_bool cancel;
};

/* File i into its slot: a summary when its first bytes say so, else the
 * analysis of a profile or trace. */
static void load_one(prism_job_loader *l, size_t i)
{
    slot *s = &l->res[i];
    uint8_t head[HEAD_BYTES];
    FILE *f = pb_fopen_read(l->paths[i]);
    size_t n = f ? fread(head, 1, sizeof head, f) : 0;
    if (f)
        fclose(f);
    prism_status st;
    char *msg = s->fail.message;
    size_t msglen = sizeof s->fail.message;
    msg[0] = '\0';
    if (!f) {
        char buf[128];
        snprintf(msg, msglen, "%s", strerror_r(errno, buf, sizeof buf));   /* as analyze FILE says */
        st = PRISM_E_IO;
        s->fail.offset = 0;
    } else if (prism_rank_summary_probe(head, n)) {
        st = prism_rank_summary_read(l->paths[i], &s->sum, msg, msglen, &s->fail.offset);
    } else {
        st = prism_rank_summary_from_file(l->paths[i], &s->sum, msg, msglen, &s->fail.offset);
    }
    s->ok = st == PRISM_OK;
    if (!s->ok) {
        s->fail.status = st;
        if (!msg[0])
            snprintf(msg, msglen, "%s", prism_strerror(st));
    }
}

static void *worker(void *arg)
{
    prism_job_loader *l = arg;
    while (!atomic_load_explicit(&l->cancel, memory_order_relaxed)) {
        size_t i = atomic_fetch_add(&l->next, 1);
        if (i >= l->n)
            break;
        load_one(l, i);
        atomic_fetch_add(&l->bytes_done, l->sizes[i]);
        if (!l->res[i].ok)
            atomic_fetch_add(&l->failed, 1);
        atomic_fetch_add(&l->done, 1);
    }
    atomic_fetch_sub(&l->running, 1);
    return NULL;
}

static void loader_free(prism_job_loader *l)
{
    for (size_t i = 0; l->res && i < l->n; i++) {
        prism_rank_summary_free(&l->res[i].sum);
        free(l->res[i].fail.source);
    }
    prism_job_paths_free(l->paths, l->n);
    free(l->res);
    free(l->sizes);
    free(l->th);
    free(l);
}

prism_job_loader *prism_job_loader_start(const char *const *paths, size_t n, unsigned threads)
{
    prism_job_loader *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->n = n;
    l->paths = calloc(n ? n : 1, sizeof *l->paths);
    l->sizes = calloc(n ? n : 1, sizeof *l->sizes);
    l->res = calloc(n ? n : 1, sizeof *l->res);
    bool ok = l->paths && l->sizes && l->res;
    for (size_t i = 0; ok && i < n; i++) {
        struct stat st;
        ok = (l->paths[i] = strdup(paths[i])) != NULL;
        l->sizes[i] = ok && stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
        l->bytes_total += l->sizes[i];
    }
    if (!threads) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (threads > n)
        threads = (unsigned)n;
    if (ok && threads)
        ok = (l->th = calloc(threads, sizeof *l->th)) != NULL;
    if (!ok) {
        loader_free(l);
        return NULL;
    }
    /* a thread that cannot be started leaves its share to finish(), which
     * works on the caller's thread too */
    atomic_store(&l->running, threads);
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&l->th[l->nth], NULL, worker, l) == 0)
            l->nth++;
    atomic_fetch_sub(&l->running, threads - l->nth);
    return l;
}

prism_job_progress prism_job_loader_progress(prism_job_loader *l)
{
    prism_job_progress p;
    p.total = l->n;
    p.bytes_total = l->bytes_total;
    p.done = atomic_load(&l->done);
    p.failed = atomic_load(&l->failed);
    p.bytes_done = atomic_load(&l->bytes_done);
    p.finished = p.done == p.total ||
                 (atomic_load(&l->cancel) && atomic_load(&l->running) == 0);
    return p;
}

void prism_job_loader_cancel(prism_job_loader *l)
{
    atomic_store(&l->cancel, true);
}

prism_job *prism_job_loader_finish(prism_job_loader *l, const prism_job_opts *opts)
{
    if (!l)
        return NULL;
    atomic_fetch_add(&l->running, 1);
    worker(l);                          /* what no thread took, if any */
    for (unsigned t = 0; t < l->nth; t++)
        pthread_join(l->th[t], NULL);
    if (atomic_load(&l->cancel)) {
        loader_free(l);
        return NULL;
    }
    size_t nfail = 0;
    for (size_t i = 0; i < l->n; i++)
        nfail += !l->res[i].ok;
    size_t nok = l->n - nfail;
    prism_rank_summary *sums = calloc(nok ? nok : 1, sizeof *sums);
    prism_job_failure *fails = nfail ? calloc(nfail, sizeof *fails) : NULL;
    if (!sums || (nfail && !fails)) {
        free(sums);
        free(fails);
        loader_free(l);
        return NULL;
    }
    size_t a = 0, b = 0;
    for (size_t i = 0; i < l->n; i++) {
        slot *s = &l->res[i];
        if (s->ok) {
            sums[a++] = s->sum;
        } else {
            fails[b] = s->fail;
            fails[b++].source = l->paths[i];
            l->paths[i] = NULL;
        }
        memset(s, 0, sizeof *s);        /* moved: loader_free leaves it */
    }
    loader_free(l);
    prism_job *j = prism_job_new(sums, a, fails, b, opts);
    free(sums);
    return j;
}

prism_job *prism_job_open(const char *const *args, size_t n, unsigned threads,
                          const prism_job_opts *opts, char *msg, size_t msglen)
{
    char **paths;
    size_t np;
    if (prism_job_expand(args, n, &paths, &np, msg, msglen) != PRISM_OK)
        return NULL;
    prism_job_loader *l = prism_job_loader_start((const char *const *)paths, np, threads);
    prism_job_paths_free(paths, np);
    prism_job *j = l ? prism_job_loader_finish(l, opts) : NULL;
    if (!j && msg && msglen)
        snprintf(msg, msglen, "out of memory");
    return j;
}

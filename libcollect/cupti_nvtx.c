/*
 * cupti_nvtx.c - NVTX ranges as PRISM regions (CUPTI's NVTX callback
 * domain; NVTX routes its calls to CUPTI when NVTX_INJECTION64_PATH names
 * libcupti, which prism-run and an attaching session set).
 *
 * The callback runs on the thread that called NVTX, so a range becomes a
 * region of that thread through prism_push_id/prism_pop, sampled with the
 * step like any region.  nvtxRangePush/Pop (what torch.cuda.nvtx.range_push
 * and autograd's emit_nvtx use) nest by construction.  nvtxRangeStart/End
 * need not nest: a range ended on its own thread closes the regions opened
 * after it and re-opens those still running (an overlapping inner range
 * then shows as two calls); a range ended on another thread is closed on
 * its own thread at that thread's next NVTX call.  Marks become marks.
 * A pop without a matching NVTX push is ignored, so NVTX can never close a
 * region the program opened with prism_push.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <sys/syscall.h>

#include "cupti.h"

#ifdef PRISM_HAVE_CUPTI_HEADERS

#define NVTX_NO_IMPL
#include <generated_nvtx_meta.h>

#define NV_DEPTH 128u
#define NV_CACHE 256u
#define NV_ENDED 256u
#define NV_REGISTERED 1024u

typedef struct nv_entry {
    uint64_t range;             /* nvtxRangeStart id; 0 for a push */
    uint32_t name;
} nv_entry;

/* Per thread, on the heap (freed at thread exit): the library's static TLS
 * must stay small for libprism.so to be dlopen-able. */
typedef struct nv_thread {
    uint32_t n, starts;         /* entries, of which start ranges */
    uint32_t lost;              /* pushes beyond NV_DEPTH */
    nv_entry e[NV_DEPTH];
    uint64_t hash[NV_CACHE];
    uint32_t id[NV_CACHE];
    const void *owner;          /* the session the cache belongs to */
} nv_thread;

static __thread nv_thread *nv_self;
static pthread_key_t nv_key;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static bool nv_key_ok;

static void nv_free(void *p)
{
    free(p);
    nv_self = NULL;
}

static void nv_key_make(void)
{
    nv_key_ok = pthread_key_create(&nv_key, nv_free) == 0;
}

static nv_thread *nv_get(void)
{
    nv_thread *t = nv_self;
    if (t)
        return t;
    pthread_once(&nv_once, nv_key_make);
    if (!nv_key_ok || !(t = calloc(1, sizeof *t)))
        return NULL;
    pthread_setspecific(nv_key, t);
    nv_self = t;
    return t;
}

/* Ranges ended on another thread than they started on, and registered
 * strings (nvtxDomainRegisterString): process-wide, under one lock. */
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t ended[NV_ENDED];
static _Atomic uint32_t nended;
static const void *reg_handle[NV_REGISTERED];
static uint32_t reg_id[NV_REGISTERED];
static uint32_t nreg;

static uint32_t name_id(nv_thread *nv, const char *name)
{
    if (!name || !*name)
        name = "nvtx";
    if (nv->owner != prism__s) {
        memset(nv->hash, 0, sizeof nv->hash);
        nv->owner = prism__s;
    }
    uint64_t h = XXH3_64bits(name, strlen(name)) | 1u;
    size_t slot = (size_t)(h % NV_CACHE);
    if (nv->hash[slot] == h)
        return nv->id[slot];
    uint32_t id = prism_name(name);
    if (id) {
        nv->hash[slot] = h;
        nv->id[slot] = id;
    }
    return id;
}

static uint32_t registered(const void *handle)
{
    uint32_t id = 0;
    pthread_mutex_lock(&nv_lock);
    for (uint32_t i = 0; i < nreg; i++)
        if (reg_handle[i] == handle)
            id = reg_id[i];
    pthread_mutex_unlock(&nv_lock);
    return id;
}

static uint32_t wide_id(nv_thread *nv, const wchar_t *w)
{
    char buf[256];
    size_t i = 0;
    for (; w && w[i] && i < sizeof buf - 1; i++)
        buf[i] = w[i] > 0 && w[i] < 128 ? (char)w[i] : '?';
    buf[i] = '\0';
    return name_id(nv, buf);
}

static uint32_t attr_id(nv_thread *nv, const nvtxEventAttributes_t *a)
{
    if (!a)
        return name_id(nv, NULL);
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return name_id(nv, a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return wide_id(nv, a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: {
        uint32_t id = registered(a->message.registered);
        return id ? id : name_id(nv, NULL);
    }
    default:
        return name_id(nv, NULL);
    }
}

static void enter(uint32_t id)
{
    if (id)
        prism_push_id(id);
    else
        prism_push(NULL);       /* not recording: counted as skipped */
}

static void open_range(nv_thread *nv, uint64_t range, uint32_t id)
{
    enter(id);
    if (nv->n == NV_DEPTH) {
        nv->lost++;
        return;
    }
    nv->e[nv->n++] = (nv_entry){ range, id };
    if (range)
        nv->starts++;
}

/* Close entry i: the regions above it close too, and the start ranges
 * among them open again. */
static void close_at(nv_thread *nv, uint32_t i)
{
    for (uint32_t k = nv->n; k > i; k--)
        prism_pop();
    if (nv->e[i].range)
        nv->starts--;
    memmove(&nv->e[i], &nv->e[i + 1], (nv->n - i - 1) * sizeof nv->e[0]);
    nv->n--;
    for (uint32_t k = i; k < nv->n; k++)
        enter(nv->e[k].name);
}

static void pop_range(nv_thread *nv)
{
    if (nv->lost) {
        nv->lost--;
        prism_pop();
        return;
    }
    for (uint32_t i = nv->n; i-- > 0;)
        if (!nv->e[i].range) {
            close_at(nv, i);
            return;
        }
}

static void end_range(nv_thread *nv, uint64_t range)
{
    for (uint32_t i = nv->n; i-- > 0;)
        if (nv->e[i].range == range) {
            close_at(nv, i);
            return;
        }
    pthread_mutex_lock(&nv_lock);       /* started elsewhere */
    uint32_t n = atomic_load(&nended);
    if (n < NV_ENDED) {
        ended[n] = range;
        atomic_store(&nended, n + 1);
    }
    pthread_mutex_unlock(&nv_lock);
}

/* Start ranges of this thread that another thread ended. */
static void close_ended_elsewhere(nv_thread *nv)
{
    pthread_mutex_lock(&nv_lock);
    uint32_t n = atomic_load(&nended);
    for (uint32_t j = 0; j < n;) {
        uint32_t i = nv->n;
        while (i-- > 0 && nv->e[i].range != ended[j])
            ;
        if (i < nv->n) {
            close_at(nv, i);
            ended[j] = ended[--n];
        } else {
            j++;
        }
    }
    atomic_store(&nended, n);
    pthread_mutex_unlock(&nv_lock);
}

static void mark(uint32_t id)
{
    if (id)
        prism_mark_id(id);
}

void cupti_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
    session *s = prism__s;
    const void *p = d->functionParams;
    const void *ret = d->functionReturnValue;
    nv_thread *nv;
    /* the pops read no parameter: one without its (empty) block still
     * closes its range, else every range after it would nest deeper */
    bool pop = cbid == CUPTI_CBID_NVTX_nvtxRangePop || cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop;
    if (!s || (!p && !pop) || atomic_load(&s->stopping) || !(nv = nv_get()))
        return;
    if (nv->starts && atomic_load_explicit(&nended, memory_order_relaxed))
        close_ended_elsewhere(nv);
    switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
        open_range(nv, 0, name_id(nv, ((const nvtxRangePushA_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushW:
        open_range(nv, 0, wide_id(nv, ((const nvtxRangePushW_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
        open_range(nv, 0, attr_id(nv, ((const nvtxRangePushEx_params *)p)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
        open_range(nv, 0, attr_id(nv, ((const nvtxDomainRangePushEx_params *)p)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
        pop_range(nv);
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
        if (ret)
            open_range(nv, *(const nvtxRangeId_t *)ret,
                       name_id(nv, ((const nvtxRangeStartA_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartW:
        if (ret)
            open_range(nv, *(const nvtxRangeId_t *)ret,
                       wide_id(nv, ((const nvtxRangeStartW_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        if (ret)
            open_range(nv, *(const nvtxRangeId_t *)ret,
                       attr_id(nv, ((const nvtxRangeStartEx_params *)p)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
        if (ret)
            open_range(nv, *(const nvtxRangeId_t *)ret,
                       attr_id(nv, ((const nvtxDomainRangeStartEx_params *)p)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
        end_range(nv, ((const nvtxRangeEnd_params *)p)->id);
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        end_range(nv, ((const nvtxDomainRangeEnd_params *)p)->core.id);
        break;
    case CUPTI_CBID_NVTX_nvtxMarkA:
        mark(name_id(nv, ((const nvtxMarkA_params *)p)->message));
        break;
    case CUPTI_CBID_NVTX_nvtxMarkEx:
        mark(attr_id(nv, ((const nvtxMarkEx_params *)p)->eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
        mark(attr_id(nv, ((const nvtxDomainMarkEx_params *)p)->core.eventAttrib));
        break;
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
        const char *str = ((const nvtxDomainRegisterStringA_params *)p)->string;
        uint32_t id = name_id(nv, str);
        pthread_mutex_lock(&nv_lock);
        if (ret && id && nreg < NV_REGISTERED) {
            reg_handle[nreg] = *(const nvtxStringHandle_t *)ret;
            reg_id[nreg++] = id;
        }
        pthread_mutex_unlock(&nv_lock);
        break;
    }
    default:
        break;
    }
}

#endif /* PRISM_HAVE_CUPTI_HEADERS */

/* ---- the variable that routes NVTX to CUPTI (both builds) ----------------- */

/* May this thread set NVTX_INJECTION64_PATH?  setenv races with getenv in
 * any other thread, so only while the program has no thread but this one
 * (PRISM's own, named prism-*, never read the variable). */
bool cupti_nvtx_env_safe(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    unsigned others = 0;
    pid_t me = (pid_t)syscall(SYS_gettid);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || atoi(e->d_name) == me)
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "re");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = '\0';
            fclose(f);
        }
        others += strncmp(comm, "prism-", 6) != 0;
    }
    closedir(d);
    return others == 0;
}

/* A CPU-only build's entry answers 0, which leaves NVTX off. */
int prism__nvtx_route(const void *entry)
{
    const char *have = getenv("NVTX_INJECTION64_PATH");
    if (have && *have)
        return 1;
    Dl_info info;
    if (!entry || !dladdr(entry, &info) || !info.dli_fname || !strstr(info.dli_fname, ".so") ||
        !cupti_nvtx_env_safe())
        return 0;
    return setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0) == 0;
}

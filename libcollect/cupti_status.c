/*
 * cupti_status.c - the GPU backend's status: the text written to the file
 * as INFO "gpu.status" (set from any thread, taken by the writer when it
 * changed), and, built without the CUPTI headers, the CPU-only backend,
 * whose hooks only record in it why there is no GPU activity (the real
 * backend: cupti.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cupti.h"

/* ---- status (both builds) --------------------------------------------- */

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static char status_text[512];
static unsigned status_version, status_seen;

void cupti_set_status(const char *fmt, ...)
{
    char buf[sizeof status_text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&status_lock);
    if (strcmp(buf, status_text) != 0) {
        memcpy(status_text, buf, sizeof buf);
        status_version++;
    }
    pthread_mutex_unlock(&status_lock);
}

/* In a fork()ed child (one thread): a lock another thread of the parent
 * held would never be released. */
void cupti_status_forked(void)
{
    pthread_mutex_init(&status_lock, NULL);
}

bool cupti_status_changed(char *buf, size_t n)
{
    pthread_mutex_lock(&status_lock);
    bool changed = status_version != status_seen;
    if (changed) {
        snprintf(buf, n, "%s", status_text);
        status_seen = status_version;
    }
    pthread_mutex_unlock(&status_lock);
    return changed;
}

#ifndef PRISM_HAVE_CUPTI_HEADERS

/* ---- CPU-only backend: built without the CUPTI headers ------------------ */

void cupti_start(session *s)
{
    if (!s->cfg.collect_gpu_ops)
        cupti_set_status("off: collect_gpu_ops is false");
    else
        cupti_set_status("unavailable: built without CUPTI headers");
}

void prism__cupti_injected(session *s)
{
    cupti_start(s);
}

void cupti_forked(void)
{
    cupti_status_forked();
}

int prism_gpu_streams_begin(void)
{
    return -1;                  /* no CUPTI in this build: nothing summed */
}

int prism_gpu_streams_end(prism_gpu_stream_time *out, uint32_t max)
{
    (void)out;
    (void)max;
    return -1;
}

void cupti_step(session *s, uint64_t index, bool begin)
{
    (void)s;
    (void)index;
    (void)begin;
}

void cupti_drain(session *s)
{
    (void)s;
}

size_t cupti_records(const prism_gpu_record **recs)
{
    *recs = NULL;
    return 0;
}

void cupti_drained(void)
{
}

uint64_t cupti_dropped(void)
{
    return 0;
}

void cupti_stop(session *s)
{
    (void)s;
    pc_gpumem_close();
}

int prism__nvtx_handoff(const void *get_export_table)
{
    (void)get_export_table;
    return 0;                   /* no CUPTI to hand NVTX to: NVTX stays off */
}

#endif /* PRISM_HAVE_CUPTI_HEADERS */

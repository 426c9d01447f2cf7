/*
 * backends.c - the list of foreign backends readers consult
 * (prism_reader_add_backend, prism_reader_set_foreign;
 * prism/profile_foreign.h).  A fixed array under a mutex: registration is
 * rare (program start), a reader copies the list once when it is created.
 */
#include <pthread.h>

#include "format_internal.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const prism_foreign_backend *g_list[PRISM_MAX_BACKENDS];
static size_t g_count;

prism_status prism_reader_add_backend(const prism_foreign_backend *b)
{
    if (!b)
        return PRISM_E_ARG;
    prism_status st = PRISM_OK;
    pthread_mutex_lock(&g_lock);
    size_t i = 0;
    while (i < g_count && g_list[i] != b)
        i++;
    if (i == g_count) {
        if (g_count < PRISM_MAX_BACKENDS)
            g_list[g_count++] = b;
        else
            st = PRISM_E_LIMIT;
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

void prism_reader_set_foreign(const prism_foreign_backend *b)
{
    pthread_mutex_lock(&g_lock);
    g_list[0] = b;
    g_count = b ? 1 : 0;
    pthread_mutex_unlock(&g_lock);
}

size_t pf_reader_backends(const prism_foreign_backend **out)
{
    pthread_mutex_lock(&g_lock);
    size_t n = g_count;
    for (size_t i = 0; i < n; i++)
        out[i] = g_list[i];
    pthread_mutex_unlock(&g_lock);
    return n;
}

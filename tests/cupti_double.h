/*
 * cupti_double.h - the control side of tests/cupti_double.c (the CUPTI
 * double, libcupti_double.so), for the tests and benches that load it.
 * Test code looks each function up with dlsym on the double's handle
 * (PRISM opened it RTLD_LOCAL through PRISM_CUPTI_PATH).
 */
#ifndef PRISM_TESTS_CUPTI_DOUBLE_H
#define PRISM_TESTS_CUPTI_DOUBLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cupti_double_ctl {
    /* scripted by the test */
    bool other_subscriber;          /* cuptiSubscribe fails: another client */
    /* recorded by the double */
    bool subscribed, clock_taken_from_other;
    _Atomic int torn_down;
    void *callback, *callback_user, *timestamp;
    uint32_t domains;
    uint64_t kinds;                 /* enabled activity kinds, 1 << kind */
    uint64_t flushes, forced_flushes, finalizes, unsubscribes;
    uint64_t requests, completes, untraced, dropped, other_got;
    uint32_t enable_tid, nvtx_tid, complete_tid;
    uint32_t nvtx_inits;            /* InitializeInjectionNvtx2 calls */
    const void *nvtx_table_fn;      /* the argument of the last one */
} cupti_double_ctl;

/* The double's own exports (the tests reach them through dlsym, with the
 * function pointer types below). */
cupti_double_ctl *cupti_double(void);
bool cd_emit(const void *rec, size_t size);
void cd_complete(void);
void cd_other_client(bool take_buffers, bool disable_kernels);
uint64_t cd_now(void);
void cd_nvtx(uint32_t cbid, const void *data);

typedef cupti_double_ctl *(*cd_ctl_fn)(void);
/* bool cd_emit(const void *rec, size_t size): one activity record */
typedef bool (*cd_emit_fn)(const void *, size_t);
/* void cd_complete(void): hand the current buffer back */
typedef void (*cd_complete_fn)(void);
/* void cd_other_client(bool take_buffers, bool disable_kernels) */
typedef void (*cd_other_fn)(bool, bool);
/* uint64_t cd_now(void): PRISM's timestamp callback, or 0 */
typedef uint64_t (*cd_now_fn)(void);
/* void cd_nvtx(uint32_t cbid, const void *data): an NVTX call on this thread */
typedef void (*cd_nvtx_fn)(uint32_t, const void *);

#endif

/*
 * syscall_count.h - count the system calls one thread makes, in-process
 * (header-only, every function static; for the libcollect tests).
 *
 * The counted thread installs a seccomp filter on itself alone (no TSYNC)
 * that turns each of its system calls into a user notification
 * (SECCOMP_RET_USER_NOTIF, Linux 5.0; SECCOMP_USER_NOTIF_FLAG_CONTINUE,
 * 5.5).  A supervisor thread, unfiltered, receives each one, counts it
 * while the counted thread has `counting` set, and lets the call proceed
 * unchanged.  The thread runs normally, only slower at each call, and
 * keeps its filter until it exits: the supervisor serves it until then.
 *
 *   sc_start(c)     any thread, before: starts the supervisor
 *   sc_attach(c)    the counted thread: installs the filter; false when the
 *                   kernel cannot (then nothing is counted: c->mode 0)
 *   c->counting     the counted thread sets it around what is counted
 *   sc_stop(c)      any thread, once the counted thread has been joined
 *
 * Calls that read a clock (clock_gettime, gettimeofday: a vDSO without a
 * usable clock source makes them real calls) are counted apart.
 */
#ifndef PRISM_SYSCALL_COUNT_H
#define PRISM_SYSCALL_COUNT_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(SECCOMP_RET_USER_NOTIF) && defined(SECCOMP_USER_NOTIF_FLAG_CONTINUE) && \
    defined(SECCOMP_FILTER_FLAG_NEW_LISTENER) && defined(SYS_seccomp)
#define SC_AVAILABLE 1
#else
#define SC_AVAILABLE 0
#endif

typedef struct sc_counter {
    _Atomic int fd;             /* the listener; -1 not yet, -2 never       */
    _Atomic int counting;       /* set by the counted thread                */
    _Atomic uint64_t calls;     /* counted calls, clock reads apart         */
    _Atomic uint64_t clock_calls;
    _Atomic long first_nr;      /* the first counted call's number, or -1   */
    _Atomic int quit;           /* sc_stop was called                       */
    int mode;                   /* 1: counted; 0: the kernel could not      */
    int stop[2];                /* a byte on it ends the supervisor         */
    pthread_t sup;
} sc_counter;

static inline bool sc_is_clock(long nr)
{
#ifdef SYS_clock_gettime
    if (nr == SYS_clock_gettime)
        return true;
#endif
#ifdef SYS_gettimeofday
    if (nr == SYS_gettimeofday)
        return true;
#endif
    return false;
}

#if SC_AVAILABLE
static void sc_serve(sc_counter *c, int fd)
{
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;
    for (;;) {
        struct pollfd pf[2] = { { fd, POLLIN, 0 }, { c->stop[0], POLLIN, 0 } };
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (pf[0].revents & POLLIN) {
            memset(&req, 0, sizeof req);            /* the kernel wants it zeroed */
            if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
                continue;                           /* the caller went away */
            if (atomic_load(&c->counting)) {
                long nr = req.data.nr;
                if (sc_is_clock(nr)) {
                    atomic_fetch_add(&c->clock_calls, 1);
                } else {
                    long none = -1;
                    atomic_compare_exchange_strong(&c->first_nr, &none, nr);
                    atomic_fetch_add(&c->calls, 1);
                }
            }
            memset(&resp, 0, sizeof resp);
            resp.id = req.id;
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
            continue;
        }
        if (pf[1].revents)
            return;
        if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            return;                                 /* the counted thread is gone */
    }
}
#endif

static void *sc_main(void *arg)
{
    sc_counter *c = arg;
    int fd;
    while ((fd = atomic_load(&c->fd)) == -1 && !atomic_load(&c->quit))
        sched_yield();                              /* the counted thread has it */
#if SC_AVAILABLE
    if (fd >= 0)
        sc_serve(c, fd);
#endif
    return NULL;
}

/* Start the supervisor; false when it cannot be started. */
static inline bool sc_start(sc_counter *c)
{
    memset(c, 0, sizeof *c);
    atomic_store(&c->fd, -1);
    atomic_store(&c->first_nr, -1);
    if (pipe(c->stop) != 0)
        return false;
    if (pthread_create(&c->sup, NULL, sc_main, c) != 0) {
        close(c->stop[0]);
        close(c->stop[1]);
        return false;
    }
    return true;
}

/* In the counted thread: its system calls go to the supervisor from now on.
 * False (nothing will be counted) when the kernel cannot do it. */
static inline bool sc_attach(sc_counter *c)
{
#if SC_AVAILABLE
    struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF) };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
        long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                          SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd >= 0) {
            c->mode = 1;
            atomic_store(&c->fd, (int)fd);          /* no call: the supervisor spins */
            return true;
        }
    }
#endif
    c->mode = 0;
    atomic_store(&c->fd, -2);
    return false;
}

/* Once the counted thread has exited (joined): end the supervisor. */
static inline void sc_stop(sc_counter *c)
{
    char b = 1;
    atomic_store(&c->quit, 1);
    if (write(c->stop[1], &b, 1) != 1)
        b = 0;                                      /* full: it is readable anyway */
    pthread_join(c->sup, NULL);
    int fd = atomic_load(&c->fd);
    if (fd >= 0)
        close(fd);
    close(c->stop[0]);
    close(c->stop[1]);
}

#endif

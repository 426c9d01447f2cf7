/*
 * hseed.c - per-table hash seeds (hseed.h).
 */
#include <stdatomic.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "hseed.h"

static _Atomic uint64_t state;

uint64_t pb_hash_seed(void)
{
    uint64_t s = atomic_load_explicit(&state, memory_order_relaxed);
    if (!s) {                           /* once a process (a race picks one) */
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            r = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^
                (uint64_t)(uintptr_t)&t;
        }
        uint64_t zero = 0;
        atomic_compare_exchange_strong(&state, &zero, r | 1);
    }
    /* splitmix64: a different seed for every table */
    uint64_t z = atomic_fetch_add_explicit(&state, 0x9e3779b97f4a7c15ull, memory_order_relaxed);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

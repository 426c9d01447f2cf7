/*
 * sampler.c - host memory (/proc/self/statm) and CPU time
 * (CLOCK_PROCESS_CPUTIME_ID) of this process.
 * Called by the writer thread every memory_interval_ms and by
 * prism_step_end() at every step boundary.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static ssize_t read_small(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got < 0)
        return -1;
    buf[got] = '\0';
    return got;
}

/* prev[0]: process CPU ns, prev[1]: monotonic ns at the previous call
 * (zero at first).  *cpu_permille is PRISM_NO_CPU until two calls exist. */
int sampler_read(uint64_t *rss, uint32_t *cpu_permille, uint64_t *prev)
{
    char buf[1024];
    long page = sysconf(_SC_PAGESIZE);
    if (read_small("/proc/self/statm", buf, sizeof buf) < 0)
        return -1;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return -1;
    *rss = (uint64_t)resident * (uint64_t)page;
    *cpu_permille = PRISM_NO_CPU;
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0;
    uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t now = clock_mono_ns();
    if (prev[1] && now > prev[1] && cpu >= prev[0])
        *cpu_permille = (uint32_t)((cpu - prev[0]) * 1000u / (now - prev[1]));
    prev[0] = cpu;
    prev[1] = now;
    return 0;
}

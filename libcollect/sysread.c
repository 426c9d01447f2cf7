/*
 * sysread.c - the system readings of MEMORY samples (sysread.h).  Owner:
 * system metrics (issue 31).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "prism/collect.h"
#include "sysread.h"

/* The value after "key:" in a /proc file's text. */
static bool field(const char *text, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    for (const char *p = text; (p = strstr(p, key)); p += k) {
        if ((p != text && p[-1] != '\n') || p[k] != ':')
            continue;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p + k + 1, &end, 10);
        if (end == p + k + 1 || errno)
            return false;
        *out = v;
        return true;
    }
    return false;
}

/* read_bytes and write_bytes of a /proc/PID/io text. */
static bool io_fields(const char *text, uint64_t *rd, uint64_t *wr)
{
    return field(text, "read_bytes", rd) && field(text, "write_bytes", wr);
}

/* The interfaces' received and sent bytes, lo left out: "name: rx_bytes
 * packets errs drop fifo frame compressed multicast tx_bytes ...". */
static bool net_bytes(const char *text, uint64_t *rx, uint64_t *tx)
{
    uint64_t r = 0, t = 0;
    const char *line = strchr(text, '\n');
    if (!line || !(line = strchr(line + 1, '\n')))        /* two header lines */
        return false;
    for (line++; *line; ) {
        const char *nl = strchr(line, '\n');
        const char *colon = strchr(line, ':');
        if (!nl)
            break;                      /* a line cut short by the buffer */
        if (colon && colon < nl) {
            const char *name = line;
            while (*name == ' ')
                name++;
            unsigned long long v[9];
            const char *p = colon + 1;
            int i = 0;
            for (; i < 9; i++) {
                char *end;
                errno = 0;
                v[i] = strtoull(p, &end, 10);
                if (end == p || errno || end > nl)
                    break;
                p = end;
            }
            if (i < 9)
                return false;
            if (!(colon - name == 2 && !memcmp(name, "lo", 2))) {
                r += v[0];
                t += v[8];
            }
        }
        line = nl + 1;
    }
    *rx = r;
    *tx = t;
    return true;
}

/* The increase of a counter from *last to now (nothing when it fell:
 * reset, wrapped without a known range, or a source gone). */
static uint64_t rise(uint64_t *last, uint64_t now)
{
    uint64_t d = now >= *last ? now - *last : 0;
    *last = now;
    return d;
}

static int open_ro(const char *path)
{
    return open(path, O_RDONLY | O_CLOEXEC);
}

void pc_sysread_init(sys_reader *r)
{
    *r = (sys_reader){ .io = -1, .net = -1, .mem_total = PRISM_NO_VALUE };
    for (uint32_t i = 0; i < SYSREAD_RAPL_MAX; i++)
        r->rapl[i] = -1;
    char buf[4096];
    uint64_t kb;
    if (pc_read_path("/proc/meminfo", buf, sizeof buf) > 0 && field(buf, "MemTotal", &kb) &&
        kb < UINT64_MAX / 1024u)
        r->mem_total = kb * 1024u;
    /* the package domains: intel-rapl:N (AMD's too), not their subzones */
    for (uint32_t i = 0; i < SYSREAD_RAPL_MAX; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%u/energy_uj", i);
        int fd = open_ro(path);
        if (fd < 0)
            break;
        uint64_t range = 0;
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%u/max_energy_range_uj", i);
        if (pc_read_path(path, buf, sizeof buf) > 0)
            range = strtoull(buf, NULL, 10);
        if (pc_read_at(fd, buf, sizeof buf) <= 0) {        /* root only on most kernels */
            close(fd);
            break;
        }
        r->rapl[r->nrapl] = fd;
        r->rapl_last[r->nrapl] = strtoull(buf, NULL, 10);
        r->rapl_range[r->nrapl++] = range;
    }
}

void pc_sysread_close(sys_reader *r)
{
    if (r->io >= 0)
        close(r->io);
    if (r->net >= 0)
        close(r->net);
    for (uint32_t i = 0; i < r->nrapl; i++)
        if (r->rapl[i] >= 0)
            close(r->rapl[i]);
    r->io = r->net = -1;
    r->nrapl = 0;
}

/* A kept-open /proc file's text into buf; false (and *bad, closed) when it
 * cannot be read. */
static bool read_kept(int *fd, bool *bad, const char *path, char *buf, size_t n)
{
    if (*bad)
        return false;
    if (*fd < 0)
        *fd = open_ro(path);
    if (*fd < 0 || pc_read_at(*fd, buf, n) <= 0) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        *bad = true;
        return false;
    }
    return true;
}

/* The children's storage I/O since the last reading: pids in h (the host
 * load reading just taken); one seen at the first reading is a baseline,
 * one new since counts from its fork (its counters start at 0). */
static void kids_io(sys_reader *r, const host_load *h, bool first)
{
    sys_kid next[HOSTLOAD_MAX_CHILDREN];
    uint32_t n = 0;
    for (uint32_t i = 0; i < h->nkid && n < HOSTLOAD_MAX_CHILDREN; i++) {
        char path[48], buf[512];
        uint64_t rd, wr;
        snprintf(path, sizeof path, "/proc/%d/io", (int)h->kid[i]);
        if (pc_read_path(path, buf, sizeof buf) <= 0 || !io_fields(buf, &rd, &wr))
            continue;                   /* gone meanwhile, or not ours to read */
        sys_kid k = { h->kid[i], first ? rd : 0, first ? wr : 0 };
        for (uint32_t j = 0; j < r->nkid; j++)
            if (r->kid[j].pid == k.pid) {
                k.rd = r->kid[j].rd;
                k.wr = r->kid[j].wr;
                break;
            }
        r->sum_rd += rise(&k.rd, rd);
        r->sum_wr += rise(&k.wr, wr);
        next[n++] = k;
    }
    memcpy(r->kid, next, n * sizeof *next);
    r->nkid = n;
}

void pc_sysread_read(sys_reader *r, const host_load *h, prism_memory_sample *m)
{
    char buf[16384];
    bool first = !r->started;
    r->started = true;
    m->have_sys = 1;
    m->io_read_bytes = m->io_write_bytes = PRISM_NO_VALUE;
    uint64_t rd, wr;
    if (read_kept(&r->io, &r->io_bad, "/proc/self/io", buf, 512) && io_fields(buf, &rd, &wr)) {
        if (first) {
            r->io_rd = rd;
            r->io_wr = wr;
        }
        r->sum_rd += rise(&r->io_rd, rd);
        r->sum_wr += rise(&r->io_wr, wr);
        kids_io(r, h, first);
        m->io_read_bytes = r->sum_rd;
        m->io_write_bytes = r->sum_wr;
    } else {
        r->io_bad = true;
    }
    m->net_rx_bytes = m->net_tx_bytes = PRISM_NO_VALUE;
    uint64_t rx, tx;
    if (read_kept(&r->net, &r->net_bad, "/proc/net/dev", buf, sizeof buf) &&
        net_bytes(buf, &rx, &tx)) {
        if (first) {
            r->net_rx = rx;
            r->net_tx = tx;
        }
        r->sum_rx += rise(&r->net_rx, rx);
        r->sum_tx += rise(&r->net_tx, tx);
        m->net_rx_bytes = r->sum_rx;
        m->net_tx_bytes = r->sum_tx;
    }
    struct rusage ru;
    m->cpu_user_ns = m->cpu_sys_ns = PRISM_NO_VALUE;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        m->cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
                         (uint64_t)ru.ru_utime.tv_usec * 1000u;
        m->cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
                        (uint64_t)ru.ru_stime.tv_usec * 1000u;
    }
    m->mem_total = r->mem_total;
    m->cpu_energy_uj = PRISM_NO_VALUE;
    bool all = r->nrapl > 0;
    for (uint32_t i = 0; i < r->nrapl; i++) {
        char e[64];
        if (pc_read_at(r->rapl[i], e, sizeof e) <= 0) {
            all = false;
            continue;
        }
        uint64_t v = strtoull(e, NULL, 10), last = r->rapl_last[i];
        if (v >= last)
            r->sum_uj += v - last;
        else if (r->rapl_range[i] > last)               /* wrapped */
            r->sum_uj += r->rapl_range[i] - last + v;
        r->rapl_last[i] = v;
    }
    if (all)
        m->cpu_energy_uj = r->sum_uj;
}

/* ---- prism_system_read: the same sources, once, raw ------------------- */

int prism_system_read(prism_system_reading *out)
{
    if (!out)
        return -1;
    const uint64_t no = PRISM_NO_VALUE;
    *out = (prism_system_reading){ 0, no, no, no, no, no, no, no, no, no };
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
        out->mono_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    char buf[16384];
    uint64_t a, b;
    long page = sysconf(_SC_PAGESIZE);
    unsigned long long size, resident;
    if (pc_read_path("/proc/self/statm", buf, sizeof buf) > 0 &&
        sscanf(buf, "%llu %llu", &size, &resident) == 2)
        out->rss = (uint64_t)resident * (uint64_t)(page > 0 ? page : 4096);
    if (pc_read_path("/proc/meminfo", buf, 4096) > 0 && field(buf, "MemTotal", &a) &&
        a < UINT64_MAX / 1024u)
        out->mem_total = a * 1024u;
    if (pc_read_path("/proc/self/io", buf, 512) > 0 && io_fields(buf, &a, &b)) {
        out->io_read_bytes = a;
        out->io_write_bytes = b;
    }
    if (pc_read_path("/proc/net/dev", buf, sizeof buf) > 0 && net_bytes(buf, &a, &b)) {
        out->net_rx_bytes = a;
        out->net_tx_bytes = b;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        out->cpu_user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
                           (uint64_t)ru.ru_utime.tv_usec * 1000u;
        out->cpu_sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
                          (uint64_t)ru.ru_stime.tv_usec * 1000u;
    }
    uint64_t uj = 0;
    unsigned found = 0;
    for (unsigned i = 0; i < SYSREAD_RAPL_MAX; i++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/class/powercap/intel-rapl:%u/energy_uj", i);
        if (pc_read_path(path, buf, 64) <= 0)
            break;
        uj += strtoull(buf, NULL, 10);
        found++;
    }
    if (found)
        out->cpu_energy_uj = uj;
    return 0;
}

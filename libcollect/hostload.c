/*
 * hostload.c - the machine's load beside the process (hostload.h): the busy
 * ticks of the first line of /proc/stat, and the CPU ticks of the child
 * processes, turned into thousandths of a core over the wall time since the
 * previous reading.  Owner: who took the CPUs (issue 26).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prism/profile.h"
#include "hostload.h"

void pc_hostload_init(host_load *h)
{
    long hz = sysconf(_SC_CLK_TCK);
    *h = (host_load){ .stat = -1,
                      .tick_ns = hz > 0 && hz <= 1000000000L ? 1000000000u / (uint64_t)hz
                                                             : 10000000u };
}

void pc_hostload_close(host_load *h)
{
    if (h->stat >= 0)
        close(h->stat);
    h->stat = -1;
}

bool pc_hostload_due(const host_load *h, uint64_t now)
{
    return !h->prev_ns || now - h->prev_ns >= (uint64_t)HOSTLOAD_EVERY_MS * 1000000u;
}

ssize_t pc_read_at(int fd, char *buf, size_t n)
{
    ssize_t got;
    do
        got = pread(fd, buf, n - 1, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return -1;
    buf[got] = '\0';
    return got;
}

ssize_t pc_read_path(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = pc_read_at(fd, buf, n);
    close(fd);
    return got;
}

/* The machine's busy and total ticks: "cpu  user nice system idle iowait
 * irq softirq steal ..." (guest time is inside user already). */
static bool machine_ticks(host_load *h, uint64_t *busy, uint64_t *total)
{
    char buf[512];
    if (h->stat < 0)
        h->stat = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (h->stat < 0)
        return false;
    if (pc_read_at(h->stat, buf, sizeof buf) <= 0) {
        pc_hostload_close(h);               /* reopened at the next reading */
        return false;
    }
    unsigned long long v[8] = { 0 };
    int n = sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]);
    if (n < 4)
        return false;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *total = *busy + v[3] + v[4];
    return true;
}

/* Fields of a /proc/PID/stat line after the command's closing parenthesis:
 * field 3 (state) is number 0; false when the line is short. */
static bool stat_fields(const char *line, unsigned long long *utime, unsigned long long *stime,
                        unsigned long long *cutime, unsigned long long *cstime)
{
    const char *p = strrchr(line, ')');
    if (!p)
        return false;
    p++;
    unsigned long long f[15];
    for (int i = 0; i < 15; i++) {
        while (*p == ' ')
            p++;
        if (i == 0) {                       /* the state letter */
            if (!*p)
                return false;
            while (*p && *p != ' ')
                p++;
            continue;
        }
        char *end;
        errno = 0;
        f[i] = strtoull(p, &end, 10);
        if (end == p || errno)
            return false;
        p = end;
    }
    *utime = f[11];
    *stime = f[12];
    *cutime = f[13];
    *cstime = f[14];
    return true;
}

/* The children's CPU ticks: the live ones listed by each thread of the
 * process (their pids into h->kid), and the reaped ones (this process's
 * cutime + cstime). */
static bool children_ticks(host_load *h, uint64_t *out)
{
    char buf[1024], path[64];
    unsigned long long u, s, cu, cs;
    h->nkid = 0;
    if (pc_read_path("/proc/self/stat", buf, sizeof buf) <= 0 || !stat_fields(buf, &u, &s, &cu, &cs))
        return false;
    uint64_t sum = cu + cs;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    unsigned tasks = 0, kids = 0;
    bool listed = false;                    /* a children file was read */
    struct dirent *e;
    while ((e = readdir(d)) && tasks < HOSTLOAD_MAX_TASKS && kids < HOSTLOAD_MAX_CHILDREN) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        tasks++;
        char list[2048];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", e->d_name);
        if (pc_read_path(path, list, sizeof list) < 0)
            continue;
        listed = true;
        for (char *p = list, *end; kids < HOSTLOAD_MAX_CHILDREN; p = end) {
            errno = 0;
            unsigned long pid = strtoul(p, &end, 10);
            if (end == p || errno)
                break;
            kids++;
            if (pid <= INT32_MAX)
                h->kid[h->nkid++] = (int32_t)pid;
            snprintf(path, sizeof path, "/proc/%lu/stat", pid);
            if (pc_read_path(path, buf, sizeof buf) > 0 && stat_fields(buf, &u, &s, &cu, &cs))
                sum += u + s;               /* gone meanwhile: not counted */
        }
    }
    closedir(d);
    if (!listed)                            /* no children files (kernel) */
        return false;
    *out = sum;
    return true;
}

/* ns over `span` ns of wall time, thousandths of a core, at most `cap`
 * cores: the excess goes into *carry for the next interval. */
static uint32_t permille(uint64_t ns, uint64_t span, uint32_t ncpu, uint64_t *carry)
{
    ns += *carry;
    uint64_t most = span * ncpu;
    *carry = ns > most ? ns - most : 0;
    if (ns > most)
        ns = most;
    uint64_t p = span ? (uint64_t)((double)ns * 1000.0 / (double)span + 0.5) : 0;
    return p >= PRISM_NO_CPU ? PRISM_NO_CPU - 1 : (uint32_t)p;
}

void pc_hostload_read(host_load *h, uint64_t now, uint32_t *ncpu, uint32_t *busy_permille,
                      uint32_t *kids_permille)
{
    *busy_permille = *kids_permille = PRISM_NO_CPU;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    *ncpu = n > 0 && n < 1000000 ? (uint32_t)n : 0;
    if (!*ncpu)
        return;
    uint64_t span = h->prev_ns && now > h->prev_ns ? now - h->prev_ns : 0;
    uint64_t busy, total, kids;
    bool have_busy = machine_ticks(h, &busy, &total);
    if (have_busy && h->have_busy && span && total > h->total && busy >= h->busy) {
        /* the ticks' own split of the interval, scaled to the wall clock */
        double ns = (double)(busy - h->busy) / (double)(total - h->total) * (double)*ncpu *
                    (double)span;
        *busy_permille = permille((uint64_t)ns, span, *ncpu, &h->busy_carry);
    }
    if (have_busy) {
        h->busy = busy;
        h->total = total;
    }
    h->have_busy = have_busy;
    bool have_kids = children_ticks(h, &kids);
    if (have_kids && h->have_kids && span)
        *kids_permille = permille(kids >= h->kids ? (kids - h->kids) * h->tick_ns : 0, span,
                                  *ncpu, &h->kids_carry);
    if (have_kids)
        h->kids = kids;
    h->have_kids = have_kids;
    h->prev_ns = now;
}

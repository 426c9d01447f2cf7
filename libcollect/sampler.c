/*
 * sampler.c - the memory sampler (sampler.h): host memory (/proc/self/statm,
 * kept open and read with pread), CPU time of the process
 * (CLOCK_PROCESS_CPUTIME_ID), GPU memory (gpumem.c) and the machine's load
 * (hostload.c), on the writer
 * thread only: once per wake-up at which it learns that a step ended, and
 * every memory_interval_ms.  Owner: steps and memory sampling (issue 12).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti.h"
#include "sampler.h"

/* Fast step polls go on while the last step ended less than this long ago. */
#define STEP_IDLE_NS 1000000000u

static ssize_t read_statm(mem_sampler *m, char *buf, size_t n)
{
    if (m->statm < 0)
        m->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (m->statm < 0)
        return -1;
    ssize_t got;
    do
        got = pread(m->statm, buf, n - 1, 0);
    while (got < 0 && errno == EINTR);
    if (got <= 0) {                     /* reopened at the next read */
        close(m->statm);
        m->statm = -1;
        return -1;
    }
    buf[got] = '\0';
    return got;
}

int pc_sampler_read(mem_sampler *m, uint64_t *rss, uint32_t *cpu_permille)
{
    char buf[256];
    if (read_statm(m, buf, sizeof buf) < 0)
        return -1;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
        return -1;
    *rss = (uint64_t)resident * m->page;
    *cpu_permille = PRISM_NO_CPU;
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0;
    uint64_t cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    uint64_t now = pc_clock_mono_ns();
    uint64_t *prev = m->cpu_prev;
    if (prev[1] && now > prev[1] && cpu >= prev[0])
        *cpu_permille = (uint32_t)((cpu - prev[0]) * 1000u / (now - prev[1]));
    prev[0] = cpu;
    prev[1] = now;
    return 0;
}

void pc_sampler_init(mem_sampler *m, const session *s, uint64_t now)
{
    long page = sysconf(_SC_PAGESIZE);
    *m = (mem_sampler){ .statm = -1, .page = page > 0 ? (uint64_t)page : 4096u,
                        .every_ns = (uint64_t)s->cfg.memory_interval_ms * 1000000u,
                        .next_ns = now, .next_gpu_ns = now };
    pc_hostload_init(&m->load);
    pc_sysread_init(&m->sys);
}

void pc_sampler_close(mem_sampler *m)
{
    if (m->statm >= 0)
        close(m->statm);
    m->statm = -1;
    pc_hostload_close(&m->load);
    pc_sysread_close(&m->sys);
}

/* The raw clock after every earlier load of this thread: a sample that
 * names step N is never stamped before step N's end (whose tick the
 * stepping thread read before publishing steps_ended). */
static uint64_t ticks_after_loads(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("lfence" ::: "memory");
#endif
    return prism__now();
}

/* One sample; `ended` is steps_ended as loaded before the read. */
static void take(mem_sampler *m, session *s, uint64_t ended, bool tagged, uint64_t now,
                 bool force)
{
    proc_rec r = { .is_step = false };
    uint32_t cpu;
    m->next_ns = now + m->every_ns;
    m->steps_seen = ended;
    r.ticks = ticks_after_loads();
    if (pc_sampler_read(m, &r.u.mem.rss, &cpu) != 0)
        return;
    r.u.mem.step = tagged ? ended - 1 : PRISM_NO_STEP;
    r.u.mem.cpu_permille = cpu;
    r.u.mem.host_busy_permille = r.u.mem.children_cpu_permille = PRISM_NO_CPU;
    if (force || pc_hostload_due(&m->load, now)) {   /* ncpu 0 otherwise: not read */
        pc_hostload_read(&m->load, now, &r.u.mem.ncpu, &r.u.mem.host_busy_permille,
                         &r.u.mem.children_cpu_permille);
        pc_sysread_read(&m->sys, &m->load, &r.u.mem);
    }
    bool refresh = now >= m->next_gpu_ns;   /* NVML is slow: once an interval */
    if (refresh)
        m->next_gpu_ns = now + m->every_ns;
    r.u.mem.ngpu = s->cfg.collect_gpu_ops ? pc_gpumem_read(r.u.mem.gpu, refresh) : 0;
    r.u.mem.ngpu = pc_gpumem_program(r.u.mem.gpu, r.u.mem.ngpu);   /* prism_gpu_memory */
    pthread_mutex_lock(&s->lock);
    pc_steps_take(s);                      /* a step before the samples naming it */
    pc_queue_push(s, &r);
    pthread_mutex_unlock(&s->lock);
    atomic_store_explicit(&s->mem_steps, ended, memory_order_release);
}

uint64_t pc_sampler_poll(mem_sampler *m, session *s, uint64_t now, bool force)
{
    if (!s->cfg.collect_memory)
        return UINT64_MAX;
    uint64_t ended = atomic_load_explicit(&s->steps_ended, memory_order_acquire);
    bool new_step = ended != m->steps_seen;
    if (new_step)
        m->last_step_ns = now;
    if (force || new_step || now >= m->next_ns)
        take(m, s, ended, new_step && ended > 0, now, force);
    uint64_t next = m->next_ns;
    uint64_t poll = (uint64_t)SAMPLER_STEP_POLL_MS * 1000000u;
    if (ended && now - m->last_step_ns < STEP_IDLE_NS && now + poll < next)
        next = now + poll;
    return next;
}

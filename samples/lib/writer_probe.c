/*
 * writer_probe.c - the writer thread's current system call (writer_probe.h).
 */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "writer_probe.h"

/* Read a small /proc file of task `tid` into buf; its length or -1. */
static ssize_t task_file(const char *tid, const char *what, char *buf, size_t cap)
{
    char p[300];
    snprintf(p, sizeof p, "/proc/self/task/%s/%s", tid, what);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* The writer's /proc/self/task/TID/syscall line ("" when not found). */
static void writer_syscall_line(char *sc, size_t cap)
{
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    sc[0] = '\0';
    while (dir && (e = readdir(dir))) {
        char comm[64];
        if (e->d_name[0] == '.' ||
            task_file(e->d_name, "comm", comm, sizeof comm) <= 0 ||
            strncmp(comm, "prism-writer", 12) != 0)
            continue;
        if (task_file(e->d_name, "syscall", sc, cap) <= 0)
            sc[0] = '\0';
        break;
    }
    if (dir)
        closedir(dir);
}

long probe_writer_syscall(void)
{
    char sc[256];
    writer_syscall_line(sc, sizeof sc);
    return sc[0] && sc[0] != 'r' ? strtol(sc, NULL, 10) : -1;   /* not "running" */
}

bool probe_writer_stalled(void)
{
    char sc[256];
    writer_syscall_line(sc, sizeof sc);
    if (!sc[0] || sc[0] == 'r')
        return false;
    char *p = sc;
    long nr = strtol(p, &p, 10);
    if (nr == SYS_write)
        return true;
    bool polling = nr == SYS_ppoll;
#ifdef SYS_poll
    polling |= nr == SYS_poll;
#endif
    if (!polling)
        return false;
    /* its first argument: the pollfd, on the writer's stack in this process */
    unsigned long addr = strtoul(p, NULL, 16);
    const struct pollfd *fd = (const struct pollfd *)addr;
    return fd && fd->events == POLLOUT;
}

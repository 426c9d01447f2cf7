/*
 * writer_probe.c - the writer thread's current system call (writer_probe.h).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

long probe_writer_syscall(void)
{
    DIR *dir = opendir("/proc/self/task");
    long nr = -1;
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char comm[64], sc[64];
        if (e->d_name[0] == '.' ||
            task_file(e->d_name, "comm", comm, sizeof comm) <= 0 ||
            strncmp(comm, "prism-writer", 12) != 0)
            continue;
        if (task_file(e->d_name, "syscall", sc, sizeof sc) > 0 && sc[0] != 'r')
            nr = strtol(sc, NULL, 10);              /* not "running" */
        break;
    }
    if (dir)
        closedir(dir);
    return nr;
}

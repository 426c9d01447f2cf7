/*
 * _prism_session.c - prism._prism's session: prism.init's configuration
 * dict checked field by field into a prism_config (the ranges of the
 * PRISM_* variables), the session started, a DataLoader worker's own
 * session, shutdown, and what the session says of itself (recording, its
 * output path, its start).  Also the NVTX injection entry and the CUPTI
 * search folders that only the interpreter knows.
 */
#include "_prism.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/collect.h"
#include "prism/profile.h"

/* ---- the session ----------------------------------------------------- */

enum kind { K_BOOL, K_U32, K_DOUBLE, K_POLICY, K_STR };

typedef struct field {
    const char *name;
    enum kind kind;
    size_t off;
    double lo, hi;                  /* numbers: the range (as the PRISM_* variables) */
    bool lo_open;
} field;

#define F(n, k, lo, hi, open) { #n, k, offsetof(prism_config, n), lo, hi, open }
static const field fields[] = {
    F(enabled, K_BOOL, 0, 0, false),
    F(collect_timing, K_BOOL, 0, 0, false),
    F(collect_memory, K_BOOL, 0, 0, false),
    F(collect_gpu_ops, K_BOOL, 0, 0, false),
    F(sample_rate, K_DOUBLE, 0.0, 1.0, true),
    F(adaptive_sampling, K_BOOL, 0, 0, false),
    F(adaptive_steps, K_U32, 0, 1e9, false),
    F(warmup_steps, K_U32, 0, 1e9, false),
    F(active_steps, K_U32, 0, 1e9, false),
    F(memory_interval_ms, K_U32, 1, 3600000, false),
    F(cpu_interval_ms, K_U32, 0, 3600000, false),
    F(flush_interval_ms, K_U32, 1, 60000, false),
    F(buffer_events, K_U32, 64, 16777216, false),
    F(buffer_mb, K_U32, 1, 65536, false),
    F(policy, K_POLICY, 0, 0, false),
    F(output, K_STR, 0, 0, false),
    F(output_dir, K_STR, 0, 0, false),
    F(bottleneck_threshold_pct, K_DOUBLE, 0.0, 100.0, false),
    F(memory_leak_threshold_mb, K_DOUBLE, 0.0, 1e9, false),
};
#undef F

/* The strings of the configuration that started the session: the session
 * keeps pointers to them (one session per process, never freed). */
static char *kept_output, *kept_output_dir;

/* A str as UTF-8 without a NUL inside (a NUL would end the C string
 * early: "drop\0x" is not "drop"); NULL, with no exception set, otherwise. */
static const char *exact_utf8(PyObject *o)
{
    Py_ssize_t n;
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &n) : NULL;
    if (!s || (size_t)n != strlen(s)) {
        PyErr_Clear();
        return NULL;
    }
    return s;
}

/* The GPU backend's libcupti search (issue 27, defect 8) looks in the pip
 * wheels (nvidia/cu13, nvidia/cuda_cupti) under sys.path's folders: only
 * the interpreter knows them.  libcollect keeps a copy. */
void prism__cupti_search_dirs(const char *dirs);
int prism__nvtx_handoff(const void *get_export_table);   /* libcollect/cupti.h */
int prism__nvtx_route(const void *entry);

/* NVTX's injection entry, exported (prism.map): prism.init points
 * NVTX_INJECTION64_PATH here while the program has no other thread, and
 * NVTX ranges (torch.cuda.nvtx) reach CUPTI through it (docs/GPU.md). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(const void *get_export_table);
int InitializeInjectionNvtx2(const void *get_export_table)
{
    return prism__nvtx_handoff(get_export_table);
}
static void cupti_dirs_from_sys_path(void)
{
    PyObject *p = PySys_GetObject("path");                  /* borrowed */
    char buf[8192] = "";
    size_t n = 0;
    for (Py_ssize_t i = 0; p && PyList_Check(p) && i < PyList_Size(p); i++) {
        const char *s = exact_utf8(PyList_GetItem(p, i));
        size_t len = s ? strlen(s) : 0;
        if (!len || strchr(s, ':') || n + len + 2 > sizeof buf)
            continue;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ":" : "", s);
    }
    prism__cupti_search_dirs(buf);
}

static int set_field(prism_config *c, const field *f, PyObject *v)
{
    char *p = (char *)c + f->off;
    switch (f->kind) {
    case K_BOOL: {
        long b = PyLong_Check(v) ? PyLong_AsLong(v) : -1;   /* bool, or int 0 or 1 */
        if (b != 0 && b != 1) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "prism.init: %s is True or False", f->name);
            return -1;
        }
        *(bool *)p = b == 1;
        return 0;
    }
    case K_U32: {
        /* an int, or an integer through __index__ (numpy); not a bool */
        PyObject *i = PyBool_Check(v) || PyFloat_Check(v) ? NULL
                    : PyLong_Check(v) ? (Py_INCREF(v), v) : PyNumber_Index(v);
        long long x = i ? PyLong_AsLongLong(i) : -1;
        Py_XDECREF(i);
        if (PyErr_Occurred())
            PyErr_Clear();
        if (!i || x < (long long)f->lo || x > (long long)f->hi) {
            PyErr_Format(PyExc_ValueError, "prism.init: %s is a whole number from %lld to %lld",
                         f->name, (long long)f->lo, (long long)f->hi);
            return -1;
        }
        *(uint32_t *)p = (uint32_t)x;
        return 0;
    }
    case K_DOUBLE: {
        /* a real number (int, float, numpy's), not a bool */
        bool num = !PyBool_Check(v) && PyNumber_Check(v);
        double x = num ? PyFloat_AsDouble(v) : -1.0;
        if (PyErr_Occurred()) {
            PyErr_Clear();
            num = false;
        }
        bool ok = num && x == x && (f->lo_open ? x > f->lo : x >= f->lo) && x <= f->hi;
        if (!ok) {
            char msg[160];
            snprintf(msg, sizeof msg, "prism.init: %s is a number in %s%g, %g]", f->name,
                     f->lo_open ? "(" : "[", f->lo, f->hi);
            PyErr_SetString(PyExc_ValueError, msg);
            return -1;
        }
        *(double *)p = x;
        return 0;
    }
    case K_POLICY: {
        const char *s = exact_utf8(v);
        if (s && !strcmp(s, "drop"))
            c->policy = PRISM_POLICY_DROP;
        else if (s && !strcmp(s, "wait"))
            c->policy = PRISM_POLICY_WAIT;
        else {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "prism.init: policy is 'drop' or 'wait'");
            return -1;
        }
        return 0;
    }
    case K_STR: {
        if (v == Py_None) {
            if (f->off == offsetof(prism_config, output_dir))
                c->output_dir = NULL;
            return 0;               /* output=None: the default or PRISM_OUTPUT */
        }
        PyObject *b = NULL;
        if (!PyUnicode_Check(v) && !PyBytes_Check(v)) {
            /* os.PathLike */
            PyObject *os = PyImport_ImportModule("os");
            PyObject *fs = os ? PyObject_CallMethod(os, "fspath", "O", v) : NULL;
            Py_XDECREF(os);
            if (!fs) {
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError, "prism.init: %s is a path (str)", f->name);
                return -1;
            }
            v = fs;
        } else {
            Py_INCREF(v);
        }
        if (PyUnicode_Check(v)) {
            b = PyUnicode_EncodeFSDefault(v);
        } else if (PyBytes_Check(v)) {
            b = v;
            Py_INCREF(b);
        }
        Py_DECREF(v);
        if (!b)
            return -1;
        char *s = PyBytes_AsString(b);
        if (!s || (size_t)PyBytes_Size(b) != strlen(s) || !*s) {
            Py_DECREF(b);
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "prism.init: %s is a non-empty path without NUL",
                         f->name);
            return -1;
        }
        char *copy = strdup(s);
        Py_DECREF(b);
        if (!copy) {
            PyErr_NoMemory();
            return -1;
        }
        *(const char **)p = copy;
        return 0;
    }
    }
    return -1;
}

/* _prism.init(dict) -> bool: defaults, the PRISM_* environment, then dict. */
/* The configuration of a dict of prism_config fields (over the defaults
 * and the environment); *o / *d: the strings it allocated (the caller
 * keeps or frees them), *hz: stack_hz.  -1 with an exception set. */
static int config_of(PyObject *kw, prism_config *c, char **o, char **d, double *hz)
{
    if (!PyDict_Check(kw)) {
        PyErr_SetString(PyExc_TypeError, "_prism.init takes a dict");
        return -1;
    }
    prism_config_default(c);
    prism_config_from_env(c);
    const char *out0 = c->output, *dir0 = c->output_dir;
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    int rc = 0;
    *hz = prism_py_stack_hz(kw);
    if (*hz < 0)
        rc = -1;
    while (rc == 0 && PyDict_Next(kw, &pos, &key, &val)) {
        const char *k = exact_utf8(key);
        if (k && !strcmp(k, "stack_hz"))
            continue;                   /* the stack sampler's, above */
        const field *f = NULL;
        for (size_t i = 0; k && i < sizeof fields / sizeof fields[0]; i++)
            if (!strcmp(fields[i].name, k))
                f = &fields[i];
        if (!f) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "prism.init() got an unexpected keyword argument %R",
                         key);
            rc = -1;
        } else {
            rc = set_field(c, f, val);
        }
    }
    *o = c->output != out0 ? (char *)c->output : NULL;
    *d = c->output_dir != dir0 ? (char *)c->output_dir : NULL;
    if (rc != 0) {
        free(*o);
        free(*d);
        *o = *d = NULL;
    }
    return rc;
}

static PyObject *py_init(PyObject *m, PyObject *kw)
{
    (void)m;
    prism_config c;
    char *o, *d;
    double hz;
    if (config_of(kw, &c, &o, &d, &hz) != 0)
        return NULL;
    bool was = prism_recording();
    int r;
    cupti_dirs_from_sys_path();
    if (!was && c.enabled && c.collect_gpu_ops)
        prism__nvtx_route((const void *)InitializeInjectionNvtx2);
    if (!was)
        prism_py_stacks_want(hz);
    Py_BEGIN_ALLOW_THREADS
    r = prism_init(&c);
    Py_END_ALLOW_THREADS
    if (r == 0 && !was && prism_recording()) {
        kept_output = o;            /* the session points at them now */
        kept_output_dir = d;
        prism_py_stacks_start(hz);
    } else {
        free(o);
        free(d);
    }
    return PyBool_FromLong(prism_recording());
}

/* _init_worker(config, parent_pid, parent_start_ns, id) -> bool: this
 * process records as a worker of that session (prism_init_worker); no
 * Python stack sampler in a worker. */
static PyObject *py_init_worker(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    prism_worker_of w;
    if (n != 4) {
        PyErr_SetString(PyExc_TypeError, "_init_worker(config, parent_pid, parent_start_ns, id)");
        return NULL;
    }
    w.parent_pid = PyLong_AsUnsignedLongLong(args[1]);
    w.parent_start_ns = PyLong_AsUnsignedLongLong(args[2]);
    w.id = PyLong_AsUnsignedLongLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    prism_config c;
    char *o, *d;
    double hz;
    if (config_of(args[0], &c, &o, &d, &hz) != 0)
        return NULL;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = prism_init_worker(&c, &w);
    Py_END_ALLOW_THREADS
    if (r == 0 && prism_recording()) {
        kept_output = o;            /* (a forked child's copies of the parent's are left) */
        kept_output_dir = d;
    } else {
        free(o);
        free(d);
    }
    return PyBool_FromLong(prism_recording());
}

static PyObject *py_session_start_ns(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    return PyLong_FromUnsignedLongLong(prism_session_start_ns());
}

static PyObject *py_shutdown(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism_py_stacks_stop();
    Py_BEGIN_ALLOW_THREADS
    prism_shutdown();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *py_stacks_stop(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism_py_stacks_stop();
    Py_RETURN_NONE;
}

static PyObject *py_recording(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    return PyBool_FromLong(prism_recording());
}

static PyObject *py_output_path(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    const char *p = prism_output_path();
    if (!p)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(p);
}

/* ---- its functions -------------------------------------------------- */

PyMethodDef prism_session_methods[] = {
    { "init", py_init, METH_O, "init(config: dict) -> bool (prism.init)." },
    { "_init_worker", PRISM_PYFN(py_init_worker), METH_FASTCALL,
      "_init_worker(config, parent_pid, parent_start_ns, id) -> bool: record as a worker." },
    { "_session_start_ns", py_session_start_ns, METH_NOARGS,
      "The session's start (ns since the epoch; 0: none): its identity for its workers." },
    { "shutdown", py_shutdown, METH_NOARGS, "Flush and close the profile." },
    { "recording", py_recording, METH_NOARGS, "True while a session records." },
    { "_stacks_stop", py_stacks_stop, METH_NOARGS,
      "Stop the stack sampler (at exit, before the interpreter finalizes)." },
    { "output_path", py_output_path, METH_NOARGS, "The profile's path, or None." },
    { NULL, NULL, 0, NULL }
};

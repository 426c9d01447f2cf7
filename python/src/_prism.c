/*
 * _prism.c - prism._prism, the recording half: collect.h's calls for
 * Python (steps, marks, counters, thread names, GPU memory, the system's
 * reading) and the module.  The session and its configuration:
 * _prism_session.c; regions: _prism_region.c; reading: _prism_read.c.
 */
#include "_prism.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/collect.h"
#include "prism/import.h"
#include "prism/profile.h"

/* ---- steps ----------------------------------------------------------- */

typedef struct Step {
    PyObject_HEAD
} Step;

static PyObject *Step_enter(PyObject *self, PyObject *unused)
{
    (void)unused;
    prism_step_begin();
    Py_INCREF(self);
    return self;
}

static PyObject *Step_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    (void)args;
    (void)nargs;
    prism_step_end();
    Py_RETURN_FALSE;
}

static PyMethodDef Step_methods[] = {
    { "__enter__", PRISM_PYFN(Step_enter), METH_NOARGS, "prism_step_begin()" },
    { "__exit__", PRISM_PYFN(Step_exit), METH_FASTCALL, "prism_step_end()" },
    { NULL, NULL, 0, NULL }
};

static PyType_Slot Step_slots[] = {
    { Py_tp_doc, (void *)"One training step: `with prism.step():`." },
    { Py_tp_methods, Step_methods },
    { 0, NULL }
};

static PyType_Spec Step_spec = {
    "prism._prism.Step", sizeof(Step), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Step_slots
};

static PyObject *py_step_begin(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism_step_begin();
    Py_RETURN_NONE;
}

static PyObject *py_step_end(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism_step_end();
    Py_RETURN_NONE;
}

void prism__step_mark(void);       /* libcollect/internal.h */
void prism__step_cancel(void);
void prism__step_flag(uint32_t bits);
void prism__step_thread(void);

static PyObject *py_step_thread(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism__step_thread();
    Py_RETURN_NONE;
}

static PyObject *py_step_cancel(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism__step_cancel();
    Py_RETURN_NONE;
}

static PyObject *py_step_ops(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism__step_flag(PRISM_STEP_OPS);
    Py_RETURN_NONE;
}

static PyObject *py_step_mark(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    prism__step_mark();
    Py_RETURN_NONE;
}

bool prism__info_text(const char *key, const char *text);     /* libcollect/internal.h */
bool prism__info_uint(const char *key, uint64_t value);

/* _info(key, value): a fact for an INFO chunk of the writer's next flush
 * (prism._torch_adapt: torch.modules.*); value an int >= 0 or a str.
 * Returns whether it was queued (False without a session). */
static PyObject *py_info(PyObject *m, PyObject *const *args, Py_ssize_t n)
{
    (void)m;
    if (n != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_info(key: str, value: int or str)");
        return NULL;
    }
    const char *key = PyUnicode_AsUTF8AndSize(args[0], NULL);
    if (!key)
        return NULL;
    bool ok;
    if (PyUnicode_Check(args[1])) {
        const char *text = PyUnicode_AsUTF8AndSize(args[1], NULL);
        if (!text)
            return NULL;
        ok = prism__info_text(key, text);
    } else if (PyLong_Check(args[1])) {
        unsigned long long v = PyLong_AsUnsignedLongLong(args[1]);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return NULL;
        ok = prism__info_uint(key, v);
    } else {
        PyErr_SetString(PyExc_TypeError, "_info: value must be an int >= 0 or a str");
        return NULL;
    }
    return PyBool_FromLong(ok);
}

static PyObject *py_step_index(PyObject *m, PyObject *u)
{
    (void)m, (void)u;
    return PyLong_FromUnsignedLongLong(prism_step_index());
}

/* An integer argument as an exact int (a new reference): an int, or an
 * object that is one through __index__ (numpy and torch integers, which are
 * no int subclasses); NULL, with TypeError, for anything else. */
static PyObject *as_int(PyObject *o, const char *what)
{
    if (PyLong_Check(o)) {
        Py_INCREF(o);
        return o;
    }
    PyObject *i = PyFloat_Check(o) ? NULL : PyNumber_Index(o);
    if (!i) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: an int, not %s", what,
                     PyFloat_Check(o) ? "a float" : "another type");
    }
    return i;
}

static bool as_u64(PyObject *o, const char *what, uint64_t *out)
{
    PyObject *i = as_int(o, what);
    if (!i)
        return false;
    unsigned long long v = PyLong_AsUnsignedLongLong(i);
    Py_DECREF(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: a whole number from 0 to 2**64-1", what);
        return false;
    }
    *out = v;
    return true;
}

static PyObject *py_epoch(PyObject *m, PyObject *n)
{
    (void)m;
    uint64_t e;
    if (!as_u64(n, "prism.epoch", &e))
        return NULL;
    prism_epoch(e);
    Py_RETURN_NONE;
}

/* ---- marks, counters, thread names, GPU memory ----------------------- */

const char *prism_py_name(PyObject *name, Py_ssize_t *n, PyObject **keep)
{
    *keep = NULL;
    const char *s = PyUnicode_AsUTF8AndSize(name, n);
    if (s || !PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return s;
    PyErr_Clear();
    PyObject *b = PyUnicode_AsEncodedString(name, "utf-8", "backslashreplace");
    char *p;
    if (!b || PyBytes_AsStringAndSize(b, &p, n) != 0) {
        Py_XDECREF(b);
        return NULL;
    }
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        fprintf(stderr, "prism: a name is not valid Unicode (a lone surrogate, as from a non-UTF-8 "
                        "file name): recorded with backslash escapes (\\udcff)\n");
    *keep = b;
    return p;
}

static const char *name_utf8(PyObject *name, const char *what, PyObject **keep)
{
    *keep = NULL;
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "%s: the name is a str", what);
        return NULL;
    }
    Py_ssize_t n;
    const char *s = prism_py_name(name, &n, keep);
    if (s && (size_t)n != strlen(s)) {
        Py_CLEAR(*keep);
        PyErr_Format(PyExc_ValueError, "%s: the name holds a NUL character", what);
        return NULL;
    }
    return s;
}

static PyObject *py_mark(PyObject *m, PyObject *name)
{
    (void)m;
    PyObject *keep;
    const char *s = name_utf8(name, "prism.mark", &keep);
    if (!s)
        return NULL;
    if (atomic_load_explicit(&prism__on, memory_order_relaxed)) {
        prism_py_name_thread();
        prism_mark_name(s);
    }
    Py_XDECREF(keep);
    Py_RETURN_NONE;
}

static PyObject *counter_ids;       /* str -> int (interned ids)          */

static PyObject *counter_put(PyObject *name, const char *s, PyObject *value);

static PyObject *py_counter(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "prism.counter(name, value)");
        return NULL;
    }
    PyObject *keep;
    const char *s = name_utf8(args[0], "prism.counter", &keep);
    if (!s)
        return NULL;
    PyObject *r = counter_put(args[0], s, args[1]);
    Py_XDECREF(keep);
    return r;
}

/* prism.counter(name, value) with the name's text s. */
static PyObject *counter_put(PyObject *name, const char *s, PyObject *value)
{
    bool is_int = PyLong_Check(value);
    long long iv = 0;
    double fv = 0;
    PyObject *index = NULL;         /* numpy and torch integers: exactly */
    if (!is_int && !PyFloat_Check(value) && PyIndex_Check(value)) {
        if ((index = PyNumber_Index(value)) != NULL) {
            value = index;
            is_int = true;
        } else {
            PyErr_Clear();          /* a float tensor: its __float__ */
        }
    }
    if (is_int) {
        int overflow;
        iv = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow) {             /* past int64: as a float */
            is_int = false;
            fv = PyLong_AsDouble(value);
        }
        Py_XDECREF(index);
        if ((overflow ? fv == -1.0 : iv == -1) && PyErr_Occurred())
            return NULL;            /* past a double too */
    } else {
        fv = PyFloat_AsDouble(value);
        if (fv == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "prism.counter: the value is an int or a float");
            return NULL;
        }
    }
    if (!atomic_load_explicit(&prism__counting, memory_order_relaxed))
        Py_RETURN_NONE;
    uint32_t id = 0;
    PyObject *o = PyDict_GetItemWithError(counter_ids, name);
    if (o) {
        id = (uint32_t)PyLong_AsUnsignedLong(o);
    } else {
        if (PyErr_Occurred())
            return NULL;
        id = prism_name(s);
        if (id) {
            PyObject *v = PyLong_FromUnsignedLong(id);
            if (!v || PyDict_SetItem(counter_ids, name, v) != 0) {
                Py_XDECREF(v);
                return NULL;
            }
            Py_DECREF(v);
        }
    }
    prism_py_name_thread();
    if (is_int)
        prism_counter_i(id, (int64_t)iv);
    else
        prism_counter_f(id, fv);
    Py_RETURN_NONE;
}

static PyObject *py_thread_name(PyObject *m, PyObject *name)
{
    (void)m;
    PyObject *keep;
    const char *s = name_utf8(name, "prism.thread_name", &keep);
    if (!s)
        return NULL;
    prism_thread_name(s);
    Py_XDECREF(keep);
    if (prism_recording())
        prism_py_thread_named();
    Py_RETURN_NONE;
}

static PyObject *py_gpu_memory(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    uint64_t dev, used, reserved;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "prism.gpu_memory(device, used_bytes, reserved_bytes)");
        return NULL;
    }
    if (!as_u64(args[0], "prism.gpu_memory: device", &dev) ||
        !as_u64(args[1], "prism.gpu_memory: used_bytes", &used) ||
        !as_u64(args[2], "prism.gpu_memory: reserved_bytes", &reserved))
        return NULL;
    if (dev > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "prism.gpu_memory: device is a CUDA ordinal");
        return NULL;
    }
    prism_gpu_memory((uint32_t)dev, used, reserved);
    Py_RETURN_NONE;
}

/* prism_gpu_streams_begin: True when CUPTI records kernels here now. */
static PyObject *py_gpu_streams_begin(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    return PyBool_FromLong(prism_gpu_streams_begin() == 0);
}

/* prism_gpu_streams_end: [(device, stream, kernels, busy_ns), ...] busiest
 * first, or None (no window, or CUPTI stopped recording). */
static PyObject *py_gpu_streams_end(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    prism_gpu_stream_time st[PRISM_GPU_STREAMS_MAX];
    int n = prism_gpu_streams_end(st, PRISM_GPU_STREAMS_MAX);
    if (n < 0)
        Py_RETURN_NONE;
    if (n > PRISM_GPU_STREAMS_MAX)
        n = PRISM_GPU_STREAMS_MAX;
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *t = Py_BuildValue("(IIKK)", st[i].device, st[i].stream,
                                    (unsigned long long)st[i].kernels,
                                    (unsigned long long)st[i].busy_ns);
        if (!t) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SetItem(l, i, t);
    }
    return l;
}

/* prism_system_read as a dict; an unreadable figure is None. */
static PyObject *py_system_read(PyObject *m, PyObject *unused)
{
    (void)m;
    (void)unused;
    prism_system_reading r;
    if (prism_system_read(&r) != 0)
        Py_RETURN_NONE;
    const struct { const char *key; uint64_t v; } f[] = {
        { "mono_ns", r.mono_ns }, { "rss", r.rss }, { "mem_total", r.mem_total },
        { "io_read_bytes", r.io_read_bytes }, { "io_write_bytes", r.io_write_bytes },
        { "net_rx_bytes", r.net_rx_bytes }, { "net_tx_bytes", r.net_tx_bytes },
        { "cpu_user_ns", r.cpu_user_ns }, { "cpu_sys_ns", r.cpu_sys_ns },
        { "cpu_energy_uj", r.cpu_energy_uj },
    };
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < sizeof f / sizeof *f; i++) {
        PyObject *v = f[i].v == UINT64_MAX ? (Py_INCREF(Py_None), Py_None)
                                           : PyLong_FromUnsignedLongLong(f[i].v);
        if (!v || PyDict_SetItemString(d, f[i].key, v) != 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

/* ---- the module ------------------------------------------------------ */

static PyMethodDef methods[] = {
    { "system_read", py_system_read, METH_NOARGS,
      "system_read(): the system as the memory sampler reads it, now (a dict of raw "
      "cumulative figures; None where unreadable)." },
    { "step_begin", py_step_begin, METH_NOARGS, "Begin a training step." },
    { "step_end", py_step_end, METH_NOARGS, "End the training step." },
    { "_step_cancel", py_step_cancel, METH_NOARGS, "Forget the open step (no record)." },
    { "_step_thread", py_step_thread, METH_NOARGS,
      "The calling thread marks the steps (INFO steps.thread)." },
    { "_step_ops", py_step_ops, METH_NOARGS,
      "The open step runs in the operator window (PRISM_STEP_OPS in its record)." },
    { "_step_mark", py_step_mark, METH_NOARGS,
      "The open step's work ended here: at shutdown an open step ends at its mark." },
    { "_info", PRISM_PYFN(py_info), METH_FASTCALL,
      "_info(key, value): an INFO fact for the writer's next flush." },
    { "step_index", py_step_index, METH_NOARGS, "The current (or next) step's index." },
    { "epoch", py_epoch, METH_O, "epoch(n): the epoch of the following steps." },
    { "mark", py_mark, METH_O, "mark(name): an instant event." },
    { "counter", PRISM_PYFN(py_counter), METH_FASTCALL, "counter(name, value): int or float." },
    { "thread_name", py_thread_name, METH_O, "thread_name(name): name this thread's track." },
    { "gpu_streams_begin", py_gpu_streams_begin, METH_NOARGS,
      "gpu_streams_begin(): sum CUPTI's kernel records per stream from now; False when "
      "CUPTI does not record kernels here." },
    { "gpu_streams_end", py_gpu_streams_end, METH_NOARGS,
      "gpu_streams_end(): [(device, stream, kernels, busy_ns)] busiest first since "
      "gpu_streams_begin (None: no window, or CUPTI stopped)." },
    { "gpu_memory", PRISM_PYFN(py_gpu_memory), METH_FASTCALL,
      "gpu_memory(device, used_bytes, reserved_bytes): the program's reading of a GPU." },
    { NULL, NULL, 0, NULL }
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "prism._prism",
    "PRISM's C extension: recording (libcollect) and reading (the analysis).",
    -1, methods, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC PyInit__prism(void);
PyMODINIT_FUNC PyInit__prism(void)
{
    prism_import_register();        /* prism.load() reads traces too */
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    PyTypeObject *step_type = NULL;
    if (!(counter_ids = PyDict_New()) || prism_region_init(m) != 0 ||
        !(step_type = (PyTypeObject *)PyType_FromSpec(&Step_spec)))
        goto fail;
    allocfunc alloc = (allocfunc)PyType_GetSlot(step_type, Py_tp_alloc);
    PyObject *step = alloc(step_type, 0);
    Py_DECREF(step_type);           /* the instance holds its type */
    if (!step || PyModule_AddObject(m, "STEP", step) != 0 ||
        PyModule_AddFunctions(m, prism_session_methods) != 0 ||
        PyModule_AddFunctions(m, prism_read_methods) != 0 || prism_read_init(m) != 0)
        goto fail;
    if (PyModule_AddStringConstant(m, "VERSION", PRISM_VERSION_STRING) != 0)
        goto fail;
    if (prism_recording()) {        /* started as the library loaded (PRISM_OUTPUT) */
        double hz = prism_py_stack_hz(NULL);
        prism_py_stacks_start(hz);
    }
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}

/*
 * _prism_read.c - prism._prism, the reading half: a profile's analysis
 * (analysis.h) and prism-top's own report writers (reports/reports.h), so that
 * prism.load(p).json is what `prism-top analyze p --format json` prints,
 * byte for byte before parsing.
 *
 *   analyze(path, threshold_pct, leak_mb, ridge)
 *       -> (Analysis, None, 0) or (None, reason, byte offset)
 *   Analysis.analyze_json() / tree_json() -> str (prism.analyze/1, prism.tree/1)
 *   Analysis.analyze_html() -> str (analyze --format html's page)
 *   Analysis.memory() -> 5 bytes objects of native int64: t_ns, rss, GPU used,
 *       GPU reserved (all devices), step (-1: a periodic sample)
 *   Analysis.export(format, out) -> None: csv, folded or json into the file out
 *   Analysis.threads() -> [(stream, name, worker_id or None, pid or None)]: the
 *       recorded threads in the analysis's order, a worker process's with its
 *       index and process id (prism_analysis_thread_worker)
 *   Analysis.worker_files() -> (merged, damaged, other, records): the reader's
 *       worker-file counts (prism_reader_stats)
 *   compare_json(a, b) -> str (prism.compare/1)
 *   export_chrome(path, out) -> (True, None, 0) or (False, reason, offset)
 *
 * The writers print into an open_memstream buffer; the GIL is released
 * while a file is read and analysed and while a report is written.
 */
#include "_prism.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "reports.h"

typedef struct Analysis {
    PyObject_HEAD
    prism_analysis *a;
    char *path;                     /* as given (file system encoding)    */
} Analysis;

static PyTypeObject *Analysis_type;

/* A path argument (str, bytes, os.PathLike) as a malloc'ed C string. */
static char *path_arg(PyObject *o)
{
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(o, &b))
        return NULL;
    char *s = strdup(PyBytes_AsString(b));
    Py_DECREF(b);
    if (!s)
        PyErr_NoMemory();
    return s;
}

/* A number option: None -> dflt; else a finite float >= 0. */
static bool opt_arg(PyObject *o, const char *what, double dflt, double *out)
{
    if (o == Py_None) {
        *out = dflt;
        return true;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return false;
    if (!(v >= 0 && v <= 1e300)) {
        PyErr_Format(PyExc_ValueError, "prism.load: %s is a finite number >= 0", what);
        return false;
    }
    *out = v;
    return true;
}

static PyObject *error_tuple(const char *msg, uint64_t off)
{
    return Py_BuildValue("(OsK)", Py_None, msg, (unsigned long long)off);
}

static PyObject *py_analyze(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 4 && nargs != 5) {
        PyErr_SetString(PyExc_TypeError,
                        "analyze(path, threshold_pct, leak_mb, ridge[, carbon_g_per_kwh])");
        return NULL;
    }
    prism_analysis_opts opts = { -1, -1, 0, 0 };
    if (!opt_arg(args[1], "threshold_pct", -1, &opts.bottleneck_threshold_pct) ||
        !opt_arg(args[2], "leak_threshold_mb", -1, &opts.leak_threshold_mb) ||
        !opt_arg(args[3], "ridge", 0, &opts.ridge_flop_per_byte) ||
        (nargs == 5 &&
         !opt_arg(args[4], "carbon_intensity_g_per_kwh", 0, &opts.carbon_g_per_kwh)))
        return NULL;
    char *path = path_arg(args[0]);
    if (!path)
        return NULL;
    prism_status st = PRISM_OK;
    char msg[256] = "";
    uint64_t off = 0;
    prism_analysis *a;
    Py_BEGIN_ALLOW_THREADS
    a = prism_analyze_file(path, &opts, &st, msg, sizeof msg, &off);
    Py_END_ALLOW_THREADS
    if (!a) {
        free(path);
        return error_tuple(msg[0] ? msg : prism_strerror(st), off);
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(Analysis_type, Py_tp_alloc);
    Analysis *o = (Analysis *)alloc(Analysis_type, 0);
    if (!o) {
        prism_analysis_free(a);
        free(path);
        return NULL;
    }
    o->a = a;
    o->path = path;
    PyObject *r = Py_BuildValue("(OOi)", (PyObject *)o, Py_None, 0);
    Py_DECREF(o);
    return r;
}

static void Analysis_dealloc(PyObject *self)
{
    Analysis *o = (Analysis *)self;
    PyTypeObject *tp = Py_TYPE(self);
    prism_analysis_free(o->a);
    free(o->path);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* ---- writers into a string ------------------------------------------- */

typedef struct job {
    int what;                       /* ANALYZE, TREE, COMPARE             */
    const Analysis *x, *y;
    const prism_compare *c;
} job;
enum { ANALYZE, TREE, COMPARE, HTML };

static bool run_job(FILE *f, const job *j)
{
    switch (j->what) {
    case ANALYZE:
        return analyze_write_json(f, j->x->path, j->x->a);
    case TREE:
        return export_json(f, j->x->path, j->x->a);
    case COMPARE:
        return compare_write_json(f, j->x->path, j->y->path, j->x->a, j->y->a, j->c);
    case HTML:
        return analyze_write_html(f, j->x->path, j->x->a);
    }
    return false;
}

static PyObject *write_str(const job *j)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    bool ok;
    Py_BEGIN_ALLOW_THREADS
    ok = run_job(f, j);
    ok = fclose(f) == 0 && ok;
    Py_END_ALLOW_THREADS
    if (!ok) {
        free(buf);
        PyErr_SetString(PyExc_RuntimeError, "prism: internal error writing JSON (or out of memory)");
        return NULL;
    }
    PyObject *s = PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace");
    free(buf);
    return s;
}

static PyObject *Analysis_analyze_html(PyObject *self, PyObject *u)
{
    (void)u;
    job j = { HTML, (Analysis *)self, NULL, NULL };
    return write_str(&j);
}

static PyObject *Analysis_analyze_json(PyObject *self, PyObject *u)
{
    (void)u;
    job j = { ANALYZE, (Analysis *)self, NULL, NULL };
    return write_str(&j);
}

static PyObject *Analysis_tree_json(PyObject *self, PyObject *u)
{
    (void)u;
    job j = { TREE, (Analysis *)self, NULL, NULL };
    return write_str(&j);
}

static PyObject *py_compare_json(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2 || !PyObject_TypeCheck(args[0], Analysis_type) ||
        !PyObject_TypeCheck(args[1], Analysis_type)) {
        PyErr_SetString(PyExc_TypeError, "compare_json(Analysis, Analysis)");
        return NULL;
    }
    const Analysis *x = (Analysis *)args[0], *y = (Analysis *)args[1];
    prism_compare *c;
    Py_BEGIN_ALLOW_THREADS
    c = prism_compare_new(x->a, y->a);
    Py_END_ALLOW_THREADS
    if (!c)
        return PyErr_NoMemory();
    job j = { COMPARE, x, y, c };
    PyObject *s = write_str(&j);
    prism_compare_free(c);
    return s;
}

/* ---- memory samples -------------------------------------------------- */

static PyObject *Analysis_memory(PyObject *self, PyObject *u)
{
    (void)u;
    const prism_memory_stats *ms = prism_analysis_memory(((Analysis *)self)->a);
    size_t n = ms->count;
    PyObject *col[5] = { NULL };
    for (int k = 0; k < 5; k++)
        if (!(col[k] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(int64_t)))))
            goto fail;
    int64_t *c[5];
    for (int k = 0; k < 5; k++)
        c[k] = (int64_t *)(void *)PyBytes_AsString(col[k]);
    for (size_t i = 0; i < n; i++) {
        const prism_mem_point *p = &ms->samples[i];
        c[0][i] = (int64_t)p->ts;
        c[1][i] = (int64_t)p->rss;
        c[2][i] = p->ngpu ? (int64_t)p->gpu_used : 0;
        c[3][i] = p->ngpu ? (int64_t)p->gpu_reserved : 0;
        c[4][i] = p->step == PRISM_NO_STEP ? -1 : (int64_t)p->step;
    }
    return Py_BuildValue("(NNNNN)", col[0], col[1], col[2], col[3], col[4]);
fail:
    for (int k = 0; k < 5; k++)
        Py_XDECREF(col[k]);
    return NULL;
}

/* ---- threads and worker files ---------------------------------------- */

static PyObject *Analysis_threads(PyObject *self, PyObject *u)
{
    (void)u;
    const prism_analysis *a = ((Analysis *)self)->a;
    size_t n = prism_analysis_thread_count(a);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t stream = 0, wid = 0;
        uint64_t pid = 0;
        const char *name = NULL;
        prism_analysis_thread_tree(a, i, &stream, &name);
        bool worker = prism_analysis_thread_worker(a, i, &wid, &pid);
        PyObject *nm = PyUnicode_DecodeUTF8(name ? name : "", name ? (Py_ssize_t)strlen(name) : 0,
                                            "replace");
        PyObject *t = NULL;
        if (nm) {
            if (worker)
                t = Py_BuildValue("(kNkK)", (unsigned long)stream, nm, (unsigned long)wid,
                                  (unsigned long long)pid);
            else
                t = Py_BuildValue("(kNOO)", (unsigned long)stream, nm, Py_None, Py_None);
        }
        if (!t || PyList_SetItem(list, (Py_ssize_t)i, t) != 0) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

static PyObject *Analysis_worker_files(PyObject *self, PyObject *u)
{
    (void)u;
    const prism_reader_stats *st = prism_analysis_reader_stats(((Analysis *)self)->a);
    if (!st)
        return Py_BuildValue("(kkkK)", 0ul, 0ul, 0ul, 0ull);
    return Py_BuildValue("(kkkK)", (unsigned long)st->workers, (unsigned long)st->workers_damaged,
                         (unsigned long)st->workers_other, (unsigned long long)st->worker_records);
}

/* ---- exports into files ---------------------------------------------- */

static PyObject *Analysis_export(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    const Analysis *x = (Analysis *)self;
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "export(format, out)");
        return NULL;
    }
    Py_ssize_t n;
    const char *fmt = PyUnicode_AsUTF8AndSize(args[0], &n);
    if (!fmt)
        return NULL;
    /* the table's formats that write an analysis ("csv\0x" is no format) */
    const rp_export_format *ef = (size_t)n != strlen(fmt) ? NULL : rp_export_find(fmt);
    if (!ef || ef->streams || strcmp(fmt, ef->name)) {
        PyErr_Format(PyExc_ValueError, "prism.export: unknown format %R (chrome-trace, csv, "
                     "folded, json)", args[0]);
        return NULL;
    }
    char *out = path_arg(args[1]);
    if (!out)
        return NULL;
    outfile o;
    bool ok = false;
    int rc = EXIT_BADINPUT;
    Py_BEGIN_ALLOW_THREADS
    fflush(stdout);
    if (outfile_open(&o, out, stdout) == 0) {
        rp_export_in in = { .path = x->path, .a = x->a, .unit_ns = 1 };
        ok = ef->write(o.f, &in) == EXIT_OK;
        rc = outfile_close(&o, ok);
    }
    Py_END_ALLOW_THREADS
    if (rc != EXIT_OK) {
        PyErr_Format(PyExc_OSError, "prism.export: %s: %s (see the line above on stderr)", out,
                     ok ? "cannot write" : "out of memory or cannot write");
        free(out);
        return NULL;
    }
    free(out);
    Py_RETURN_NONE;
}

static PyObject *py_export_chrome(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    (void)m;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "export_chrome(path, out)");
        return NULL;
    }
    char *path = path_arg(args[0]);
    char *out = path ? path_arg(args[1]) : NULL;
    if (!out) {
        free(path);
        return NULL;
    }
    char msg[256] = "";
    uint64_t off = 0;
    int rc, wrc = EXIT_BADINPUT;
    outfile o;
    Py_BEGIN_ALLOW_THREADS
    fflush(stdout);
    rc = outfile_open(&o, out, stdout) == 0 ? EXIT_OK : -1;
    if (rc == EXIT_OK) {
        rc = export_chrome_trace_msg(path, o.f, msg, sizeof msg, &off);
        wrc = outfile_close(&o, rc == EXIT_OK);
    }
    Py_END_ALLOW_THREADS
    PyObject *r = NULL;
    if (rc == EXIT_OK && wrc == EXIT_OK)
        r = Py_BuildValue("(OOi)", Py_True, Py_None, 0);
    else if (rc == EXIT_OK || rc == -1)
        PyErr_Format(PyExc_OSError, "prism.export: %s: cannot write (see the line above on "
                     "stderr)", out);
    else
        r = Py_BuildValue("(OsK)", Py_False, msg, (unsigned long long)off);
    free(path);
    free(out);
    return r;
}

static PyObject *Analysis_complete(PyObject *self, void *u)
{
    (void)u;
    return PyBool_FromLong(prism_analysis_complete(((Analysis *)self)->a));
}

static PyObject *Analysis_path(PyObject *self, void *u)
{
    (void)u;
    return PyUnicode_DecodeFSDefault(((Analysis *)self)->path);
}

static PyMethodDef Analysis_methods[] = {
    { "analyze_json", Analysis_analyze_json, METH_NOARGS, "prism.analyze/1 as a str." },
    { "analyze_html", Analysis_analyze_html, METH_NOARGS,
      "analyze --format html's page as a str." },
    { "tree_json", Analysis_tree_json, METH_NOARGS, "prism.tree/1 as a str." },
    { "memory", Analysis_memory, METH_NOARGS, "The memory samples: 5 int64 columns (bytes)." },
    { "export", PRISM_PYFN(Analysis_export), METH_FASTCALL, "export(format, out)." },
    { "threads", Analysis_threads, METH_NOARGS,
      "The threads: (stream, name, worker_id or None, pid or None) each." },
    { "worker_files", Analysis_worker_files, METH_NOARGS,
      "Worker files: (merged, damaged, other, records)." },
    { NULL, NULL, 0, NULL }
};

static PyGetSetDef Analysis_getset[] = {
    { "complete", Analysis_complete, NULL, "the footer was seen", NULL },
    { "path", Analysis_path, NULL, "the path as given", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyType_Slot Analysis_slots[] = {
    { Py_tp_doc, (void *)"One profile's analysis (prism.load keeps it)." },
    { Py_tp_methods, Analysis_methods },
    { Py_tp_getset, Analysis_getset },
    { Py_tp_dealloc, (void *)Analysis_dealloc },
    { 0, NULL }
};

static PyType_Spec Analysis_spec = {
    "prism._prism.Analysis", sizeof(Analysis), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Analysis_slots
};

PyMethodDef prism_read_methods[] = {
    { "analyze", PRISM_PYFN(py_analyze), METH_FASTCALL,
      "analyze(path, threshold_pct, leak_mb, ridge) -> (Analysis, None, 0) or "
      "(None, reason, offset)." },
    { "compare_json", PRISM_PYFN(py_compare_json), METH_FASTCALL,
      "compare_json(a, b) -> prism.compare/1 as a str." },
    { "export_chrome", PRISM_PYFN(py_export_chrome), METH_FASTCALL,
      "export_chrome(path, out) -> (True, None, 0) or (False, reason, offset)." },
    { NULL, NULL, 0, NULL }
};

int prism_read_init(PyObject *module)
{
    Analysis_type = (PyTypeObject *)PyType_FromSpec(&Analysis_spec);
    if (!Analysis_type)
        return -1;
    Py_INCREF(Analysis_type);
    return PyModule_AddObject(module, "Analysis", (PyObject *)Analysis_type);
}

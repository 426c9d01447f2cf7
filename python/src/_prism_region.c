/*
 * _prism_region.c - prism.region: regions from Python, the hot path in C
 * (entering and leaving a region), and the decorator.
 *
 * Regions.  prism.region(name) returns the one Region object of that name
 * (a dict of them, looked up in C).  A Region holds a collect.h call-site
 * record (prism_site): its name is interned the first time the region is
 * entered while a session records, so regions made at import time, before
 * prism.init(), record once it runs.  Entering is prism_zone_begin (a clock
 * read and a 16-byte store into this thread's buffer), leaving prism_pop.
 *
 * Threads.  libcollect gives every OS thread its own track; the first time
 * a thread records from Python, its track is named after its Python thread
 * name (threading.current_thread().name), unless prism.thread_name named
 * it first.  Each thread also keeps a small stack of the Regions it entered
 * from Python, so that leaving is checked against entering:
 *   - leaving a region this thread did not enter (entered in another
 *     thread, or left twice) is ignored: nothing is popped;
 *   - leaving a region that is open below the innermost one (regions left
 *     out of order: generators, coroutines) ends the ones above it too,
 *     at the same time.
 * A region entered in thread A and left in thread B therefore stays open
 * in A until A leaves a region that encloses it, or A ends (the analysis
 * closes it at the thread's last event); B's own regions are untouched.
 */
#include "_prism.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "structmember.h"

#include "prism/collect.h"

/* ---- per-thread state ------------------------------------------------ */

#define PYSTACK 128                 /* regions tracked per thread         */

typedef struct pythread {
    uint32_t depth;                 /* entered from Python, not yet left;
                                       above PYSTACK only counted         */
    bool named;                     /* its track has a name               */
    const void *open[PYSTACK];      /* the Regions, innermost last        */
} pythread;

/* On the heap: the extension's static TLS stays one pointer (it is loaded
 * with dlopen, where glibc has little static TLS to spare). */
static __thread pythread *T __attribute__((tls_model("initial-exec")));
static pthread_key_t t_key;
static bool t_key_ok;
static PyObject *current_thread;    /* threading.current_thread          */
static PyObject *threads_active;    /* threading._active: ident -> Thread */
static PyObject *method_type;       /* types.MethodType                  */
static PyObject *update_wrapper;    /* functools.update_wrapper          */

static void pythread_free(void *p)
{
    free(p);
    T = NULL;
}

static pythread *pythread_get(void)
{
    pythread *t = T;
    if (__builtin_expect(t != NULL, 1))
        return t;
    if (!t_key_ok || !(t = calloc(1, sizeof *t)))
        return NULL;
    if (pthread_setspecific(t_key, t) != 0) {
        free(t);
        return NULL;
    }
    T = t;
    return t;
}

/* Name this thread's track after its Python thread, once.  A thread that
 * threading does not know (started by C++: torch's autograd workers) keeps
 * its OS name (pt_autograd_0): threading.current_thread() there would
 * create a "Dummy-N" thread object in the program's threading.enumerate()
 * (found on the GPU run).  Never leaves an exception set. */
static void name_thread(pythread *t)
{
    t->named = true;
    PyObject *exc_t, *exc_v, *exc_tb;
    PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    PyObject *th = NULL;
    if (threads_active && PyDict_Check(threads_active)) {
        PyObject *id = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
        th = id ? PyDict_GetItemWithError(threads_active, id) : NULL;     /* borrowed */
        Py_XINCREF(th);
        Py_XDECREF(id);
    } else if (current_thread) {
        th = PyObject_CallNoArgs(current_thread);
    }
    PyObject *name = th ? PyObject_GetAttrString(th, "name") : NULL;
    const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
    if (s)
        prism_thread_name(s);
    Py_XDECREF(name);
    Py_XDECREF(th);
    PyErr_Clear();
    PyErr_Restore(exc_t, exc_v, exc_tb);
}

void prism_py_name_thread(void)
{
    if (atomic_load_explicit(&prism__on, memory_order_relaxed)) {
        pythread *t = pythread_get();
        if (t && !t->named)
            name_thread(t);
    }
}

/* ---- Region ---------------------------------------------------------- */

typedef struct Region {
    PyObject_HEAD
    PyObject *name;                 /* str                                */
    prism_site site;                /* name (owned copy), id when interned */
    PyObject *ops[2];               /* its __enter__ and __exit__ (RegionOp) */
} Region;

static PyTypeObject *Region_type;

static inline void region_enter(Region *r)
{
    pythread *t = pythread_get();
    if (__builtin_expect(t == NULL, 0))
        return;                     /* out of memory: not recorded        */
    if (t->depth < PYSTACK)
        t->open[t->depth] = r;
    t->depth++;
    if (__builtin_expect(!t->named, 0) &&
        atomic_load_explicit(&prism__on, memory_order_relaxed))
        name_thread(t);
    prism__zone_begin(&r->site);
}

static inline void region_exit(Region *r)
{
    pythread *t = T;
    if (!t || t->depth == 0)
        return;                     /* nothing entered on this thread     */
    uint32_t d = t->depth;
    if (d > PYSTACK) {              /* deeper than tracked: trust nesting */
        t->depth = d - 1;
        prism_pop();
        return;
    }
    uint32_t k = d;
    while (k > 0 && t->open[k - 1] != r)
        k--;
    if (k == 0)
        return;                     /* not open on this thread: ignored   */
    while (t->depth >= k) {
        t->depth--;
        prism_pop();
    }
}

static PyObject *RegionCall_new(Region *r, PyObject *func);

static PyObject *Region_call(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *func;
    if (kw && PyDict_Size(kw) != 0) {
        PyErr_SetString(PyExc_TypeError, "prism.region(...) used as a decorator takes a function");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:region", &func))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "prism.region(...) decorates a callable");
        return NULL;
    }
    return RegionCall_new((Region *)self, func);
}

static PyObject *Region_repr(PyObject *self)
{
    return PyUnicode_FromFormat("prism.region(%R)", ((Region *)self)->name);
}

static void Region_dealloc(PyObject *self)
{
    Region *r = (Region *)self;
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(r->name);
    Py_XDECREF(r->ops[0]);
    Py_XDECREF(r->ops[1]);
    free((char *)r->site.name);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *Region_id(PyObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLong(
        atomic_load_explicit(&((Region *)self)->site.id, memory_order_relaxed));
}

/*
 * __enter__ and __exit__ without a bound method per `with`.  The `with`
 * statement looks both up on the type and binds them (a descriptor's get)
 * each time; for C methods that allocates two bound-method objects per
 * block.  Here the type's __enter__ and __exit__ are RegionSlot
 * descriptors whose get returns callables made once per Region
 * (RegionOp), called through vectorcall: nothing is allocated per block.
 *
 * Vectorcall: limited API from 3.12; the flag, the slot member and the
 * calling convention are the same since 3.9 (PEP 590), so the 3.10 stable
 * ABI build spells them out.
 */
#ifndef Py_TPFLAGS_HAVE_VECTORCALL
#define Py_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#endif
typedef PyObject *(*prism_vectorcall)(PyObject *callable, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames);

typedef struct RegionOp {
    PyObject_HEAD
    prism_vectorcall call;
    Region *region;                 /* borrowed: the Region owns its ops  */
    int leave;                      /* 0 __enter__, 1 __exit__            */
} RegionOp;

static PyTypeObject *RegionOp_type, *RegionSlot_type;

static PyObject *RegionOp_vcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames)
{
    (void)args;
    RegionOp *op = (RegionOp *)self;
    size_t n = nargsf & ~((size_t)1 << (8 * sizeof(size_t) - 1));
    if (__builtin_expect(kwnames != NULL || n != (op->leave ? 3u : 0u), 0)) {
        PyErr_Format(PyExc_TypeError, "%s takes %s", op->leave ? "__exit__" : "__enter__",
                     op->leave ? "3 positional arguments" : "no arguments");
        return NULL;
    }
    if (op->leave) {
        region_exit(op->region);
        Py_RETURN_FALSE;            /* exceptions propagate               */
    }
    region_enter(op->region);
    Py_INCREF(op->region);
    return (PyObject *)op->region;
}

static PyObject *RegionOp_call(PyObject *self, PyObject *args, PyObject *kw)
{
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "no keyword arguments");
        return NULL;
    }
    Py_ssize_t n = PyTuple_Size(args);
    PyObject *a[3] = { NULL, NULL, NULL };
    for (Py_ssize_t i = 0; i < n && i < 3; i++)
        a[i] = PyTuple_GetItem(args, i);
    return RegionOp_vcall(self, a, (size_t)n, NULL);
}

static void RegionOp_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyMemberDef RegionOp_members[] = {
    { "__vectorcalloffset__", T_PYSSIZET, offsetof(RegionOp, call), READONLY, NULL },
    { NULL, 0, 0, 0, NULL }
};

static PyType_Slot RegionOp_slots[] = {
    { Py_tp_doc, (void *)"A Region's __enter__ or __exit__." },
    { Py_tp_call, (void *)RegionOp_call },
    { Py_tp_members, RegionOp_members },
    { Py_tp_dealloc, (void *)RegionOp_dealloc },
    { 0, NULL }
};

static PyType_Spec RegionOp_spec = {
    "prism._prism.RegionOp", sizeof(RegionOp), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    RegionOp_slots
};

/* Region.__enter__ / Region.__exit__: r.__enter__ is r's own RegionOp. */
typedef struct RegionSlot {
    PyObject_HEAD
    int leave;
} RegionSlot;

static PyObject *RegionSlot_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || !PyObject_TypeCheck(obj, Region_type)) {
        Py_INCREF(self);
        return self;
    }
    PyObject *op = ((Region *)obj)->ops[((RegionSlot *)self)->leave];
    Py_INCREF(op);
    return op;
}

static PyType_Slot RegionSlot_slots[] = {
    { Py_tp_doc, (void *)"Region.__enter__ / Region.__exit__." },
    { Py_tp_descr_get, (void *)RegionSlot_get },
    { 0, NULL }
};

static PyType_Spec RegionSlot_spec = {
    "prism._prism.RegionSlot", sizeof(RegionSlot), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, RegionSlot_slots
};

static int region_types_init(void)
{
    RegionOp_type = (PyTypeObject *)PyType_FromSpec(&RegionOp_spec);
    RegionSlot_type = (PyTypeObject *)PyType_FromSpec(&RegionSlot_spec);
    if (!RegionOp_type || !RegionSlot_type)
        return -1;
    allocfunc alloc = (allocfunc)PyType_GetSlot(RegionSlot_type, Py_tp_alloc);
    for (int leave = 0; leave < 2; leave++) {
        PyObject *d = alloc(RegionSlot_type, 0);
        if (!d)
            return -1;
        ((RegionSlot *)d)->leave = leave;
        int rc = PyObject_SetAttrString((PyObject *)Region_type,
                                        leave ? "__exit__" : "__enter__", d);
        Py_DECREF(d);
        if (rc != 0)
            return -1;
    }
    return 0;
}


static PyMemberDef Region_members[] = {
    { "name", T_OBJECT_EX, offsetof(Region, name), READONLY, "the region's name" },
    { NULL, 0, 0, 0, NULL }
};

static PyGetSetDef Region_getset[] = {
    { "id", Region_id, NULL, "the interned id (0 until entered while recording)", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyType_Slot Region_slots[] = {
    { Py_tp_doc, (void *)"A named region: `with prism.region(name):` or "
                         "`@prism.region(name)`.  Made by prism.region()." },
    { Py_tp_members, Region_members },
    { Py_tp_getset, Region_getset },
    { Py_tp_call, (void *)Region_call },
    { Py_tp_repr, (void *)Region_repr },
    { Py_tp_dealloc, (void *)Region_dealloc },
    { 0, NULL }
};

static PyType_Spec Region_spec = {
    "prism._prism.Region", sizeof(Region), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, Region_slots
};

/* ---- the decorator's wrapper ----------------------------------------- */

typedef struct RegionCall {
    PyObject_HEAD
    Region *region;
    PyObject *func;
    PyObject *dict;                 /* __name__, __doc__, __wrapped__ ... */
    PyObject *weak;
} RegionCall;

static PyTypeObject *RegionCall_type;

static PyObject *RegionCall_call(PyObject *self, PyObject *args, PyObject *kw)
{
    RegionCall *w = (RegionCall *)self;
    region_enter(w->region);
    PyObject *res = PyObject_Call(w->func, args, kw);
    region_exit(w->region);
    return res;
}

/* A method: bind like a function does. */
static PyObject *RegionCall_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyObject_CallFunctionObjArgs(method_type, self, obj, NULL);
}

static int RegionCall_traverse(PyObject *self, visitproc visit, void *arg)
{
    RegionCall *w = (RegionCall *)self;
    Py_VISIT(w->region);
    Py_VISIT(w->func);
    Py_VISIT(w->dict);
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static int RegionCall_clear(PyObject *self)
{
    RegionCall *w = (RegionCall *)self;
    Py_CLEAR(w->region);
    Py_CLEAR(w->func);
    Py_CLEAR(w->dict);
    return 0;
}

static void RegionCall_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (((RegionCall *)self)->weak)
        PyObject_ClearWeakRefs(self);
    RegionCall_clear(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyObject *RegionCall_repr(PyObject *self)
{
    RegionCall *w = (RegionCall *)self;
    return PyUnicode_FromFormat("<%R around %R>", (PyObject *)w->region, w->func);
}

static PyMemberDef RegionCall_members[] = {
    { "__dictoffset__", T_PYSSIZET, offsetof(RegionCall, dict), READONLY, NULL },
    { "__weaklistoffset__", T_PYSSIZET, offsetof(RegionCall, weak), READONLY, NULL },
    { "region", T_OBJECT_EX, offsetof(RegionCall, region), READONLY, "the Region" },
    { NULL, 0, 0, 0, NULL }
};

static PyGetSetDef RegionCall_getset[] = {
    { "__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyType_Slot RegionCall_slots[] = {
    { Py_tp_doc, (void *)"A function wrapped by @prism.region(name): each call is the region." },
    { Py_tp_getset, RegionCall_getset },
    { Py_tp_call, (void *)RegionCall_call },
    { Py_tp_descr_get, (void *)RegionCall_get },
    { Py_tp_members, RegionCall_members },
    { Py_tp_traverse, (void *)RegionCall_traverse },
    { Py_tp_clear, (void *)RegionCall_clear },
    { Py_tp_dealloc, (void *)RegionCall_dealloc },
    { Py_tp_repr, (void *)RegionCall_repr },
    { 0, NULL }
};

static PyType_Spec RegionCall_spec = {
    "prism._prism.RegionCall", sizeof(RegionCall), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    RegionCall_slots
};

static PyObject *RegionCall_new(Region *r, PyObject *func)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(RegionCall_type, Py_tp_alloc);
    RegionCall *w = (RegionCall *)alloc(RegionCall_type, 0);
    if (!w)
        return NULL;
    Py_INCREF(r);
    w->region = r;
    Py_INCREF(func);
    w->func = func;
    /* functools.wraps: __module__, __name__, __qualname__, __doc__,
     * __dict__, __wrapped__ */
    PyObject *res = PyObject_CallFunctionObjArgs(update_wrapper, (PyObject *)w, func, NULL);
    if (!res) {
        Py_DECREF(w);
        return NULL;
    }
    Py_DECREF(res);
    return (PyObject *)w;
}

/* ---- prism.region(name) ---------------------------------------------- */

static PyObject *regions;           /* str -> Region                      */

static PyObject *region_make(PyObject *name)
{
    Py_ssize_t n;
    PyObject *keep;
    const char *s = prism_py_name(name, &n, &keep);
    if (!s)
        return NULL;
    if ((size_t)n != strlen(s)) {
        Py_XDECREF(keep);
        PyErr_SetString(PyExc_ValueError, "prism.region: the name holds a NUL character");
        return NULL;
    }
    char *copy = strdup(s);
    Py_XDECREF(keep);
    if (!copy)
        return PyErr_NoMemory();
    allocfunc alloc = (allocfunc)PyType_GetSlot(Region_type, Py_tp_alloc);
    Region *r = (Region *)alloc(Region_type, 0);
    if (!r) {
        free(copy);
        return NULL;
    }
    Py_INCREF(name);
    r->name = name;
    r->site.name = copy;
    r->site.file = "<python>";
    r->site.line = 0;
    atomic_init(&r->site.id, 0);
    allocfunc op_alloc = (allocfunc)PyType_GetSlot(RegionOp_type, Py_tp_alloc);
    for (int leave = 0; leave < 2; leave++) {
        RegionOp *op = (RegionOp *)op_alloc(RegionOp_type, 0);
        if (!op) {
            Py_DECREF(r);
            return NULL;
        }
        op->call = RegionOp_vcall;
        op->region = r;
        op->leave = leave;
        r->ops[leave] = (PyObject *)op;
    }
    /* Made meanwhile by another thread (the allocations above may run the
     * garbage collector, and finalizers let other threads in): keep one. */
    PyObject *had = PyDict_GetItemWithError(regions, name);
    if (had || PyErr_Occurred()) {
        Py_DECREF(r);
        Py_XINCREF(had);
        return had;
    }
    if (PyDict_SetItem(regions, name, (PyObject *)r) != 0) {
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

static PyObject *py_region(PyObject *mod, PyObject *name)
{
    (void)mod;
    PyObject *r = PyDict_GetItemWithError(regions, name);   /* borrowed */
    if (__builtin_expect(r != NULL, 1)) {
        Py_INCREF(r);
        return r;
    }
    if (PyErr_Occurred())
        return NULL;
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "prism.region: the name is a str, not %R",
                     (PyObject *)Py_TYPE(name));
        return NULL;
    }
    return region_make(name);
}

PyMethodDef prism_region_methods[] = {
    { "region", py_region, METH_O,
      "region(name) -> the Region of that name (one object per name)." },
    { NULL, NULL, 0, NULL }
};

void prism_py_thread_named(void)
{
    pythread *t = pythread_get();
    if (t)
        t->named = true;
}

static PyObject *attr_of(const char *mod, const char *name)
{
    PyObject *m = PyImport_ImportModule(mod);
    PyObject *a = m ? PyObject_GetAttrString(m, name) : NULL;
    Py_XDECREF(m);
    return a;
}

int prism_region_init(PyObject *module)
{
    t_key_ok = pthread_key_create(&t_key, pythread_free) == 0;
    threads_active = attr_of("threading", "_active");  /* private: else current_thread */
    PyErr_Clear();
    if (!(current_thread = attr_of("threading", "current_thread")) ||
        !(method_type = attr_of("types", "MethodType")) ||
        !(update_wrapper = attr_of("functools", "update_wrapper")) ||
        !(regions = PyDict_New()))
        return -1;
    Region_type = (PyTypeObject *)PyType_FromSpec(&Region_spec);
    RegionCall_type = (PyTypeObject *)PyType_FromSpec(&RegionCall_spec);
    if (!Region_type || !RegionCall_type || region_types_init() != 0)
        return -1;
    Py_INCREF(Region_type);
    Py_INCREF(RegionCall_type);
    if (PyModule_AddObject(module, "Region", (PyObject *)Region_type) != 0 ||
        PyModule_AddObject(module, "RegionCall", (PyObject *)RegionCall_type) != 0)
        return -1;
    return PyModule_AddFunctions(module, prism_region_methods);
}

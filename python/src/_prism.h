/*
 * _prism.h - what the parts of the extension prism._prism share:
 * recording (_prism.c, _prism_session.c and _prism_region.c, over
 * collect.h) and reading (_prism_read.c, over analysis.h and prism-top's
 * report writers).
 *
 * Stable ABI: Py_LIMITED_API 3.10, so one build (_prism.abi3.so) serves
 * CPython 3.10 and later.
 */
#ifndef PRISM_PY_PRISM_H
#define PRISM_PY_PRISM_H

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* A C function as a PyMethodDef entry, whatever its calling convention. */
#define PRISM_PYFN(f) ((PyCFunction)(void (*)(void))(f))

/* Regions (_prism_region.c): prism.region and its types, added to the
 * module; name this thread's track after its Python thread once it
 * records (no-op when named, or when no session records); mark it named
 * (prism.thread_name named it). */
int prism_region_init(PyObject *module);
/* A name (a str) as UTF-8 for libcollect, *n its bytes: a lone surrogate
 * (what os.listdir and sys.argv give for a non-UTF-8 file name) is written
 * as a backslash escape ("img_\\udcff") and PRISM says so once on stderr,
 * instead of raising into the program.  *keep owns the text when it is not
 * the str's own (Py_XDECREF it after use).  NULL with an exception set: not
 * a str, no memory. */
const char *prism_py_name(PyObject *name, Py_ssize_t *n, PyObject **keep);
void prism_py_name_thread(void);
void prism_py_thread_named(void);

/* The Python stack sampler (_prism_stack.c): the rate from
 * PRISM_STACK_HZ and config["stack_hz"] (-1: an exception is set); say
 * before prism_init that the file will hold stacks; start after it (GIL
 * held; nothing when hz < 1); stop and join (GIL held, released while
 * joining; at shutdown and at exit). */
double prism_py_stack_hz(PyObject *config);
void prism_py_stacks_want(double hz);
void prism_py_stacks_start(double hz);
void prism_py_stacks_stop(void);

/* The session (_prism_session.c): init, shutdown and the rest, added to
 * the module. */
extern PyMethodDef prism_session_methods[];

/* The reading half: its functions and types, added to the module. */
extern PyMethodDef prism_read_methods[];
int prism_read_init(PyObject *module);

#endif

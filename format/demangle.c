/*
 * demangle.c - C++ names from a profile in their source form: the reader
 * demangles each string of a STRINGS chunk once, as it stores it
 * (reader_strings.c; docs/FORMAT.md, "Mangled names").  CUPTI reports
 * kernel names mangled (_ZN5cudnn19engines_precompiled16nchwToNhwcKernel...)
 * and libcollect demangles them only when a C++ runtime is in the profiled
 * process; torch.profiler always shows them demangled.
 *
 * The demangler is the C++ runtime's own __cxa_demangle, found at run time
 * (dlopen of libstdc++.so.6, RTLD_LOCAL: nothing links C++ and no symbol of
 * it reaches the program), so a name reads exactly as torch.profiler (which
 * calls the same function) prints it.  Without the runtime names stay as
 * they are.  A string is offered to it only when it starts with "_Z", holds
 * no NUL, is at most PF_DEMANGLE_MAX_IN bytes and demangle_bound.c can bound
 * what it prints (PF_DEMANGLE_MAX_OUT, PF_DEMANGLE_RATIO); a failure keeps
 * the string raw.
 * The result is cut at PRISM_MAX_STRING_BYTES, as an interned name is.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static cxa_demangle_fn demangler;
static pthread_once_t looked = PTHREAD_ONCE_INIT;

/* Once per process; the handle stays open (the function is used until
 * exit).  PRISM_DEMANGLE=0 turns demangling off. */
static void look_up(void)
{
    const char *env = getenv("PRISM_DEMANGLE");
    if (env && !strcmp(env, "0"))
        return;
    if (demangler)              /* found at load (early_look) */
        return;
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return;
    *(void **)&demangler = dlsym(h, "__cxa_demangle");
    if (!demangler)
        dlclose(h);
}

/* At load, before any thread: a C++ runtime already in the process (a C++
 * program, the sanitizers' runtime) is taken at once, nothing is loaded.
 * Looked up later on a job view's loader thread, the loader lock could be
 * held by that thread when the program exits, and LeakSanitizer's exit
 * check then waited for it forever (SANITIZE=1, tests/screen/job.sh). */
__attribute__((constructor)) static void early_look(void)
{
    const char *env = getenv("PRISM_DEMANGLE");
    if (!env || strcmp(env, "0"))
        *(void **)&demangler = dlsym(RTLD_DEFAULT, "__cxa_demangle");
}

bool pf_demangle_available(void)
{
    pthread_once(&looked, look_up);
    return demangler != NULL;
}

bool pf_demangle_wanted(const char *s, size_t len)
{
    return len >= 3 && len <= PF_DEMANGLE_MAX_IN && s[0] == '_' && s[1] == 'Z' &&
           !memchr(s, '\0', len);
}

char *pf_demangle(const char *s, size_t len, size_t *out_len)
{
    if (!pf_demangle_wanted(s, len) || !pf_demangle_available())
        return NULL;
    uint64_t bound = pf_demangle_bound(s, len);
    if (!bound || bound > PF_DEMANGLE_MAX_OUT || bound > (uint64_t)PF_DEMANGLE_RATIO * len)
        return NULL;
    char in[PF_DEMANGLE_MAX_IN + 1];    /* s need not end with a NUL */
    memcpy(in, s, len);
    in[len] = '\0';
    int status = -1;
    char *out = demangler(in, NULL, NULL, &status);
    if (status != 0 || !out) {
        free(out);
        return NULL;
    }
    size_t n = strlen(out);
    if (n == 0) {
        free(out);
        return NULL;
    }
    if (n > PRISM_MAX_STRING_BYTES)     /* as prism_strtab_intern cuts */
        out[n = PRISM_MAX_STRING_BYTES] = '\0';
    *out_len = n;
    return out;
}

/*
 * demangle_fuzz.c - libFuzzer target for the reader's demangling
 * (format/demangle.c, format/demangle_bound.c): the input is a name, "_Z"
 * put in front unless it starts so.  Checks what the reader relies on:
 *
 *   - the bound never lies: every name the reader would offer to the C++
 *     runtime's __cxa_demangle (bounded, under PF_DEMANGLE_MAX_OUT and
 *     PF_DEMANGLE_RATIO times its length) demangles to at most its bound;
 *     a longer result aborts (a hostile name could otherwise make the
 *     demangler print exponentially much: see demangle_bound.c);
 *   - pf_demangle's result is a NUL-terminated string of the length it
 *     reports, at most PRISM_MAX_STRING_BYTES.
 *
 * Without libstdc++ only the bound and the refusals run.
 *
 *   make fuzz FUZZ_TARGETS=demangle       (clang: libFuzzer + ASan + UBSan)
 *   build/tests/fuzz/demangle_replay [FILE|DIR]...  (make test: tests/corpus/demangle/)
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn runtime(void)
{
    static int looked;
    static cxa_demangle_fn fn;
    if (!looked) {
        looked = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[PF_DEMANGLE_MAX_IN + 8];
    size_t n = 0;
    if (size < 2 || data[0] != '_' || data[1] != 'Z') {
        name[n++] = '_';
        name[n++] = 'Z';
    }
    size_t take = size < PF_DEMANGLE_MAX_IN + 4 - n ? size : PF_DEMANGLE_MAX_IN + 4 - n;
    memcpy(name + n, data, take);
    n += take;
    name[n] = '\0';

    uint64_t bound = pf_demangle_bound(name, n);
    bool offered = pf_demangle_wanted(name, n) && bound && bound <= PF_DEMANGLE_MAX_OUT &&
                   bound <= (uint64_t)PF_DEMANGLE_RATIO * n;
    cxa_demangle_fn fn = runtime();
    if (offered && fn) {
        int status = -1;
        char *out = fn(name, NULL, NULL, &status);
        if (status == 0 && out && strlen(out) > bound) {
            fprintf(stderr, "demangle_fuzz: %zu bytes printed, bound %llu: %s\n",
                    strlen(out), (unsigned long long)bound, name);
            abort();
        }
        free(out);
    }
    size_t len = 0;
    char *plain = pf_demangle(name, n, &len);
    if (plain) {
        if (!offered || strlen(plain) != len || len > PRISM_MAX_STRING_BYTES)
            abort();
        free(plain);
    }
    return 0;
}

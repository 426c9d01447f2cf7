/*
 * collect_cxx_layout.c - the layout of collect.h's shared structs and words
 * as the C compiler sees them (_Atomic fields), for collect_cxx_test.cpp to
 * compare with C++'s (plain integers reached through __atomic builtins).
 */
#include <stdalign.h>
#include <stddef.h>

#include "prism/collect.h"

size_t cxx_layout_c(size_t i);

size_t cxx_layout_c(size_t i)
{
    static const size_t v[] = {
        sizeof(prism_site), alignof(prism_site), offsetof(prism_site, id),
        sizeof(prism__tls), alignof(prism__tls), offsetof(prism__tls, th),
        sizeof(prism__event), sizeof(prism_config), alignof(prism_config),
        offsetof(prism_config, output), offsetof(prism_config, memory_leak_threshold_mb),
        sizeof(prism__on), alignof(prism__on),
    };
    return i < sizeof v / sizeof v[0] ? v[i] : (size_t)-1;
}

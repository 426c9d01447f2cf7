/*
 * prism/api.h - PRISM_API marks the functions and variables a PRISM library
 * exports; everything else in the libraries is compiled with
 * -fvisibility=hidden and stays inside them.  libprism.so exports only
 * prism_* names (a version script says so too), and the static libraries
 * keep their internal names local, so a program may define any name of
 * its own (clock_ns, vec_reserve, ...) beside PRISM.
 */
#ifndef PRISM_API_H
#define PRISM_API_H

#if defined(__GNUC__) || defined(__clang__)
#define PRISM_API __attribute__((visibility("default")))
#else
#define PRISM_API
#endif

#endif /* PRISM_API_H */

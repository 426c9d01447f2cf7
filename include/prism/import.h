/*
 * prism/import.h - foreign traces read as profiles: torch.profiler /
 * Kineto Chrome-trace JSON (plain or gzip) and the legacy autograd-profiler
 * layout.  Part of libprism-analysis (it needs yajl and zlib; libprism does
 * not).  docs/IMPORT.md maps the trace's fields to PRISM's records.
 *
 * After prism_import_register() every prism_reader created in the process
 * recognises a trace by its content (first non-blank byte '{' or '[', or
 * the gzip magic) and delivers it through the usual callbacks: the reader
 * needs no other call.  prism_analysis_callbacks() registers it, so every
 * user of the analysis reads traces.
 */
#ifndef PRISM_IMPORT_H
#define PRISM_IMPORT_H

#include "prism/api.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Make readers created from now on read traces.  Idempotent, cheap. */
PRISM_API void prism_import_register(void);

/* The backend itself (for a program that registers it with others). */
PRISM_API const prism_foreign_backend *prism_import_backend(void);

/* Would the importer take a file starting with p[0..n)?  1 yes, 0 no, -1
 * undecided (only blanks so far, or one byte of a gzip magic). */
PRISM_API int prism_import_probe(const uint8_t *p, size_t n, bool final);

/*
 * What the importer repaired or left out, in words, one line each ("12
 * overlapping events moved to their own track"), from the import.* keys it
 * writes into the header's config (a profile converted from a trace keeps
 * them).  Returns the lines written to lines[0..max); 0 for a profile that
 * was not imported.
 */
#define PRISM_IMPORT_NOTE 160
PRISM_API size_t prism_import_notes(const prism_header *h, char (*lines)[PRISM_IMPORT_NOTE], size_t max);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_IMPORT_H */

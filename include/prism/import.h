/*
 * prism/import.h - foreign traces read as profiles: torch.profiler /
 * Kineto Chrome-trace JSON (plain or gzip), the legacy autograd-profiler
 * layout, and folded stacks ("a;b;c COUNT" lines).  Part of
 * libprism-analysis (it needs yajl and zlib; libprism does not).
 * docs/IMPORT.md maps the inputs' fields to PRISM's records.
 *
 * After prism_import_register() every prism_reader created in the process
 * recognises these inputs by their content (a trace: first non-blank byte
 * '{' or '[', or the gzip magic; folded stacks: text lines "STACK COUNT")
 * and delivers them through the usual callbacks: the reader needs no other
 * call.  Registration is the program's choice, never the analysis's:
 * prism-top and the Python module register at start; a program that links
 * the analysis and wants traces calls it once before creating readers.
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

/* Add every built-in importer to the reader's list of backends
 * (prism_reader_add_backend), torch.profiler traces first: readers created
 * from now on read them.  Idempotent, cheap, thread-safe. */
PRISM_API void prism_import_register(void);

/* The torch.profiler trace backend alone (for a program that registers
 * backends itself). */
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

/*
 * The file's status in words for a profile imported from a trace (or
 * converted from one): a trace has no footer, so "complete (imported
 * torch.profiler trace)" when it was read to its end (complete: the
 * analysis saw the footer the importer delivers), else "cut short: the JSON
 * ends at byte N" (the gzip stream's, for a gzip trace).  Writes buf[0..cap)
 * and returns true; false (buf empty) for a profile that was not imported,
 * whose status is its footer's.
 */
PRISM_API bool prism_import_status(const prism_header *h, bool complete, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_IMPORT_H */

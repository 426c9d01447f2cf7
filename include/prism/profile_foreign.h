/*
 * prism/profile_foreign.h - foreign input: the backends through which a
 * reader reads files that are not PRISM profiles (prism_foreign_backend,
 * prism_reader_add_backend), and reading by path (prism_reader_read_path),
 * where such a backend may take the file.  The reader and its callbacks
 * are in prism/profile.h, which includes this header and which it builds
 * on.
 */
#ifndef PRISM_PROFILE_FOREIGN_H
#define PRISM_PROFILE_FOREIGN_H

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A reader can also read files that are not PRISM profiles (torch.profiler
 * traces, folded stacks: import/, libprism-analysis) through backends
 * registered here; libprism itself carries none, so it gains no dependency.
 * A program registers the backends it wants (prism_import_register() for
 * the built-in importers); a reader takes the list as it is when created.
 * On its first bytes a reader without the CBOR self-describe tag asks the
 * backends' probes in registration order; the first that accepts takes the
 * file: feed/finish go to it, it delivers the same callbacks a profile
 * would (header first, strings before their use, threads before their
 * events), and the reader's getters (header, string, stats, error, offsets)
 * answer from it.  Without backends, or when every probe declines, the
 * bytes go to the CBOR reader.
 */
typedef struct prism_foreign_backend {
    const char *name;            /* "torch.profiler trace"                    */
    /* 1: take the file, 0: not ours, -1: need more bytes.  p[0..n) are the
     * first bytes of the file; final when no more will come. */
    int (*probe)(const uint8_t *p, size_t n, bool final);
    /* NULL on allocation failure.  cb and ctx as for prism_reader_new. */
    void *(*open)(const prism_reader_callbacks *cb, void *ctx);
    /* Same returns as prism_reader_feed / _finish.  On an error *msg (owned
     * by the backend) and *offset describe it. */
    prism_status (*feed)(void *b, const uint8_t *p, size_t n, const char **msg,
                         uint64_t *offset);
    prism_status (*finish)(void *b, const char **msg, uint64_t *offset);
    void (*close)(void *b);
    const prism_header *(*header)(const void *b);
    const char *(*string)(const void *b, uint32_t id, size_t *len);
    /* records delivered, footer seen (chunks and damage stay 0) */
    const prism_reader_stats *(*stats)(const void *b);
    /* Optional (NULL: bytes only): read the whole file at path (a regular
     * file whose first bytes the probe accepted) instead of being fed;
     * finish is still called after.  Same returns and error reporting as
     * feed.  A backend with read_path and no feed takes only files opened
     * by path (prism_reader_read_path), never a stream. */
    prism_status (*read_path)(void *b, const char *path, const char **msg,
                              uint64_t *offset);
} prism_foreign_backend;

/* How many backends the list holds at most. */
#define PRISM_MAX_BACKENDS 16u

/*
 * Add b at the end of the list of backends that readers created afterwards
 * consult.  PRISM_OK (also when b is already in the list: nothing changes),
 * PRISM_E_LIMIT when the list holds PRISM_MAX_BACKENDS, PRISM_E_ARG for
 * NULL.  Thread-safe.  b is borrowed: it must outlive the readers.
 */
PRISM_API prism_status prism_reader_add_backend(const prism_foreign_backend *b);
/* Replace the whole list by b alone (NULL empties it).  Thread-safe; b
 * must outlive the readers. */
PRISM_API void prism_reader_set_foreign(const prism_foreign_backend *b);
/* The name of the backend that took r's file, else NULL. */
PRISM_API const char *prism_reader_foreign(const prism_reader *r);

/*
 * The name of the file r is about to read, for the words of an error only
 * (never to decide the format): a name ending in .json or .json.gz makes a
 * file that is neither a PRISM profile nor a trace "not JSON: ..." (or "not
 * gzip: ...") instead of the CBOR reader's message.  prism_reader_read_path
 * (and prism_read_file) set it themselves; a program that feeds the file in
 * slices calls it before the first.  path is not kept.
 */
PRISM_API void prism_reader_name(prism_reader *r, const char *path);
/*
 * Read the file at path as prism_reader_read_fd does, from the reader's
 * current input offset to end of file (the caller then calls finish).
 * When path is a regular file and the reader has read nothing yet, its
 * first bytes are probed first and a backend with read_path that accepts
 * them gets the path (a format that cannot be streamed); FIFOs, character
 * devices and anything else are streamed.  Same returns as read_fd; an
 * open failure is PRISM_E_IO at byte 0.
 */
PRISM_API prism_status prism_reader_read_path(prism_reader *r, const char *path);
/*
 * Would prism_reader_read_path hand this file to a backend that reads paths
 * (a format that cannot be streamed)?  For a program that otherwise feeds
 * the file itself in slices (the explorer, to show progress): true means
 * call prism_reader_read_path instead.  Reads at most the file's first
 * PROBE bytes (64 KiB); false for a reader that has read anything, a file
 * that is not regular, or any error (the streaming path reports it).
 */
PRISM_API bool prism_reader_path_only(prism_reader *r, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_PROFILE_FOREIGN_H */

/*
 * reader_state.h - the streaming reader's state, shared by the reader's own
 * files (internal): reader.c (feeding, framing, resynchronisation),
 * reader_input.c (whole inputs: fd, path, foreign formats) and
 * reader_strings.c (the string table, worker names).  The rest of format/
 * reaches the reader through the accessors in format_internal.h.
 */
#ifndef PRISM_READER_STATE_H
#define PRISM_READER_STATE_H

#include "errinfo.h"
#include "format_internal.h"
#include "idmap.h"

enum { PH_HEADER, PH_CHUNKS, PH_DONE };
/* Foreign input (prism/profile_foreign.h): no backend or a PRISM profile,
 * the first bytes not yet decided, or a foreign file read by the backend
 * that took it. */
enum { PROBE_NONE, PROBE_WAIT, PROBE_FOREIGN };

typedef struct frame {
    uint32_t kind, stream;
    uint64_t seq;
    size_t payload_off, payload_len, sum_off, total;
    uint64_t sum;
} frame;

struct prism_reader {
    prism_reader_callbacks cb;
    void *ctx;
    int phase;
    header_store hs;
    bool have_header;

    uint8_t *pend;              /* bytes of an incomplete item */
    size_t plen, pcap;
    uint64_t fed, good;

    bool resync, resync_torn;   /* skipping damage; it began as a short item */
    uint64_t bad_hashed;        /* bytes hashed for candidates that failed */
    uint64_t skip_until;        /* over budget: no candidate starts before this */
    uint64_t bad_start;
    frame bad_frame;
    prism_chunk_status bad_status;

    pb_error err;               /* code 0 (PRISM_OK) until an error */

    prism_reader_stats st;
    idmap strings;              /* id -> arena string, demangled */
    idmap raws;                 /* id -> the file's string, where demangled */
    idmap seqs;                 /* stream -> next expected seq + 1 */
    arena mem;

    int probe;                  /* PROBE_* */
    const prism_foreign_backend *fbs[PRISM_MAX_BACKENDS];
    size_t nfb;                 /* the backends registered at creation */
    const prism_foreign_backend *fb;    /* the one that took the file */
    void *fst;                  /* the backend's state once it took the file */

    uint32_t next_wid, next_wstream;    /* worker files' merged ids (workers.c) */
    idmap wnames;                       /* a worker name's hash -> its merged id */
    bool workers_read;
    /* the file's name ends in .json / .json.gz (prism_reader_name): an input
     * that is neither a profile nor a trace is then an error about JSON */
    bool name_json, name_gz;
};

/* ---- shared between the reader's files ---- */

/* Set r's sticky error (code, byte offset, message); returns code. */
prism_status pf_reader_fail(prism_reader *r, prism_status code, uint64_t off,
                            const char *fmt, ...);
/* reader.c: keep p[0..n) after the bytes already kept; false without memory. */
bool pf_reader_keep_pending_append(prism_reader *r, const uint8_t *p, size_t n);
/* reader_input.c: foreign input (see there). */
prism_status pf_reader_foreign_status(prism_reader *r, prism_status st, const char *msg,
                                      uint64_t off);
prism_status pf_reader_foreign_feed(prism_reader *r, const uint8_t *p, size_t n);
/* reader_input.c: the error for a first byte that is not the CBOR
 * self-describe tag, in the words the file's name and first bytes call for
 * (JSON for a .json name or a '{' / '['); p[0..n) from the file's start. */
prism_status pf_reader_not_prism(prism_reader *r, const uint8_t *p, size_t n);
prism_status pf_reader_probe(prism_reader *r, const uint8_t *p, size_t n, bool final,
                             bool *used);

#endif

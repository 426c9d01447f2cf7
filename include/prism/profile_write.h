/*
 * prism/profile_write.h - the profile writer: the file header's encoder,
 * the chunk encoder (prism_enc: one chunk built into a caller's buffer,
 * no allocation) and string interning (prism_strtab).  The records it
 * writes and prism_status are in prism/profile.h, which includes this
 * header and which it builds on.
 */
#ifndef PRISM_PROFILE_WRITE_H
#define PRISM_PROFILE_WRITE_H

#include "prism/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Encode the file header (self-describe tag + header map) into buf.
 * The version written is [PRISM_FORMAT_MAJOR, h->version_minor]: the minor
 * version whose features the file uses (0 for 1.0 files, 1 when it may hold
 * CPU chunks); version_major is ignored.
 * On success *out_len is the number of bytes written.  PRISM_E_NOSPACE when
 * cap is too small, PRISM_E_LIMIT when the header exceeds the format limits,
 * PRISM_E_ARG for a minor version above PRISM_FORMAT_MINOR.  No allocation.
 */
PRISM_API prism_status prism_header_encode(const prism_header *h, uint8_t *buf,
                                 size_t cap, size_t *out_len);

/*
 * A chunk encoder: state for building one chunk into a caller-provided
 * buffer.  It lives where the caller puts it (stack, thread buffer); it does
 * not allocate.  Its fields are private.
 *
 *   prism_enc e;
 *   prism_enc_begin(&e, buf, cap, PRISM_CHUNK_REGIONS, stream, seq, t0);
 *   while (...) if (prism_enc_enter(&e, ts, id) == PRISM_E_NOSPACE) break;
 *   prism_enc_finish(&e, &len);      // buf[0..len) is a complete chunk
 *
 * Every append either writes a whole record or returns PRISM_E_NOSPACE and
 * leaves the chunk unchanged, so the caller can finish the chunk and put the
 * record into the next one.  Appending a record of the wrong kind returns
 * PRISM_E_ARG.
 */
typedef struct prism_enc {
    uint8_t *buf;
    size_t cap;          /* usable bytes (room for the checksum reserved)     */
    size_t pos;
    size_t payload_pos;  /* first payload byte                                */
    size_t count_pos;    /* the payload array's 4-byte count                  */
    uint64_t count;      /* payload array elements so far                     */
    uint64_t records;    /* records appended                                  */
    uint64_t base;       /* base timestamp                                    */
    uint64_t last;       /* previous timestamp (delta chains)                 */
    uint32_t kind;
    uint32_t depth;      /* REGIONS: current nesting depth                    */
} prism_enc;

/*
 * Start a chunk.  `base` is the chunk's base timestamp (ns) for time-bearing
 * kinds, the first string id for STRINGS and ignored otherwise.  `depth`
 * (REGIONS only; pass 0 otherwise) is the thread's nesting depth before the
 * chunk's first event.  PRISM_E_NOSPACE when cap < PRISM_CHUNK_OVERHEAD.
 */
PRISM_API prism_status prism_enc_begin(prism_enc *e, uint8_t *buf, size_t cap,
                             prism_chunk_kind kind, uint32_t stream,
                             uint64_t seq, uint64_t base, uint32_t depth);

/* Close the chunk: patch lengths, append the XXH3-64 checksum.  *out_len is
 * the chunk's total size.  The encoder may be begun again afterwards. */
PRISM_API prism_status prism_enc_finish(prism_enc *e, size_t *out_len);

/* Records appended so far (strings, events, samples...). */
static inline uint64_t prism_enc_records(const prism_enc *e) { return e->records; }

/* Kind-specific appends.  Timestamps of REGIONS, MARKS, COUNTERS, MEMORY and
 * CPU must not decrease within a chunk; an earlier one is clamped to the
 * previous one.  CPU: samples with the same ts share one stored time; flag
 * bits other than PRISM_CPU_* are refused (PRISM_E_ARG). */
PRISM_API prism_status prism_enc_string(prism_enc *e, const char *s, size_t len);
PRISM_API prism_status prism_enc_thread(prism_enc *e, const prism_thread *t);
PRISM_API prism_status prism_enc_enter(prism_enc *e, uint64_t ts, uint32_t name);
PRISM_API prism_status prism_enc_exit(prism_enc *e, uint64_t ts);
PRISM_API prism_status prism_enc_mark(prism_enc *e, const prism_mark *m);
PRISM_API prism_status prism_enc_counter(prism_enc *e, const prism_counter *c);
PRISM_API prism_status prism_enc_step(prism_enc *e, const prism_step *s);
PRISM_API prism_status prism_enc_memory(prism_enc *e, const prism_memory_sample *m);
PRISM_API prism_status prism_enc_gpu(prism_enc *e, const prism_gpu_record *g);
PRISM_API prism_status prism_enc_dropped(prism_enc *e, const prism_dropped *d);
PRISM_API prism_status prism_enc_info(prism_enc *e, const char *key, const prism_value *v);
PRISM_API prism_status prism_enc_footer(prism_enc *e, const prism_footer *f);
PRISM_API prism_status prism_enc_cpu(prism_enc *e, const prism_cpu_sample *s);
PRISM_API prism_status prism_enc_unrecorded(prism_enc *e, const prism_unrecorded *u);
/* STACKS (1.2): 1..PRISM_STACK_MAX_FRAMES nonzero frame ids; flags other
 * than PRISM_STACK_* are refused (PRISM_E_ARG). */
PRISM_API prism_status prism_enc_stack(prism_enc *e, const prism_stack_sample *s);

/*
 * String interning: a hash table (XXH3-64) from names to dense ids 1, 2, ...
 * Id 0 is never assigned.  Each name gets an id once; the caller writes a
 * name into a STRINGS chunk the first time it is interned (is_new) and ids
 * are handed out in order, so STRINGS chunks carry consecutive ids.
 */
typedef struct prism_strtab prism_strtab;

/* NULL on allocation failure.  The caller frees with prism_strtab_free. */
PRISM_API prism_strtab *prism_strtab_new(void);
PRISM_API void prism_strtab_free(prism_strtab *t);
/* *id receives the name's id; *is_new whether this call assigned it.
 * Names longer than PRISM_MAX_STRING_BYTES are truncated.  PRISM_E_NOMEM,
 * PRISM_E_LIMIT (table full) on failure. */
PRISM_API prism_status prism_strtab_intern(prism_strtab *t, const char *s, size_t len,
                                 uint32_t *id, bool *is_new);
/* The name of an id (borrowed, NUL-terminated), NULL if unknown. */
PRISM_API const char *prism_strtab_name(const prism_strtab *t, uint32_t id, size_t *len);
/* Number of ids assigned. */
PRISM_API uint32_t prism_strtab_count(const prism_strtab *t);

#ifdef __cplusplus
}
#endif
#endif /* PRISM_PROFILE_WRITE_H */

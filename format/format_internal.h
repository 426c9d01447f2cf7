/* format_internal.h - shared between the reader's files (internal). */
#ifndef PRISM_FORMAT_INTERNAL_H
#define PRISM_FORMAT_INTERNAL_H

#include "cbor_cursor.h"
#include "prism/profile.h"

/* ---- header ---- */
enum { HDR_DONE = 0, HDR_SHORT = 1, HDR_ERROR = 2 };

typedef struct header_store {
    prism_header h;
    const char *argv[PRISM_MAX_ARGV];
    prism_kv config[PRISM_MAX_CONFIG];
    char *mem;                  /* the header's texts, NUL-terminated */
    size_t used;
    size_t len;                 /* header bytes, once parsed */
    prism_status err;
    uint64_t err_off;
    char msg[160];
} header_store;

/* Parse the header from buf[0..len).  HDR_DONE (hs->len set), HDR_SHORT
 * (need more bytes) or HDR_ERROR (hs->err, msg, err_off set). */
int pf_header_parse(header_store *hs, const uint8_t *buf, size_t len);
void pf_header_store_free(header_store *hs);

/* ---- payload decoding (decode.c) ---- */
struct prism_reader;
/* Decode one verified chunk's payload and deliver its records.  Returns
 * false when the payload is not as specified (records already delivered
 * stay delivered); *records counts what was delivered. */
bool pf_payload_decode(struct prism_reader *r, uint32_t kind, uint32_t stream,
                    const uint8_t *p, size_t len, uint64_t *records);
/* Kinds pf_payload_decode knows. */
bool pf_payload_known(uint32_t kind);

/* ---- the reader's parts decode.c needs ---- */
const prism_reader_callbacks *pf_reader_cb(struct prism_reader *r);
void *pf_reader_ctx(struct prism_reader *r);
/* Store a string under an id; false on allocation failure. */
bool pf_reader_put_string(struct prism_reader *r, uint32_t id, const char *s, size_t len);
void pf_reader_saw_footer(struct prism_reader *r);
/* workers.c: the next merged id to hand out (string ids, or streams); the
 * reader's statistics to count in; true when the worker files were read
 * already (the first call marks them read). */
uint32_t *pf_reader_worker_next(struct prism_reader *r, bool stream);
prism_reader_stats *pf_reader_stats_mut(struct prism_reader *r);
bool pf_reader_workers_once(struct prism_reader *r);
/* The merged id the worker files gave the name s[0..len) already; when
 * none, id (registered for it unless 0). */
uint32_t pf_reader_worker_name(struct prism_reader *r, const char *s, size_t len, uint32_t id);

/* ---- demangling (demangle.c, demangle_bound.c) ---- */
/* Names offered to the demangler: at most this long (bytes), and bounded
 * to print at most PF_DEMANGLE_MAX_OUT and PF_DEMANGLE_RATIO times their
 * length (bounded work per byte of a file; real kernel names: under 64). */
#define PF_DEMANGLE_MAX_IN  4096u
#define PF_DEMANGLE_MAX_OUT (256u * 1024u)
#define PF_DEMANGLE_RATIO   256u
/* The C++ runtime's demangler was found (looked up once per process). */
bool pf_demangle_available(void);
/* s[0..len) looks mangled and may be offered: "_Z", no NUL, not too long. */
bool pf_demangle_wanted(const char *s, size_t len);
/* The demangled form of s[0..len) (need not end with a NUL), cut at
 * PRISM_MAX_STRING_BYTES; NULL when s is not offered, the runtime is
 * missing, or demangling fails.  The caller frees it. */
char *pf_demangle(const char *s, size_t len, size_t *out_len);
/* At most how many bytes __cxa_demangle prints for s[0..len); 0 when the
 * name is outside what the bound understands (then it is not offered). */
uint64_t pf_demangle_bound(const char *s, size_t len);

/* backends.c: copy the registered backends, in order, into out (room for
 * PRISM_MAX_BACKENDS); returns how many. */
size_t pf_reader_backends(const prism_foreign_backend **out);

#endif

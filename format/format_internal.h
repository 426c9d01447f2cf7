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

/* backends.c: copy the registered backends, in order, into out (room for
 * PRISM_MAX_BACKENDS); returns how many. */
size_t pf_reader_backends(const prism_foreign_backend **out);

#endif

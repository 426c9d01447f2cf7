/* status.c - words for status codes and chunk kinds. */
#include "prism/profile.h"

const char *prism_strerror(prism_status s)
{
    static const char *const words[PRISM_STATUS_COUNT] = {
        [PRISM_OK] = "success",
        [PRISM_NEED_MORE] = "the input ends inside an item (more data needed)",
        [PRISM_E_NOSPACE] = "buffer too small",
        [PRISM_E_NOMEM] = "out of memory",
        [PRISM_E_IO] = "input/output error",
        [PRISM_E_EMPTY] = "empty file",
        [PRISM_E_NOT_PRISM] = "not a PRISM profile",
        [PRISM_E_VERSION] = "unsupported format version",
        [PRISM_E_HEADER] = "damaged or truncated header",
        [PRISM_E_LIMIT] = "a size or count exceeds the format limits",
        [PRISM_E_ARG] = "invalid argument",
        [PRISM_E_STATE] = "call out of order",
    };
    if ((unsigned)s >= PRISM_STATUS_COUNT || !words[s])
        return "unknown error";
    return words[s];
}

const char *prism_chunk_kind_name(uint32_t kind)
{
    static const char *const names[PRISM_CHUNK_KIND_MAX + 1] = {
        [PRISM_CHUNK_STRINGS] = "strings", [PRISM_CHUNK_THREADS] = "threads",
        [PRISM_CHUNK_REGIONS] = "regions", [PRISM_CHUNK_MARKS] = "marks",
        [PRISM_CHUNK_COUNTERS] = "counters", [PRISM_CHUNK_STEPS] = "steps",
        [PRISM_CHUNK_MEMORY] = "memory", [PRISM_CHUNK_GPU] = "gpu",
        [PRISM_CHUNK_DROPPED] = "dropped", [PRISM_CHUNK_INFO] = "info",
        [PRISM_CHUNK_FOOTER] = "footer", [PRISM_CHUNK_CPU] = "cpu",
        [PRISM_CHUNK_UNRECORDED] = "unrecorded", [PRISM_CHUNK_STACKS] = "stacks",
    };
    if (kind > PRISM_CHUNK_KIND_MAX || !names[kind])
        return "unknown";
    return names[kind];
}

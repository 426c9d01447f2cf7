/*
 * notes.c - what an importer repaired or left out, in words, from the
 * import.* keys it puts in the header's config (so a converted profile
 * says the same as the trace it came from): the torch.profiler trace's
 * layout line, an importer's own "import.note" text, then the counters
 * (events.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "prism/import.h"

static const struct {
    const char *key, *what;
} phrases[] = {
    { "import.overlapping_moved", "overlapping events moved to their own track" },
    { "import.overlapping_dropped", "overlapping events left out (no track left for them)" },
    { "import.clipped", "events ending at most 1 us after their parent cut to its end" },
    { "import.unsorted", "events out of time order on their thread (sorted)" },
    { "import.negative_duration", "negative durations made zero" },
    { "import.zero_duration", "events with zero duration" },
    { "import.missing_fields", "events missing a field they need (left out or defaulted)" },
    { "import.unknown_category", "events of unknown categories left out" },
    { "import.unknown_phase", "events of unknown phases left out" },
    { "import.long_strings", "strings cut (over 64 KiB, names over 4096 bytes)" },
    { "import.bad_numbers", "numbers out of range or not numbers (clamped or left out)" },
    { "import.gpu_annotations", "GPU-side annotations not kept (regions are CPU-side)" },
    { "import.python_cut", "Python frames (with_stack) cut where an op or record_function "
                           "range crosses them" },
};

static const prism_kv *find(const prism_header *h, const char *key)
{
    for (size_t i = 0; i < h->nconfig; i++)
        if (h->config[i].key && !strcmp(h->config[i].key, key))
            return &h->config[i];
    return NULL;
}

static uint64_t count(const prism_kv *kv)
{
    if (!kv)
        return 0;
    if (kv->value.type == PRISM_VAL_UINT)
        return kv->value.v.u;
    if (kv->value.type == PRISM_VAL_INT && kv->value.v.i > 0)
        return (uint64_t)kv->value.v.i;
    return 0;
}

size_t prism_import_notes(const prism_header *h, char (*lines)[PRISM_IMPORT_NOTE], size_t max)
{
    size_t n = 0;
    const prism_kv *layout = h ? find(h, "import.layout") : NULL;
    const prism_kv *note = h ? find(h, "import.note") : NULL;
    if (note && note->value.type != PRISM_VAL_TEXT)
        note = NULL;
    if ((!layout || layout->value.type != PRISM_VAL_TEXT) && !note)
        return 0;
    const prism_kv *gz = find(h, "import.gzip");
    if (note && n < max)                /* an importer's own words */
        snprintf(lines[n++], PRISM_IMPORT_NOTE, "%s", note->value.v.s);
    if (layout && layout->value.type == PRISM_VAL_TEXT && n < max)
        snprintf(lines[n++], PRISM_IMPORT_NOTE, "torch.profiler trace (%s layout%s), %" PRIu64
                 " events read", strcmp(layout->value.v.s, "legacy") ? "Kineto" : "legacy autograd",
                 gz && gz->value.type == PRISM_VAL_BOOL && gz->value.v.b ? ", gzip" : "",
                 count(find(h, "import.events")));
    const prism_kv *cut = find(h, "import.truncated");
    if (cut && n < max)
        snprintf(lines[n++], PRISM_IMPORT_NOTE,
                 "the trace is cut off after %" PRIu64 " bytes: opened with the events it holds",
                 count(cut));
    for (size_t i = 0; i < sizeof phrases / sizeof phrases[0] && n < max; i++) {
        uint64_t c = count(find(h, phrases[i].key));
        if (c)
            snprintf(lines[n++], PRISM_IMPORT_NOTE, "%" PRIu64 " %s", c, phrases[i].what);
    }
    return n;
}

bool prism_import_status(const prism_header *h, bool complete, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    const prism_kv *layout = h ? find(h, "import.layout") : NULL;
    const prism_kv *note = h ? find(h, "import.note") : NULL;
    bool torch = layout && layout->value.type == PRISM_VAL_TEXT;
    if (!torch && !(note && note->value.type == PRISM_VAL_TEXT))
        return false;
    /* what it was: "torch.profiler trace", or the producer before its
     * ", imported by prism X" ("folded stacks") */
    char what[96] = "trace";
    if (torch)
        snprintf(what, sizeof what, "torch.profiler trace");
    else if (h->producer && h->producer[0]) {
        const char *by = strstr(h->producer, ", imported by");
        int n = by ? (int)(by - h->producer) : (int)strlen(h->producer);
        snprintf(what, sizeof what, "%.*s", n, h->producer);
    }
    const prism_kv *cut = find(h, "import.truncated");
    const prism_kv *gz = find(h, "import.gzip");
    bool gzip = gz && gz->value.type == PRISM_VAL_BOOL && gz->value.v.b;
    if (complete && !cut)
        snprintf(buf, cap, "complete (imported %s)", what);
    else if (cut)
        snprintf(buf, cap, "cut short: the %s ends at byte %" PRIu64 " (imported %s: the "
                 "figures cover the events before it)", gzip ? "gzip stream" : torch ? "JSON" :
                 "file", count(cut), what);
    else
        snprintf(buf, cap, "cut short (imported %s: the figures cover what was read)", what);
    return true;
}

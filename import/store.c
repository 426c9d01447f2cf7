/*
 * store.c - the compact event store every importer files into: each event
 * kept becomes a fixed-size record (a region 32 bytes, a GPU record 88, a
 * memory event 32) in one vector per kind; names are interned once
 * (prism_strtab); threads are found through a hash of (pid, tid) in a pb_map.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"

#define PUSH IMP_PUSH

bool imp_events_init(imp_events *m, const prism_reader_callbacks *cb, void *ctx)
{
    if (cb)
        m->cb = *cb;
    m->ctx = ctx;
    m->names = prism_strtab_new();
    m->last_track = UINT32_MAX;
    m->rank = -1;
    return m->names != NULL;
}

void imp_events_free(imp_events *m)
{
    prism_strtab_free(m->names);
    free(m->reg);
    free(m->gpu);
    free(m->mem);
    free(m->steps);
    free(m->tracks);
    pb_map_free(&m->tmap);
    m->names = NULL;
    m->reg = NULL;
    m->gpu = NULL;
    m->mem = NULL;
    m->steps = NULL;
    m->tracks = NULL;
}

uint32_t imp_intern(imp_events *m, const char *s, size_t len)
{
    uint32_t id = 0;
    bool is_new;
    if (len > PRISM_MAX_STRING_BYTES)
        m->counters[C_LONG_STRINGS]++;
    if (prism_strtab_intern(m->names, s, len, &id, &is_new) != PRISM_OK)
        return 0;
    return id;
}

/* ---- threads ---- */

static uint64_t track_hash(int64_t pid, int64_t tid)
{
    uint64_t k = (uint64_t)pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)tid;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* The track of (pid, tid), made on first use; UINT32_MAX without memory. */
uint32_t imp_track_of(imp_events *m, int64_t pid, int64_t tid, bool pid_str, bool tid_str)
{
    if (m->last_track < m->ntracks && m->tracks[m->last_track].pid == pid &&
        m->tracks[m->last_track].tid == tid)
        return m->last_track;
    /* two tracks with one hash: the second one's key is the next free one */
    uint64_t *slot;
    bool added;
    for (uint64_t key = track_hash(pid, tid);; key++) {
        slot = pb_map_slot(&m->tmap, key, &added);
        if (!slot)
            return UINT32_MAX;
        if (added)
            break;
        if (*slot >= m->ntracks)
            continue;                   /* dead: its track was never made */
        imp_track *t = &m->tracks[*slot];
        if (t->pid == pid && t->tid == tid)
            return m->last_track = (uint32_t)*slot;
    }
    *slot = m->ntracks;
    if (m->ntracks >= UINT32_MAX - 1 || !PUSH(m, tracks, ntracks, ctracks)) {
        *slot = UINT64_MAX;             /* a dead key: it matches no track */
        return UINT32_MAX;
    }
    imp_track *t = &m->tracks[m->ntracks];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    t->pid_str = pid_str;
    t->tid_str = tid_str;
    t->last_ts = t->last_soft_ts = INT64_MIN;
    return m->last_track = (uint32_t)m->ntracks++;
}

/* ---- events ---- */

bool imp_region_add(imp_events *m, uint32_t track, int64_t ts, int64_t end, uint32_t name)
{
    if (!PUSH(m, reg, nreg, creg))
        return false;
    m->tracks[track].used = true;
    m->reg[m->nreg] = (imp_region){ .ts = ts, .end = end, .name = name,
                                    .track = track, .seq = (uint32_t)m->nreg };
    m->nreg++;
    m->counters[C_REGIONS]++;
    return true;
}

bool imp_region_add_soft(imp_events *m, uint32_t track, int64_t ts, int64_t end, uint32_t name)
{
    if (!imp_region_add(m, track, ts, end, name))
        return false;
    m->reg[m->nreg - 1].flags = IMP_REG_SOFT;
    return true;
}

const prism_header *imp_events_header(const imp_events *m)
{
    return m->built ? &m->h : NULL;
}

const char *imp_events_string(const imp_events *m, uint32_t id, size_t *len)
{
    return m->names ? prism_strtab_name(m->names, id, len) : NULL;
}

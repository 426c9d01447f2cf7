/*
 * export_trace_gpu.c - the Chrome trace's memory counters and GPU tracks
 * (see export_trace.c for the layout of the whole file).
 *
 *   process pid + 2^22 ("GPU"; above any Linux pid, so never a real one)
 *     tid = device * 1000 + stream         kernels, copies, memsets, syncs,
 *                                          allocations as "X"
 *     tid = 1000000000 + CPU thread stream CUDA runtime API calls as "X"
 *     counters          GPU N memory (MB): used, reserved
 */
#include <inttypes.h>
#include <string.h>

#include "export_trace.h"
#include "jsonw.h"

static void gpu_process(trace *t)
{
    if (t->gpu_named)
        return;
    t->gpu_named = true;
    trace_meta(t, "process_name", t->gpu_pid, NULL, "name", "GPU", 0);
    trace_meta(t, "process_sort_index", t->gpu_pid, NULL, "sort_index", NULL, 1);
}

void trace_on_memory(void *ctx, const prism_memory_sample *m)
{
    trace *t = ctx;
    trace_note_ts(t, m->ts);
    trace_sep(t);
    fprintf(t->f, "{\"name\":\"host RSS (MB)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%" PRIu64,
            t->pid);
    trace_put_ts(t->f, "ts", m->ts);
    fputs(",\"args\":{\"rss\":", t->f);
    pb_json_put_double(t->f, bytes_mb((double)m->rss));
    fputs("}}", t->f);
    if (m->cpu_permille != PRISM_NO_CPU) {
        trace_sep(t);
        fprintf(t->f, "{\"name\":\"process CPU (%%)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":%"
                PRIu64, t->pid);
        trace_put_ts(t->f, "ts", m->ts);
        fprintf(t->f, ",\"args\":{\"cpu\":%.1f}}", m->cpu_permille / 10.0);
    }
    if (m->ngpu)
        gpu_process(t);
    for (uint32_t i = 0; i < m->ngpu && i < PRISM_MAX_GPUS; i++) {
        trace_sep(t);
        fprintf(t->f, "{\"name\":\"GPU %" PRIu32 " memory (MB)\",\"cat\":\"memory\",\"ph\":\"C\","
                "\"pid\":%" PRIu64, m->gpu[i].device, t->gpu_pid);
        trace_put_ts(t->f, "ts", m->ts);
        fputs(",\"args\":{\"used\":", t->f);
        pb_json_put_double(t->f, bytes_mb((double)m->gpu[i].used));
        fputs(",\"reserved\":", t->f);
        pb_json_put_double(t->f, bytes_mb((double)m->gpu[i].reserved));
        fputs("}}", t->f);
    }
    t->n.memory++;
}

/* The GPU track of a record, named the first time it is used. */
static uint64_t gpu_tid(trace *t, const prism_gpu_record *g)
{
    bool api = g->type == PRISM_GPU_API;
    uint64_t tid = api ? API_TID_BASE + (uint64_t)g->stream
                       : (uint64_t)g->device * 1000u + g->stream;
    uint64_t seen;
    if (pb_map_get(&t->gtrack, tid, &seen) || t->gtrack.count >= 65536 || !pb_map_put(&t->gtrack, tid, 0))
        return tid;
    char name[96];
    if (api)
        snprintf(name, sizeof name, "CUDA API (thread %" PRIu32 ")", g->stream);
    else
        snprintf(name, sizeof name, "GPU %" PRIu32 " stream %" PRIu32, g->device, g->stream);
    trace_meta(t, "thread_name", t->gpu_pid, &tid, "name", name, 0);
    trace_meta(t, "thread_sort_index", t->gpu_pid, &tid, "sort_index", NULL,
               (int64_t)(tid & 0x7fffffff));
    return tid;
}

static void gpu_args(trace *t, const prism_gpu_record *g)
{
    static const char *const syncs[] = { "unknown", "event", "stream wait event", "stream",
                                         "context" };
    FILE *f = t->f;
    fprintf(f, ",\"args\":{\"correlation\":%" PRIu64, g->correlation);
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        fprintf(f, ",\"grid\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "],\"block\":[%" PRIu32 ",%"
                PRIu32 ",%" PRIu32 "],\"shared_mem\":%" PRIu32 ",\"registers\":%" PRIu32,
                g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2],
                g->shared_mem, g->registers);
        break;
    case PRISM_GPU_MEMCPY:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\"", g->bytes,
                report_mem_kind(g->src_kind), report_mem_kind(g->dst_kind));
        break;
    case PRISM_GPU_MEMSET:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"dst\":\"%s\"", g->bytes, report_mem_kind(g->dst_kind));
        break;
    case PRISM_GPU_SYNC:
        fprintf(f, ",\"sync\":\"%s\"", syncs[g->sync_type < 5 ? g->sync_type : 0]);
        break;
    case PRISM_GPU_ALLOC:
    case PRISM_GPU_FREE:
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"address\":\"0x%" PRIx64 "\",\"kind\":\"%s\"",
                g->bytes, g->address, report_mem_kind(g->dst_kind));
        break;
    default:
        break;
    }
    fputs("}}", f);
}

void trace_on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    static const char *const cats[] = { "gpu", "kernel", "memcpy", "memset", "sync",
                                        "cuda_api", "alloc", "free" };
    trace *t = ctx;
    if (n)
        gpu_process(t);
    for (size_t i = 0; i < n; i++) {
        const prism_gpu_record *r = &g[i];
        uint32_t type = r->type <= PRISM_GPU_TYPE_MAX ? r->type : 0;
        uint64_t tid = gpu_tid(t, r);
        trace_note_ts(t, r->end > r->start ? r->end : r->start);
        trace_sep(t);
        fputs("{\"name\":", t->f);
        if (type == PRISM_GPU_KERNEL || type == PRISM_GPU_API)
            trace_put_name(t, r->name);
        else if (type == PRISM_GPU_MEMCPY)
            fprintf(t->f, "\"memcpy %s\"", report_copy_kind(r->copy_kind));
        else
            fprintf(t->f, "\"%s\"", cats[type]);
        fprintf(t->f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64,
                cats[type], t->gpu_pid, tid);
        trace_put_span(t->f, r->start, r->end > r->start ? r->end : r->start);
        gpu_args(t, r);
        t->n.gpu++;
    }
}

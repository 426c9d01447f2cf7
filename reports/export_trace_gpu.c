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
    OB_LIT(&t->o, "{\"name\":\"host RSS (MB)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":");
    ob_u64(&t->o, t->pid);
    trace_put_ts(t, m->ts);
    OB_LIT(&t->o, ",\"args\":{\"rss\":");
    ob_double(&t->o, bytes_mb((double)m->rss));
    OB_LIT(&t->o, "}}");
    if (m->cpu_permille != PRISM_NO_CPU) {
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":\"process CPU (%)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":");
        ob_u64(&t->o, t->pid);
        trace_put_ts(t, m->ts);
        OB_LIT(&t->o, ",\"args\":{\"cpu\":");
        ob_u64(&t->o, m->cpu_permille / 10);
        ob_putc(&t->o, '.');
        ob_putc(&t->o, (char)('0' + m->cpu_permille % 10));
        OB_LIT(&t->o, "}}");
    }
    if (m->ngpu)
        gpu_process(t);
    for (uint32_t i = 0; i < m->ngpu && i < PRISM_MAX_GPUS; i++) {
        trace_sep(t);
        OB_LIT(&t->o, "{\"name\":\"GPU ");
        ob_u64(&t->o, m->gpu[i].device);
        OB_LIT(&t->o, " memory (MB)\",\"cat\":\"memory\",\"ph\":\"C\",\"pid\":");
        ob_u64(&t->o, t->gpu_pid);
        trace_put_ts(t, m->ts);
        OB_LIT(&t->o, ",\"args\":{\"used\":");
        ob_double(&t->o, bytes_mb((double)m->gpu[i].used));
        OB_LIT(&t->o, ",\"reserved\":");
        ob_double(&t->o, bytes_mb((double)m->gpu[i].reserved));
        OB_LIT(&t->o, "}}");
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
    ob *o = &t->o;
    OB_LIT(o, ",\"args\":{\"correlation\":");
    ob_u64(o, g->correlation);
    switch (g->type) {
    case PRISM_GPU_KERNEL:
        for (int k = 0; k < 6; k++) {
            ob_str(o, k == 0 ? ",\"grid\":[" : k == 3 ? "],\"block\":[" : ",");
            ob_u64(o, k < 3 ? g->grid[k] : g->block[k - 3]);
        }
        OB_LIT(o, "],\"shared_mem\":");
        ob_u64(o, g->shared_mem);
        OB_LIT(o, ",\"registers\":");
        ob_u64(o, g->registers);
        break;
    case PRISM_GPU_MEMCPY:
        OB_LIT(o, ",\"bytes\":");
        ob_u64(o, g->bytes);
        OB_LIT(o, ",\"src\":\"");
        ob_str(o, report_mem_kind(g->src_kind));
        OB_LIT(o, "\",\"dst\":\"");
        ob_str(o, report_mem_kind(g->dst_kind));
        ob_putc(o, '"');
        break;
    case PRISM_GPU_MEMSET:
        OB_LIT(o, ",\"bytes\":");
        ob_u64(o, g->bytes);
        OB_LIT(o, ",\"dst\":\"");
        ob_str(o, report_mem_kind(g->dst_kind));
        ob_putc(o, '"');
        break;
    case PRISM_GPU_SYNC:
        OB_LIT(o, ",\"sync\":\"");
        ob_str(o, syncs[g->sync_type < 5 ? g->sync_type : 0]);
        ob_putc(o, '"');
        break;
    case PRISM_GPU_ALLOC:
    case PRISM_GPU_FREE: {
        char hex[24];
        snprintf(hex, sizeof hex, "%" PRIx64, g->address);
        OB_LIT(o, ",\"bytes\":");
        ob_u64(o, g->bytes);
        OB_LIT(o, ",\"address\":\"0x");
        ob_str(o, hex);
        OB_LIT(o, "\",\"kind\":\"");
        ob_str(o, report_mem_kind(g->dst_kind));
        ob_putc(o, '"');
        break;
    }
    default:
        break;
    }
    OB_LIT(o, "}}");
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
        OB_LIT(&t->o, "{\"name\":");
        if (type == PRISM_GPU_KERNEL || type == PRISM_GPU_API) {
            trace_put_name(t, r->name);
        } else {
            ob_str(&t->o, type == PRISM_GPU_MEMCPY ? "\"memcpy " : "\"");
            ob_str(&t->o, type == PRISM_GPU_MEMCPY ? report_copy_kind(r->copy_kind) : cats[type]);
            ob_putc(&t->o, '"');
        }
        OB_LIT(&t->o, ",\"cat\":\"");
        ob_str(&t->o, cats[type]);
        OB_LIT(&t->o, "\",\"ph\":\"X\",\"pid\":");
        ob_u64(&t->o, t->gpu_pid);
        OB_LIT(&t->o, ",\"tid\":");
        ob_u64(&t->o, tid);
        trace_put_span(t, r->start, r->end > r->start ? r->end : r->start, -1);
        gpu_args(t, r);
        t->n.gpu++;
    }
}

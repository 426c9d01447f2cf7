/*
 * dump.c - what `prism-top dump FILE [--chunks]` prints: the header and
 * every record, or one line per chunk, so a person can see what a file
 * holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ropen.h"
#include "reports.h"
#include "escape.h"
#include "report.h"
#include "prism/profile.h"

typedef struct dump {
    FILE *out;
    bool chunks;
    prism_reader *r;
    uint64_t first_damage;
    bool damaged;
    char name[ESC_CAP(PRISM_MAX_STRING_BYTES)];    /* name_of()'s escaped name */
} dump;

static const char *name_of(dump *d, uint32_t id, char *buf, size_t n)
{
    const char *s = prism_reader_string(d->r, id, NULL);
    if (s)
        return esc_str(s, d->name, sizeof d->name);    /* valid until the next call */
    snprintf(buf, n, "<string %" PRIu32 ">", id);
    return buf;
}

static void ts(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

static void value(FILE *f, const prism_value *v)
{
    switch (v->type) {
    case PRISM_VAL_INT: fprintf(f, "%" PRId64, v->v.i); break;
    case PRISM_VAL_UINT: fprintf(f, "%" PRIu64, v->v.u); break;
    case PRISM_VAL_FLOAT: fprintf(f, "%.17g", v->v.f); break;
    case PRISM_VAL_BOOL: fputs(v->v.b ? "true" : "false", f); break;
    case PRISM_VAL_TEXT:
        fputc('"', f);
        esc_fputs(v->v.s, f);
        fputc('"', f);
        break;
    default: fputs("null", f); break;
    }
}

static void on_header(void *ctx, const prism_header *h)
{
    dump *d = ctx;
    FILE *f = d->out;
    time_t secs = (time_t)(h->start_unix_ns / 1000000000u);
    struct tm tm;
    char when[64] = "?";
    if (h->start_unix_ns && gmtime_r(&secs, &tm))     /* 0: not in the file */
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f, "header: PRISM profile format %" PRIu32 ".%" PRIu32 "\n", h->version_major,
            h->version_minor);
    fputs("  producer: ", f);
    esc_fputs(h->producer ? h->producer : "?", f);
    fputs("\n  host: ", f);
    esc_fputs(h->host ? h->host : "?", f);
    fprintf(f, "\n  pid: %" PRIu64 "\n  rank: %" PRId64 "\n  clock: ", h->pid, h->rank);
    esc_fputs(h->clock ? h->clock : "?", f);
    fprintf(f, "\n  start: %s (unix ns %" PRIu64 ", monotonic ns %" PRIu64 ")\n", when,
            h->start_unix_ns, h->start_mono_ns);
    fputs("  argv:", f);
    for (size_t i = 0; i < h->argc; i++) {
        fputc(' ', f);
        esc_fputs(h->argv[i], f);
    }
    fputc('\n', f);
    for (size_t i = 0; i < h->nconfig; i++) {
        fputs("  config ", f);
        esc_fputs(h->config[i].key, f);
        fputs(" = ", f);
        value(f, &h->config[i].value);
        fputc('\n', f);
    }
}

/* s[0..len) quoted and escaped; an embedded NUL shows as \x00. */
static void quoted(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        size_t seg = strnlen(s + i, len - i);
        if (seg > PRISM_MAX_STRING_BYTES)
            seg = PRISM_MAX_STRING_BYTES;
        char part[PRISM_MAX_STRING_BYTES + 1];
        memcpy(part, s + i, seg);
        part[seg] = '\0';
        esc_fputs(part, f);
        i += seg;
        if (i < len && !s[i]) {
            fputs("\\x00", f);
            i++;
        }
    }
    fputc('"', f);
}

/* The string as the file holds it; a mangled name the reader demangled
 * (what every other output shows) follows it:
 * string 7 "_ZN5cudnn...E" demangled "void cudnn::...(...)" */
static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    size_t rlen = 0;
    const char *raw = d->r ? prism_reader_string_raw(d->r, id, &rlen) : NULL;
    fprintf(d->out, "string %" PRIu32 " ", id);
    if (!raw || raw == s) {
        quoted(d->out, s, len);
    } else {
        quoted(d->out, raw, rlen);
        fputs(" demangled ", d->out);
        quoted(d->out, s, len);
    }
    fputc('\n', d->out);
}

static void on_thread(void *ctx, const prism_thread *t)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    fprintf(d->out, "thread %" PRIu32 " tid %" PRIu64 " \"", t->stream, t->os_tid);
    esc_fputs(t->name, d->out);
    fputs("\"\n", d->out);
}

static void on_regions(void *ctx, uint32_t stream, uint32_t depth,
                       const prism_region_event *ev, size_t n)
{
    dump *d = ctx;
    char buf[32];
    if (d->chunks)
        return;
    for (size_t i = 0; i < n; i++) {
        fprintf(d->out, "region  t=");
        ts(d->out, ev[i].ts);
        if (ev[i].kind == PRISM_REGION_ENTER) {
            fprintf(d->out, " thread %" PRIu32 " depth %" PRIu32 " enter %s\n", stream, depth,
                    name_of(d, ev[i].name, buf, sizeof buf));
            depth++;
        } else {
            depth = depth ? depth - 1 : 0;
            fprintf(d->out, " thread %" PRIu32 " depth %" PRIu32 " exit\n", stream, depth);
        }
    }
}

static void on_marks(void *ctx, uint32_t stream, const prism_mark *m, size_t n)
{
    dump *d = ctx;
    char buf[32];
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "mark    t=");
        ts(d->out, m[i].ts);
        fprintf(d->out, " thread %" PRIu32 " %s\n", stream, name_of(d, m[i].name, buf, sizeof buf));
    }
}

static void on_counters(void *ctx, uint32_t stream, const prism_counter *c, size_t n)
{
    dump *d = ctx;
    char buf[32];
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "counter t=");
        ts(d->out, c[i].ts);
        fprintf(d->out, " thread %" PRIu32 " %s = ", stream, name_of(d, c[i].name, buf, sizeof buf));
        if (c[i].is_float)
            fprintf(d->out, "%.17g\n", c[i].v.f);
        else
            fprintf(d->out, "%" PRId64 "\n", c[i].v.i);
    }
}

static void on_steps(void *ctx, uint32_t stream, const prism_step *s, size_t n)
{
    dump *d = ctx;
    (void)stream;
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "step    %" PRIu64 " epoch %" PRIu64 " start ", s[i].index, s[i].epoch);
        ts(d->out, s[i].start);
        fprintf(d->out, " duration %" PRIu64 " ns%s\n", s[i].end - s[i].start,
                (s[i].flags & PRISM_STEP_SAMPLED) ? " sampled" : "");
    }
}

static void on_memory(void *ctx, const prism_memory_sample *m)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    fprintf(d->out, "memory  t=");
    ts(d->out, m->ts);
    if (m->step != PRISM_NO_STEP)
        fprintf(d->out, " step %" PRIu64, m->step);
    fprintf(d->out, " rss %" PRIu64, m->rss);
    if (m->cpu_permille != PRISM_NO_CPU)
        fprintf(d->out, " cpu %.1f%%", m->cpu_permille / 10.0);
    for (uint32_t i = 0; i < m->ngpu; i++) {
        fprintf(d->out, " gpu%" PRIu32 " used %" PRIu64 " reserved %" PRIu64, m->gpu[i].device,
                m->gpu[i].used, m->gpu[i].reserved);
        if (m->have_sys && m->gpu[i].util_pct != PRISM_NO_CPU)
            fprintf(d->out, " util %" PRIu32 "%%", m->gpu[i].util_pct);
        if (m->have_sys && m->gpu[i].energy_mj != PRISM_NO_VALUE)
            fprintf(d->out, " energy %" PRIu64 " mJ", m->gpu[i].energy_mj);
    }
    if (m->ncpu) {                      /* 1.2: the machine's load */
        fprintf(d->out, " ncpu %" PRIu32, m->ncpu);
        if (m->host_busy_permille != PRISM_NO_CPU)
            fprintf(d->out, " host %.1f%%", m->host_busy_permille / 10.0);
        if (m->children_cpu_permille != PRISM_NO_CPU)
            fprintf(d->out, " children %.1f%%", m->children_cpu_permille / 10.0);
    }
    if (m->have_sys) {                  /* 1.3: the system readings */
        static const char *const key[8] = { "io_read", "io_write", "net_rx", "net_tx",
                                             "cpu_user_ns", "cpu_sys_ns", "mem_total",
                                             "cpu_energy_uj" };
        const uint64_t v[8] = { m->io_read_bytes, m->io_write_bytes, m->net_rx_bytes,
                                m->net_tx_bytes, m->cpu_user_ns, m->cpu_sys_ns, m->mem_total,
                                m->cpu_energy_uj };
        for (size_t i = 0; i < 8; i++)
            if (v[i] != PRISM_NO_VALUE)
                fprintf(d->out, " %s %" PRIu64, key[i], v[i]);
    }
    fputc('\n', d->out);
}

static void on_gpu(void *ctx, const prism_gpu_record *g, size_t n)
{
    static const char *const types[] = { "?", "kernel", "memcpy", "memset", "sync", "api",
                                         "alloc", "free" };
    static const char *const copies[] = { "?", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" };
    dump *d = ctx;
    char buf[32];
    for (size_t i = 0; !d->chunks && i < n; i++) {
        const prism_gpu_record *r = &g[i];
        fprintf(d->out, "gpu     t=");
        ts(d->out, r->start);
        fprintf(d->out, " %s dur %" PRIu64 " ns device %" PRIu32 " stream %" PRIu32
                " corr %" PRIu64, types[r->type <= 7 ? r->type : 0], r->end - r->start,
                r->device, r->stream, r->correlation);
        switch (r->type) {
        case PRISM_GPU_KERNEL:
            fprintf(d->out, " %s grid %" PRIu32 "x%" PRIu32 "x%" PRIu32 " block %" PRIu32
                    "x%" PRIu32 "x%" PRIu32 " smem %" PRIu32 " regs %" PRIu32,
                    name_of(d, r->name, buf, sizeof buf), r->grid[0], r->grid[1], r->grid[2],
                    r->block[0], r->block[1], r->block[2], r->shared_mem, r->registers);
            break;
        case PRISM_GPU_MEMCPY:
            fprintf(d->out, " %s %" PRIu64 " bytes src %" PRIu32 " dst %" PRIu32,
                    copies[r->copy_kind <= 5 ? r->copy_kind : 0], r->bytes, r->src_kind,
                    r->dst_kind);
            break;
        case PRISM_GPU_API:
            fprintf(d->out, " %s", name_of(d, r->name, buf, sizeof buf));
            break;
        case PRISM_GPU_SYNC:
            fprintf(d->out, " type %" PRIu32, r->sync_type);
            break;
        default:
            fprintf(d->out, " %" PRIu64 " bytes addr 0x%" PRIx64, r->bytes, r->address);
            break;
        }
        fputc('\n', d->out);
    }
}

static void on_dropped(void *ctx, const prism_dropped *x)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    fprintf(d->out, "dropped thread %" PRIu32 " %s total %" PRIu64, x->stream,
            x->source == PRISM_SOURCE_GPU ? "gpu" : "cpu", x->total);
    if (x->have_regions)
        fprintf(d->out, " regions %" PRIu64, x->regions);
    fputc('\n', d->out);
}

static void on_unrecorded(void *ctx, uint32_t stream, const prism_unrecorded *u, size_t n)
{
    dump *d = ctx;
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "unrec   ");
        ts(d->out, u[i].ts);
        fprintf(d->out, " thread %" PRIu32 " depth %" PRIu32 " regions %" PRIu64 "\n", stream,
                u[i].depth, u[i].regions);
    }
}

static void on_info(void *ctx, const char *key, const prism_value *v)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    fputs("info    ", d->out);
    esc_fputs(key, d->out);
    fputs(" = ", d->out);
    value(d->out, v);
    fputc('\n', d->out);
}

static void on_footer(void *ctx, const prism_footer *f)
{
    dump *d = ctx;
    if (d->chunks)
        return;
    fprintf(d->out, "footer  end ");
    ts(d->out, f->end_ts);
    fprintf(d->out, " events %" PRIu64 " dropped %" PRIu64 " chunks %" PRIu64 " %s\n",
            f->events, f->dropped, f->chunks, f->clean ? "clean" : "unclean");
}

static void on_cpu(void *ctx, const prism_cpu_sample *c, size_t n)
{
    dump *d = ctx;
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "cpu     t=");
        ts(d->out, c[i].ts);
        fprintf(d->out, " thread %" PRIu32 " oncpu %" PRIu64 " ns", c[i].stream, c[i].oncpu_ns);
        if (c[i].flags & PRISM_CPU_HAVE_WAIT)
            fprintf(d->out, " wait %" PRIu64 " ns", c[i].wait_ns);
        fprintf(d->out, "%s%s\n",
                (c[i].flags & PRISM_CPU_PREEMPTED) ? " preempted"
                : (c[i].flags & PRISM_CPU_QUEUED)  ? " queued"
                : (c[i].flags & PRISM_CPU_RUNNING) ? " running"
                : (c[i].flags & PRISM_CPU_BLOCKED) ? " blocked" : "",
                (c[i].flags & PRISM_CPU_EXITED) ? " exited" : "");
    }
}

static void on_stacks(void *ctx, const prism_stack_sample *k, size_t n)
{
    dump *d = ctx;
    char buf[ESC_CAP(PRISM_MAX_STRING_BYTES)];
    for (size_t i = 0; !d->chunks && i < n; i++) {
        fprintf(d->out, "stack   t=");
        ts(d->out, k[i].ts);
        fprintf(d->out, " thread %" PRIu32 "%s%s%s:", k[i].stream,
                (k[i].flags & PRISM_STACK_RUNNING) ? " running" : "",
                (k[i].flags & PRISM_STACK_SYSCALL) ? " blocked" : "",
                (k[i].flags & PRISM_STACK_TRUNCATED) ? " truncated" : "");
        for (uint32_t j = 0; j < k[i].nframes; j++)
            fprintf(d->out, "%s%s", j ? " > " : " ", name_of(d, k[i].frames[j], buf, sizeof buf));
        if (k[i].wait_ns)
            fprintf(d->out, " (GIL after %.3f ms, %.3f ms of it off a CPU)",
                    (double)k[i].wait_ns / 1e6, (double)k[i].queued_ns / 1e6);
        fputc('\n', d->out);
    }
}

static void on_chunk(void *ctx, const prism_chunk_info *c)
{
    static const char *const status[] = { "ok", "BAD CHECKSUM", "MALFORMED", "unknown kind",
                                          "DAMAGED" };
    dump *d = ctx;
    if (c->status == PRISM_CHUNK_BAD_CHECKSUM || c->status == PRISM_CHUNK_GARBAGE ||
        c->status == PRISM_CHUNK_MALFORMED) {
        if (!d->damaged)
            d->first_damage = c->offset;
        d->damaged = true;
    }
    if (!d->chunks) {
        if (c->status != PRISM_CHUNK_OK)
            fprintf(d->out, "skipped %" PRIu64 " bytes at offset %" PRIu64 ": %s\n", c->length,
                    c->offset, status[c->status]);
        return;
    }
    if (c->status == PRISM_CHUNK_GARBAGE) {
        fprintf(d->out, "@%-10" PRIu64 " %8" PRIu64 " bytes  (damaged bytes skipped)\n", c->offset,
                c->length);
        return;
    }
    fprintf(d->out, "@%-10" PRIu64 " %8" PRIu64 " bytes  %-8s stream %-4" PRIu32 " seq %-6" PRIu64
            " payload %-7" PRIu64 " records %-6" PRIu64 " %s\n", c->offset, c->length,
            prism_chunk_kind_name(c->kind), c->stream, c->seq, c->payload_len, c->records,
            status[c->status]);
}

int rp_dump_file(const char *path, bool chunks, FILE *out)
{
    dump d = { .out = out, .chunks = chunks };
    prism_reader_callbacks cb = {
        .header = on_header, .string = on_string, .thread = on_thread,
        .regions = on_regions, .marks = on_marks, .counters = on_counters,
        .steps = on_steps, .memory = on_memory, .gpu = on_gpu, .dropped = on_dropped,
        .info = on_info, .footer = on_footer, .cpu = on_cpu, .chunk = on_chunk,
        .unrecorded = on_unrecorded, .stacks = on_stacks,
    };
    prism_reader *r = prism_reader_new(&cb, &d);
    if (!r) {
        fprintf(stderr, "prism-top: %s: out of memory\n", path);
        return EXIT_BADINPUT;
    }
    d.r = r;
    FILE *f = pb_fopen_read(path);
    int rc = EXIT_OK;
    prism_status st;
    if (!f) {
        fprintf(stderr, "prism-top: %s: %s\n", path, strerror(errno));
        prism_reader_free(r);
        return EXIT_BADINPUT;
    }
    st = prism_reader_read_fd(r, fileno(f));
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    fclose(f);
    fflush(out);
    const prism_reader_stats *s = prism_reader_stats_get(r);
    if (st != PRISM_OK) {
        const char *msg;
        uint64_t off;
        prism_reader_error(r, &msg, &off);
        report_error(path, st, msg, off);
        rc = EXIT_BADINPUT;
    } else {
        fprintf(out, "summary: %" PRIu64 " chunks, %" PRIu64 " records", s->chunks, s->records);
        if (s->unknown)
            fprintf(out, ", %" PRIu64 " chunks of unknown kind skipped", s->unknown);
        if (s->seq_gaps)
            fprintf(out, ", %" PRIu64 " chunks missing by sequence", s->seq_gaps);
        fprintf(out, ", %s\n", s->footer ? "complete (footer present)"
                                         : "no footer (still being written, or the writer died)");
        if (s->torn_bytes)
            fprintf(out, "torn tail: %" PRIu64 " bytes of an incomplete last chunk\n",
                    s->torn_bytes);
        if (d.damaged) {
            fprintf(stderr, "prism-top: %s: damaged: %" PRIu64 " run(s), %" PRIu64
                    " bytes skipped, %" PRIu64 " malformed chunk(s), first at byte %" PRIu64 "\n",
                    path, s->damaged, s->skipped_bytes, s->malformed, d.first_damage);
            rc = EXIT_BADINPUT;
        }
    }
    prism_reader_free(r);
    return rc;
}

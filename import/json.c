/*
 * json.c - the importer's front end: a byte scanner that bounds what yajl
 * may buffer (strings cut at IMP_MAX_STRING, numbers at IMP_MAX_TOKEN,
 * nesting at IMP_MAX_DEPTH, each error with its exact byte offset), then
 * yajl's event parser, whose callbacks fill one event at a time (imp_ev)
 * and hand it to the store.  Nothing of the document is kept but that.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imp.h"

/* An error at JSON offset off: for a gzip file the offset in the file is
 * where inflate had got to, and the JSON offset goes into the words. */
static bool jfail(imp *m, prism_status st, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool jfail(imp *m, prism_status st, uint64_t off, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!m->gz)
        return imp_fail(&m->s, st, off, "%s", what);
    return imp_fail(&m->s, st, m->gz_pos, "%s (byte %" PRIu64 " of the decompressed JSON)", what, off);
}

/* What a container is, from its parent and the key it is the value of. */
enum {
    R_IGNORE = 0, R_TOP, R_EVENTS, R_EVENT, R_ARGS, R_GRID, R_BLOCK,
    R_DEVPROPS, R_DEVPROP, R_DIST
};

enum {
    K_NONE = 0, K_TRACEEVENTS, K_DEVPROPS, K_DIST, K_BASE,
    K_NAME, K_PH, K_CAT, K_PID, K_TID, K_TS, K_DUR, K_ID, K_ARGS,
    K_CORR, K_EXTID, K_DEVICE, K_STREAM, K_GRID, K_BLOCK, K_SHMEM, K_REGS,
    K_BYTES, K_TALLOC, K_TRES, K_DEVID, K_SYNC, K_ARGNAME,
    K_RANK, K_WORLD, K_PROPID, K_HOST, K_TRACENAME, K_TRACEID, K_SCHEMA
};


#define KEYIS(lit) (len == sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1))

static int key_of(int role, const unsigned char *s, size_t len)
{
    switch (role) {
    case R_TOP:
        if (KEYIS("traceEvents")) return K_TRACEEVENTS;
        if (KEYIS("deviceProperties")) return K_DEVPROPS;
        if (KEYIS("distributedInfo")) return K_DIST;
        if (KEYIS("baseTimeNanoseconds")) return K_BASE;
        if (KEYIS("host_name")) return K_HOST;
        if (KEYIS("traceName")) return K_TRACENAME;
        if (KEYIS("trace_id")) return K_TRACEID;
        if (KEYIS("schemaVersion")) return K_SCHEMA;
        return K_NONE;
    case R_EVENT:
        switch (len) {
        case 2:
            if (KEYIS("ph")) return K_PH;
            if (KEYIS("ts")) return K_TS;
            if (KEYIS("id")) return K_ID;
            return K_NONE;
        case 3:
            if (KEYIS("cat")) return K_CAT;
            if (KEYIS("pid")) return K_PID;
            if (KEYIS("tid")) return K_TID;
            if (KEYIS("dur")) return K_DUR;
            return K_NONE;
        case 4:
            if (KEYIS("name")) return K_NAME;
            if (KEYIS("args")) return K_ARGS;
            return K_NONE;
        }
        return K_NONE;
    case R_ARGS:
        if (KEYIS("correlation")) return K_CORR;
        if (KEYIS("External id")) return K_EXTID;
        if (KEYIS("device")) return K_DEVICE;
        if (KEYIS("stream")) return K_STREAM;
        if (KEYIS("grid")) return K_GRID;
        if (KEYIS("block")) return K_BLOCK;
        if (KEYIS("shared memory")) return K_SHMEM;
        if (KEYIS("registers per thread")) return K_REGS;
        if (KEYIS("bytes")) return K_BYTES;         /* "Bytes" ([memory]): a delta, unused */
        if (KEYIS("Total Allocated")) return K_TALLOC;
        if (KEYIS("Total Reserved")) return K_TRES;
        if (KEYIS("Device Id")) return K_DEVID;
        if (KEYIS("cuda_sync_kind")) return K_SYNC;
        if (KEYIS("name")) return K_ARGNAME;
        return K_NONE;
    case R_DIST:
        if (KEYIS("rank")) return K_RANK;
        if (KEYIS("world_size")) return K_WORLD;
        return K_NONE;
    case R_DEVPROP:
        if (KEYIS("id")) return K_PROPID;
        if (KEYIS("name")) return K_NAME;
        return K_NONE;
    }
    return K_NONE;
}

/* ---- numbers ---- */

/* A JSON number as a double (yajl has checked its syntax). */
static bool num_double(const char *s, size_t len, double *out)
{
    char buf[IMP_MAX_TOKEN + 1];
    if (len > IMP_MAX_TOKEN)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    *out = strtod(buf, NULL);
    return isfinite(*out);
}

/* Microseconds (Chrome trace "ts"/"dur") to integer ns.  The common form,
 * digits with up to three decimals, exactly; others through a double. */
static bool num_us_to_ns(const char *s, size_t len, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && s[i] == '-') {
        neg = true;
        i++;
    }
    uint64_t v = 0;
    size_t digits = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9' && digits < 15) {
        v = v * 10 + (uint64_t)(s[i++] - '0');
        digits++;
    }
    uint64_t frac = 0;
    unsigned fd = 0;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (fd < 3) {
                frac = frac * 10 + (uint64_t)(s[i] - '0');
                fd++;
            }
            i++;
        }
    }
    if (i == len) {
        while (fd < 3) {
            frac *= 10;
            fd++;
        }
        int64_t ns = (int64_t)(v * 1000 + frac);
        *out = neg ? -ns : ns;
        return true;
    }
    double d;                           /* an exponent, or too many digits */
    if (!num_double(s, len, &d))
        return false;
    d *= 1000.0;
    if (!(d > -9.0e18 && d < 9.0e18))
        return false;
    *out = (int64_t)d;
    return true;
}

/* An unsigned integer field; a negative, fractional or huge one clamps. */
static uint64_t num_u64(imp *m, const char *s, size_t len)
{
    uint64_t v = 0;
    size_t i = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9' && i < 19)
        v = v * 10 + (uint64_t)(s[i++] - '0');
    if (i == len && len)
        return v;
    double d;
    m->s.counters[C_BAD_NUMBERS] += !(len && s[0] != '-' && num_double(s, len, &d));
    if (!num_double(s, len, &d) || !(d > 0))
        return 0;
    return d >= 1.8e19 ? UINT64_MAX : (uint64_t)d;
}

static int64_t num_i64(const char *s, size_t len)
{
    double d;
    if (!num_double(s, len, &d) || !(d > -9.0e18 && d < 9.0e18))
        return 0;
    return (int64_t)d;
}

/* A string pid/tid as a number key that cannot clash with a real one. */
static int64_t str_key(const unsigned char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return (int64_t)(h | (1ull << 62));
}

/* ---- yajl callbacks ---- */

static int cat_of(const unsigned char *s, size_t len);

static bool deeper(imp *m, int role)
{
    if (m->depth + 1 > IMP_MAX_DEPTH)      /* the scanner stops this first */
        return false;
    m->depth++;
    m->role[m->depth] = (uint8_t)role;
    m->key[m->depth] = K_NONE;
    return true;
}

static int child_role(imp *m, bool map)
{
    if (m->depth == 0) {
        m->layout = map ? LAYOUT_KINETO : LAYOUT_LEGACY;
        return map ? R_TOP : R_EVENTS;
    }
    int parent = m->role[m->depth], k = m->key[m->depth];
    switch (parent) {
    case R_TOP:
        if (k == K_TRACEEVENTS && !map) return R_EVENTS;
        if (k == K_DEVPROPS && !map) return R_DEVPROPS;
        if (k == K_DIST && map) return R_DIST;
        return R_IGNORE;
    case R_EVENTS:
        return map ? R_EVENT : R_IGNORE;
    case R_EVENT:
        return k == K_ARGS && map ? R_ARGS : R_IGNORE;
    case R_ARGS:
        if (k == K_GRID && !map) return R_GRID;
        if (k == K_BLOCK && !map) return R_BLOCK;
        return R_IGNORE;
    case R_DEVPROPS:
        return map ? R_DEVPROP : R_IGNORE;
    }
    return R_IGNORE;
}

static int cb_start_map(void *ctx)
{
    imp *m = ctx;
    int role = child_role(m, true);
    if (role == R_EVENT) {
        imp_ev *e = &m->ev;
        e->have = 0;
        e->name_len = e->argname_len = e->sync_len = 0;
        e->ngrid = e->nblock = 0;
        e->cat = 0;
        e->ph = 0;
        e->pidname[0] = '\0';
        e->dur = 0;
        e->dev_id = -1;
    } else if (role == R_DEVPROP) {
        m->dev_idx = -1;
        m->dev_name[0] = '\0';
    }
    return deeper(m, role);
}

static int cb_start_array(void *ctx)
{
    imp *m = ctx;
    int role = child_role(m, false);
    m->saw_events |= role == R_EVENTS;
    return deeper(m, role);
}

static int cb_end(void *ctx)
{
    imp *m = ctx;
    int role = m->role[m->depth];
    if (m->depth)
        m->depth--;
    if (role == R_EVENT) {
        m->s.counters[C_EVENTS]++;
        if (!imp_store_event(m))
            return jfail(m, PRISM_E_NOMEM, m->json_bytes, "out of memory"), 0;
    } else if (role == R_DEVPROP && m->dev_idx >= 0 && m->dev_idx < (int)PRISM_MAX_GPUS) {
        snprintf(m->s.gpu_names[m->dev_idx], sizeof m->s.gpu_names[0], "%s", m->dev_name);
    }
    return 1;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
    imp *m = ctx;
    m->key[m->depth] = (uint8_t)key_of(m->role[m->depth], s, len);
    return 1;
}

static void copy_cut(imp *m, char *dst, size_t cap, size_t *dlen, const unsigned char *s,
                     size_t len)
{
    if (len >= cap) {
        len = cap - 1;
        if (dlen)
            m->s.counters[C_LONG_STRINGS]++;
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
    if (dlen)
        *dlen = len;
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
    imp *m = ctx;
    int role = m->role[m->depth], k = m->key[m->depth];
    imp_ev *e = &m->ev;
    if (role == R_EVENT) {
        switch (k) {
        case K_NAME:
            copy_cut(m, e->name, sizeof e->name, &e->name_len, s, len);
            e->have |= F_NAME;
            break;
        case K_PH:
            e->ph = len ? (char)s[0] : 0;
            e->have |= F_PH;
            break;
        case K_CAT:
            e->cat = cat_of(s, len);
            e->have |= F_CAT;
            break;
        case K_PID:
            e->pid = str_key(s, len);
            e->pid_str = true;
            copy_cut(m, e->pidname, sizeof e->pidname, NULL, s, len);
            e->have |= F_PID;
            break;
        case K_TID:
            e->tid = str_key(s, len);
            e->tid_str = true;
            e->have |= F_TID;
            break;
        case K_TS: case K_DUR:
            m->s.counters[C_BAD_NUMBERS]++;
            if (k == K_TS)
                e->have |= F_BAD_TS;
            break;
        }
    } else if (role == R_ARGS) {
        if (k == K_ARGNAME)
            copy_cut(m, e->argname, sizeof e->argname, &e->argname_len, s, len);
        else if (k == K_SYNC)
            copy_cut(m, e->sync, sizeof e->sync, &e->sync_len, s, len);
    } else if (role == R_DEVPROP && k == K_NAME) {
        copy_cut(m, m->dev_name, sizeof m->dev_name, NULL, s, len);
    } else if (role == R_TOP && k == K_HOST) {
        copy_cut(m, m->s.host, sizeof m->s.host, NULL, s, len);
    } else if (role == R_TOP && k == K_TRACENAME) {
        copy_cut(m, m->trace_name, sizeof m->trace_name, NULL, s, len);
    } else if (role == R_TOP && k == K_TRACEID) {
        copy_cut(m, m->trace_id, sizeof m->trace_id, NULL, s, len);
    }
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
    imp *m = ctx;
    int role = m->role[m->depth], k = m->key[m->depth];
    imp_ev *e = &m->ev;
    if (role == R_EVENT) {
        switch (k) {
        case K_TS:
            if (num_us_to_ns(s, len, &e->ts))
                e->have |= F_TS;
            else {
                m->s.counters[C_BAD_NUMBERS]++;
                e->have |= F_BAD_TS;
            }
            break;
        case K_DUR:
            if (num_us_to_ns(s, len, &e->dur))
                e->have |= F_DUR;
            else
                m->s.counters[C_BAD_NUMBERS]++;
            break;
        case K_PID:
            e->pid = num_i64(s, len);
            e->pid_str = false;
            e->have |= F_PID;
            break;
        case K_TID:
            e->tid = num_i64(s, len);
            e->tid_str = false;
            e->have |= F_TID;
            break;
        case K_ID:
            e->id = num_u64(m, s, len);
            e->have |= F_ID;
            break;
        }
    } else if (role == R_ARGS) {
        switch (k) {
        case K_CORR: e->corr = num_u64(m, s, len); e->have |= F_CORR; break;
        case K_EXTID: e->ext_id = num_u64(m, s, len); e->have |= F_EXTID; break;
        case K_DEVICE: e->device = num_u64(m, s, len); e->have |= F_DEVICE; break;
        case K_STREAM: e->stream = num_u64(m, s, len); e->have |= F_STREAM; break;
        case K_SHMEM: e->shared_mem = num_u64(m, s, len); break;
        case K_REGS: e->registers = num_u64(m, s, len); break;
        case K_BYTES: e->bytes = num_u64(m, s, len); e->have |= F_BYTES; break;
        case K_TALLOC: e->total_alloc = num_u64(m, s, len); e->have |= F_TALLOC; break;
        case K_TRES: e->total_res = num_u64(m, s, len); e->have |= F_TRES; break;
        case K_DEVID: e->dev_id = num_i64(s, len); e->have |= F_DEVID; break;
        }
    } else if (role == R_GRID) {
        if (e->ngrid < 3)
            e->grid[e->ngrid++] = num_u64(m, s, len);
    } else if (role == R_BLOCK) {
        if (e->nblock < 3)
            e->block[e->nblock++] = num_u64(m, s, len);
    } else if (role == R_TOP && k == K_SCHEMA) {
        m->schema = num_i64(s, len);
        m->have_schema = true;
    } else if (role == R_TOP && k == K_BASE) {
        m->s.base_ns = num_u64(m, s, len);
        m->s.have_base = true;
    } else if (role == R_DIST) {
        if (k == K_RANK) {
            m->s.rank = num_i64(s, len);
            m->s.have_rank = true;
        } else if (k == K_WORLD) {
            m->world_size = num_i64(s, len);
            m->have_world = true;
        }
    } else if (role == R_DEVPROP && k == K_PROPID) {
        int64_t id = num_i64(s, len);
        m->dev_idx = id >= 0 && id < (int64_t)PRISM_MAX_GPUS ? (int)id : -1;
    }
    return 1;
}

static int cb_null(void *ctx)
{
    (void)ctx;
    return 1;
}

static int cb_bool(void *ctx, int b)
{
    (void)ctx;
    (void)b;
    return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* Kineto's ActivityType names (libkineto's toString), and the flows. */
static int cat_of(const unsigned char *s, size_t len)
{
    switch (len) {
    case 4:
        if (KEYIS("ac2g")) return CAT_IGNORED;
        break;
    case 5:
        if (KEYIS("Trace")) return CAT_IGNORED;
        break;
    case 6:
        if (KEYIS("cpu_op")) return CAT_CPU_OP;
        if (KEYIS("kernel")) return CAT_KERNEL;
        if (KEYIS("fwdbwd")) return CAT_IGNORED;
        break;
    case 8:
        if (KEYIS("overhead")) return CAT_IGNORED;
        break;
    }
    if (KEYIS("user_annotation")) return CAT_USER_ANNOT;
    if (KEYIS("python_function")) return CAT_PYTHON;
    if (KEYIS("gpu_memcpy")) return CAT_MEMCPY;
    if (KEYIS("gpu_memset")) return CAT_MEMSET;
    if (KEYIS("cuda_runtime")) return CAT_RUNTIME;
    if (KEYIS("cuda_driver")) return CAT_DRIVER;
    if (KEYIS("cuda_sync")) return CAT_SYNC;
    if (KEYIS("gpu_user_annotation")) return CAT_GPU_ANNOT;
    if (KEYIS("cpu_instant_event")) return CAT_INSTANT;
    if (KEYIS("cpu_to_cuda"))
        return CAT_CPU_TO_CUDA;
    if (KEYIS("cuda_profiler_range") || KEYIS("Operator") ||
        KEYIS("external_correlation"))
        return CAT_IGNORED;
    return CAT_UNKNOWN;
}

/* ---- the scanner ---- */

bool imp_json_init(imp *m)
{
    m->y = yajl_alloc(&callbacks, NULL, m);
    if (!m->y)
        return false;
    yajl_config(m->y, yajl_dont_validate_strings, 1);
    return true;
}

void imp_json_free(imp *m)
{
    if (m->y)
        yajl_free(m->y);
    m->y = NULL;
}

/* Feed yajl p[0..n), which starts at JSON offset off. */
static bool to_yajl(imp *m, const uint8_t *p, size_t n, uint64_t off)
{
    if (!n || m->s.e.code)
        return !m->s.e.code;
    yajl_status st = yajl_parse(m->y, p, n);
    if (st == yajl_status_ok)
        return true;
    if (m->s.e.code)                         /* a callback failed */
        return false;
    size_t used = yajl_get_bytes_consumed(m->y);   /* past the byte it stopped at */
    uint64_t at = off + (used ? used - 1 : 0);
    unsigned char *e = yajl_get_error(m->y, 0, p, n);
    char what[160];
    snprintf(what, sizeof what, "%s", e ? (const char *)e : "syntax error");
    if (e)
        yajl_free_error(m->y, e);
    for (char *c = what; *c; c++)
        if (*c == '\n')
            *c = '\0';
    return jfail(m, PRISM_E_NOT_PRISM, at, "not valid JSON (%s)", what);
}

/* Byte classes outside strings: 0 part of a token (number, literal),
 * 1 blank or separator, 2 quote, 3 opener, 4 closer. */
static uint8_t out_cls[256];
/* Inside strings: 1 for the quote and the backslash. */
static uint8_t in_cls[256];

static void classes(void)
{
    if (out_cls['"'])
        return;
    memset(in_cls, 0, sizeof in_cls);
    in_cls['"'] = in_cls['\\'] = 1;
    for (int c = 0; c < 256; c++)
        out_cls[c] = 0;
    out_cls[' '] = out_cls['\t'] = out_cls['\n'] = out_cls['\r'] = 1;
    out_cls[','] = out_cls[':'] = 1;
    out_cls['{'] = out_cls['['] = 3;
    out_cls['}'] = out_cls[']'] = 4;
    __atomic_store_n(&out_cls['"'], 2, __ATOMIC_RELEASE);
}

bool imp_json_feed(imp *m, const uint8_t *p, size_t n)
{
    classes();
    size_t i = 0, piece = 0;
    uint64_t base = m->json_bytes;
    while (i < n) {
        if (m->in_str) {
            if (m->esc) {
                m->esc = m->esc == 5 ? (p[i] == 'u' ? 4 : 0) : (uint8_t)(m->esc - 1);
                i++;
                if (m->cutting)
                    continue;
                if (++m->str_run > IMP_MAX_STRING && !m->esc) {  /* after a whole escape */
                    if (!to_yajl(m, p + piece, i - piece, base + piece))
                        return false;
                    m->cutting = true;
                    m->s.counters[C_LONG_STRINGS]++;
                }
                continue;
            }
            size_t j = i;
            while (j < n && !in_cls[p[j]])
                j++;
            if (!m->cutting && m->str_run + (j - i) > IMP_MAX_STRING) {
                size_t keep = m->str_run < IMP_MAX_STRING ? IMP_MAX_STRING - m->str_run : 0;
                if (!to_yajl(m, p + piece, i + keep - piece, base + piece))
                    return false;
                m->cutting = true;
                m->s.counters[C_LONG_STRINGS]++;
            } else if (!m->cutting) {
                m->str_run += (uint32_t)(j - i);
            }
            i = j;
            if (i == n)
                break;
            if (p[i] == '\\') {
                m->esc = 5;
                if (!m->cutting)
                    m->str_run++;
                i++;
                continue;
            }
            /* the closing quote */
            if (m->cutting) {
                m->cutting = false;
                piece = i;
            }
            m->in_str = false;
            i++;
            continue;
        }
        uint8_t c;
        uint32_t tok = m->tok_run;
        while (i < n && (c = out_cls[p[i]]) < 2) {   /* tokens and blanks */
            if (!c)
                tok++;
            else if (tok > IMP_MAX_TOKEN)
                break;
            else
                tok = 0;
            i++;
        }
        if (tok > IMP_MAX_TOKEN)
            return jfail(m, PRISM_E_LIMIT, base + i,
                            "a number or literal longer than %u bytes", IMP_MAX_TOKEN);
        m->tok_run = tok;
        if (i == n)
            break;
        c = out_cls[p[i]];
        m->tok_run = 0;
        if (c == 2) {
            m->in_str = true;
            m->str_run = 0;
            m->json_started = true;
        } else if (c == 3) {
            if (m->s.complete)
                return jfail(m, PRISM_E_NOT_PRISM, base + i,
                                "more JSON after the end of the trace");
            m->json_started = true;
            if (++m->scan_depth > IMP_MAX_DEPTH)
                return jfail(m, PRISM_E_LIMIT, base + i,
                                "JSON nested deeper than %u levels", IMP_MAX_DEPTH);
        } else if (c == 4) {
            if (m->scan_depth)
                m->scan_depth--;
            if (!m->scan_depth)
                m->s.complete = true;
        }
        i++;
    }
    if (!m->cutting && !to_yajl(m, p + piece, n - piece, base + piece))
        return false;
    m->json_bytes += n;
    return true;
}

bool imp_json_finish(imp *m)
{
    if (m->s.e.code)
        return false;
    if (!m->json_started)
        return jfail(m, PRISM_E_NOT_PRISM, m->json_bytes, "no JSON value in the trace");
    if (!m->saw_events)
        return jfail(m, PRISM_E_NOT_PRISM, 0, m->s.complete
                        ? "JSON, but not a torch.profiler trace (no traceEvents)"
                        : "a trace cut off before its events");
    if (!m->s.complete)                   /* cut off: keep what was read */
        return true;
    if (yajl_complete_parse(m->y) != yajl_status_ok && !m->s.e.code)
        return jfail(m, PRISM_E_NOT_PRISM, m->json_bytes, "not valid JSON at its end");
    return !m->s.e.code;
}

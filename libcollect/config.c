/*
 * config.c - defaults, PRISM_* environment variables, the output path
 * pattern (%p pid, %h host, %r rank, %% percent) and the header's copy of
 * the configuration.  A bad value warns once and keeps the current value.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"

void prism_config_default(prism_config *c)
{
    prism__config_defaults(c);       /* collect.h: shared with PRISM_DISABLE */
}

static void bad(const char *var, const char *val, const char *want)
{
    pc_session_warn("ignoring %s=\"%s\": expected %s", var, val, want);
}

static void env_bool(const char *var, bool *out)
{
    const char *v = getenv(var);
    if (!v)
        return;
    if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
        !strcasecmp(v, "on"))
        *out = true;
    else if (!strcasecmp(v, "0") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
             !strcasecmp(v, "off"))
        *out = false;
    else
        bad(var, v, "1/0, true/false, yes/no or on/off");
}

static void env_u32(const char *var, uint32_t *out, unsigned long lo, unsigned long hi)
{
    const char *v = getenv(var);
    if (!v)
        return;
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    if (errno || !*v || *end || *v == '-' || x < lo || x > hi) {
        char want[96];
        snprintf(want, sizeof want, "an integer from %lu to %lu", lo, hi);
        bad(var, v, want);
        return;
    }
    *out = (uint32_t)x;
}

static void env_double(const char *var, double *out, double lo, double hi, bool lo_open)
{
    const char *v = getenv(var);
    if (!v)
        return;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || !*v || *end || !isfinite(x) || x > hi || x < lo || (lo_open && x == lo)) {
        char want[96];
        snprintf(want, sizeof want, "a number in %s%g, %g]", lo_open ? "(" : "[", lo, hi);
        bad(var, v, want);
        return;
    }
    *out = x;
}

void prism_config_from_env(prism_config *c)
{
    env_bool("PRISM_ENABLED", &c->enabled);
    env_bool("PRISM_COLLECT_TIMING", &c->collect_timing);
    env_bool("PRISM_COLLECT_MEMORY", &c->collect_memory);
    env_bool("PRISM_COLLECT_GPU", &c->collect_gpu_ops);
    env_double("PRISM_SAMPLE_RATE", &c->sample_rate, 0.0, 1.0, true);
    env_bool("PRISM_ADAPTIVE", &c->adaptive_sampling);
    env_u32("PRISM_ADAPTIVE_STEPS", &c->adaptive_steps, 0, 1000000000);
    env_u32("PRISM_WARMUP_STEPS", &c->warmup_steps, 0, 1000000000);
    env_u32("PRISM_ACTIVE_STEPS", &c->active_steps, 0, 1000000000);
    env_u32("PRISM_MEMORY_INTERVAL_MS", &c->memory_interval_ms, 1, 3600000);
    env_u32("PRISM_CPU_INTERVAL_MS", &c->cpu_interval_ms, 0, 3600000);
    env_u32("PRISM_FLUSH_INTERVAL_MS", &c->flush_interval_ms, 1, 60000);
    env_u32("PRISM_BUFFER_EVENTS", &c->buffer_events, 64, 1u << 24);
    env_u32("PRISM_BUFFER_MB", &c->buffer_mb, 1, 65536);
    env_double("PRISM_BOTTLENECK_PCT", &c->bottleneck_threshold_pct, 0.0, 100.0, false);
    env_double("PRISM_LEAK_MB", &c->memory_leak_threshold_mb, 0.0, 1e9, false);
    const char *v = getenv("PRISM_POLICY");
    if (v) {
        if (!strcasecmp(v, "drop"))
            c->policy = PRISM_POLICY_DROP;
        else if (!strcasecmp(v, "wait"))
            c->policy = PRISM_POLICY_WAIT;
        else
            bad("PRISM_POLICY", v, "drop or wait");
    }
    if ((v = getenv("PRISM_OUTPUT")) && *v)
        c->output = v;
    if ((v = getenv("PRISM_OUTPUT_DIR")) && *v)
        c->output_dir = v;
}

uint64_t pc_cfg_grace_ns(void)
{
    uint32_t ms = 2000;
    env_u32("PRISM_SHUTDOWN_TIMEOUT_MS", &ms, 0, 600000);
    return (uint64_t)ms * 1000000u;
}

const char *pc_cfg_policy_name(prism_policy p)
{
    return p == PRISM_POLICY_WAIT ? "wait" : "drop";
}

int64_t pc_cfg_rank(void)
{
    static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID",
                                         "PMI_RANK" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (!v || !*v)
            continue;
        errno = 0;
        long long r = strtoll(v, &end, 10);
        if (!errno && !*end && r >= 0)
            return r;
    }
    return -1;
}

uint64_t pc_cfg_world_size(void)
{
    static const char *const vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS",
                                         "PMI_SIZE" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        if (!v || !*v)
            continue;
        errno = 0;
        unsigned long long w = strtoull(v, &end, 10);
        if (!errno && !*end && w > 0 && v[0] != '-')
            return w;
    }
    return 0;
}

/* Expand the output pattern into out; -1 when it does not fit. */
int pc_cfg_expand_output(const prism_config *c, const char *host, int64_t rank,
                      char *out, size_t n)
{
    size_t o = 0;
    const char *pat = c->output && *c->output ? c->output : "prism-%p.cbor";
    int w;
    if (c->output_dir && *c->output_dir && pat[0] != '/') {
        w = snprintf(out, n, "%s/", c->output_dir);
        if (w < 0 || (size_t)w >= n)
            return -1;
        o = (size_t)w;
    }
    for (const char *p = pat; *p; p++) {
        char tmp[64];
        const char *add = tmp;
        if (p[0] == '%' && p[1]) {
            p++;
            if (*p == 'p')
                snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            else if (*p == 'h')
                add = host;
            else if (*p == 'r')
                snprintf(tmp, sizeof tmp, "%lld", (long long)(rank < 0 ? 0 : rank));
            else if (*p == '%')
                add = "%";
            else {
                tmp[0] = '%';
                tmp[1] = *p;
                tmp[2] = '\0';
            }
        } else {
            tmp[0] = *p;
            tmp[1] = '\0';
        }
        size_t l = strlen(add);
        if (o + l + 1 > n)
            return -1;
        memcpy(out + o, add, l);
        o += l;
    }
    out[o] = '\0';
    return 0;
}

#define KV_B(k, x) (prism_kv){ k, { PRISM_VAL_BOOL, { .b = (x) } } }
#define KV_U(k, x) (prism_kv){ k, { PRISM_VAL_UINT, { .u = (x) } } }
#define KV_F(k, x) (prism_kv){ k, { PRISM_VAL_FLOAT, { .f = (x) } } }
#define KV_S(k, x) (prism_kv){ k, { PRISM_VAL_TEXT, { .s = (x) } } }

size_t pc_cfg_header_kv(const prism_config *c, prism_kv *kv, size_t n)
{
    prism_kv all[] = {
        KV_B("enabled", c->enabled), KV_B("collect_timing", c->collect_timing),
        KV_B("collect_memory", c->collect_memory), KV_B("collect_gpu_ops", c->collect_gpu_ops),
        KV_F("sample_rate", c->sample_rate), KV_B("adaptive_sampling", c->adaptive_sampling),
        KV_U("adaptive_steps", c->adaptive_steps), KV_U("warmup_steps", c->warmup_steps),
        KV_U("active_steps", c->active_steps), KV_U("memory_interval_ms", c->memory_interval_ms),
        KV_U("cpu_interval_ms", c->cpu_interval_ms),
        KV_U("flush_interval_ms", c->flush_interval_ms), KV_U("buffer_events", c->buffer_events),
        KV_U("buffer_mb", c->buffer_mb), KV_S("policy", pc_cfg_policy_name(c->policy)),
        KV_F("bottleneck_threshold_pct", c->bottleneck_threshold_pct),
        KV_F("memory_leak_threshold_mb", c->memory_leak_threshold_mb),
    };
    size_t m = sizeof all / sizeof all[0];
    if (m > n)
        m = n;
    memcpy(kv, all, m * sizeof *kv);
    return m;
}

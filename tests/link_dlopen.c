/*
 * link_dlopen.c - libprism.so opened with dlopen, the way ctypes and other
 * languages reach it: collect.h's inline calls resolve as real symbols
 * (prism_push_id, prism_pop, prism_counter_i, ...) and record.  Linked
 * with no PRISM library; the header gives the types only.
 * Usage: link_dlopen LIBRARY OUTPUT.cbor   (tests/link_test.sh)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <prism/collect.h>

static void *lib;

/* dlsym into a function pointer (memcpy: no object-to-function cast). */
static int sym(void *fnp, size_t size, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "link_dlopen: %s\n", dlerror());
        return -1;
    }
    memcpy(fnp, &p, size);
    return 0;
}
#define SYM(v, name) do { if (sym(&(v), sizeof(v), name)) return 1; } while (0)

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: link_dlopen LIBRARY OUTPUT\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "link_dlopen: %s\n", dlerror());
        return 1;
    }
    void (*config_default)(prism_config *);
    int (*init)(const prism_config *);
    uint32_t (*name)(const char *);
    void (*step_begin)(void), (*step_end)(void), (*shutdown)(void);
    void (*push_id)(uint32_t), (*pop)(void), (*mark_id)(uint32_t);
    void (*counter_i)(uint32_t, int64_t), (*counter_f)(uint32_t, double);
    void (*zone_begin)(prism_site *), (*zone_end)(void);
    SYM(config_default, "prism_config_default");
    SYM(init, "prism_init");
    SYM(name, "prism_name");
    SYM(step_begin, "prism_step_begin");
    SYM(step_end, "prism_step_end");
    SYM(shutdown, "prism_shutdown");
    SYM(push_id, "prism_push_id");
    SYM(pop, "prism_pop");
    SYM(mark_id, "prism_mark_id");
    SYM(counter_i, "prism_counter_i");
    SYM(counter_f, "prism_counter_f");
    SYM(zone_begin, "prism_zone_begin");
    SYM(zone_end, "prism_zone_end");

    prism_config cfg;
    config_default(&cfg);
    cfg.output = argv[2];
    cfg.collect_memory = false;
    cfg.collect_gpu_ops = false;
    cfg.cpu_interval_ms = 0;
    if (init(&cfg) != 0)
        return 1;
    uint32_t region = name("dl_region"), counter = name("dl_counter");
    static prism_site site = { "dl_zone", __FILE__, __LINE__, 0 };
    for (int step = 0; step < 3; step++) {
        step_begin();
        push_id(region);
        counter_i(counter, 40 + step);
        counter_f(counter, 0.5);
        mark_id(region);
        zone_begin(&site);
        zone_end();
        pop();
        step_end();
    }
    shutdown();
    return 0;                       /* the library stays loaded until exit */
}

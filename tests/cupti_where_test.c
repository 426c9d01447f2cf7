/*
 * cupti_where_test.c - the GPU backend's decisions that need no GPU
 * (libcollect/cupti_where.c, libcollect/gpumem.c), issue 27:
 *
 *   - defect 8, where libcupti is: the candidates' order (PRISM_CUPTI_PATH
 *     as a file or a folder, the pip wheels' layouts under site-packages,
 *     the CUDA homes with the versioned sonames); a fake folder tree holding
 *     a small real .so named libcupti.so.13 / .12 is searched on disk, the
 *     first in order found and loadable; the site-packages folder of a
 *     loaded object's path.  Before the fix only <home>/{extras/CUPTI/lib64,
 *     lib64,lib}/libcupti.so was searched: the wheels and the runtime-only
 *     layouts (libcupti.so.13 without the .so link) were never found.
 *   - defect 4, which copy attaches and when: the injected copy hands over
 *     to a copy that records (it used to stand down, leaving the attach to
 *     the other copy's writer, up to a flush later); prism_init attaches at
 *     once when a (fake) libcuda-loaded predicate holds.
 *   - defect 9, NVML's "not available" values are no byte counts (they were
 *     reported as 16 EiB).
 *
 * Ownership: each test's folder tree is made under a mkdtemp folder and
 * removed by the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../libcollect/cupti.h"
#include "collect_util.h"

/* ---- where ------------------------------------------------------------------ */

static size_t list(const cupti_where *w, char (**out)[CUPTI_PATH_MAX])
{
    *out = calloc(CUPTI_MAX_CANDIDATES, sizeof **out);
    assert_non_null(*out);
    return cupti_candidates(w, *out, CUPTI_MAX_CANDIDATES);
}

static size_t index_of(char (*c)[CUPTI_PATH_MAX], size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i], path))
            return i;
    fail_msg("%s is no candidate", path);
    return n;
}

static void test_order(void **state)
{
    (void)state;
    char (*c)[CUPTI_PATH_MAX];
    cupti_where w = { NULL, "/a/site-packages:/b/dist-packages", { "/opt/cuda", NULL, "/usr/local/cuda" } };
    size_t n = list(&w, &c);
    assert_string_equal(c[0], "/a/site-packages/nvidia/cu13/lib/libcupti.so.13");
    size_t a12 = index_of(c, n, "/a/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12");
    size_t b13 = index_of(c, n, "/b/dist-packages/nvidia/cu13/lib/libcupti.so.13");
    size_t h13 = index_of(c, n, "/opt/cuda/extras/CUPTI/lib64/libcupti.so.13");
    size_t h12 = index_of(c, n, "/opt/cuda/lib64/libcupti.so.12");
    size_t hso = index_of(c, n, "/opt/cuda/lib64/libcupti.so");
    size_t tgt = index_of(c, n, "/opt/cuda/targets/x86_64-linux/lib/libcupti.so.13");
    size_t usr = index_of(c, n, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
    assert_true(a12 < b13 && b13 < h13 && h13 < h12 && h12 < hso && hso < tgt && tgt < usr);
    free(c);
    /* explicit: that file alone */
    w.explicit_path = "/x/libcupti.so.13.0.1";
    n = list(&w, &c);
    assert_int_equal(n, 1);
    assert_string_equal(c[0], "/x/libcupti.so.13.0.1");
    free(c);
    /* nothing at all: no candidate, no crash */
    cupti_where none = { NULL, NULL, { NULL, "", NULL } };
    assert_int_equal(list(&none, &c), 0);
    free(c);
}

static void test_site_of(void **state)
{
    (void)state;
    char s[CUPTI_PATH_MAX];
    assert_true(cupti_site_of("/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", s,
                              sizeof s));
    assert_string_equal(s, "/v/lib/python3.12/site-packages");
    assert_true(cupti_site_of("/usr/lib/python3/dist-packages/torch/lib/x.so", s, sizeof s));
    assert_string_equal(s, "/usr/lib/python3/dist-packages");
    assert_false(cupti_site_of("/usr/lib/x86_64-linux-gnu/libc.so.6", s, sizeof s));
    assert_false(cupti_site_of("/v/site-packages/x.so", s, 4));        /* too long: none */
    assert_false(cupti_site_of(NULL, s, sizeof s));
}

/* A small real shared object loaded in this process (cmocka's). */
static int find_so(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libcmocka.so"))
        return 0;
    snprintf(arg, CUPTI_PATH_MAX, "%s", info->dlpi_name);
    return 1;
}

static void put(const char *root, const char *rel, const char *from)
{
    char path[CUPTI_PATH_MAX], cmd[3 * CUPTI_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", path, from, path);
    assert_int_equal(system(cmd), 0);
}

static void test_tree(void **state)
{
    (void)state;
    char so[CUPTI_PATH_MAX] = "", root[] = "/tmp/prism-cupti-where-XXXXXX";
    assert_true(dl_iterate_phdr(find_so, so) != 0);
    assert_non_null(mkdtemp(root));
    put(root, "home/extras/CUPTI/lib64/libcupti.so.13", so);
    put(root, "home2/lib64/libcupti.so.12", so);
    char sites[2 * CUPTI_PATH_MAX], home[CUPTI_PATH_MAX], home2[CUPTI_PATH_MAX], got[CUPTI_PATH_MAX];
    snprintf(sites, sizeof sites, "%s/v1/site-packages:%s/v2/site-packages", root, root);
    snprintf(home, sizeof home, "%s/home", root);
    snprintf(home2, sizeof home2, "%s/home2", root);
    cupti_where w = { NULL, sites, { home2, home, NULL } };
    /* only the CUDA homes: the first home in order, though it has .12 only */
    assert_true(cupti_find_file(&w, cupti_readable, got, sizeof got));
    assert_non_null(strstr(got, "/home2/lib64/libcupti.so.12"));
    /* a cu12 wheel in the second site folder comes before the homes */
    put(root, "v2/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12", so);
    assert_true(cupti_find_file(&w, cupti_readable, got, sizeof got));
    assert_non_null(strstr(got, "/v2/site-packages/nvidia/cuda_cupti/lib/libcupti.so.12"));
    /* a CUDA 13 wheel in the first: first */
    put(root, "v1/site-packages/nvidia/cu13/lib/libcupti.so.13", so);
    assert_true(cupti_find_file(&w, cupti_readable, got, sizeof got));
    assert_non_null(strstr(got, "/v1/site-packages/nvidia/cu13/lib/libcupti.so.13"));
    void *h = dlopen(got, RTLD_NOW | RTLD_LOCAL);                 /* a loadable file */
    assert_non_null(h);
    dlclose(h);
    /* PRISM_CUPTI_PATH as a folder: its own sonames, nothing else */
    char dir[CUPTI_PATH_MAX];
    snprintf(dir, sizeof dir, "%s/home2/lib64", root);
    w.explicit_path = dir;
    assert_true(cupti_find_file(&w, cupti_readable, got, sizeof got));
    assert_non_null(strstr(got, "/home2/lib64/libcupti.so.12"));
    /* an explicit folder without libcupti: not found (no fallback) */
    snprintf(dir, sizeof dir, "%s/v1", root);
    assert_false(cupti_find_file(&w, cupti_readable, got, sizeof got));
    /* an explicit folder is never readable as a file */
    assert_false(cupti_readable(dir));
    char cmd[CUPTI_PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The Python module's folders reach the search; the loaded objects' site
 * folders are added (none here: this test is no Python process). */
static void test_where_now(void **state)
{
    (void)state;
    prism__cupti_search_dirs("/p/site-packages:/q");
    char *sites = malloc(CUPTI_SITES_MAX);
    assert_non_null(sites);
    cupti_where w;
    cupti_where_now(&w, sites, CUPTI_SITES_MAX);
    assert_string_equal(w.sites, "/p/site-packages:/q");
    assert_string_equal(w.homes[2], "/usr/local/cuda");
    prism__cupti_search_dirs(NULL);
    cupti_where_now(&w, sites, CUPTI_SITES_MAX);
    assert_string_equal(w.sites, "");
    free(sites);
}

/* ---- when -------------------------------------------------------------------- */

static bool fake_loaded;
static bool fake_libcuda(void)
{
    return fake_loaded;
}

static void test_plans(void **state)
{
    (void)state;
    /* InitializeInjection: this copy records, or nobody else does: here */
    assert_int_equal(cupti_inject_plan(true, false), CUPTI_ATTACH_HERE);
    assert_int_equal(cupti_inject_plan(true, true), CUPTI_ATTACH_HERE);
    assert_int_equal(cupti_inject_plan(false, false), CUPTI_ATTACH_HERE);
    /* another copy's writer runs (python -m prism under prism-run): hand over */
    assert_int_equal(cupti_inject_plan(false, true), CUPTI_HAND_OVER);
    /* prism_init / import prism: the driver already loaded -> now */
    for (int st = 0; st < 2; st++) {
        fake_loaded = st;
        assert_int_equal(cupti_start_plan(true, true, fake_libcuda(), false),
                         fake_loaded ? CUPTI_ATTACH_HERE : CUPTI_WAIT);
        assert_int_equal(cupti_start_plan(true, true, fake_libcuda(), true), CUPTI_ATTACH_HERE);
        assert_int_equal(cupti_start_plan(true, false, fake_libcuda(), true), CUPTI_KEEP);
        assert_int_equal(cupti_start_plan(false, true, fake_libcuda(), true), CUPTI_OFF);
    }
    /* no session in this process: nothing to attach, says so */
    assert_int_equal(prism__cupti_attach_now(), 0);
}

/* The hand-over itself: this test program (it exports
 * prism__cupti_attach_now alone, like the Python module) records; the injection
 * library, loaded as the driver would in cuInit, must make this copy attach
 * at once.  Without a GPU attaching fails, which the status says ("cannot
 * load libcupti", or cuptiSubscribe's error); before the fix the copy went
 * on waiting for the driver and the file said "never loaded the CUDA
 * driver" (this test failed then). */
static int handover_child(void *arg)
{
    const char *const *a = arg;
    prism_config c;
    prism_config_default(&c);
    c.output = a[0];
    c.collect_memory = false;
    c.flush_interval_ms = 60000;
    CHILD_CHECK(prism_init(&c) == 0 && prism_recording());
    void *h = dlopen(a[1], RTLD_NOW | RTLD_LOCAL);
    CHILD_CHECK(h != NULL);
    int (*init)(void);
    *(void **)&init = dlsym(h, "InitializeInjection");
    CHILD_CHECK(init && init() == 1);
    prism_shutdown();
    return 0;
}

static void info_status(void *ctx, const char *key, const prism_value *v)
{
    if (!strcmp(key, "gpu.status") && v->type == PRISM_VAL_TEXT)
        snprintf(ctx, 512, "%s", v->v.s);
}

static void test_hand_over(void **state)
{
    (void)state;
#ifndef PRISM_HAVE_CUPTI_HEADERS
    skip();
#endif
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    const char *b = getenv("B");
    char lib[512];
    snprintf(lib, sizeof lib, "%s/lib/libprism-inject.so", b && *b ? b : "build");
    if (cuda || access(lib, R_OK) != 0 || !dlsym(dlopen(NULL, RTLD_LAZY), "prism__cupti_attach_now"))
        skip();                                 /* a driver here, or no injection library */
    tdir d;
    tdir_make(&d);
    char path[512], status[512] = "";
    tdir_file(&d, "handover.cbor", path, sizeof path);
    unsetenv("PRISM_CUPTI_PATH");
    setenv("CUDA_HOME", d.path, 1);             /* no libcupti under it */
    const char *args[2] = { path, lib };
    child_run_ok(handover_child, args);
    prism_reader *r = NULL;
    prism_reader_callbacks cb = { .info = info_status };
    assert_int_equal(prism_read_file(path, &cb, status, &r), PRISM_OK);
    prism_reader_free(r);
    print_message("gpu.status: %s\n", status);
    assert_null(strstr(status, "never loaded the CUDA driver"));
    /* attached, or attach said why not: libcupti missing, no driver to subscribe to */
    assert_true(!strncmp(status, "ok:", 3) || strstr(status, "libcupti") ||
                strstr(status, "cuptiSubscribe"));
    tdir_remove(&d);
}

/* ---- NVML values ---------------------------------------------------------- */

static void test_nvml_values(void **state)
{
    (void)state;
    const unsigned long long total = 80ull << 30;
    assert_true(pc_gpumem_plausible(0, total));
    assert_true(pc_gpumem_plausible(1ull << 30, total));
    assert_true(pc_gpumem_plausible(total, total));
    assert_true(pc_gpumem_plausible(5ull << 30, 0));                  /* total unknown */
    assert_false(pc_gpumem_plausible(~0ULL, total));                  /* NOT_AVAILABLE */
    assert_false(pc_gpumem_plausible(~0ULL, 0));
    assert_false(pc_gpumem_plausible(0xFFFFFFFFull, total));         /* 32-bit -1 widened */
    assert_false(pc_gpumem_plausible(total + 1, total));              /* past the device */
    assert_true(pc_gpumem_plausible(5ull << 30, ~0ULL));              /* total N/A: unknown */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_site_of),
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_where_now),
        cmocka_unit_test(test_plans),
        cmocka_unit_test(test_hand_over),
        cmocka_unit_test(test_nvml_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

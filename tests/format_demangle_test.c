/*
 * format_demangle_test.c - C++ names demangled at read time
 * (format/demangle.c, format/demangle_bound.c, the reader's strings).
 *
 * A profile written with mangled kernel names, as CUPTI reports them, reads
 * back demangled everywhere a name is served (prism_reader_string, the
 * string callback, the analysis' kernel table) with the file's text kept
 * (prism_reader_string_raw); names that are no valid mangling, hold a NUL,
 * are too long, or could demangle to too much (substitutions that double
 * the output at every level) stay as they are.  The bound holds on real
 * kernel names (it is at least what the runtime prints) and refuses the
 * exponential ones.  Skipped parts without a C++ runtime (libstdc++.so.6).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prism/analysis.h"
#include "format_internal.h"
#include "pbuild.h"

#define CUDNN_MANGLED "_ZN5cudnn19engines_precompiled16nchwToNhwcKernelIfffLb0ELb1E" \
                      "L21cudnnKernelDataType_t0EEEvNS0_18nchw2nhwc_params_tIT1_EEPKT_PT0_"
#define CUDNN_PLAIN   "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, " \
                      "false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::" \
                      "nchw2nhwc_params_t<float>, float const*, float*)"
#define SGD_MANGLED   "_Z3sgdPfPKffi"
#define SGD_PLAIN     "sgd(float*, float const*, float, int)"
/* "_Z" but no valid mangling */
#define BROKEN        "_ZN5cudnn19engines_precompiled"
/* A<B,B> nested 25 deep: the runtime would print 436 MB */
#define DOUBLING      "_Z1f1AI1BS0_ES_IS1_S1_ES_IS2_S2_ES_IS3_S3_ES_IS4_S4_ES_IS5_S5_E" \
                      "S_IS6_S6_ES_IS7_S7_ES_IS8_S8_ES_IS9_S9_ES_ISA_SA_ES_ISB_SB_ES_ISC_SC_E" \
                      "S_ISD_SD_ES_ISE_SE_ES_ISF_SF_ES_ISG_SG_ES_ISH_SH_ES_ISI_SI_ES_ISJ_SJ_E" \
                      "S_ISK_SK_ES_ISL_SL_ES_ISM_SM_ES_ISN_SN_E"

enum { ID_CUDNN = 1, ID_SGD, ID_BROKEN, ID_DOUBLING, ID_PLAIN, ID_NUL };

static const char *const names[] = { CUDNN_MANGLED, SGD_MANGLED, BROKEN, DOUBLING,
                                     "cudaLaunchKernel" };

typedef char *(*cxa_fn)(const char *, char *, size_t *, int *);

static cxa_fn runtime(void)
{
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    return h ? (cxa_fn)(uintptr_t)dlsym(h, "__cxa_demangle") : NULL;
}

static bool have_runtime(void)
{
    return pf_demangle_available();
}

/* Strings as the callback delivered them. */
static const char *seen[16];

static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    (void)ctx;
    if (id < 16) {
        free((void *)seen[id]);
        seen[id] = strndup(s, len);
    }
}

/* Kernels named by ids 1..4 (the rest are strings only), and one string
 * with a NUL inside. */
static void build(pbuild *b)
{
    pb_init(b, names, sizeof names / sizeof names[0], 1);
    pb_begin(b, PRISM_CHUNK_STRINGS, 0, ID_NUL);
    assert_int_equal(prism_enc_string(&b->e, "_Z3sgd\0PKffi", 12), PRISM_OK);
    pb_flush(b);
    uint64_t now = 1000;
    for (uint32_t id = ID_CUDNN; id <= ID_DOUBLING; id++) {
        prism_gpu_record g = { .type = PRISM_GPU_KERNEL, .start = now, .end = now + 500,
                               .stream = 7, .correlation = id, .name = id,
                               .grid = { 1, 1, 1 }, .block = { 32, 1, 1 } };
        PB_PUT(b, PRISM_CHUNK_GPU, 0, now, prism_enc_gpu(&b->e, &g));
        now += 1000;
    }
}

static void test_reader_serves_demangled(void **state)
{
    (void)state;
    if (!have_runtime())
        skip();
    pbuild b;
    build(&b);
    prism_reader_callbacks cb = { .string = on_string };
    prism_reader *r = prism_reader_new(&cb, NULL);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, b.data, b.len), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    size_t len = 0;
    assert_string_equal(prism_reader_string(r, ID_CUDNN, &len), CUDNN_PLAIN);
    assert_int_equal(len, strlen(CUDNN_PLAIN));
    assert_string_equal(prism_reader_string(r, ID_SGD, NULL), SGD_PLAIN);
    assert_string_equal(seen[ID_CUDNN], CUDNN_PLAIN);       /* the callback too */
    assert_string_equal(seen[ID_SGD], SGD_PLAIN);
    /* the file's text stays reachable */
    assert_string_equal(prism_reader_string_raw(r, ID_CUDNN, &len), CUDNN_MANGLED);
    assert_int_equal(len, strlen(CUDNN_MANGLED));
    assert_string_equal(prism_reader_string_raw(r, ID_PLAIN, NULL), "cudaLaunchKernel");
    assert_string_equal(prism_reader_string(r, ID_PLAIN, NULL), "cudaLaunchKernel");
    assert_null(prism_reader_string_raw(r, 99, NULL));
    prism_reader_free(r);
    free(b.data);
    for (int i = 0; i < 16; i++) {
        free((void *)seen[i]);
        seen[i] = NULL;
    }
}

static void test_bad_names_stay_raw(void **state)
{
    (void)state;
    pbuild b;
    build(&b);
    prism_reader *r = prism_reader_new(NULL, NULL);
    assert_non_null(r);
    assert_int_equal(prism_reader_feed(r, b.data, b.len), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    size_t len = 0;
    assert_string_equal(prism_reader_string(r, ID_BROKEN, NULL), BROKEN);
    assert_string_equal(prism_reader_string(r, ID_DOUBLING, NULL), DOUBLING);
    assert_string_equal(prism_reader_string_raw(r, ID_DOUBLING, NULL), DOUBLING);
    const char *nul = prism_reader_string(r, ID_NUL, &len);
    assert_int_equal(len, 12);
    assert_memory_equal(nul, "_Z3sgd\0PKffi", 12);
    prism_reader_free(r);
    free(b.data);
}

/* The analysis (and every report, pane and export reading it) names the
 * kernels demangled. */
static void test_analysis_kernels(void **state)
{
    (void)state;
    if (!have_runtime())
        skip();
    pbuild b;
    build(&b);
    loaded l = pb_load(&b);
    const prism_gpu_stats *g = prism_analysis_gpu(l.a);
    assert_int_equal(g->nkernels, 4);
    int found = 0;
    for (size_t i = 0; i < g->nkernels; i++) {
        const char *n = g->kernels[i].name;
        found += !strcmp(n, CUDNN_PLAIN) * 1 + !strcmp(n, SGD_PLAIN) * 2 +
                 !strcmp(n, BROKEN) * 4 + !strcmp(n, DOUBLING) * 8;
        assert_null(strstr(n, "_ZN5cudnn19engines_precompiled16"));
    }
    assert_int_equal(found, 15);
    unload(&l);
}

static void test_offered(void **state)
{
    (void)state;
    assert_true(pf_demangle_wanted("_Z1fv", 5));
    assert_false(pf_demangle_wanted("_Z", 2));
    assert_false(pf_demangle_wanted("Z1fv", 4));
    assert_false(pf_demangle_wanted("_R1fv", 5));            /* Rust v0: not ours */
    assert_false(pf_demangle_wanted("_Z1f\0v", 6));
    char *big = malloc(PF_DEMANGLE_MAX_IN + 2);
    assert_non_null(big);
    memset(big, 'i', PF_DEMANGLE_MAX_IN + 1);
    memcpy(big, "_Z1f", 4);
    assert_true(pf_demangle_wanted(big, PF_DEMANGLE_MAX_IN));
    assert_false(pf_demangle_wanted(big, PF_DEMANGLE_MAX_IN + 1));
    size_t len = 7;
    assert_null(pf_demangle(big, PF_DEMANGLE_MAX_IN + 1, &len));
    assert_int_equal(len, 7);
    free(big);
}

/* What the runtime prints never exceeds the bound; blow-ups are refused. */
static void test_bound(void **state)
{
    (void)state;
    static const char *const real[] = {
        CUDNN_MANGLED, SGD_MANGLED,
        "_ZN5cudnn21bn_bw_1C11_kernel_newIff6float2Li128ELb1ELi1EEEvT0_S2_S2_S2_"
        "17cudnnTensorStructPKT_S1_PS2_PKS2_S7_PS5_S9_S9_S2_S2_",
        "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_"
        "13BUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBase"
        "ERKT_EUliE_EEviT1_",
        "_ZN2at6native50_GLOBAL__N__b6ca21f8_17_ForeachUnaryOp_cu_77fe623d25multi_tensor_"
        "apply_kernelINS1_18TensorListMetadataILi2EEENS1_14UnaryOpFunctorIfLi2ELi1ELi1EEEJNS0_"
        "4SqrtIfEEEEEvT_T0_DpT1_",
        "_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_nt_align1EEvNT_6ParamsE",
        "_ZZ4mainENKUlvE_clEv", "_ZNSt6vectorIiSaIiEE9push_backERKi", "_ZNSsC1Ev",
        "_Z1fPFviEM1AFviEA10_iDv4_f", "_Z3foov.cold.1", "_Z1f1AI1BS0_ES_IS1_S1_ES_IS2_S2_E",
    };
    cxa_fn fn = runtime();
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        uint64_t bound = pf_demangle_bound(real[i], strlen(real[i]));
        assert_true(bound > 0);
        assert_true(bound <= 64 * strlen(real[i]));
        if (!fn)
            continue;
        int st = -1;
        char *out = fn(real[i], NULL, NULL, &st);
        assert_int_equal(st, 0);
        assert_true(strlen(out) <= bound);
        free(out);
    }
    /* exponential: bounded above what the reader offers, so never run */
    uint64_t dbl = pf_demangle_bound(DOUBLING, strlen(DOUBLING));
    assert_true(dbl == 0 || dbl > PF_DEMANGLE_MAX_OUT);
    /* template parameters that name each other, a conversion operator
     * (prints its template's arguments again), expressions: refused */
    assert_int_equal(pf_demangle_bound("_Z1fI1AIT0_T0_E1BIT_T_EEvT_", 27), 0);
    assert_int_equal(pf_demangle_bound("_ZN1AcvT_IiEEv", 14), 0);
    assert_int_equal(pf_demangle_bound("_Z1fIXadL_Z1gvEEEvv", 19), 0);
    assert_int_equal(pf_demangle_bound("_ZTV1A", 6), 0);
    assert_int_equal(pf_demangle_bound("_Z1fv junk", 10), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_serves_demangled),
        cmocka_unit_test(test_bad_names_stay_raw),
        cmocka_unit_test(test_analysis_kernels),
        cmocka_unit_test(test_offered),
        cmocka_unit_test(test_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

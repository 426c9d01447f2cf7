/*
 * format_encoder_test.c - the header round trip (every field, every value
 * type, extremes) and the header encoder's errors; STRINGS read back by id;
 * string interning (prism_strtab).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

static void assert_value_equal(const prism_value *got, const prism_value *want)
{
    if (want->type == PRISM_VAL_INT && want->v.i >= 0) {
        /* CBOR has one encoding for a non-negative integer: it reads as UINT */
        assert_int_equal(got->type, PRISM_VAL_UINT);
        assert_int_equal(got->v.u, (uint64_t)want->v.i);
        return;
    }
    assert_int_equal(got->type, want->type);
    switch (want->type) {
    case PRISM_VAL_INT: assert_int_equal(got->v.i, want->v.i); break;
    case PRISM_VAL_UINT: assert_int_equal(got->v.u, want->v.u); break;
    case PRISM_VAL_FLOAT:
        if (isnan(want->v.f))
            assert_true(isnan(got->v.f));
        else
            assert_memory_equal(&got->v.f, &want->v.f, sizeof(double));
        break;
    case PRISM_VAL_BOOL: assert_int_equal(got->v.b, want->v.b); break;
    case PRISM_VAL_TEXT: assert_string_equal(got->v.s, want->v.s ? want->v.s : ""); break;
    default: break;
    }
}

static int header_calls;
static void count_header(void *ctx, const prism_header *h)
{
    *(const prism_header **)ctx = h;
    header_calls++;
}

/* Encode h, read it back (the header alone is a valid profile). */
static prism_reader *header_roundtrip(const prism_header *h, uint8_t *buf, size_t cap)
{
    size_t len = 0;
    assert_int_equal(prism_header_encode(h, buf, cap, &len), PRISM_OK);
    assert_true(len > 0 && len <= cap);
    const prism_header *seen = NULL;
    prism_reader_callbacks cb = { .header = count_header };
    prism_reader *r = prism_reader_new(&cb, &seen);
    assert_non_null(r);
    header_calls = 0;
    assert_int_equal(prism_reader_feed(r, buf, len), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_int_equal(header_calls, 1);
    assert_ptr_equal(seen, prism_reader_header(r));
    assert_int_equal(prism_reader_good_offset(r), len);
    return r;
}

static void test_header_roundtrip(void **state)
{
    (void)state;
    static uint8_t buf[PRISM_MAX_HEADER_BYTES];
    char *t4096 = filled(4096, 't');
    const char *argv[PRISM_MAX_ARGV];
    char args[PRISM_MAX_ARGV][8];
    for (int i = 0; i < (int)PRISM_MAX_ARGV; i++) {
        snprintf(args[i], sizeof args[i], "a%d", i);
        argv[i] = args[i];
    }
    argv[1] = "";
    argv[2] = t4096;
    const prism_kv cfg[] = {
        { "int_min", { PRISM_VAL_INT, { .i = INT64_MIN } } },
        { "int_neg", { PRISM_VAL_INT, { .i = -1 } } },
        { "int_pos", { PRISM_VAL_INT, { .i = 5 } } },
        { "uint_max", { PRISM_VAL_UINT, { .u = UINT64_MAX } } },
        { "uint_0", { PRISM_VAL_UINT, { .u = 0 } } },
        { "neg_zero", { PRISM_VAL_FLOAT, { .f = -0.0 } } },
        { "big", { PRISM_VAL_FLOAT, { .f = 1e308 } } },
        { "denormal", { PRISM_VAL_FLOAT, { .f = 5e-324 } } },
        { "inf", { PRISM_VAL_FLOAT, { .f = -INFINITY } } },
        { "nan", { PRISM_VAL_FLOAT, { .f = NAN } } },
        { "yes", { PRISM_VAL_BOOL, { .b = true } } },
        { "no", { PRISM_VAL_BOOL, { .b = false } } },
        { "empty", { PRISM_VAL_TEXT, { .s = "" } } },
        { "long", { PRISM_VAL_TEXT, { .s = t4096 } } },
        { "none", { PRISM_VAL_NULL, { .i = 0 } } },
        { "", { PRISM_VAL_TEXT, { .s = "empty key" } } },
    };
    const size_t ncfg = sizeof cfg / sizeof cfg[0];
    prism_header h = { .producer = "", .host = t4096, .pid = UINT64_MAX, .rank = INT64_MIN,
                       .argv = argv, .argc = PRISM_MAX_ARGV, .clock = "tsc",
                       .start_unix_ns = UINT64_MAX, .start_mono_ns = 0,
                       .config = cfg, .nconfig = ncfg, .version_major = 99,
                       .version_minor = PRISM_FORMAT_MINOR };
    prism_reader *r = header_roundtrip(&h, buf, sizeof buf);
    const prism_header *g = prism_reader_header(r);
    assert_non_null(g);
    assert_int_equal(g->version_major, PRISM_FORMAT_MAJOR);
    assert_int_equal(g->version_minor, PRISM_FORMAT_MINOR);
    assert_string_equal(g->producer, "");
    assert_string_equal(g->host, t4096);
    assert_int_equal(g->pid, UINT64_MAX);
    assert_int_equal(g->rank, INT64_MIN);
    assert_string_equal(g->clock, "tsc");
    assert_int_equal(g->start_unix_ns, UINT64_MAX);
    assert_int_equal(g->start_mono_ns, 0);
    assert_int_equal(g->argc, PRISM_MAX_ARGV);
    for (size_t i = 0; i < PRISM_MAX_ARGV; i++)
        assert_string_equal(g->argv[i], argv[i]);
    assert_int_equal(g->nconfig, ncfg);
    for (size_t i = 0; i < ncfg; i++) {
        assert_string_equal(g->config[i].key, cfg[i].key);
        assert_value_equal(&g->config[i].value, &cfg[i].value);
    }
    assert_true(signbit(g->config[5].value.v.f));
    prism_reader_free(r);

    /* Nothing set: NULL texts are written empty; rank -1 and 0 survive. */
    for (int64_t rank = -1; rank <= 0; rank++) {
        prism_header z = { .rank = rank };
        r = header_roundtrip(&z, buf, sizeof buf);
        g = prism_reader_header(r);
        assert_string_equal(g->producer, "");
        assert_string_equal(g->host, "");
        assert_string_equal(g->clock, "");
        assert_int_equal(g->rank, rank);
        assert_int_equal(g->version_major, PRISM_FORMAT_MAJOR);
        assert_int_equal(g->version_minor, 0);      /* 1.0 features only */
        assert_int_equal(g->argc, 0);
        assert_int_equal(g->nconfig, 0);
        prism_reader_free(r);
    }
    free(t4096);
}

static void test_header_encode_errors(void **state)
{
    (void)state;
    static uint8_t buf[PRISM_MAX_HEADER_BYTES + 64];
    size_t len = 0, full;
    const char *argv[PRISM_MAX_ARGV + 1] = { 0 };
    prism_kv cfg[PRISM_MAX_CONFIG + 1];
    for (size_t i = 0; i <= PRISM_MAX_CONFIG; i++)
        cfg[i] = (prism_kv){ "k", { PRISM_VAL_NULL, { .i = 0 } } };
    prism_header h = { .producer = "p", .argv = argv, .config = cfg };

    assert_int_equal(prism_header_encode(NULL, buf, sizeof buf, &len), PRISM_E_ARG);
    assert_int_equal(prism_header_encode(&h, NULL, sizeof buf, &len), PRISM_E_ARG);
    h.version_minor = PRISM_FORMAT_MINOR + 1;       /* features it does not have */
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_E_ARG);
    h.version_minor = 0;
    h.argc = PRISM_MAX_ARGV + 1;
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_E_LIMIT);
    h.argc = 0;
    h.nconfig = PRISM_MAX_CONFIG + 1;
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_E_LIMIT);
    h.nconfig = 1;
    char *x4097 = filled(4097, 'x');
    cfg[0].value = (prism_value){ PRISM_VAL_TEXT, { .s = x4097 } };
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_E_ARG);
    cfg[0].value = (prism_value){ (prism_value_type)42, { .i = 0 } };
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &len), PRISM_E_ARG);
    cfg[0].value = (prism_value){ PRISM_VAL_UINT, { .u = 3 } };

    /* Every buffer too small: NOSPACE, and nothing written past the cap. */
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &full), PRISM_OK);
    for (size_t cap = 0; cap < full; cap++) {
        memset(buf, 0xee, full + 16);
        assert_int_equal(prism_header_encode(&h, buf, cap, &len), PRISM_E_NOSPACE);
        for (size_t i = cap; i < full + 16; i++)
            assert_int_equal(buf[i], 0xee);
    }
    assert_int_equal(prism_header_encode(&h, buf, full, &len), PRISM_OK);
    assert_int_equal(len, full);

    /* Texts longer than the string limit are cut to it (a reader would
     * reject them); a header beyond 64 KiB is LIMIT however large the buffer. */
    char *big = filled(40000, 'b');
    h.producer = big;
    h.host = "";
    static uint8_t huge[4 * PRISM_MAX_HEADER_BYTES];
    prism_reader *r = header_roundtrip(&h, huge, sizeof huge);
    assert_int_equal(strlen(prism_reader_header(r)->producer), PRISM_MAX_STRING_BYTES);
    assert_memory_equal(prism_reader_header(r)->producer, big, PRISM_MAX_STRING_BYTES);
    prism_reader_free(r);
    for (size_t i = 0; i < PRISM_MAX_ARGV; i++)
        argv[i] = big;
    h.argc = PRISM_MAX_ARGV;
    assert_int_equal(prism_header_encode(&h, huge, sizeof huge, &len), PRISM_E_LIMIT);
    free(big);
    free(x4097);
}

/* ---- STRINGS and the reader's lookup by id ---- */

typedef struct strs {
    uint32_t id[8];
    size_t len[8];
    size_t n;
} strs;

static void on_string(void *ctx, uint32_t id, const char *s, size_t len)
{
    strs *c = ctx;
    (void)s;
    assert_true(c->n < 8);
    c->id[c->n] = id;
    c->len[c->n++] = len;
}

static void test_strings_by_id(void **state)
{
    (void)state;
    static uint8_t buf[32768];
    size_t n, len;
    prism_header h = { .producer = "t" };
    assert_int_equal(prism_header_encode(&h, buf, sizeof buf, &n), PRISM_OK);
    char *b4096 = filled(4096, 'b'), *c5000 = filled(5000, 'c');
    prism_enc e;
    assert_int_equal(prism_enc_begin(&e, buf + n, sizeof buf - n, PRISM_CHUNK_STRINGS, 0, 0,
                                     1, 0), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, "", 0), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, "a", 1), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, b4096, 4096), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, c5000, 5000), PRISM_OK);     /* truncated */
    assert_int_equal(prism_enc_string(&e, "x\0y", 3), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, NULL, 0), PRISM_OK);
    assert_int_equal(prism_enc_string(&e, NULL, 3), PRISM_E_ARG);
    assert_int_equal(prism_enc_records(&e), 6);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;
    assert_int_equal(prism_enc_begin(&e, buf + n, sizeof buf - n, PRISM_CHUNK_STRINGS, 0, 1,
                                     PRISM_MAX_STRINGS - 1, 0), PRISM_OK);     /* last id */
    assert_int_equal(prism_enc_string(&e, "last", 4), PRISM_OK);
    assert_int_equal(prism_enc_finish(&e, &len), PRISM_OK);
    n += len;

    strs c = { .n = 0 };
    prism_reader_callbacks cb = { .string = on_string };
    prism_reader *r = prism_reader_new(&cb, &c);
    assert_non_null(r);
    assert_null(prism_reader_string(r, 1, NULL));           /* nothing read yet */
    assert_int_equal(prism_reader_feed(r, buf, n), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_int_equal(prism_reader_stats_get(r)->malformed, 0);
    const size_t lens[] = { 0, 1, 4096, 4096, 3, 0, 4 };
    const char *want[] = { "", "a", b4096, c5000, "x\0y", "", "last" };
    assert_int_equal(c.n, 7);
    for (uint32_t i = 0; i < 7; i++) {
        uint32_t id = i < 6 ? i + 1 : PRISM_MAX_STRINGS - 1;
        assert_int_equal(c.id[i], id);
        assert_int_equal(c.len[i], lens[i]);
        size_t l = 99;
        const char *s = prism_reader_string(r, id, &l);
        assert_non_null(s);
        assert_int_equal(l, lens[i]);
        assert_memory_equal(s, want[i], l);
        assert_int_equal(s[l], '\0');
    }
    assert_string_equal(prism_reader_string(r, 2, NULL), "a");
    assert_null(prism_reader_string(r, 0, NULL));
    assert_null(prism_reader_string(r, 7, NULL));
    assert_null(prism_reader_string(r, UINT32_MAX, NULL));
    prism_reader_free(r);
    free(b4096);
    free(c5000);
}

/* ---- string interning ---- */

static void test_strtab(void **state)
{
    (void)state;
    prism_strtab *t = prism_strtab_new();
    assert_non_null(t);
    uint32_t id, id2;
    bool is_new;
    assert_int_equal(prism_strtab_count(t), 0);
    assert_null(prism_strtab_name(t, 0, NULL));
    assert_null(prism_strtab_name(t, 1, NULL));
    assert_int_equal(prism_strtab_intern(t, "forward", 7, &id, &is_new), PRISM_OK);
    assert_int_equal(id, 1);
    assert_true(is_new);
    assert_int_equal(prism_strtab_intern(t, "forward", 7, &id2, &is_new), PRISM_OK);
    assert_int_equal(id2, 1);
    assert_false(is_new);
    assert_int_equal(prism_strtab_intern(t, "forwardX", 7, &id2, NULL), PRISM_OK);
    assert_int_equal(id2, 1);                           /* by bytes, not NUL */
    assert_int_equal(prism_strtab_intern(t, "forw", 4, &id, &is_new), PRISM_OK);
    assert_int_equal(id, 2);
    assert_int_equal(prism_strtab_intern(t, NULL, 0, &id, &is_new), PRISM_OK);
    assert_int_equal(id, 3);
    assert_int_equal(prism_strtab_intern(t, "", 0, &id, &is_new), PRISM_OK);
    assert_int_equal(id, 3);
    assert_false(is_new);
    assert_int_equal(prism_strtab_intern(t, NULL, 1, &id, &is_new), PRISM_E_ARG);
    assert_int_equal(prism_strtab_intern(NULL, "a", 1, &id, &is_new), PRISM_E_ARG);
    assert_int_equal(prism_strtab_intern(t, "a", 1, NULL, &is_new), PRISM_E_ARG);

    /* Longer than the limit: truncated; the same prefix is the same name. */
    char *a5000 = filled(5000, 'a'), *a4097 = filled(4097, 'a');
    assert_int_equal(prism_strtab_intern(t, a5000, 5000, &id, &is_new), PRISM_OK);
    assert_int_equal(id, 4);
    assert_int_equal(prism_strtab_intern(t, a4097, 4097, &id2, &is_new), PRISM_OK);
    assert_int_equal(id2, 4);
    assert_false(is_new);
    size_t len;
    const char *s = prism_strtab_name(t, 4, &len);
    assert_int_equal(len, PRISM_MAX_STRING_BYTES);
    assert_int_equal(strlen(s), PRISM_MAX_STRING_BYTES);
    assert_string_equal(prism_strtab_name(t, 2, &len), "forw");
    assert_int_equal(len, 4);
    assert_string_equal(prism_strtab_name(t, 3, NULL), "");

    /* Many names: ids stay dense through every growth, names stay right. */
    char name[32];
    for (uint32_t i = 0; i < 20000; i++) {
        snprintf(name, sizeof name, "layer.%u.grad", i);
        assert_int_equal(prism_strtab_intern(t, name, strlen(name), &id, &is_new), PRISM_OK);
        assert_int_equal(id, 5 + i);
        assert_true(is_new);
    }
    assert_int_equal(prism_strtab_count(t), 20004);
    for (uint32_t i = 0; i < 20000; i += 7) {
        snprintf(name, sizeof name, "layer.%u.grad", i);
        assert_int_equal(prism_strtab_intern(t, name, strlen(name), &id, &is_new), PRISM_OK);
        assert_int_equal(id, 5 + i);
        assert_false(is_new);
        assert_string_equal(prism_strtab_name(t, 5 + i, NULL), name);
    }
    assert_string_equal(prism_strtab_name(t, 1, NULL), "forward");
    assert_null(prism_strtab_name(t, 20005, NULL));
    assert_null(prism_strtab_name(NULL, 1, NULL));
    assert_int_equal(prism_strtab_count(NULL), 0);
    prism_strtab_free(t);
    prism_strtab_free(NULL);
    free(a5000);
    free(a4097);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_header_encode_errors),
        cmocka_unit_test(test_strings_by_id),
        cmocka_unit_test(test_strtab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * replay.c - a libFuzzer target run over its regression corpus without
 * libFuzzer, deterministically, in `make test` (plain cc; under ASan + UBSan
 * with `make SANITIZE=1 test`).  Linked once per target (reader_fuzz.c,
 * feed_fuzz.c, compare_fuzz.c, import_fuzz.c, export_fuzz.c, ...) as
 * <target>_replay; with no argument it replays tests/corpus/<target>/ (the
 * name taken from the program's own name; the importer: tests/fuzz/corpus/,
 * the seeds and any crash input saved there, and tests/fixtures/kineto/):
 * every file whole,
 * cut at 16 places, and 32 mutants of each from a fixed seed (bits flipped,
 * bytes set to 0x00/0xff, slices dropped or repeated; for the importer
 * JSON-significant bytes written over bytes, slices dropped or repeated, a
 * number made huge, negative or not a number).  The target must return for
 * each: a crash or a sanitizer report fails the test.
 *
 *   reader_replay [FILE|DIR]...
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CUTS 16u
#define MUTANTS 32u

/* Mutation `kind` (0..3) of out, a copy of data[0..n) (n > 0, capacity
 * 2n + 16), with a slice i <= j below n; returns the new length. */
typedef size_t (*mutator)(const uint8_t *data, size_t n, uint8_t *out, size_t i, size_t j,
                          unsigned kind, uint64_t *s);

/* What a target replays by default and how. */
typedef struct target {
    const char *name;           /* <name>_replay                              */
    const char *dirs[2];        /* default: tests/corpus/<name>/              */
    size_t max_mutate;          /* bigger files are replayed whole only       */
    mutator mutate;
    bool skip_missing;          /* a path that is not there is passed over    */
} target;

static char **g_args;
static int g_nargs;
static char g_dir[256];
static const target *g_target;
static size_t g_files, g_runs;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Two offsets below n, *i <= *j (n > 0). */
static void pick_slice(size_t n, uint64_t *s, size_t *i, size_t *j)
{
    *i = rnd(s) % n;
    *j = rnd(s) % n;
    if (*i > *j) {
        size_t t = *i;
        *i = *j;
        *j = t;
    }
}

/* out[i..j) dropped; returns the new length. */
static size_t drop_slice(uint8_t *out, size_t n, size_t i, size_t j)
{
    memmove(out + i, out + j, n - j);
    return n - (j - i);
}

/* data[i..j) (at most 4096 bytes) repeated at j; returns the new length. */
static size_t repeat_slice(const uint8_t *data, uint8_t *out, size_t n, size_t i, size_t j)
{
    size_t len = j - i < 4096 ? j - i : 4096;
    memmove(out + j + len, out + j, n - j);
    memcpy(out + j, data + i, len);
    return n + len;
}

/* Bits flipped, bytes set to an extreme, a slice dropped or repeated. */
static size_t mutate_bytes(const uint8_t *data, size_t n, uint8_t *out, size_t i, size_t j,
                           unsigned kind, uint64_t *s)
{
    switch (kind) {
    case 0:     /* a few bits flipped */
        for (unsigned k = 0; k < 1 + rnd(s) % 8; k++)
            out[rnd(s) % n] ^= (uint8_t)(1u << (rnd(s) % 8));
        return n;
    case 1:     /* a few bytes set to an extreme */
        for (unsigned k = 0; k < 1 + rnd(s) % 4; k++)
            out[rnd(s) % n] = rnd(s) % 2 ? 0xff : 0x00;
        return n;
    case 2:     /* a slice dropped */
        return drop_slice(out, n, i, j);
    default:    /* a slice repeated (bounded) */
        return repeat_slice(data, out, n, i, j);
    }
}

/* The first number at or after out[k] replaced by one of at most 16 bytes
 * that is huge, negative or not a number; returns the new length. */
static size_t odd_number(uint8_t *out, size_t n, size_t k, uint64_t *s)
{
    static const char *num[] = { "1e999", "-1", "NaN", "18446744073709551616",
                                 "-9223372036854775809", "0.0000001", "1e-999" };
    for (; k < n; k++)
        if (out[k] >= '0' && out[k] <= '9') {
            const char *v = num[rnd(s) % 7];
            size_t vl = strlen(v);
            size_t end = k;
            while (end < n && out[end] >= '0' && out[end] <= '9')
                end++;
            if (vl > 16)
                vl = 16;
            memmove(out + k + vl, out + end, n - end);
            memcpy(out + k, v, vl);
            return n - (end - k) + vl;
        }
    return n;
}

/* For JSON: significant bytes written over bytes, a slice dropped or
 * repeated, a number made odd. */
static size_t mutate_json(const uint8_t *data, size_t n, uint8_t *out, size_t i, size_t j,
                          unsigned kind, uint64_t *s)
{
    static const char sig[] = "{}[]\":,-.0123456789eE\\ntfu\x00\xff\x1f\xc3";
    switch (kind) {
    case 0:     /* a few bytes overwritten */
        for (unsigned k = 0; k < 1 + rnd(s) % 4; k++)
            out[rnd(s) % n] = (uint8_t)sig[rnd(s) % (sizeof sig - 1)];
        return n;
    case 1:     /* a slice dropped */
        return drop_slice(out, n, i, j);
    case 2:     /* a slice repeated (bounded) */
        return repeat_slice(data, out, n, i, j);
    default:    /* one number made huge, negative or not a number */
        return odd_number(out, n, i, s);
    }
}

static const target targets[] = {
    { "import", { "tests/fuzz/corpus", "tests/fixtures/kineto" }, 8u << 20, mutate_json, true },
    { "summary", { "tests/corpus/summary", NULL }, 8u << 20, mutate_json, false },
    { "export", { "tests/corpus/export", NULL }, 1u << 20, mutate_json, false },
    { "job", { "tests/corpus/job", NULL }, 8u << 20, mutate_json, false },
};
static const target byte_target = { "", { g_dir, NULL }, 4u << 20, mutate_bytes, false };

/* A mutant of data[0..n) into out (capacity 2n + 16), the target's kind;
 * returns its length. */
static size_t mutate(const uint8_t *data, size_t n, uint8_t *out, uint64_t *s)
{
    memcpy(out, data, n);
    if (!n)
        return 0;
    size_t i, j;
    pick_slice(n, s, &i, &j);
    unsigned kind = (unsigned)(rnd(s) % 4);
    return g_target->mutate(data, n, out, i, j, kind, s);
}

/* Runs the target on an exact-size copy (ASan sees a read past the end). */
static void run_exact(const uint8_t *data, size_t n)
{
    uint8_t *exact = malloc(n ? n : 1);
    assert_non_null(exact);
    memcpy(exact, data, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    g_runs++;
}

static void replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    assert_true(len >= 0);
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    size_t n = (size_t)len;
    uint8_t *data = malloc(n ? n : 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, n, f), n);
    fclose(f);
    g_files++;

    run_exact(data, n);
    if (n <= g_target->max_mutate) {
        for (unsigned c = 1; c < CUTS; c++)
            run_exact(data, n * c / CUTS);
        uint8_t *m = malloc(2 * n + 16);
        assert_non_null(m);
        uint64_t s = 0x9e3779b97f4a7c15ull ^ n;
        for (unsigned k = 0; k < MUTANTS; k++)
            run_exact(m, mutate(data, n, m, &s));
        free(m);
    }
    free(data);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order (skipping dot files). */
static void replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d && g_target->skip_missing)
        return;
    assert_non_null(d);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = realloc(names, cap * sizeof *names);
            assert_non_null(names);
        }
        size_t sz = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(sz);
        assert_non_null(names[n]);
        snprintf(names[n], sz, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
            replay_file(names[i]);
        free(names[i]);
    }
    free(names);
}

static void replay_path(const char *p)
{
    struct stat st;
    int rc = stat(p, &st);
    if (rc != 0 && g_target->skip_missing)
        return;
    assert_int_equal(rc, 0);
    if (S_ISDIR(st.st_mode))
        replay_dir(p);
    else
        replay_file(p);
}

static void test_replay_corpus(void **state)
{
    (void)state;
    if (g_nargs) {
        for (int i = 0; i < g_nargs; i++)
            replay_path(g_args[i]);
    } else {
        for (size_t i = 0; i < 2 && g_target->dirs[i]; i++)
            replay_path(g_target->dirs[i]);
    }
    print_message("replayed %zu files, %zu inputs\n", g_files, g_runs);
    assert_true(g_files > 0);
}

/* The target named by the program, <target>_replay: its entry in targets[],
 * or tests/corpus/<target>/ with the byte mutations. */
static void pick_target(const char *argv0)
{
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    size_t len = strlen(base);
    const char *suffix = "_replay";
    size_t sl = strlen(suffix);
    if (len > sl && !strcmp(base + len - sl, suffix))
        len -= sl;
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        if (strlen(targets[i].name) == len && !strncmp(base, targets[i].name, len)) {
            g_target = &targets[i];
            return;
        }
    snprintf(g_dir, sizeof g_dir, "tests/corpus/%.*s", (int)len, base);
    g_target = &byte_target;
}

int main(int argc, char **argv)
{
    pick_target(argv[0]);
    g_args = argv + 1;
    g_nargs = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

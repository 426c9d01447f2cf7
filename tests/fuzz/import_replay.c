/*
 * import_replay.c - the fuzz target (import_fuzz.c) run over a corpus without
 * libFuzzer, deterministically, in `make test` (and under ASan + UBSan with
 * `make SANITIZE=1 test`): every file of tests/fuzz/corpus/ (the seeds and
 * any crash input saved there) and of tests/fixtures/kineto/, whole, cut at
 * 16 places, and 32 mutants of each (JSON-significant bytes written over
 * bytes, slices dropped or repeated, from a fixed seed).  The target must
 * return for each: a crash or a sanitizer report fails the test.
 *
 *   import_replay [FILE|DIR]...      (default: the two folders above)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_MUTATE (8u << 20)     /* bigger files are replayed whole only */
#define CUTS 16u
#define MUTANTS 32u

static const char *default_dirs[] = { "tests/fuzz/corpus", "tests/fixtures/kineto" };
static char **g_args;
static int g_nargs;
static size_t g_files, g_runs;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A mutant of data[0..n) into out (capacity 2n + 16); returns its length. */
static size_t mutate(const uint8_t *data, size_t n, uint8_t *out, uint64_t *s)
{
    static const char sig[] = "{}[]\":,-.0123456789eE\\ntfu\x00\xff\x1f\xc3";
    memcpy(out, data, n);
    if (!n)
        return 0;
    size_t i = rnd(s) % n, j = rnd(s) % n;
    if (i > j) {
        size_t t = i;
        i = j;
        j = t;
    }
    switch (rnd(s) % 4) {
    case 0:     /* a few bytes overwritten */
        for (unsigned k = 0; k < 1 + rnd(s) % 4; k++)
            out[rnd(s) % n] = (uint8_t)sig[rnd(s) % (sizeof sig - 1)];
        return n;
    case 1:     /* a slice dropped */
        memmove(out + i, out + j, n - j);
        return n - (j - i);
    case 2: {   /* a slice repeated (bounded) */
        size_t len = j - i < 4096 ? j - i : 4096;
        memmove(out + j + len, out + j, n - j);
        memcpy(out + j, data + i, len);
        return n + len;
    }
    default:    /* one number made huge, negative or not a number */
        for (size_t k = i; k < n; k++)
            if (out[k] >= '0' && out[k] <= '9') {
                static const char *num[] = { "1e999", "-1", "NaN", "18446744073709551616",
                                             "-9223372036854775809", "0.0000001", "1e-999" };
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
}

static void replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(len >= 0);
    size_t n = (size_t)len;
    uint8_t *data = malloc(n ? n : 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, n, f), n);
    fclose(f);
    g_files++;

    LLVMFuzzerTestOneInput(data, n);
    g_runs++;
    if (n <= REPLAY_MAX_MUTATE) {
        for (unsigned c = 1; c < CUTS; c++) {
            LLVMFuzzerTestOneInput(data, n * c / CUTS);
            g_runs++;
        }
        uint8_t *m = malloc(2 * n + 16);
        assert_non_null(m);
        uint64_t s = 0x9e3779b97f4a7c15ull ^ n;
        for (unsigned k = 0; k < MUTANTS; k++) {
            size_t ml = mutate(data, n, m, &s);
            /* a copy of exactly ml bytes: ASan sees a read past the end */
            uint8_t *exact = malloc(ml ? ml : 1);
            assert_non_null(exact);
            memcpy(exact, m, ml);
            LLVMFuzzerTestOneInput(exact, ml);
            free(exact);
            g_runs++;
        }
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
    if (!d)
        return;
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
        names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
        assert_non_null(names[n]);
        sprintf(names[n], "%s/%s", dir, e->d_name);
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
    if (stat(p, &st) != 0)
        return;
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
        for (size_t i = 0; i < sizeof default_dirs / sizeof *default_dirs; i++)
            replay_path(default_dirs[i]);
    }
    print_message("replayed %zu files, %zu inputs\n", g_files, g_runs);
    assert_true(g_files > 0);
}

int main(int argc, char **argv)
{
    g_args = argv + 1;
    g_nargs = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * replay.c - a libFuzzer target run over its regression corpus without
 * libFuzzer, deterministically, in `make test` (plain cc; under ASan + UBSan
 * with `make SANITIZE=1 test`).  Linked once per target (reader_fuzz.c,
 * feed_fuzz.c, compare_fuzz.c) as <target>_replay; with no argument it
 * replays tests/corpus/<target>/ (the name taken from the program's own
 * name): every file whole, cut at 16 places, and 32 mutants of each (bits
 * flipped, bytes set to 0x00/0xff, slices dropped or repeated, from a fixed
 * seed).  The target must return for each: a crash or a sanitizer report
 * fails the test.
 *
 *   reader_replay [FILE|DIR]...
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

#define REPLAY_MAX_MUTATE (4u << 20)     /* bigger files are replayed whole only */
#define CUTS 16u
#define MUTANTS 32u

static char **g_args;
static int g_nargs;
static char g_dir[256];
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
    case 0:     /* a few bits flipped */
        for (unsigned k = 0; k < 1 + rnd(s) % 8; k++)
            out[rnd(s) % n] ^= (uint8_t)(1u << (rnd(s) % 8));
        return n;
    case 1:     /* a few bytes set to an extreme */
        for (unsigned k = 0; k < 1 + rnd(s) % 4; k++)
            out[rnd(s) % n] = rnd(s) % 2 ? 0xff : 0x00;
        return n;
    case 2:     /* a slice dropped */
        memmove(out + i, out + j, n - j);
        return n - (j - i);
    default: {  /* a slice repeated (bounded) */
        size_t len = j - i < 4096 ? j - i : 4096;
        memmove(out + j + len, out + j, n - j);
        memcpy(out + j, data + i, len);
        return n + len;
    }
    }
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
    if (n <= REPLAY_MAX_MUTATE) {
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
    assert_int_equal(stat(p, &st), 0);
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
        replay_path(g_dir);
    }
    print_message("replayed %zu files, %zu inputs\n", g_files, g_runs);
    assert_true(g_files > 0);
}

/* tests/corpus/<target>/ from the program's name, <target>_replay. */
static void default_dir(const char *argv0)
{
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    size_t len = strlen(base);
    const char *suffix = "_replay";
    size_t sl = strlen(suffix);
    if (len > sl && !strcmp(base + len - sl, suffix))
        len -= sl;
    snprintf(g_dir, sizeof g_dir, "tests/corpus/%.*s", (int)len, base);
}

int main(int argc, char **argv)
{
    default_dir(argv[0]);
    g_args = argv + 1;
    g_nargs = argc - 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

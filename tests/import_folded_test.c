/*
 * import_folded_test.c - the folded-stacks importer (import/folded.c)
 * through the reader and the analysis: stacks become nested regions whose
 * self times are the counts (1 sample = 1 ms), shared prefixes merge, the
 * probe takes text "STACK COUNT" lines only (JSON, CBOR and binary go
 * elsewhere), pieces never change the result, and hostile input (a line
 * too long, a bad count, a stack too deep, a broken line) ends in one error
 * with its byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prism/analysis.h"
#include "prism/import.h"
#include "source.h"

#define MS 1000000ull

typedef struct run {
    prism_analysis *a;
    prism_reader *r;
    prism_status st;
    const char *msg;
    uint64_t off;
} run;

/* Feed text in pieces of `piece` bytes (0: at once), then finish. */
static void read_text(run *x, const char *text, size_t len, size_t piece)
{
    prism_reader_callbacks cb;
    x->a = prism_analysis_new(NULL);
    assert_non_null(x->a);
    prism_analysis_callbacks(&cb);
    x->r = prism_reader_new(&cb, x->a);
    assert_non_null(x->r);
    prism_analysis_attach(x->a, x->r);
    x->st = PRISM_OK;
    for (size_t off = 0; off < len; off += piece ? piece : len) {
        size_t n = piece && len - off > piece ? piece : len - off;
        x->st = prism_reader_feed(x->r, text + off, n);
        if (x->st != PRISM_OK && x->st != PRISM_NEED_MORE)
            break;
    }
    if (x->st == PRISM_OK || x->st == PRISM_NEED_MORE)
        x->st = prism_reader_finish(x->r);
    prism_reader_error(x->r, &x->msg, &x->off);
    prism_analysis_refresh(x->a);
}

static void done(run *x)
{
    prism_analysis_free(x->a);
    prism_reader_free(x->r);
}

/* The node at a path "a;b;c" in the all-threads tree, NULL if none. */
static const prism_node *node_at(const prism_analysis *a, const char *path)
{
    const prism_tree *t = prism_analysis_tree(a);
    uint32_t at = t->first_root, found = PRISM_NO_NODE;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *f = strtok_r(buf, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
        while (at != PRISM_NO_NODE && strcmp(t->nodes[at].name, f))
            at = t->nodes[at].next_sibling;
        if (at == PRISM_NO_NODE)
            return NULL;
        found = at;
        at = t->nodes[at].first_child;
    }
    return found == PRISM_NO_NODE ? NULL : &t->nodes[found];
}

static const char sample[] =
    "main;work;compute 30\n"
    "main;work;io 10\n"
    "main;idle 5\n"
    "main 2\n"
    "other;x 7\n";

static void test_stacks(void **state)
{
    (void)state;
    run x;
    read_text(&x, sample, strlen(sample), 0);
    assert_int_equal(x.st, PRISM_OK);
    assert_string_equal(prism_reader_foreign(x.r), "folded stacks");
    assert_int_equal(prism_analysis_tree(x.a)->total_ns, 54 * MS);
    assert_int_equal(node_at(x.a, "main")->total_ns, 47 * MS);
    assert_int_equal(node_at(x.a, "main")->self_ns, 2 * MS);
    assert_int_equal(node_at(x.a, "main")->calls, 1);      /* the prefix merged */
    assert_int_equal(node_at(x.a, "main;work")->total_ns, 40 * MS);
    assert_int_equal(node_at(x.a, "main;work;compute")->self_ns, 30 * MS);
    assert_int_equal(node_at(x.a, "main;work;io")->self_ns, 10 * MS);
    assert_int_equal(node_at(x.a, "main;idle")->self_ns, 5 * MS);
    assert_int_equal(node_at(x.a, "other;x")->self_ns, 7 * MS);
    char notes[8][PRISM_IMPORT_NOTE];
    size_t n = prism_import_notes(prism_analysis_header(x.a), notes, 8);
    assert_true(n >= 1);
    assert_non_null(strstr(notes[0], "synthetic"));
    done(&x);
}

/* Pieces, CRLF line ends and no final newline give the same.  (Before a
 * whole line has come the probe waits only once a ';' was seen: the first
 * piece holds "main;".) */
static void test_pieces(void **state)
{
    (void)state;
    static const char crlf[] = "main;work;compute 30\r\nmain;work;io 10\r\nmain;idle 5\r\n"
                               "main 2\r\nother;x 7";
    for (size_t piece = 5; piece <= 13; piece += 4) {
        run x;
        read_text(&x, crlf, strlen(crlf), piece);
        assert_int_equal(x.st, PRISM_OK);
        assert_int_equal(prism_analysis_tree(x.a)->total_ns, 54 * MS);
        assert_int_equal(node_at(x.a, "main;work;compute")->self_ns, 30 * MS);
        assert_int_equal(node_at(x.a, "other;x")->self_ns, 7 * MS);
        done(&x);
    }
}

static void test_probe(void **state)
{
    (void)state;
    run x;
    read_text(&x, "a;b 1\n", 6, 0);
    assert_int_equal(x.st, PRISM_OK);
    assert_string_equal(prism_reader_foreign(x.r), "folded stacks");
    done(&x);
    /* JSON goes to the trace importer, text that is not folded to CBOR */
    read_text(&x, "[]", 2, 0);
    assert_string_equal(prism_reader_foreign(x.r), "torch.profiler trace");
    done(&x);
    static const char *const not_folded[] = {
        "hello world\n", "a;b 12x\n", "a;b\n", " 12\n", "a;b 1\n\x01\x02 3\n", "12\n",
    };
    for (size_t i = 0; i < sizeof not_folded / sizeof not_folded[0]; i++) {
        read_text(&x, not_folded[i], strlen(not_folded[i]), 0);
        assert_null(prism_reader_foreign(x.r));
        assert_int_equal(x.st, PRISM_E_NOT_PRISM);
        done(&x);
    }
    static const uint8_t cbor[] = { 0xd9, 0xd9, 0xf7, 0x31, 0x20, 0x31, 0x0a };
    read_text(&x, (const char *)cbor, sizeof cbor, 0);
    assert_null(prism_reader_foreign(x.r));
    done(&x);
}

static void test_hostile(void **state)
{
    (void)state;
    run x;
    /* a line that breaks the pattern after good ones: its offset */
    static const char bad_line[] = "a;b 1\na;c 2\nnot a stack\n";
    read_text(&x, bad_line, strlen(bad_line), 3);
    assert_int_equal(x.st, PRISM_E_NOT_PRISM);
    assert_int_equal(x.off, 12);
    assert_non_null(strstr(x.msg, "line 3"));
    done(&x);
    /* a count beyond 2^40 samples in all */
    static const char big[] = "a 1\nb 9999999999999999999\n";
    read_text(&x, big, strlen(big), 0);
    assert_int_equal(x.st, PRISM_E_LIMIT);
    assert_int_equal(x.off, 6);
    assert_non_null(strstr(x.msg, "bad count"));
    done(&x);
    /* a line longer than 64 KiB: bounded, one error at its start */
    size_t n = 70000;
    char *longl = malloc(n + 16);
    assert_non_null(longl);
    memcpy(longl, "a 1\n", 4);
    memset(longl + 4, 'f', n);
    memcpy(longl + 4 + n, " 1\n", 4);
    read_text(&x, longl, n + 7, 4096);
    assert_int_equal(x.st, PRISM_E_LIMIT);
    assert_int_equal(x.off, 4);
    assert_non_null(strstr(x.msg, "longer than"));
    done(&x);
    /* a stack deeper than the nesting cap */
    size_t depth = 1100, len = 0;
    char *deep = malloc(depth * 2 + 16);
    assert_non_null(deep);
    for (size_t i = 0; i < depth; i++) {
        deep[len++] = 'f';
        deep[len++] = i + 1 < depth ? ';' : ' ';
    }
    memcpy(deep + len, "5\n", 3);
    read_text(&x, deep, len + 2, 0);
    assert_int_equal(x.st, PRISM_E_LIMIT);
    assert_non_null(strstr(x.msg, "deeper"));
    done(&x);
    /* zero counts are counted, not regions */
    read_text(&x, "a 0\nb 3\n", 8, 0);
    assert_int_equal(x.st, PRISM_OK);
    assert_null(node_at(x.a, "a"));
    assert_int_equal(node_at(x.a, "b")->total_ns, 3 * MS);
    done(&x);
    free(longl);
    free(deep);
}

/* ---- a backend that reads only paths (prism_reader_read_path) ---- */

static char g_path[256];
static prism_reader_stats g_st;

static int p_probe(const uint8_t *p, size_t n, bool final)
{
    (void)final;
    return n >= 7 && !memcmp(p, "PATHFMT", 7);
}
static void *p_open(const prism_reader_callbacks *cb, void *ctx)
{
    (void)cb;
    (void)ctx;
    return &g_st;
}
static prism_status p_read_path(void *b, const char *path, const char **msg, uint64_t *off)
{
    (void)b;
    (void)msg;
    (void)off;
    snprintf(g_path, sizeof g_path, "%s", path);
    return PRISM_OK;
}
static prism_status p_finish(void *b, const char **msg, uint64_t *off)
{
    (void)b;
    (void)msg;
    (void)off;
    return PRISM_OK;
}
static void p_close(void *b) { (void)b; }
static const prism_header *p_header(const void *b) { (void)b; return NULL; }
static const char *p_string(const void *b, uint32_t id, size_t *len)
{
    (void)b;
    (void)id;
    (void)len;
    return NULL;
}

static const prism_foreign_backend path_backend = {
    .name = "path only", .probe = p_probe, .open = p_open, .finish = p_finish,
    .close = p_close, .header = p_header, .string = p_string, .read_path = p_read_path,
};

static void test_read_path(void **state)
{
    (void)state;
    assert_int_equal(prism_reader_add_backend(&path_backend), PRISM_OK);
    assert_int_equal(prism_reader_add_backend(&path_backend), PRISM_OK);   /* idempotent */
    assert_int_equal(prism_reader_add_backend(NULL), PRISM_E_ARG);
    char path[] = "/tmp/prism_path_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "PATHFMT\x01\n", 9), 9);
    close(fd);
    prism_reader *r;
    g_path[0] = '\0';
    assert_int_equal(prism_read_file(path, NULL, NULL, &r), PRISM_OK);
    assert_string_equal(prism_reader_foreign(r), "path only");
    assert_string_equal(g_path, path);
    prism_reader_free(r);
    /* a program that feeds slices itself asks first (the explorer) */
    r = prism_reader_new(NULL, NULL);
    assert_true(prism_reader_path_only(r, path));
    assert_false(prism_reader_path_only(r, "/nonexistent/prism"));
    prism_reader_free(r);
    /* the explorer's loader hands the path over */
    g_path[0] = '\0';
    source src;
    assert_int_equal(source_open(&src, path, SRC_AUTO, NULL), 0);
    assert_int_equal(source_load_all(&src), 0);
    assert_string_equal(prism_reader_foreign(src.r), "path only");
    assert_string_equal(g_path, path);
    assert_false(src.following);
    source_close(&src);
    /* fed bytes never reach a path-only backend: the CBOR reader answers */
    run x;
    read_text(&x, "PATHFMT\x01\n", 9, 0);
    assert_null(prism_reader_foreign(x.r));
    assert_int_equal(x.st, PRISM_E_NOT_PRISM);
    done(&x);
    unlink(path);
    /* set_foreign replaces the whole list: the built-ins are gone */
    prism_reader_set_foreign(&path_backend);
    read_text(&x, sample, strlen(sample), 0);
    assert_null(prism_reader_foreign(x.r));
    done(&x);
    prism_reader_set_foreign(NULL);
    prism_import_register();
}

int main(void)
{
    prism_import_register();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stacks),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_read_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

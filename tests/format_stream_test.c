/*
 * format_stream_test.c - the streaming reader: how the input is cut into
 * pieces must not change what is delivered; every prefix of a file is a torn
 * tail the reader stops at cleanly and resumes from; live tail with read_fd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "refgen.h"
#include "test_util.h"

typedef struct fixture {
    refgen_out out;
    tlog full;                  /* a read of the whole file in one piece  */
    prism_reader_stats st;
    size_t hdr_len;             /* header bytes (first chunk's offset)    */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    refgen_opts o = refgen_defaults();
    o.steps = 5;
    o.extremes = true;
    o.cpu = true;
    o.chunk_bytes = 512;
    assert_int_equal(refgen_build(&o, &f->out), 0);
    tlog_init(&f->full);
    assert_int_equal(tlog_read_all(&f->full, f->out.data, f->out.len, &f->st), PRISM_OK);
    assert_true(f->full.nchunks > 20);
    f->hdr_len = (size_t)f->full.chunks[0].ci.offset;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tlog_free(&f->full);
    free(f->out.data);
    free(f);
    return 0;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The full read itself is what refgen wrote: every chunk good, in order,
 * back to back, nothing damaged or torn. */
static void test_full_read_is_clean(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->st.chunks, f->out.chunks);
    assert_int_equal(f->full.nchunks, f->out.chunks);
    assert_int_equal(f->st.damaged, 0);
    assert_int_equal(f->st.malformed, 0);
    assert_int_equal(f->st.unknown, 0);
    assert_int_equal(f->st.torn_bytes, 0);
    assert_int_equal(f->st.seq_gaps, 0);
    assert_true(f->st.footer);
    assert_true(f->full.have_header);
    uint64_t at = f->hdr_len;
    for (size_t i = 0; i < f->full.nchunks; i++) {
        const prism_chunk_info *c = &f->full.chunks[i].ci;
        assert_int_equal(c->status, PRISM_CHUNK_OK);
        assert_int_equal(c->offset, at);
        at += c->length;
    }
    assert_int_equal(at, f->out.len);
    assert_int_equal(f->full.chunks[f->full.nchunks - 1].ci.kind, PRISM_CHUNK_FOOTER);
}

/* Feed in pieces whose sizes come from next_size; compare with the full read. */
static void read_in_pieces(const fixture *f, size_t (*next_size)(uint64_t *), uint64_t seed)
{
    tlog l;
    tlog_init(&l);
    prism_reader *r = tlog_reader(&l);
    size_t pos = 0;
    while (pos < f->out.len) {
        size_t n = next_size(&seed);
        if (n > f->out.len - pos)
            n = f->out.len - pos;
        prism_status s = prism_reader_feed(r, f->out.data + pos, n);
        assert_true(s == PRISM_OK || s == PRISM_NEED_MORE);
        pos += n;
        assert_int_equal(prism_reader_input_offset(r), pos);
    }
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_logs_equal(&l, &f->full);
    assert_stats_equal(prism_reader_stats_get(r), &f->st);
    assert_int_equal(prism_reader_good_offset(r), f->out.len);
    prism_reader_free(r);
    tlog_free(&l);
}

static size_t size_one(uint64_t *s) { (void)s; return 1; }
static size_t size_small(uint64_t *s) { return (size_t)(rng_next(s) % 17); }
static size_t size_any(uint64_t *s) { return 1 + (size_t)(rng_next(s) % 1500); }

static void test_byte_by_byte(void **state) { read_in_pieces(*state, size_one, 1); }

static void test_random_pieces(void **state)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        read_in_pieces(*state, size_small, seed);
        read_in_pieces(*state, size_any, seed * 7919);
    }
}

/* Chunks entirely before `cut`, and the item boundary at or before it. */
static size_t chunks_before(const fixture *f, size_t cut, size_t *boundary)
{
    size_t k = 0;
    *boundary = cut >= f->hdr_len ? f->hdr_len : 0;
    while (k < f->full.nchunks &&
           f->full.chunks[k].ci.offset + f->full.chunks[k].ci.length <= cut) {
        *boundary = (size_t)(f->full.chunks[k].ci.offset + f->full.chunks[k].ci.length);
        k++;
    }
    return k;
}

/* Log bytes delivered by a read of the first k chunks (header included). */
static size_t log_len_for(const fixture *f, size_t cut, size_t k)
{
    if (k)
        return f->full.chunks[k - 1].end;
    return cut >= f->hdr_len ? f->full.hdr_end : 0;
}

/* A full reader fed the first cut bytes of the file. */
typedef struct prefix_read {
    tlog l;                     /* what it delivered                      */
    prism_reader *r;
    prism_status s;             /* what the feed returned                 */
    size_t k;                   /* chunks entirely before cut             */
    size_t boundary;            /* the item boundary at or before cut     */
} prefix_read;

static void read_prefix(prefix_read *p, const fixture *f, size_t cut)
{
    p->k = chunks_before(f, cut, &p->boundary);
    tlog_init(&p->l);
    p->r = tlog_reader(&p->l);
    p->s = prism_reader_feed(p->r, f->out.data, cut);
}

static void prefix_free(prefix_read *p)
{
    prism_reader_free(p->r);
    tlog_free(&p->l);
}

/* Every prefix: a clean stop delivering exactly the complete chunks; then the
 * rest resumes and the whole equals the full read. */
static void test_every_prefix_then_resume(void **state)
{
    fixture *f = *state;
    for (size_t cut = 0; cut <= f->out.len; cut++) {
        prefix_read p;
        read_prefix(&p, f, cut);
        if (cut == p.boundary)
            assert_int_equal(p.s, PRISM_OK);
        else
            assert_int_equal(p.s, PRISM_NEED_MORE);
        assert_int_equal(p.l.nchunks, p.k);
        size_t want = log_len_for(f, cut, p.k);
        assert_int_equal(p.l.len, want);
        assert_memory_equal(p.l.b, f->full.b, want);
        assert_int_equal(prism_reader_good_offset(p.r), p.boundary);
        assert_int_equal(prism_reader_input_offset(p.r), cut);
        assert_int_equal(prism_reader_stats_get(p.r)->damaged, 0);
        assert_true((prism_reader_header(p.r) != NULL) == (cut >= f->hdr_len));

        assert_int_equal(prism_reader_feed(p.r, f->out.data + cut, f->out.len - cut), PRISM_OK);
        assert_int_equal(prism_reader_finish(p.r), PRISM_OK);
        assert_logs_equal(&p.l, &f->full);
        assert_stats_equal(prism_reader_stats_get(p.r), &f->st);
        prefix_free(&p);
    }
}

/* Every prefix, then end of input: the torn tail is counted, not damage. */
static void test_every_prefix_finish(void **state)
{
    fixture *f = *state;
    for (size_t cut = 0; cut <= f->out.len; cut++) {
        prefix_read p;
        read_prefix(&p, f, cut);
        assert_true(p.s == PRISM_OK || p.s == PRISM_NEED_MORE);
        prism_status s = prism_reader_finish(p.r);
        const prism_reader_stats *st = prism_reader_stats_get(p.r);
        if (cut == 0) {
            assert_int_equal(s, PRISM_E_EMPTY);
        } else if (cut < f->hdr_len) {
            const char *msg;
            uint64_t off;
            assert_int_equal(s, PRISM_E_HEADER);
            assert_int_equal(prism_reader_error(p.r, &msg, &off), PRISM_E_HEADER);
            assert_true(msg[0] != '\0');
            assert_int_equal(off, cut);
        } else {
            assert_int_equal(s, PRISM_OK);
            assert_int_equal(st->torn_bytes, cut - p.boundary);
            assert_int_equal(st->torn_bytes, cut - prism_reader_good_offset(p.r));
            assert_int_equal(st->damaged, 0);
            assert_int_equal(st->skipped_bytes, 0);
            assert_int_equal(st->chunks, p.k);
            assert_int_equal(p.l.nchunks, p.k);
            assert_int_equal(p.l.len, log_len_for(f, cut, p.k));
            assert_memory_equal(p.l.b, f->full.b, p.l.len);
            assert_int_equal(st->footer, p.k == f->full.nchunks);
        }
        prefix_free(&p);
    }
}

static int temp_file(char *path)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, 256, "%s/prism_stream_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    return fd;
}

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        assert_true(w > 0);
        p += w;
        n -= (size_t)w;
    }
}

/* A file that grows while it is read (live tail). */
static void test_read_fd_growing(void **state)
{
    fixture *f = *state;
    const size_t mid = (size_t)f->full.chunks[f->full.nchunks / 2].ci.offset;
    const size_t cuts[] = { 1, f->hdr_len - 1, f->hdr_len, f->hdr_len + 3, mid, mid + 5,
                            f->out.len / 2, f->out.len - 1, f->out.len };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t cut = cuts[i], boundary;
        size_t k = chunks_before(f, cut, &boundary);
        char path[256];
        int fd = temp_file(path);
        write_all(fd, f->out.data, cut);
        tlog l;
        tlog_init(&l);
        prism_reader *r = tlog_reader(&l);
        prism_status s = prism_reader_read_fd(r, fd);
        assert_int_equal(s, cut == boundary ? PRISM_OK : PRISM_NEED_MORE);
        assert_int_equal(prism_reader_input_offset(r), cut);
        assert_int_equal(l.nchunks, k);
        /* Nothing new: a second call changes nothing. */
        assert_int_equal(prism_reader_read_fd(r, fd), s);
        assert_int_equal(prism_reader_input_offset(r), cut);
        write_all(fd, f->out.data + cut, f->out.len - cut);
        assert_int_equal(prism_reader_read_fd(r, fd), PRISM_OK);
        assert_int_equal(prism_reader_input_offset(r), f->out.len);
        assert_int_equal(prism_reader_finish(r), PRISM_OK);
        assert_logs_equal(&l, &f->full);
        assert_stats_equal(prism_reader_stats_get(r), &f->st);
        prism_reader_free(r);
        tlog_free(&l);
        close(fd);
        unlink(path);
    }
}

/* read_fd on a pipe (no pread) and prism_read_file on a path. */
static void test_read_fd_pipe_and_read_file(void **state)
{
    fixture *f = *state;
    int p[2];
    assert_true(f->out.len < 65536);        /* fits in a pipe buffer */
    assert_int_equal(pipe(p), 0);
    write_all(p[1], f->out.data, f->out.len);
    close(p[1]);
    tlog l;
    tlog_init(&l);
    prism_reader *r = tlog_reader(&l);
    assert_int_equal(prism_reader_read_fd(r, p[0]), PRISM_OK);
    assert_int_equal(prism_reader_finish(r), PRISM_OK);
    assert_logs_equal(&l, &f->full);
    prism_reader_free(r);
    tlog_free(&l);
    close(p[0]);

    char path[256];
    int fd = temp_file(path);
    write_all(fd, f->out.data, f->out.len);
    close(fd);
    tlog_init(&l);
    prism_reader_callbacks cb = tlog_callbacks();
    assert_int_equal(prism_read_file(path, &cb, &l, &r), PRISM_OK);
    assert_logs_equal(&l, &f->full);
    assert_stats_equal(prism_reader_stats_get(r), &f->st);
    prism_reader_free(r);
    tlog_free(&l);
    unlink(path);

    /* A missing file: PRISM_E_IO with a message. */
    const char *msg;
    assert_int_equal(prism_read_file(path, &cb, NULL, &r), PRISM_E_IO);
    assert_int_equal(prism_reader_error(r, &msg, NULL), PRISM_E_IO);
    assert_true(msg[0] != '\0');
    prism_reader_free(r);
    assert_int_equal(prism_reader_read_fd(NULL, 0), PRISM_E_ARG);
}

/* Reads with different seeds and thread counts are deterministic and differ
 * from each other (the fixture is not trivially empty). */
static void test_other_profiles_piecewise(void **state)
{
    (void)state;
    for (unsigned th = 1; th <= 3; th++) {
        fixture g = { 0 };
        refgen_opts o = refgen_defaults();
        o.seed = 100 + th;
        o.threads = th;
        o.steps = 8;
        o.chunk_bytes = 300 + 200 * th;
        o.footer = th != 2;
        assert_int_equal(refgen_build(&o, &g.out), 0);
        tlog_init(&g.full);
        assert_int_equal(tlog_read_all(&g.full, g.out.data, g.out.len, &g.st), PRISM_OK);
        assert_int_equal(g.st.chunks, g.out.chunks);
        assert_int_equal(g.st.footer, o.footer);
        read_in_pieces(&g, size_small, th);
        read_in_pieces(&g, size_any, th);
        tlog_free(&g.full);
        free(g.out.data);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_read_is_clean),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_random_pieces),
        cmocka_unit_test(test_every_prefix_then_resume),
        cmocka_unit_test(test_every_prefix_finish),
        cmocka_unit_test(test_read_fd_growing),
        cmocka_unit_test(test_read_fd_pipe_and_read_file),
        cmocka_unit_test(test_other_profiles_piecewise),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * reader_input.c - the reader's whole inputs: foreign formats (the first
 * bytes probed, a backend fed), a file descriptor read to its end, a path
 * (read by a backend that takes paths, or streamed), and prism_read_file.
 * The bytes themselves go to prism_reader_feed (reader.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ropen.h"
#include "reader_state.h"

#define PROBE_MAX_BYTES 65536u

const char *prism_reader_foreign(const prism_reader *r)
{
    return r && r->probe == PROBE_FOREIGN ? r->fb->name : NULL;
}

/* ---- the file's name, for the words of an error ---- */

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !strcasecmp(s + n - k, suffix);
}

void prism_reader_name(prism_reader *r, const char *path)
{
    if (!r)
        return;
    size_t n = path ? strlen(path) : 0;
    r->name_gz = path && ends_with(path, n, ".json.gz");
    r->name_json = path && (r->name_gz || ends_with(path, n, ".json"));
}

/* A byte in words: 'n', or 0x8b when it does not print. */
static void byte_words(char *buf, size_t cap, uint8_t b)
{
    if (b > 0x20 && b < 0x7f && b != '\'' && b != '\\')
        snprintf(buf, cap, "'%c'", (char)b);
    else
        snprintf(buf, cap, "0x%02x", (unsigned)b);
}

prism_status pf_reader_not_prism(prism_reader *r, const uint8_t *p, size_t n)
{
    size_t i = n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf ? 3 : 0;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    char b[8] = "";
    if (n)
        byte_words(b, sizeof b, p[0]);
    if (r->name_gz && !(n >= 2 && p[0] == 0x1f && p[1] == 0x8b))
        return pf_reader_fail(r, PRISM_E_NOT_PRISM, 0,
                              "not gzip: a .json.gz trace starts with the gzip magic 1f 8b, "
                              "this file with %s", n ? b : "nothing");
    if (i < n)
        byte_words(b, sizeof b, p[i]);
    bool brace = i < n && (p[i] == '{' || p[i] == '[');
    if (brace)      /* no backend took it: none registered in this program */
        return pf_reader_fail(r, PRISM_E_NOT_PRISM, i,
                              "JSON (a trace?), but this program reads PRISM profiles only "
                              "(no trace importer registered)");
    if (r->name_json && i == n)
        return pf_reader_fail(r, PRISM_E_NOT_PRISM, i, "not JSON: the file holds only blanks");
    if (r->name_json)
        return pf_reader_fail(r, PRISM_E_NOT_PRISM, i,
                              "not JSON: a JSON trace starts with '{' or '[', this file with %s",
                              b);
    if (r->nfb)
        return pf_reader_fail(r, PRISM_E_NOT_PRISM, 0,
                              "not a PRISM profile (no CBOR self-describe tag) nor a JSON trace "
                              "(no '{' or '[')");
    return pf_reader_fail(r, PRISM_E_NOT_PRISM, 0,
                          "not a PRISM profile (no CBOR self-describe tag)");
}

/* ---- foreign input ---- */

prism_status pf_reader_foreign_status(prism_reader *r, prism_status st, const char *msg,
                                      uint64_t off)
{
    if (st != PRISM_OK && st != PRISM_NEED_MORE)
        return pf_reader_fail(r, st, off, "%s", msg ? msg : prism_strerror(st));
    r->good = r->fed;
    return st;
}

prism_status pf_reader_foreign_feed(prism_reader *r, const uint8_t *p, size_t n)
{
    const char *msg = NULL;
    uint64_t off = 0;
    if (!r->fb->feed)
        return pf_reader_fail(r, PRISM_E_STATE, r->fed, "%s: read by path, not fed", r->fb->name);
    prism_status st = r->fb->feed(r->fst, p, n, &msg, &off);
    return pf_reader_foreign_status(r, st, msg, off);
}

/*
 * Which backend takes a file starting with p[0..n): the first in
 * registration order whose probe accepts, skipping those that take only
 * paths unless by_path.  -1: a backend before it is undecided (only while
 * more bytes may come and fewer than PROBE_MAX_BYTES were seen), -2: none.
 */
static int choose(const prism_reader *r, const uint8_t *p, size_t n, bool final,
                  bool by_path)
{
    if (n && p[0] == 0xd9)
        return -2;                      /* the CBOR self-describe tag */
    if (!n)
        return final ? -2 : -1;
    for (size_t i = 0; i < r->nfb; i++) {
        const prism_foreign_backend *b = r->fbs[i];
        if (!b->feed && !by_path)
            continue;
        int d = b->probe(p, n, final);
        if (d > 0)
            return (int)i;
        if (d < 0 && !final && n < PROBE_MAX_BYTES)
            return -1;
    }
    return -2;
}

static prism_status take(prism_reader *r, size_t i)
{
    r->fb = r->fbs[i];
    r->fst = r->fb->open(&r->cb, r->ctx);
    if (!r->fst)
        return pf_reader_fail(r, PRISM_E_NOMEM, 0, "out of memory");
    r->probe = PROBE_FOREIGN;
    return PRISM_OK;
}

/*
 * Decide from the first bytes (the kept ones, then p[0..n)) whether the
 * backend reads the file.  PRISM_NEED_MORE: undecided, the bytes are kept;
 * PRISM_OK: decided (r->probe set; for a foreign file the bytes went to the
 * backend, else they are in r->pend for the CBOR reader, or still in p when
 * nothing was kept); an error otherwise.
 */
prism_status pf_reader_probe(prism_reader *r, const uint8_t *p, size_t n, bool final,
                             bool *used)
{
    *used = false;
    if (r->plen) {
        if (n && !pf_reader_keep_pending_append(r, p, n))
            return pf_reader_fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
        *used = true;
        p = r->pend;
        n = r->plen;
    }
    int d = choose(r, p, n, final, false);
    if (d == -1) {
        if (!*used && n && !pf_reader_keep_pending_append(r, p, n))
            return pf_reader_fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
        *used = true;
        return PRISM_NEED_MORE;
    }
    if (d < 0) {
        r->probe = PROBE_NONE;
        return PRISM_OK;
    }
    if (take(r, (size_t)d) != PRISM_OK)
        return (prism_status)r->err.code;
    *used = true;
    prism_status st = pf_reader_foreign_feed(r, p, n);
    r->plen = 0;
    return st == PRISM_NEED_MORE ? PRISM_OK : st;
}

prism_status prism_reader_read_fd(prism_reader *r, int fd)
{
    enum { BLOCK = 1 << 20 };
    if (!r || fd < 0)
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    uint8_t *buf = malloc(BLOCK);
    if (!buf)
        return pf_reader_fail(r, PRISM_E_NOMEM, r->fed, "out of memory");
    prism_status st = r->plen || r->resync ? PRISM_NEED_MORE : PRISM_OK;
    bool can_pread = true;
    for (;;) {
        ssize_t got = can_pread ? pread(fd, buf, BLOCK, (off_t)r->fed) : read(fd, buf, BLOCK);
        if (got < 0 && can_pread && errno == ESPIPE) {
            can_pread = false;
            continue;
        }
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            st = pf_reader_fail(r, PRISM_E_IO, r->fed, "read failed: %s", strerror(errno));
            break;
        }
        if (got == 0)
            break;
        st = prism_reader_feed(r, buf, (size_t)got);
        if (st != PRISM_OK && st != PRISM_NEED_MORE)
            break;
    }
    free(buf);
    return st;
}

/* A regular file not read yet: the index of the backend that reads it by
 * its path (its first bytes decide), else -1 (it is streamed: read_fd
 * decides again), or -2 without memory (r's error set). */
static int path_choice(prism_reader *r, int fd, struct stat *sb)
{
    bool any = false;
    for (size_t i = 0; i < r->nfb; i++)
        any |= r->fbs[i]->read_path != NULL;
    if (!any || r->probe != PROBE_WAIT || r->fed || fstat(fd, sb) || !S_ISREG(sb->st_mode))
        return -1;
    uint8_t *head = malloc(PROBE_MAX_BYTES);
    if (!head) {
        pf_reader_fail(r, PRISM_E_NOMEM, 0, "out of memory");
        return -2;
    }
    ssize_t got;
    do
        got = pread(fd, head, PROBE_MAX_BYTES, 0);
    while (got < 0 && errno == EINTR);
    int d = got <= 0 ? -2 : choose(r, head, (size_t)got, (uint64_t)got >= (uint64_t)sb->st_size
                                   || got < (ssize_t)PROBE_MAX_BYTES, true);
    free(head);
    return d >= 0 && r->fbs[d]->read_path ? d : -1;
}

/* True when a backend that reads paths took the file (*st: how it went). */
static bool by_path(prism_reader *r, int fd, const char *path, prism_status *st)
{
    struct stat sb;
    int d = path_choice(r, fd, &sb);
    if (d == -1)
        return false;
    if (d < 0 || take(r, (size_t)d) != PRISM_OK) {
        *st = (prism_status)r->err.code;
        return true;
    }
    const char *msg = NULL;
    uint64_t off = 0;
    r->fed = (uint64_t)sb.st_size;
    *st = pf_reader_foreign_status(r, r->fb->read_path(r->fst, path, &msg, &off), msg, off);
    return true;
}

bool prism_reader_path_only(prism_reader *r, const char *path)
{
    if (!r || !path || r->err.code)
        return false;
    int fd = pb_open_read(path);
    if (fd < 0)
        return false;
    struct stat sb;
    int d = path_choice(r, fd, &sb);
    close(fd);
    return d >= 0;
}

prism_status prism_reader_read_path(prism_reader *r, const char *path)
{
    if (!r || !path)
        return PRISM_E_ARG;
    if (r->err.code)
        return (prism_status)r->err.code;
    if (prism_reader_input_offset(r) == 0)
        prism_reader_name(r, path);
    int fd = pb_open_read(path);
    if (fd < 0)
        return pf_reader_fail(r, PRISM_E_IO, 0, "%s", strerror(errno));
    prism_status st;
    if (!by_path(r, fd, path, &st))
        st = prism_reader_read_fd(r, fd);
    close(fd);
    return st;
}

prism_status prism_read_file(const char *path, const prism_reader_callbacks *cb,
                             void *ctx, prism_reader **out)
{
    prism_reader *r = prism_reader_new(cb, ctx);
    *out = r;
    if (!r)
        return PRISM_E_NOMEM;
    prism_status st = prism_reader_read_path(r, path);
    if (st == PRISM_OK || st == PRISM_NEED_MORE)
        st = prism_reader_finish(r);
    if (st == PRISM_OK)
        prism_reader_add_workers(r, path);
    return st;
}

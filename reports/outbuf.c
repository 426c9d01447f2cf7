/*
 * outbuf.c - ob, the exports' output buffer (see outbuf.h).
 */
#include "outbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "jsonw.h"

/* The writer thread and the block it writes (or wrote last). */
struct ob_writer {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    FILE *f;
    char *buf;
    size_t len;
    bool busy;                  /* buf[0..len) still to be written           */
    bool stop;
    int err;                    /* errno of the first failed fwrite, else 0  */
    int fd;                     /* a regular file's: its writeback started as
                                   blocks arrive; -1: not one                */
    off_t kicked;               /* ... up to here                            */
};

/* Ask the kernel to start writing what reached f so far (not to wait): an
 * export of hundreds of MB is fsync'd at the end (report.c), and the disk
 * then works while the rest is formatted rather than after it. */
static void kick_writeback(ob_writer *w)
{
    off_t end = ftello(w->f);
    if (w->fd < 0 || end <= w->kicked)
        return;
    if (sync_file_range(w->fd, w->kicked, end - w->kicked, SYNC_FILE_RANGE_WRITE))
        w->fd = -1;                     /* not supported here: leave it */
    w->kicked = end;
}

static void *writer_main(void *arg)
{
    ob_writer *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (!w->busy)
            break;                      /* stopped, nothing left */
        pthread_mutex_unlock(&w->mu);
        errno = 0;
        if (fwrite(w->buf, 1, w->len, w->f) != w->len && !w->err)
            w->err = errno ? errno : EIO;
        kick_writeback(w);
        pthread_mutex_lock(&w->mu);
        w->busy = false;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Until the writer holds no block (the caller holds w->mu). */
static void writer_idle(ob_writer *w)
{
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
}

/* The writer thread with its block, or NULL (then o->sync: in place). */
static ob_writer *writer_start(ob *o)
{
    ob_writer *w = calloc(1, sizeof *w);
    char *spare = w ? malloc(OB_CAP) : NULL;
    if (!spare)
        goto fail;
    w->f = o->f;
    w->buf = spare;
    struct stat sb;
    w->fd = fileno(o->f);
    if (w->fd < 0 || fstat(w->fd, &sb) || !S_ISREG(sb.st_mode))
        w->fd = -1;
    w->kicked = w->fd >= 0 ? ftello(o->f) : 0;
    if (w->kicked < 0)
        w->kicked = 0;
    if (pthread_mutex_init(&w->mu, NULL))
        goto fail;
    if (pthread_cond_init(&w->cv, NULL)) {
        pthread_mutex_destroy(&w->mu);
        goto fail;
    }
    if (pthread_create(&w->th, NULL, writer_main, w)) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        goto fail;
    }
    return w;
fail:
    free(spare);
    free(w);
    o->sync = true;
    return NULL;
}

bool ob_open(ob *o, FILE *f)
{
    *o = (ob){ .f = f, .buf = malloc(OB_CAP) };
    return o->buf != NULL;
}

void ob_spill(ob *o)
{
    if (!o->len)
        return;
    if (!o->w && (o->sync || !(o->w = writer_start(o)))) {
        fwrite(o->buf, 1, o->len, o->f);
        o->len = 0;
        return;
    }
    ob_writer *w = o->w;
    pthread_mutex_lock(&w->mu);
    writer_idle(w);
    char *done = w->buf;                /* the two blocks change hands */
    w->buf = o->buf;
    w->len = o->len;
    w->busy = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    o->buf = done;
    o->len = 0;
}

void ob_flush(ob *o)
{
    ob_spill(o);
    if (o->w) {
        pthread_mutex_lock(&o->w->mu);
        writer_idle(o->w);
        int err = o->w->err;
        pthread_mutex_unlock(&o->w->mu);
        if (err)
            errno = err;                /* the writer's (EPIPE: the reader left) */
    }
}

void ob_close(ob *o)
{
    ob_flush(o);
    int err = errno;
    ob_writer *w = o->w;
    if (w) {
        pthread_mutex_lock(&w->mu);
        w->stop = true;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w->buf);
        free(w);
        o->w = NULL;
    }
    free(o->buf);
    o->buf = NULL;
    pb_buf_free(&o->scratch);
    errno = err;
}

void ob_big(ob *o, const void *p, size_t n)
{
    if (OB_CAP - o->len >= n) {
        memcpy(o->buf + o->len, p, n);
        o->len += n;
        return;
    }
    ob_flush(o);
    fwrite(p, 1, n, o->f);
}

/* "00" .. "99" */
static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v (1 for 0). */
static unsigned ndigits(uint64_t v)
{
    static const uint64_t pow10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
        100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
    };
    unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
    unsigned n = (bits * 1233u) >> 12;          /* ~ bits * log10(2) */
    return n + ((v | 1) >= pow10[n]);       /* v | 1: 0 has a digit */
}

/* Exactly 4 digits of v < 10000 at p. */
static inline void four(char *p, uint32_t v)
{
    uint32_t hi = v / 100, lo = v % 100;
    memcpy(p, digits2 + 2 * hi, 2);
    memcpy(p + 2, digits2 + 2 * lo, 2);
}

char *ob_fmt_u64(char *p, uint64_t v)
{
    char *e = p + ndigits(v), *q = e;           /* written from the end, in place */
    /* 8 digits a turn in 32-bit arithmetic (a timestamp in us: one or two) */
    while (v >= 100000000u) {
        uint32_t low = (uint32_t)(v % 100000000u);
        v /= 100000000u;
        q -= 8;
        four(q, low / 10000);
        four(q + 4, low % 10000);
    }
    uint32_t w = (uint32_t)v;
    while (w >= 100) {
        uint32_t d = (w % 100) * 2;
        w /= 100;
        *--q = digits2[d + 1];
        *--q = digits2[d];
    }
    if (w >= 10) {
        *--q = digits2[w * 2 + 1];
        *--q = digits2[w * 2];
    } else {
        *--q = (char)('0' + w);
    }
    return e;
}

char *ob_fmt_us(char *p, uint64_t ns)
{
    p = ob_fmt_u64(p, ns / 1000u);
    unsigned f = (unsigned)(ns % 1000u);
    if (f) {
        *p++ = '.';
        *p++ = (char)('0' + f / 100);
        f %= 100;
        if (f) {
            *p++ = (char)('0' + f / 10);
            if (f % 10)
                *p++ = (char)('0' + f % 10);
        }
    }
    return p;
}

void ob_i64(ob *o, int64_t v)
{
    char *p = ob_room(o, OB_NUM_MAX);
    char *s = p;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        *p++ = '-';
        u = 0 - u;                      /* INT64_MIN too */
    }
    o->len += (size_t)(ob_fmt_u64(p, u) - s);
}

/* v written exactly where it is a multiple of 2^-20 below 10^9 in
 * magnitude (an integer; MiB of whole bytes): the integer part, and the
 * fraction's at most 20 decimals without trailing zeros (a reader's strtod
 * gets v back, as from %.17g, at a tenth of its cost); else NULL. */
static char *fmt_dyadic(char *p, double v)
{
    if (!(v > -1e9 && v < 1e9))
        return NULL;
    double scaled = v * 1048576.0;      /* exact: a power of two */
    if (scaled != (double)(int64_t)scaled || (v == 0 && signbit(v)))
        return NULL;                    /* (-0 too: "-0" is %.17g's) */
    int64_t n = (int64_t)scaled;
    if (n < 0) {
        *p++ = '-';
        n = -n;
    }
    p = ob_fmt_u64(p, (uint64_t)n >> 20);
    uint64_t frac = (uint64_t)n & 0xfffff;
    if (frac)
        *p++ = '.';
    while (frac) {                      /* a digit a turn: ends within 20 */
        frac *= 10;
        *p++ = (char)('0' + (frac >> 20));
        frac &= 0xfffff;
    }
    return p;
}

void ob_double(ob *o, double v)
{
    if (!isfinite(v)) {
        OB_LIT(o, "null");
        return;
    }
    char *p = ob_room(o, OB_NUM_MAX);
    char *e = fmt_dyadic(p, v);
    if (e) {
        o->len += (size_t)(e - p);
        return;
    }
    int n = snprintf(p, OB_NUM_MAX, "%.17g", v);
    if (n > 0 && n < OB_NUM_MAX)
        o->len += (size_t)n;
}

void ob_json_str(ob *o, const char *s, size_t n)
{
    pb_buf_clear(&o->scratch);
    if (pb_json_buf_string(&o->scratch, s, n)) {
        ob_mem(o, o->scratch.data, o->scratch.len);
        return;
    }
    ob_flush(o);                        /* no memory: escaped straight to f */
    pb_json_put_string(o->f, s, n);
}

/*
 * columns.c - the line width of the text reports and their name columns
 * (see report.h).  Names from a profile are printed whole, escaped; the
 * width only decides where they go: in a column widened for them, or on a
 * line of their own with the row's figures on the next.
 */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "escape.h"

/* Past this a width means "as wide as it takes"; it keeps the sums of
 * columns far from INT_MAX. */
#define REPORT_WIDTH_MAX (1 << 20)

int report_width(FILE *f)
{
    const char *c = getenv("COLUMNS");
    if (c && *c >= '0' && *c <= '9') {          /* no sign, no blank: digits only */
        char *end;
        errno = 0;
        long v = strtol(c, &end, 10);
        if (!*end && v > 0)
            return errno == ERANGE || v > REPORT_WIDTH_MAX ? REPORT_WIDTH_MAX : (int)v;
    }
    struct winsize ws;
    int fd = f ? fileno(f) : -1;
    if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return REPORT_WIDTH_DEFAULT;
}

int report_cols(const char *s)
{
    int w = 0;
    char rep[ESC_CHAR_MAX];
    bool esc;
    while (s && *s) {
        s += esc_char(s, rep, &esc);
        w += esc ? (int)strlen(rep) : 1;        /* "\x1b" shows as 4 characters */
    }
    return w;
}

void report_cell(FILE *f, const char *s, int lead, int col)
{
    int w = report_cols(s);
    esc_fputs(s, f);
    if (w <= col) {
        fprintf(f, "%*s", col - w, "");
        return;
    }
    /* too wide for the column: the name keeps this line, the figures go
     * on the next, in their columns */
    fprintf(f, "\n%*s", lead + col, "");
}

/* s with the insides of brackets deeper than keep replaced by "...", into
 * buf (cut at cap - 1 bytes).  Returns the whole form's length (more than
 * cap - 1: cut). */
static size_t collapse(const char *s, int keep, char *buf, size_t cap)
{
    size_t n = 0;
    int depth = 0;
    for (const char *p = s; *p; p++) {
        bool open = *p == '<' || *p == '(', close = *p == '>' || *p == ')';
        if (close && depth > 0)
            depth--;
        const char *put = depth <= keep ? NULL
                          : depth == keep + 1 && (p[-1] == '<' || p[-1] == '(') ? "..." : "";
        if (!put) {
            if (n + 1 < cap)
                buf[n] = *p;
            n++;
        }
        for (; put && *put; put++, n++)
            if (n + 1 < cap)
                buf[n] = *put;
        if (open)
            depth++;
    }
    buf[n + 1 < cap ? n : cap - 1] = '\0';
    return n;
}

const char *report_symbol(const char *s, char *buf, size_t cap)
{
    if (!s || strlen(s) <= REPORT_SYMBOL_MAX || cap < REPORT_SYMBOL_MAX + 1)
        return s;
    for (int keep = 2; keep >= 0; keep--)
        if (collapse(s, keep, buf, cap) <= REPORT_SYMBOL_MAX)
            return buf;
    size_t n = REPORT_SYMBOL_MAX - 3;
    while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80)
        n--;                            /* not inside a UTF-8 sequence */
    memcpy(buf + n, "...", 4);
    return buf;
}

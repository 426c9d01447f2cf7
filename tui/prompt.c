/*
 * prompt.c - the line prompt on the status row (search, filter), and the
 * n / N keys that step through the search's matches.
 *
 * It waits for keys with poll() and no timeout: a slow typist's pause is
 * not a cancel (the main loop reads with nodelay, where "no key yet" is
 * ERR).  A signal (the caller's stop flag) or the terminal going away
 * (POLLHUP, a read error, readable with nothing to read) ends it with -1
 * so the caller quits instead of spinning.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "frame.h"

static bool is_cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

int ui_line_key(ui_line *l, int key)
{
    switch (key) {
    case '\n': case '\r': case KEY_ENTER:
        return UI_LINE_ACCEPT;
    case 27: case 7:                    /* Esc, ^G */
        return UI_LINE_CANCEL;
    case 21:                            /* ^U */
        l->n = 0;
        l->buf[0] = '\0';
        return UI_LINE_EDIT;
    case KEY_BACKSPACE: case 127: case 8:
        while (l->n > 0 && is_cont((unsigned char)l->buf[l->n - 1]))
            l->n--;                     /* a whole UTF-8 character */
        if (l->n > 0)
            l->n--;
        l->buf[l->n] = '\0';
        return UI_LINE_EDIT;
    default:
        break;
    }
    if (key >= 32 && key < 256 && key != 127 && l->n + 1 < sizeof l->buf) {
        l->buf[l->n++] = (char)key;
        l->buf[l->n] = '\0';
    }
    return UI_LINE_EDIT;
}

static void show(ui *u, const char *label, const ui_line *l)
{
    ui_rect r = { u->rows - 1, 0, 1, u->cols };
    ui_fill(&r, 0, A_NORMAL);
    int c = ui_print(&r, 0, 0, A_BOLD, label);
    const char *text = l->buf;
    while (*text && ui_width(text) >= u->cols - c)      /* keep the end in view */
        text++;
    while (*text && is_cont((unsigned char)*text))
        text++;
    c += ui_print(&r, 0, c, A_NORMAL, text);
    move(u->rows - 1, c < u->cols ? c : u->cols - 1);
    refresh();
}

int ui_prompt(ui *u, const char *label, ui_line *l, const volatile sig_atomic_t *stop,
              void (*changed)(ui *u, const char *text, void *ctx), void *ctx)
{
    int rc = -1, idle = 0;
    curs_set(1);
    show(u, label, l);
    while (!*stop) {
        struct pollfd p = { STDIN_FILENO, POLLIN, 0 };
        int n = poll(&p, 1, -1);
        if (*stop)
            break;
        bool woken = n < 0 && errno == EINTR;   /* SIGWINCH: KEY_RESIZE to read */
        if ((n < 0 && !woken) || (n > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))))
            break;                      /* the terminal went away */
        int ch, keys = 0, res = UI_LINE_EDIT;
        bool redraw = false;
        while (res == UI_LINE_EDIT && (ch = getch()) != ERR) {
            keys++;
            if (ch == KEY_RESIZE) {
                getmaxyx(stdscr, u->rows, u->cols);
                redraw = true;
                continue;
            }
            char old[sizeof l->buf];
            memcpy(old, l->buf, sizeof old);
            res = ui_line_key(l, ch);
            redraw = redraw || strcmp(old, l->buf) != 0;
        }
        if (res != UI_LINE_EDIT) {
            rc = res == UI_LINE_ACCEPT;
            break;
        }
        if (keys == 0) {
            if (!woken && ++idle > 100) /* readable but nothing to read: gone */
                break;
            continue;
        }
        idle = 0;
        if (redraw && changed)
            changed(u, l->buf, ctx);
        show(u, label, l);
    }
    curs_set(0);
    return rc;
}

int ui_search_key(ui *u, void *st, int key, ui_find_fn find)
{
    if (!st)
        return UI_NONE;
    if (!u->search[0]) {
        ui_message(u, "no search: press / first");
        return UI_REDRAW;
    }
    if (!find(u, st, key == 'N' ? -1 : 1))
        ui_message(u, "no match for '%s'", u->search);
    return UI_REDRAW;
}

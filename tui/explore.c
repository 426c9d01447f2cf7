/*
 * explore.c - the explorer's frame: terminal set-up and restore, the main
 * loop, the global key table, the tab bar and the status line.
 *
 * The terminal is restored on every exit path: normal quit, errors, and
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT (quitsig.h: a flag ends the loop; getch is
 * woken by the signal; a loop held up by a long read or refresh gets a
 * second, then SIGALRM restores the terminal and exits).  Fatal signals
 * restore it before dying.  A failing read
 * (the terminal went away) ends the loop instead of spinning.
 */
#include <errno.h>
#include <poll.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "compare_view.h"
#include "frame.h"
#include "quitsig.h"
#include "source.h"
#include "timeline_pane.h"
#include "ui.h"

static bool curses_on;

static void restore_terminal(void)
{
    quitsig_disarm();                   /* leaving anyway: no deadline */
    if (curses_on) {
        curses_on = false;
        endwin();
    }
}

/* ---- shared actions ---- */

void ui_select(ui *u, uint64_t path_hash)
{
    u->sel_hash = path_hash;
}

void ui_show(ui *u, int i)
{
    if (i < 0 || i >= UI_NPANES)
        return;
    if (u->panes[i] == &pane_help && u->pane != i)
        u->prev_pane = u->pane;
    u->pane = i;
}

void ui_message(ui *u, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof u->msg, fmt, ap);
    va_end(ap);
}

/* Does name contain pat (not empty), ignoring case? */
static bool contains(const char *name, const char *pat)
{
    size_t n = strlen(pat);
    for (const char *p = name; p && *p; p++)
        if (!strncasecmp(p, pat, n))
            return true;
    return false;
}

bool ui_matches(const ui *u, const char *name)
{
    return u->search[0] && contains(name, u->search);
}

bool ui_filter_matches(const ui *u, const char *name)
{
    return !u->filter[0] || contains(name, u->filter);
}

void ui_jump(ui *u, int pane, uint64_t path_hash)
{
    if (u->nhistory == UI_HISTORY) {    /* drop the oldest */
        memmove(&u->history[0], &u->history[1], sizeof u->history[0] * (UI_HISTORY - 1));
        u->nhistory--;
    }
    u->history[u->nhistory].pane = u->pane;
    u->history[u->nhistory].sel_hash = u->sel_hash;
    u->nhistory++;
    if (path_hash)
        u->sel_hash = path_hash;
    u->jump_pane = pane;
}

bool ui_back(ui *u)
{
    if (u->nhistory == 0)
        return false;
    u->nhistory--;
    u->sel_hash = u->history[u->nhistory].sel_hash;
    ui_show(u, u->history[u->nhistory].pane);
    return true;
}

/* ---- global keys ---- */

static int k_quit(ui *u, void *st, int key)
{
    (void)u; (void)st; (void)key;
    return UI_QUIT;
}

static int k_help(ui *u, void *st, int key)
{
    (void)st; (void)key;
    if (u->panes[u->pane] == &pane_help)
        ui_show(u, u->prev_pane);
    else
        ui_show(u, UI_NPANES - 1);
    return UI_REDRAW;
}

static int k_next(ui *u, void *st, int key)
{
    (void)st;
    int n = UI_NPANES - 1;              /* help is not in the cycle */
    int p = u->pane >= n ? u->prev_pane : u->pane;
    ui_show(u, key == KEY_BTAB ? (p + n - 1) % n : (p + 1) % n);
    return UI_REDRAW;
}

static int k_number(ui *u, void *st, int key)
{
    (void)st;
    ui_show(u, ui_pane_by_key(key));
    return UI_REDRAW;
}

static void draw(ui *u);

/* For the prompts (frame_keys.c): redraw the frame; the quit-signal flag. */
void ui_redraw(ui *u)
{
    draw(u);
}

const volatile sig_atomic_t *ui_stop_flag(void)
{
    return quitsig_flag();
}

static int k_back(ui *u, void *st, int key)
{
    (void)st; (void)key;
    if (!ui_back(u))
        ui_message(u, "nothing to go back to");
    return UI_REDRAW;
}

static int k_pause(ui *u, void *st, int key)
{
    (void)st; (void)key;
    source *src = u->src;
    if (!src || !src->following) {
        ui_message(u, "not following: the profile is complete");
        return UI_REDRAW;
    }
    src->paused = !src->paused;
    ui_message(u, src->paused ? "following paused (p: resume)" : "following resumed");
    return UI_REDRAW;
}

#define BACK_HELP "back to where the last jump came from"
#define FILTER_HELP "filter: Tree and Ops show matching names only (empty: all)"

/* The keys everywhere; the number keys (after S-Tab) come from the pane
 * registry (panes.c), one row a tab. */
static const ui_key fixed_keys[] = {
    { 'q', "q", k_quit, "quit" },
    { '?', "?", k_help, "help (this screen); again to go back" },
    { KEY_F(1), "F1", k_help, "help (this screen); again to go back" },
    { '\t', "Tab", k_next, "next pane" },
    { KEY_BTAB, "S-Tab", k_next, "previous pane" },
    { '/', "/", ui_key_search, "search names (n / N: next / previous match)" },
    { '\\', "\\", ui_key_filter, FILTER_HELP },
    { KEY_F(4), "F4", ui_key_filter, FILTER_HELP },
    { 27, "Esc", k_back, BACK_HELP },
    { KEY_BACKSPACE, "Bksp", k_back, BACK_HELP },
    { 127, "Bksp", k_back, BACK_HELP },
    { 8, "Bksp", k_back, BACK_HELP },
    { 'p', "p", k_pause, "pause / resume following a live profile" },
};
enum { FIXED_KEYS = sizeof fixed_keys / sizeof fixed_keys[0], NUMBERS_AT = 5 };

const ui_key *ui_global_keys(size_t *n)
{
    static ui_key keys[FIXED_KEYS + UI_NPANES];
    static char labels[UI_NPANES][2], help[96];
    static size_t nkeys;
    if (!nkeys) {
        int first = -1, last = -1;
        for (int i = 0; i < UI_NPANES; i++)
            if (ui_panes[i].key) {
                first = first < 0 ? i : first;
                last = i;
            }
        if (first >= 0)
            snprintf(help, sizeof help, "show pane N (the tab bar: %c %s ... %c %s)",
                     ui_panes[first].key, ui_panes[first].ops->name, ui_panes[last].key,
                     ui_panes[last].ops->name);
        for (size_t i = 0; i < NUMBERS_AT; i++)
            keys[nkeys++] = fixed_keys[i];
        for (int i = 0; i < UI_NPANES; i++)
            if (ui_panes[i].key) {
                labels[i][0] = (char)ui_panes[i].key;
                keys[nkeys++] = (ui_key){ ui_panes[i].key, labels[i], k_number, help };
            }
        for (size_t i = NUMBERS_AT; i < FIXED_KEYS; i++)
            keys[nkeys++] = fixed_keys[i];
    }
    *n = nkeys;
    return keys;
}

/* ---- frame ---- */

static void draw(ui *u)
{
    getmaxyx(stdscr, u->rows, u->cols);
    erase();
    ui_layout l = ui_layout_compute(u->rows, u->cols);
    if (l.too_small) {
        ui_draw_too_small(u->rows, u->cols);
    } else {
        ui_draw_tabs(u, &l);
        if (u->cmp) {
            cmpv_draw(u, &l);
        } else {
            const ui_pane *p = u->panes[u->pane];
            p->draw(u, u->state[u->pane], l.body_y, 0, l.body_h, u->cols);
        }
        ui_draw_status(u, &l);
    }
    refresh();
}

/* A key goes to the compare-mode keys, the pane's, then the global ones;
 * a function returning UI_PASS hands it on to the next table. */
static int dispatch(ui *u, int ch)
{
    if (ch == KEY_MOUSE)
        return ui_mouse_key(u, dispatch);
    size_t nglobal;
    const ui_key *global = ui_global_keys(&nglobal);
    const ui_key *tables[3] = { u->cmp ? cmpv_keys : NULL, u->panes[u->pane]->keys, global };
    size_t sizes[3] = { u->cmp ? cmpv_nkeys : 0, u->panes[u->pane]->nkeys, nglobal };
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizes[t]; i++)
            if (tables[t][i].key == ch) {
                int r = tables[t][i].fn(u, u->state[u->pane], ch);
                if (!(r & UI_PASS))
                    return r;
                break;
            }
    return UI_NONE;
}

static void init_colors(ui *u)
{
    u->color = has_colors() && !getenv("NO_COLOR") && start_color() == OK;
    if (!u->color)
        return;
    use_default_colors();
    init_pair(CP_BAR, COLOR_CYAN, -1);
    init_pair(CP_TAB, COLOR_BLACK, COLOR_CYAN);
    init_pair(CP_SEL, COLOR_BLACK, COLOR_YELLOW);
    init_pair(CP_HIGH, COLOR_RED, -1);
    init_pair(CP_MEDIUM, COLOR_YELLOW, -1);
    init_pair(CP_LOW, COLOR_GREEN, -1);
    init_pair(CP_DIM, COLOR_BLUE, -1);
    init_pair(CP_TITLE, COLOR_CYAN, -1);
    flame_init_colors();        /* CP_HOT .. CP_FMATCH: readable text on blocks */
}

bool ui_want_tui(void)
{
    const char *term = getenv("TERM");
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && term && *term &&
           strcmp(term, "dumb") != 0;
}

/* Select the heaviest root (when nothing valid is selected). */
static void select_default(ui *u)
{
    const prism_tree *t = prism_analysis_tree(u->a);
    uint32_t heaviest = t->first_root;
    for (uint32_t n = t->first_root; n != PRISM_NO_NODE; n = t->nodes[n].next_sibling)
        if (t->nodes[n].total_ns > t->nodes[heaviest].total_ns)
            heaviest = n;
    if (heaviest != PRISM_NO_NODE)
        u->sel_hash = t->nodes[heaviest].path_hash;
}

/* --step INDEX: the Timeline selects the step of that index once the
 * series holds it (a big file shows its steps as it loads, so this is
 * tried again on each reload until it succeeds). */
static void open_step(ui *u)
{
    if (u->want_step && tl_select_step(u, u->state[PANE_TIMELINE], u->want_step_index))
        u->want_step = false;
}

/* The analysis changed (live data, or a replaced file): panes rebuild
 * their views, keeping selection and expansion by path hash. */
static void reload_panes(ui *u)
{
    u->a = u->src->a;
    if (prism_analysis_find(u->a, u->sel_hash) == PRISM_NO_NODE)
        select_default(u);
    for (int i = 0; i < UI_NPANES; i++)
        if (u->panes[i]->reload)
            u->panes[i]->reload(u, u->state[i]);
    open_step(u);
}

/* Handle one key; false when the explorer should quit. */
static bool on_key(ui *u, int ch)
{
    u->msg[0] = '\0';
    int r = ch == KEY_RESIZE ? UI_REDRAW : dispatch(u, ch);
    if (r & UI_QUIT)
        return false;
    if (u->jump_pane >= 0) {
        ui_show(u, u->jump_pane);
        u->jump_pane = -1;
    }
    return true;
}

static void start_curses(ui *u)
{
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);             /* keys are read when poll says so */
    curs_set(0);
    set_escdelay(25);
    ui_mouse_start();                  /* click, double-click, wheel */
    init_colors(u);
    getmaxyx(stdscr, u->rows, u->cols);
}

/*
 * The loop: poll the terminal and the file's change notifications.  With
 * nothing live the wait has no timeout (idle CPU 0).  While a big file
 * loads, each turn reads a slice of it (LOAD_STEP_NS of work) and only
 * peeks at the terminal, so keys are answered between slices; the partial
 * analysis is refreshed (source_sync) before a key is handled or the
 * screen drawn, which the loader asks for every ~250 ms.  A refresh costs
 * more as steps pile up (~0.3 s a million steps), so reading waits while
 * keys come (source_wait_ms): a run of keys costs one refresh, not one
 * each; q and signals never wait for one.  While following
 * (paused or not) the status line's age is redrawn every second, and
 * without inotify the file is polled every 100 ms.  Returns -1 when the
 * file given could not be read to its end (src->error says why).
 */
#define LOAD_STEP_NS 30000000u

static int run(ui *u, source *src)
{
    const volatile sig_atomic_t *quit = quitsig_flag();
    int idle_reads = 0;
    draw(u);
    uint64_t drawn = source_now_ms(), key_at = 0;
    while (!*quit) {
        bool live = src->following && !src->paused && !src->loading;
        struct pollfd p[2] = { { STDIN_FILENO, POLLIN, 0 }, { src->notify_fd, POLLIN, 0 } };
        int n = poll(p, src->notify_fd >= 0 && live ? 2 : 1, source_wait_ms(src, drawn, key_at));
        if (*quit)
            break;
        if (n < 0 && errno != EINTR)
            break;
        bool redraw = false;
        if (n > 0 && (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)))
            break;                      /* the terminal went away */
        int ch, keys = 0;
        while ((ch = getch()) != ERR) { /* keys, and KEY_RESIZE after SIGWINCH */
            keys++;
            if (ch != 'q' && source_sync(src))  /* loading: keys see the data so far */
                reload_panes(u);
            if (!on_key(u, ch) || *quit)
                return 0;
            redraw = true;
            key_at = source_now_ms();
        }
        if (n > 0 && (p[0].revents & POLLIN) && keys == 0) {
            if (++idle_reads > 100)     /* readable but nothing to read: gone */
                break;
        } else {
            idle_reads = 0;
        }
        if (src->loading && source_may_read(src, key_at)) {
            int r = source_load_step(src, LOAD_STEP_NS);
            if ((r & SRC_LOAD_FAILED) && src->load_fatal)
                return -1;
            if (r & SRC_LOAD_FAILED) {
                ui_message(u, "%s", src->error);
                src->error[0] = '\0';
            }
            if (r & (SRC_LOAD_CHANGED | SRC_LOAD_FAILED))
                reload_panes(u);
            redraw = redraw || r != 0;
        }
        bool notified = n > 0 && src->notify_fd >= 0 && (p[1].revents & POLLIN) &&
                        source_drain_notify(src);
        if (live && (notified || n == 0 || src->notify_fd < 0)) {
            uint64_t gen = src->generation;
            if (source_update(src) || gen != src->generation) {
                reload_panes(u);
                redraw = true;
            }
            if (src->error[0]) {
                ui_message(u, "%s", src->error);
                src->error[0] = '\0';
            }
        }
        if (src->following && source_wait_ms(src, drawn, key_at) == 0)
            redraw = true;              /* the age on the status line counts on */
        if (*quit)
            break;
        if (redraw || n < 0) {
            if (source_sync(src))
                reload_panes(u);
            draw(u);
            drawn = source_now_ms();
        }
    }
    return 0;
}

bool ui_term_open(ui *u)
{
    setlocale(LC_ALL, "");
    const char *cs = nl_langinfo(CODESET);
    u->utf8 = cs && !strcasecmp(cs, "UTF-8") && !getenv("PRISM_ASCII");
    fmt_set_utf8(u->utf8);
    ui_draw_set_utf8(u->utf8);
    quitsig_install(restore_terminal);
    atexit(restore_terminal);
    if (!newterm(NULL, stdout, stdin)) {
        fprintf(stderr, "prism-top: cannot initialise the terminal (TERM=%s)\n", getenv("TERM"));
        return false;
    }
    curses_on = true;
    start_curses(u);
    return true;
}

void ui_term_close(void)
{
    restore_terminal();
}

/* Terminal up, panes created, the loop, everything torn down. */
static int session(ui *u, source *src)
{
    for (int i = 0; i < UI_NPANES; i++)
        u->panes[i] = ui_panes[i].ops;
    if (!ui_term_open(u))
        return EXIT_USAGE;
    select_default(u);
    int sides = u->cmp ? 2 : 1, focus = u->side;
    for (int k = 0; k < sides; k++) {   /* each side has its own view state */
        if (u->cmp)
            cmpv_use(u, k);
        for (int i = 0; i < UI_NPANES; i++)
            u->state[i] = u->panes[i]->init ? u->panes[i]->init(u) : NULL;
    }
    if (u->cmp)
        cmpv_use(u, focus);
    open_step(u);
    int rc = run(u, src) < 0 ? EXIT_BADINPUT : EXIT_OK;
    restore_terminal();
    for (int k = 0; k < sides; k++) {
        if (u->cmp)
            cmpv_use(u, k);
        for (int i = 0; i < UI_NPANES; i++)
            if (u->panes[i]->free)
                u->panes[i]->free(u->state[i]);
    }
    return rc;
}

int explore_main(const char *path, int mode, const prism_analysis_opts *opts)
{
    return explore_main_at(path, mode, opts, NULL);
}

int explore_main_at(const char *path, int mode, const prism_analysis_opts *opts,
                    const explore_at *at)
{
    source src;
    if (source_open(&src, path, (source_mode)mode, opts) != 0) {
        fprintf(stderr, "prism-top: %s\n", src.error);
        source_close(&src);
        return EXIT_BADINPUT;
    }
    ui u = { .a = src.a, .src = &src, .path = path, .jump_pane = -1 };
    if (at && at->pane >= 0 && at->pane < UI_NPANES)
        u.pane = u.prev_pane = at->pane;
    if (at && at->have_step) {
        u.want_step = true;
        u.want_step_index = at->step;
    }
    int rc = session(&u, &src);
    if (rc == EXIT_BADINPUT && src.error[0])   /* the rest of the file was bad */
        fprintf(stderr, "prism-top: %s\n", src.error);
    source_close(&src);
    return rc;
}

int explore_compare(const char *base, const char *cur, const prism_analysis_opts *opts)
{
    source s[2];
    const char *paths[2] = { base, cur };
    for (int k = 0; k < 2; k++)         /* both read whole: the comparison is made once */
        if (source_open(&s[k], paths[k], SRC_NO_FOLLOW, opts) != 0 || source_load_all(&s[k]) != 0) {
            fprintf(stderr, "prism-top: %s\n", s[k].error);
            for (int j = 0; j <= k; j++)
                source_close(&s[j]);
            return EXIT_BADINPUT;
        }
    ui u = { .path = cur, .jump_pane = -1 };
    int rc = EXIT_BADINPUT;
    if (cmpv_setup(&u, s[0].a, s[1].a, base, cur) == 0) {
        rc = session(&u, &s[1]);        /* s[1] is complete: never followed */
        cmpv_teardown(&u);
    } else {
        fprintf(stderr, "prism-top: out of memory comparing %s and %s\n", base, cur);
    }
    source_close(&s[0]);
    source_close(&s[1]);
    return rc;
}

/*
 * namefit.h - names in a column that stay told apart (issue 34).  Rows of
 * a model's regions share long prefixes ("encoder.layers.") and differ in
 * a middle index and the leaf; cutting the middle of each name makes them
 * all read "encoder.…ckward)".  Here the part a row shares with its
 * neighbours goes first ("…5.linear2 (backward)"), then words of what is
 * left shorten to their first letter from the left ("…5.s.out_proj
 * (backward)"): indices, the leaf and a "(suffix)" stay whole as long as
 * anything can.  Pure functions, no curses; names are escaped here, so
 * callers print what they get.
 */
#ifndef PRISM_TUI_NAMEFIT_H
#define PRISM_TUI_NAMEFIT_H

#include <stdbool.h>
#include <stddef.h>

/* Whether c separates the words of a name ('.', '/', ':', ' '). */
bool nf_sep(char c);

/* The bytes at the start of `name` that `other` shares with it, backed off
 * to just after a separator (the whole of a word or nothing), and never
 * all of `name`.  When `other` is all of name's start up to a separator
 * ("a.b" under "a.b.c") that separator counts too.  0 under 3 bytes: an
 * ellipsis would save nothing. */
size_t nf_common(const char *name, const char *other);

/* For each of names[0..n) (NULL: skipped), the bytes its cell may replace
 * by an ellipsis: the start it shares with every other name of the set
 * that begins with the same word (0 when it is the only one).  out[i] for
 * each name; O(n^2), for the rows on a screen. */
void nf_shared(const char *const *names, size_t n, size_t *out);

/* The columns `name` needs with its first `shared` bytes folded into an
 * ellipsis (escaped, as shown); its whole width when shared is 0. */
int nf_need(const char *name, size_t shared);

/* `name` escaped and fitted in `width` columns: whole when it fits; else
 * "…" and the rest after its shared start; else that rest with its words
 * shortened from the left (never a number, the leaf -- the last word not
 * in parentheses -- or a "(suffix)"); what still does not fit loses its
 * middle.  The ellipsis is "~"
 * without UTF-8.  Returns the columns used. */
int nf_fit(char *out, size_t cap, const char *name, size_t shared, int width, bool utf8);

#endif

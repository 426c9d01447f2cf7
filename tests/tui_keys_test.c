/*
 * tui_keys_test.c - the explorer's key tables, as the help screen (?)
 * lists them: in every pane, no key code bound twice, no key's name
 * naming two keys ("Up/k": the help joins the names of the keys bound
 * alike, so it read "Up/k/k"), and keys bound to one action with one text,
 * so that the help gives each action one line (the Flame pane listed
 * "Left/h" and "h", two "Enter" lines, "Home/u/u").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../tui/ui.h"

static void check_table(const char *pane, const ui_key *k, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strchr(k[i].name, '/') && strcmp(k[i].name, "/"))
            fail_msg("%s: key '%s' names two keys", pane, k[i].name);
        for (size_t j = 0; j < i; j++) {
            if (k[j].key == k[i].key)
                fail_msg("%s: key code %d bound twice ('%s', '%s')", pane, k[i].key,
                         k[j].name, k[i].name);
            /* one action, one text: a second wording is a second help line
             * for the same thing */
            if (k[j].fn == k[i].fn && strcmp(k[j].help, k[i].help) &&
                (strstr(k[j].help, k[i].help) == k[j].help ||
                 strstr(k[i].help, k[j].help) == k[i].help))
                fail_msg("%s: '%s' and '%s' do one thing in two words: '%s' / '%s'", pane,
                         k[j].name, k[i].name, k[j].help, k[i].help);
        }
    }
}

static void test_every_pane(void **state)
{
    (void)state;
    for (size_t p = 0; p < UI_NPANES; p++) {
        const ui_pane *pn = ui_panes[p].ops;
        if (pn && pn->keys)
            check_table(pn->name, pn->keys, pn->nkeys);
    }
    check_table("help", pane_help.keys, pane_help.nkeys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_pane),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* compare_view.h - compare mode of the explorer (internal to tui/). */
#ifndef PRISM_TUI_COMPARE_VIEW_H
#define PRISM_TUI_COMPARE_VIEW_H

#include "ui.h"

/* Load both analyses into u and compare them; -1 on allocation failure. */
int cmpv_setup(ui *u, prism_analysis *base, prism_analysis *cur, const char *base_name,
               const char *cur_name);
void cmpv_teardown(ui *u);
/* Make side k (0 base, 1 new) current: its analysis and pane states. */
void cmpv_use(ui *u, int k);
/* Draw the body: both sides of the current pane. */
void cmpv_draw(ui *u, const ui_layout *l);
/* " | +1.2 ms (+4.0%) p=0.001 *" for the selected path, or "". */
void cmpv_status(const ui *u, char *buf, size_t n);

extern const ui_key cmpv_keys[];
extern const size_t cmpv_nkeys;

#endif

/*
 * verdict.c - the leak verdict and step problems in words (see verdict.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "verdict.h"

#define SLIGHT_MB 4.0           /* MB: a rise below this is slight */
#define SLIGHT_PCT 1.0          /* %: so is one below this of the level ... */
#define SLIGHT_MAX_MB 16.0      /* ... under leak.c's least growth for a leak */

const char *verdict_word(const prism_leak *lk, int *tone)
{
    int t = VERDICT_PLAIN;
    const char *w = "no fit";
    if (lk && lk->have_fit) {
        switch (lk->verdict) {
        case PRISM_LEAK_YES: t = VERDICT_BAD; w = "LEAK"; break;
        case PRISM_LEAK_GROWING:
            /* a rise too small to matter (under SLIGHT_MB, or under
             * SLIGHT_PCT of the level, and under the analysis's least
             * growth for a leak) is said plainly, not as a warning */
            if (fabs(lk->growth_mb) < SLIGHT_MAX_MB &&
                (fabs(lk->growth_mb) < SLIGHT_MB ||
                 (isfinite(lk->growth_pct) && fabs(lk->growth_pct) < SLIGHT_PCT))) {
                w = "slight rise";
                break;
            }
            t = VERDICT_WARN;
            w = "growing";
            break;
        case PRISM_LEAK_NONE: t = VERDICT_OK; w = "no leak"; break;
        }
    }
    if (tone)
        *tone = t;
    return w;
}

void verdict_mb(char *buf, size_t cap, double mb)
{
    if (fabs(mb) >= 1024.0)
        snprintf(buf, cap, "%.2f GB", mb / 1024.0);
    else
        snprintf(buf, cap, "%.1f MB", mb);
}

void verdict_facts(char *buf, size_t cap, const prism_leak *lk, bool utf8)
{
    if (!cap)
        return;
    buf[0] = '\0';
    if (!lk || !lk->have_fit)
        return;
    char grew[32], pct[32] = "";
    verdict_mb(grew, sizeof grew, lk->growth_mb);
    if (isfinite(lk->growth_pct))
        snprintf(pct, sizeof pct, " (%+.1f%%)", lk->growth_pct);
    snprintf(buf, cap, "%+.2f%s%.2f MB/step  %s%s%s over %llu steps", lk->slope_mb_per_step,
             utf8 ? "\u00b1" : " +/- ", lk->slope_se_mb, lk->growth_mb >= 0 ? "+" : "", grew,
             pct, (unsigned long long)lk->span_steps);
}

void verdict_fit(char *buf, size_t cap, const prism_leak *lk)
{
    if (!cap)
        return;
    snprintf(buf, cap, "r2 %.2f, %zu point%s", lk ? lk->r2 : 0.0, lk ? lk->points : 0,
             lk && lk->points == 1 ? "" : "s");
}

void verdict_outlook(char *buf, size_t cap, const prism_leak *lk)
{
    if (!cap)
        return;
    buf[0] = '\0';
    if (!lk || !lk->have_fit)
        return;
    char mb[32];
    verdict_mb(mb, sizeof mb, lk->projected_mb);
    if (lk->projection_epoch)
        snprintf(buf, cap, "%s in %llu steps (epoch end)", mb,
                 (unsigned long long)lk->projection_steps);
    else
        snprintf(buf, cap, "%s in %llu steps", mb, (unsigned long long)lk->projection_steps);
}

void verdict_detail(char *buf, size_t cap, const prism_leak *lk)
{
    char out[96];
    if (!cap)
        return;
    verdict_outlook(out, sizeof out, lk);
    snprintf(buf, cap, "%s; r2 %.2f%s%s", lk && lk->reason ? lk->reason : "no verdict",
             lk ? lk->r2 : 0.0, *out ? "; " : "", out);
}

static void problem(char *line, unsigned long long n, const char *one, const char *many,
                    const char *what)
{
    snprintf(line, VERDICT_LINE, "%llu step%s %s: %s", n, n == 1 ? "" : "s", n == 1 ? one : many,
             what);
}

int verdict_step_problems(const prism_step_stats *st, char lines[][VERDICT_LINE], int max)
{
    int k = 0;
    if (!st)
        return 0;
    if (st->bad_order && k < max)
        problem(lines[k++], st->bad_order, "ends before it starts", "end before they start",
                "ignored in step statistics");
    if (st->zero_len && k < max)
        problem(lines[k++], st->zero_len, "has zero length", "have zero length",
                "ignored in step statistics");
    if (st->overlapping && k < max)
        problem(lines[k++], st->overlapping, "overlaps an earlier one", "overlap earlier ones",
                "kept, shared time counted twice");
    if (st->dup_index && k < max)
        problem(lines[k++], st->dup_index, "repeats an earlier index", "repeat earlier indexes",
                "kept");
    return k;
}

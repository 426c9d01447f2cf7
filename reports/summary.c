/*
 * summary.c - `prism-top analyze --summary [-o OUT] FILE`: the rank
 * summary of one profile (or torch trace), the small file a job is merged
 * from (docs/SUMMARY.md).  Made where the profile lies (one per rank, e.g.
 * under srun), merged later by `prism-top analyze *.sum`: the job equals
 * the one made from the profiles themselves.
 */
#include "report.h"

int rp_summary_file(const char *path, const char *output, FILE *out)
{
    prism_rank_summary s;
    char msg[256];
    uint64_t off = 0;
    prism_status st = prism_rank_summary_from_file(path, &s, msg, sizeof msg, &off);
    if (st != PRISM_OK) {
        report_error(path, st, msg, off);
        return EXIT_BADINPUT;
    }
    outfile o;
    int rc = EXIT_BADINPUT;
    if (!outfile_open(&o, output, out)) {
        bool ok = prism_rank_summary_write(o.f, &s);
        if (!ok)
            fprintf(stderr, "prism-top analyze: --summary: the summary could not be written\n");
        rc = outfile_close(&o, ok);
    }
    prism_rank_summary_free(&s);
    return rc;
}

/*
 * builtin.c - the built-in importers, in the order readers probe them
 * (prism_import_register, prism/import.h).  A new importer is a file of
 * import/ defining a prism_foreign_backend (on events.h) and one line here.
 */
#include "prism/import.h"

extern const prism_foreign_backend imp_folded_backend;     /* folded.c */

void prism_import_register(void)
{
    const prism_foreign_backend *const builtin[] = {
        prism_import_backend(),         /* torch.profiler traces (import.c) */
        &imp_folded_backend,            /* folded stacks (folded.c) */
    };
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        (void)prism_reader_add_backend(builtin[i]);
}

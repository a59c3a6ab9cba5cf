/* The seed winners (seed_winners.h) and the seed models (seed_models.h) as
 * a table, for a handle opened without a tuning database (ATD_OPEN_NO_DB,
 * or ATD_OPEN_FALLBACK; with NVRTC). */
#ifndef AT_DISPATCH_SEEDS_H
#define AT_DISPATCH_SEEDS_H

#include "dispatch/policy/tuned_table.h"
#include "include/autotune/dispatch.h"

/* Fills t (emptied first) with the seeds: a GPU row marked as seeds with
 * the winners as entries without code, and one for the seed models'
 * GPU with their models rows. ATD_OK or ATD_ERR_NO_MEMORY. */
atd_status atdi_seed_table(atdi_table *t);

#endif

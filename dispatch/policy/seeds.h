/* The seed winners (seed_winners.h) as a winners' table, for a handle
 * opened without a tuning database (ATD_OPEN_FALLBACK, with NVRTC). */
#ifndef AT_DISPATCH_SEEDS_H
#define AT_DISPATCH_SEEDS_H

#include "dispatch/policy/tuned_table.h"
#include "include/autotune/dispatch.h"

/* Fills t (emptied first) with the seeds: one GPU row marked as seeds,
 * entries without code. ATD_OK or ATD_ERR_NO_MEMORY. */
atd_status atdi_seed_table(atdi_table *t);

#endif

/* The timing-noise rule that marks variants as tied with a shape's winner,
 * the one the sweep picked the winner by (tdb_pick_winner): a timed variant
 * ties when its median is within the shape's noise band of the fastest
 * variant's median. The band is the one the sweep measured and stored
 * (winners.noise_band: the spread of the finalists' interleaved
 * repetitions, 0.5% to 1%, tuner/refine.h; after `db merge`, the widest of
 * the sweeps' that tuned the shape); a shape without one (schema version 1,
 * or merged by an older autotune) takes TIES_BAND_UNKNOWN, the most the
 * sweep's band can be. Baselines never tie (they never win). */
#ifndef AT_REPORTS_TIES_H
#define AT_REPORTS_TIES_H

#include <stddef.h>

#include "reports/report_data.h"

#define TIES_BAND_UNKNOWN 0.01 /* = REFINE_BAND_MAX (tests/test_report.c ties them) */

/* The relative band of shape s: its stored noise band, else TIES_BAND_UNKNOWN. */
double ties_band(const rd_shape *s);

/* Whether r (not the winner itself) ties with s's winner. */
int ties_is_tie(const rd_shape *s, const rd_result *r);

/* How many results of s tie with its winner (0 when it has none). */
size_t ties_count(const rd_shape *s);

#endif

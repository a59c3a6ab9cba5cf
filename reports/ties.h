/* The timing-noise rule that marks variants as tied with a shape's winner:
 * a timed variant ties when its median is within max(1%, the winner's own
 * spread (max - min) / median) of the winner's median. Baselines never tie
 * (they never win). */
#ifndef AT_REPORTS_TIES_H
#define AT_REPORTS_TIES_H

#include <stddef.h>

#include "reports/report_data.h"

/* The relative tolerance for the winner: max(0.01, (max - min) / median). */
double ties_tolerance(const rd_result *winner);

/* Whether r (not the winner itself) ties with winner. */
int ties_is_tie(const rd_result *winner, const rd_result *r);

/* How many results of s tie with its winner (0 when it has none). */
size_t ties_count(const rd_shape *s);

#endif

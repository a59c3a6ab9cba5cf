/* The report's tables for one (GPU, op, dtype): the winners at a glance,
 * then per shape every result, timed ones sorted by median time with the
 * winner, its ties and the baselines marked, and the failed ones with
 * their reason. */
#ifndef AT_REPORTS_REPORT_SHAPES_H
#define AT_REPORTS_REPORT_SHAPES_H

#include <stddef.h>

#include "common/strbuf.h"
#include "reports/report_data.h"

/* The winners table of group gi (id "g<gi>-winners"), one row per shape. */
void report_winners_table(strbuf *out, const report_data *d, size_t gi);

/* One collapsed <details> per shape of group gi (id "g<gi>-shape-<M>x<N>")
 * with its results table (class "results") and failed list (class
 * "failed"). Rows: class "win" for the winner, "tie" for ties, "base" for
 * baselines. */
void report_shape_tables(strbuf *out, const report_data *d, size_t gi);

#endif

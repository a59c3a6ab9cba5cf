/* The report's tables for one (GPU, op, dtype): the winners at a glance,
 * then per shape every result, timed ones sorted by median time with the
 * winner, its ties and the baselines marked, and the failed ones with
 * their reason. With a peers CSV (reports/peers_csv.h), the peers' clean-L2
 * times join them: the winners table says the best peer and the winner's
 * speed-up over it, each shape's table has the peers among its rows, and a
 * paragraph sums the comparison up. */
#ifndef AT_REPORTS_REPORT_SHAPES_H
#define AT_REPORTS_REPORT_SHAPES_H

#include <stddef.h>

#include "common/strbuf.h"
#include "reports/peers_csv.h"
#include "reports/report_data.h"
#include "reports/variant_dict.h"

/* The winners table of group gi (id "g<gi>-winners"), one row per shape;
 * with peers (not NULL), two more columns: the best peer and the winner's
 * speed-up over it (best peer's time / winner's). */
void report_winners_table(strbuf *out, const report_data *d, size_t gi, const peer_set *peers);

/* One collapsed <details> per shape of group gi (id "g<gi>-shape-<M>x<N>")
 * with its results table (class "results"), the rest of its timed rows as
 * text (reports/report_rest.h; their variants listed in `list`) and
 * failed list (class "failed"). Rows: class "win" for the winner, "tie" for
 * ties, "base" for baselines, "peer" for the peers (peers may be NULL). */
void report_shape_tables(strbuf *out, const report_data *d, size_t gi, const peer_set *peers,
			 vdict *list);

/* A paragraph (class "peers", id "g<gi>-peers") comparing group gi's
 * winners with the best peer at each shape that has both: how many shapes,
 * at how many the winner is at least as fast, the geometric mean of best
 * peer's time / winner's, its least and greatest. Nothing when no shape
 * has both. */
void report_peers_summary(strbuf *out, const report_data *d, size_t gi, const peer_set *peers);

#endif

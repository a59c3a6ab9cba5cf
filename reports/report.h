/* `autotune report`: one self-contained HTML page about a tuning database,
 * for each GPU, op and dtype: GB/s curves against N with the baselines and
 * the copy ceiling, a heat map over two parameters, the winners, every
 * variant per shape (ties and failures marked) and the sweeps; with a peers
 * CSV (--peers), the peers too, on the curves and in the tables. The page
 * needs nothing but itself: inline CSS and SVG, a small optional script. */
#ifndef AT_REPORTS_REPORT_H
#define AT_REPORTS_REPORT_H

#include "common/error.h"
#include "common/strbuf.h"
#include "reports/peers_csv.h"
#include "reports/report_data.h"

typedef struct report_options {
	const char *db_path;      /* the tuning database (must exist) */
	const char *out_path;     /* the HTML file to write; "-": standard output */
	long long heat_M, heat_N; /* the heat maps' shape; 0: the largest per dtype */
	const char *tool_version; /* named in the page's footer; NULL: not named */
	const char *peers_path;   /* report_write: a peers CSV to draw; NULL: none */
	const peer_set *peers;    /* report_render: the peers; NULL: none */
} report_options;

/* Appends the whole page for d to out. Returns 0, or -1 with err set. */
int report_render(const report_data *d, const report_options *opt, strbuf *out,
		  at_error *err);

/* Reads opt->db_path (and opt->peers_path) and writes the page to
 * opt->out_path (whole or not at all). Returns 0, or -1 with err set: "PATH:
 * no such database", "PATH has no results: run autotune sweep first",
 * "PATH: cannot write: ...", the peers CSV's errors (peers_csv.h), "CSV has
 * no gpu column and DB has N GPUs", "none of CSV's shapes is tuned in DB".
 */
int report_write(const report_options *opt, at_error *err);

#endif

/* Which timed rows of a shape's table the page writes as HTML, and the rest
 * as compact text. A shape of the default sweep has up to 845 timed
 * variants; as HTML rows they made a 10.6 MB page. The HTML rows are the
 * first REPORT_INLINE_VARIANTS variants, the winner and its ties, the
 * baselines (and the peers, report_shapes.c), and any row that cannot be
 * written compactly; the others follow the table as text,
 *
 *   <details class="rest" data-n="204"><summary>...</summary>
 *   <pre class="rest" data-bytes="33554432" data-copy="3036.94">
 *   3f 13.54 12.22 13.92 95            <- variant, median, min, max us, registers
 *   a 14.07 13.90 14.44 40 4096 0      <- ... and smem B, spill B where not both 0
 *   </pre></details>
 *
 * in rank order, each naming its variant by its line in the page's list
 * (reports/variant_dict.h). With JavaScript, html.c's script turns them
 * into rows of the table on a click (GB/s and % copy computed from the
 * printed median, data-bytes and the sweep's copy bandwidth data-copy). */
#ifndef AT_REPORTS_REPORT_REST_H
#define AT_REPORTS_REPORT_REST_H

#include <stddef.h>

#include "common/strbuf.h"
#include "reports/report_data.h"
#include "reports/variant_dict.h"

#define REPORT_INLINE_VARIANTS 10

/* For each result of s (s->results order), ids[i]: -1 when it is an HTML
 * row (or not timed), else its variant's line in v. Returns how many are
 * text. */
size_t report_rest_plan(const rd_shape *s, vdict *v, long *ids);

/* The <details class="rest"> of s's text rows (ids from report_rest_plan);
 * nothing when n_rest is 0. Their GB/s count the bytes op_name moves (its
 * description in tuner/ops; none when it is not described). */
void report_rest_block(strbuf *out, const report_data *d, const char *op_name, const char *dtype,
		       const rd_shape *s, const long *ids, size_t n_rest);

#endif

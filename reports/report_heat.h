/* The report's heat map for one (GPU, op, dtype): median time over two
 * parameters of the winner's template at one shape, each cell the best
 * variant with that pair of values. */
#ifndef AT_REPORTS_REPORT_HEAT_H
#define AT_REPORTS_REPORT_HEAT_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "reports/report_data.h"

/* The shape the heat map of group gi shows: M x N if the group has it
 * (M, N > 0), else the largest shape (most elements, then longest rows).
 * Returns its index. */
size_t report_heat_shape(const rd_group *g, long long M, long long N);

/* Appends a <figure> with the heat map of group gi at shape index s (id
 * "g<gi>-heatmap") and a caption naming the shape, the template and the
 * two parameters; requested_M/N (0: none) is the shape asked for, named in
 * the caption when the group lacks it. When the shape has no winner or its
 * variants share all parameters, a note instead. Returns 0 or -1. */
int report_heatmap(strbuf *out, const report_data *d, size_t gi, size_t s,
		   long long requested_M, long long requested_N, at_error *err);

#endif

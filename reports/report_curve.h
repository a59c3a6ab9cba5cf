/* The report's curves: for one (GPU, op, dtype), GB/s against N at each
 * tuned M, for the tuned winner, every baseline (naive, cuDNN, ...), the
 * peers of a peers CSV (torch.softmax, the Triton tutorial, torch.compile:
 * reports/peers_csv.h) and the sweep's device-to-device copy bandwidth as a
 * ceiling. */
#ifndef AT_REPORTS_REPORT_CURVE_H
#define AT_REPORTS_REPORT_CURVE_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "reports/peers_csv.h"
#include "reports/report_data.h"

/* Appends one <figure> per M of group gi, the plot's id being
 * "g<gi>-curve-m<M>". The winner's series has data-series="tuned", the
 * baselines' their template name, each peer "peer-<method>" (its clean-L2
 * times, at every N the CSV has for this GPU, dtype and M), the ceiling
 * "copy". peers may be NULL. Returns 0 or -1. */
int report_curves(strbuf *out, const report_data *d, size_t gi, const peer_set *peers,
		  at_error *err);

/* The label a baseline template is shown with: "cudnn" -> "cuDNN", others
 * as they are. */
const char *report_baseline_label(const char *template_name);

#endif

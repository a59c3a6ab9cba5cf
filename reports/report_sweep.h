/* The report's description of a GPU and of the sweeps run on it: versions,
 * times, the config (path and text), how many variants were run and how
 * long compiling and benchmarking took. */
#ifndef AT_REPORTS_REPORT_SWEEP_H
#define AT_REPORTS_REPORT_SWEEP_H

#include <stddef.h>

#include "common/strbuf.h"
#include "reports/report_data.h"

/* One line with the GPU's compute capability, SM count and memory. */
void report_gpu_facts(strbuf *out, const rd_gpu *gpu);

/* A <section id="gpu<gi>-sweeps"> with one block per sweep of GPU gi (id
 * "sweep-<id>"), the config text in a collapsed <details><pre>. */
void report_sweeps(strbuf *out, const report_data *d, size_t gi);

#endif

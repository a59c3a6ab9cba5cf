/* The table of `autotune bench`, read back from the tuning database after
 * the sweep: per shape the winner (template, params), its GB/s, its % of the
 * copy bandwidth of the sweep that tuned it, its % of the same-size copy
 * baseline, the naive and cuDNN baselines of that sweep, and the goals of
 * bench_goals.h. Needs no GPU: the GPU is named by its identity. */
#ifndef AT_TUNER_BENCH_REPORT_H
#define AT_TUNER_BENCH_REPORT_H

#include <stddef.h>

#include "db/tuning_db.h"
#include "tuner/bench/bench_goals.h"
#include "tuner/config.h"
#include "tuner/table.h"

/* The id of the database's row for gpu: 1 when found, 0 when the database
 * has no such GPU, -1 with err on a database error. Writes nothing. */
int bench_find_gpu(tdb *db, const gpu_info *gpu, long long *id, at_error *err);

/* The database's only GPU (for reporting without a GPU at hand); an error
 * when it has none or several. */
int bench_only_gpu(tdb *db, gpu_info *gpu, long long *id, at_error *err);

/* Reads one row per shape (in the shapes' order); a shape without a winners
 * row has tuned = 0. *rows is malloc'd; free with bench_rows_free. */
int bench_collect(tdb *db, long long gpu_id, const sweep_shape *shapes, size_t n,
		  bench_row **rows, at_error *err);
void bench_rows_free(bench_row *rows, size_t n);

/* The table (columns: dtype, M, N, MiB, template, params, gbps, pct_copy,
 * pct_same_size_copy, naive_gbps, cudnn_gbps, goal, target, vs_baselines)
 * and the goals' tally. Initialises t. */
void bench_table(const bench_row *rows, size_t n, table *t, bench_tally *tally);

/* "goals met: 40 of 52 (bandwidth: 10 of 20; not slower than naive and
 * cuDNN: 30 of 32)". */
void bench_summary(const bench_tally *t, char *buf, size_t cap);

/* A file-name-safe form of a GPU name: "NVIDIA H100 80GB HBM3" ->
 * "nvidia-h100-80gb-hbm3" ("gpu" if nothing is left). */
void bench_gpu_slug(const char *name, char *buf, size_t cap);

/* Writes t as CSV to path, whole or not at all. */
int bench_write_csv(const table *t, const char *path, at_error *err);

#endif

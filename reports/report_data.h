/* What the report shows, read from a tuning database in a few queries and
 * held in memory: the GPUs, the sweeps, and for each (GPU, op, dtype) the
 * tuned shapes with every result tried there. Everything is owned by the
 * report_data and freed by report_data_free. */
#ifndef AT_REPORTS_REPORT_DATA_H
#define AT_REPORTS_REPORT_DATA_H

#include <stddef.h>

#include "common/error.h"
#include "db/tuning_db.h"

/* One row of the results table. */
typedef struct rd_result {
	long long id, sweep_id;
	int baseline;             /* kind = 'baseline' (naive, cudnn): never a winner */
	char *template_name, *params, *status;
	char *reason;             /* NULL when ok */
	int timed;                /* status ok and a median time > 0 */
	double time_us, time_min_us, time_max_us; /* NAN when not timed */
	double gbps, pct_copy;    /* NAN when not timed */
	double rel_err;           /* NAN when not measured */
	int registers, smem_bytes, spill_bytes; /* -1 when unknown */
} rd_result;

/* One tuned (or tried) shape. results: the timed ones first, fastest
 * first (ties by id), then the failed and untimed ones by id. */
typedef struct rd_shape {
	long long M, N;
	long long sweep_id;       /* the sweep that tuned it */
	long winner;              /* index into results, -1 when none passed */
	double noise_band;        /* the sweep's relative band (winners.noise_band); NAN if none */
	rd_result *results;
	size_t n_results;
} rd_shape;

/* The shapes of one GPU, op and dtype, by M then N. */
typedef struct rd_group {
	size_t gpu;               /* index into report_data.gpus */
	char *op;
	char *dtype;
	rd_shape *shapes;
	size_t n_shapes;
} rd_group;

typedef struct rd_gpu {
	long long id;
	char *name;
	int cc_major, cc_minor, sm_count;
	long long mem_bytes;
} rd_gpu;

typedef struct rd_sweep {
	long long id, gpu_id;
	char *started_at, *finished_at; /* finished_at NULL if it never finished */
	int driver_version;
	char *nvrtc_version, *tool_version, *config_path, *config_text;
	double copy_gbps, compile_s, bench_s;
	long long variant_runs;     /* variant results stored */
	long long distinct_variants; /* distinct (dtype, template, params) among them */
	long long baseline_runs;
	long long failed;           /* results whose status is not ok */
	long long shapes;           /* shapes it tuned (winners rows) */
} rd_sweep;

typedef struct report_data {
	rd_gpu *gpus;       /* by name, then id */
	size_t n_gpus;
	rd_sweep *sweeps;   /* by id */
	size_t n_sweeps;
	rd_group *groups;   /* by GPU (as gpus), op, dtype (f32, f16, bf16) */
	size_t n_groups;
	long long n_results; /* rows in results */
} report_data;

/* Reads everything from db (path is for messages). Returns 0, or -1 with
 * err set (and *d empty). */
int report_data_load(tdb *db, const char *path, report_data *d, at_error *err);

void report_data_free(report_data *d);

/* The sweep with that id, or NULL. */
const rd_sweep *report_data_sweep(const report_data *d, long long id);

/* The shape's winner, or NULL. */
const rd_result *rd_shape_winner(const rd_shape *s);

/* The shape's timed baseline of that template ("naive", "cudnn"), or NULL. */
const rd_result *rd_shape_baseline(const rd_shape *s, const char *template_name);

#endif

/* The tuned shapes of a database as the dispatch library holds them in
 * memory: every winner with its result's metadata and launch geometry and
 * the identity of the GPU it was tuned on, but not its code (fetched on
 * first use, see tuned_db.h). Read once by atd_open and immutable after,
 * so selection (select.h) needs no lock. */
#ifndef AT_DISPATCH_TUNED_TABLE_H
#define AT_DISPATCH_TUNED_TABLE_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/template_rules.h" /* launch_geometry */
#include "include/autotune/dispatch.h"

/* A row of the gpus table. */
typedef struct atdi_gpu_row {
	long long id;
	char *name;
	int cc_major, cc_minor;
	int sm_count;
	long long mem_bytes;
	/* The library's seed winners (seed_winners.h): no stored code, derived
	 * for any GPU; never from a database. */
	int seeds;
} atdi_gpu_row;

/* A winners row of an op the library serves (row_ops.h) with a result and
 * stored code. */
typedef struct atdi_entry {
	long long result_id;
	int op;     /* atdi_op */
	size_t gpu; /* index into atdi_table.gpus */
	at_dtype dtype;
	long long M, N;
	double time_us; /* median; INFINITY when the row has none */
	char *template_name, *params;
	launch_geometry geom;
	int arch; /* kernels.arch, e.g. 90 */
} atdi_entry;

/* A winners row whose result has no stored code (a merge or export lost
 * it): never selected, but named in warnings, so that a shape that was
 * tuned is never served by another choice in silence. */
typedef struct atdi_missing {
	long long result_id;
	int op; /* atdi_op */
	size_t gpu; /* index into atdi_table.gpus */
	at_dtype dtype;
	long long M, N;
	char *template_name, *params; /* "" when the result row is gone too */
} atdi_missing;

/* A models row: a performance model's text (common/perf_model.h), parsed
 * on first use by the handle (dispatch/runtime/models.h). */
typedef struct atdi_model_row {
	size_t gpu; /* index into atdi_table.gpus */
	int op;     /* atdi_op whose results it learned */
	char *text;
} atdi_model_row;

typedef struct atdi_table {
	atdi_gpu_row *gpus;
	size_t ngpus;
	atdi_entry *entries;
	size_t nentries;
	atdi_missing *missing;
	size_t nmissing;
	atdi_model_row *models;
	size_t nmodels;
} atdi_table;

/* Frees what the table owns and empties it. */
void atdi_table_free(atdi_table *t);

#endif

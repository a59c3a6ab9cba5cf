/* The tuned shapes of a database as the dispatch library holds them in
 * memory: every winner with its result's metadata and launch geometry and
 * the identity of the GPU it was tuned on, but not its code (fetched on
 * first use, see tuned_db.h). Read once by atd_open and immutable after,
 * so selection needs no lock. */
#ifndef AT_DISPATCH_TUNED_TABLE_H
#define AT_DISPATCH_TUNED_TABLE_H

#include <stddef.h>

#include "common/dtype.h"
#include "dispatch/launch_geometry.h"
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

/* A winners row of op softmax with a result and stored code. */
typedef struct atdi_entry {
	long long result_id;
	size_t gpu; /* index into atdi_table.gpus */
	at_dtype dtype;
	long long M, N;
	double time_us; /* median; INFINITY when the row has none */
	char *template_name, *params;
	launch_geometry geom;
	int arch; /* kernels.arch, e.g. 90 */
} atdi_entry;

/* A winners row of op softmax whose result has no stored code (a merge or
 * export lost it): never selected, but named in warnings, so that a shape
 * that was tuned is never served by another choice in silence. */
typedef struct atdi_missing {
	long long result_id;
	size_t gpu; /* index into atdi_table.gpus */
	at_dtype dtype;
	long long M, N;
	char *template_name, *params; /* "" when the result row is gone too */
} atdi_missing;

typedef struct atdi_table {
	atdi_gpu_row *gpus;
	size_t ngpus;
	atdi_entry *entries;
	size_t nentries;
	atdi_missing *missing;
	size_t nmissing;
} atdi_table;

/* Frees what the table owns and empties it. */
void atdi_table_free(atdi_table *t);

/*
** The winner that serves (dtype, M, N) on gpu, by the four levels of
** dispatch.h: 1 the same GPU identity (name, cc, SM count) at this
** exact shape; 2 the same identity, nearest in (ln M, ln N) among variants
** valid for N (max_n == 0 or max_n >= N); 3 another identity of the same
** compute capability, exact first, then nearest; ties go to the smaller
** tuned time, then the smaller result id. Returns NULL with
** *level = ATD_LEVEL_BUILTIN when none fits. Pure: no locks, no GPU.
*/
const atdi_entry *atdi_select(const atdi_table *t, const atd_gpu *gpu, at_dtype dtype,
			      long long M, long long N, atd_level *level);

/* The winner without code tuned on gpu's identity (name, cc, SM count) at
 * exactly (dtype, M, N), or NULL. Pure. */
const atdi_missing *atdi_select_missing(const atdi_table *t, const atd_gpu *gpu, at_dtype dtype,
					long long M, long long N);

#endif

/* The online-tuned store: see jit_tuned.h. */
#include "dispatch/runtime/jit_tuned.h"

#include "dispatch/policy/row_ops.h"

#include <sqlite3.h>
#include <stdio.h>

#include "dispatch/runtime/jit_cache.h"

/* ?1-?5 of the tuned table's key: GPU model and shape. Its dtype column
 * names the op too for ops other than softmax ("log_softmax f32"), so
 * that caches written before there were other ops read as they were. */
static void bind_shape(sqlite3_stmt *st, const atd_gpu *gpu, int op, at_dtype dtype,
		       long long M, long long N)
{
	sqlite3_bind_text(st, 1, gpu->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, gpu->sm_count);
	sqlite3_bind_text(st, 3, atdi_op_dtype_name(op, dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, M);
	sqlite3_bind_int64(st, 5, N);
}

int atdi_jit_tuned_get(const atdi_jit *j, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
		       long long N, atdi_tuned *out)
{
	sqlite3 *db = atdi_jit_cache_open(j->cache_path, 0);
	sqlite3_stmt *st = NULL;
	int found = 0;
	if (db && sqlite3_prepare_v2(db,
				     "SELECT template, params, time_us FROM tuned WHERE gpu = ?1 AND "
				     "sm_count = ?2 AND dtype = ?3 AND m = ?4 AND n = ?5",
				     -1, &st, NULL) == SQLITE_OK) {
		bind_shape(st, gpu, op, dtype, M, N);
		if (sqlite3_step(st) == SQLITE_ROW) {
			snprintf(out->template_name, sizeof out->template_name, "%s",
				 (const char *)sqlite3_column_text(st, 0));
			snprintf(out->params, sizeof out->params, "%s",
				 (const char *)sqlite3_column_text(st, 1));
			out->time_us = sqlite3_column_double(st, 2);
			found = 1;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return found;
}

void atdi_jit_tuned_put(const atdi_jit *j, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
			long long N, const atdi_tuned *t, int candidates)
{
	sqlite3 *db = atdi_jit_cache_open(j->cache_path, 1);
	sqlite3_stmt *st = NULL;
	if (db && sqlite3_prepare_v2(db,
				     "INSERT OR REPLACE INTO tuned (gpu, sm_count, dtype, m, n, template, "
				     "params, time_us, candidates, created_at) VALUES (?1, ?2, ?3, ?4, ?5, "
				     "?6, ?7, ?8, ?9, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
				     -1, &st, NULL) == SQLITE_OK) {
		bind_shape(st, gpu, op, dtype, M, N);
		sqlite3_bind_text(st, 6, t->template_name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, t->params, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 8, t->time_us);
		sqlite3_bind_int(st, 9, candidates);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

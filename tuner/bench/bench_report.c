/* The benchmark's table: see bench_report.h. */
#include "tuner/bench/bench_report.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/ops/ops.h"
#include "reports/outfile.h"

static int sql_fail(tdb *db, at_error *err, const char *what)
{
	return at_error_set(err, "%s: %s", what, sqlite3_errmsg(tdb_handle(db)));
}

int bench_find_gpu(tdb *db, const gpu_info *gpu, long long *id, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(tdb_handle(db),
			       "SELECT id FROM gpus WHERE name = ? AND cc_major = ? AND cc_minor = ? "
			       "AND sm_count = ? AND mem_bytes = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(db, err, "looking the GPU up");
	sqlite3_bind_text(st, 1, gpu->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, gpu->cc_major);
	sqlite3_bind_int(st, 3, gpu->cc_minor);
	sqlite3_bind_int(st, 4, gpu->sm_count);
	sqlite3_bind_int64(st, 5, gpu->mem_bytes);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_fail(db, err, "looking the GPU up");
	return rc == SQLITE_ROW;
}

int bench_only_gpu(tdb *db, gpu_info *gpu, long long *id, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(tdb_handle(db),
			       "SELECT id, name, cc_major, cc_minor, sm_count, mem_bytes FROM gpus "
			       "ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(db, err, "reading the GPUs");
	int found = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (found++)
			continue;
		*id = sqlite3_column_int64(st, 0);
		memset(gpu, 0, sizeof *gpu);
		snprintf(gpu->name, sizeof gpu->name, "%s", (const char *)sqlite3_column_text(st, 1));
		gpu->cc_major = sqlite3_column_int(st, 2);
		gpu->cc_minor = sqlite3_column_int(st, 3);
		gpu->sm_count = sqlite3_column_int(st, 4);
		gpu->mem_bytes = sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(db, err, "reading the GPUs");
	if (found == 0)
		return at_error_set(err, "the database has no results (no GPU)");
	if (found > 1)
		return at_error_set(err, "the database has results of %d GPUs; run bench on the GPU "
				    "to report", found);
	return 0;
}

static int take_winner(const winner_row *w, void *ctx)
{
	bench_row *r = ctx;
	r->tuned = 1;
	if (w->template_name) {
		r->template_name = xstrdup(w->template_name);
		r->params = xstrdup(w->params ? w->params : "");
		r->gbps = w->gbps;
		r->pct_copy = w->pct_copy;
	}
	return 0;
}

/* The baselines timed by the sweep that tuned the shape. */
static int read_baselines(tdb *db, const shape_key *key, bench_row *r, at_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(tdb_handle(db),
			       "SELECT r.template, r.gbps FROM results r JOIN winners w "
			       "ON w.gpu_id = r.gpu_id AND w.op = r.op AND w.dtype = r.dtype "
			       "AND w.m = r.m AND w.n = r.n AND w.sweep_id = r.sweep_id "
			       "WHERE r.gpu_id = ? AND r.op = ? AND r.dtype = ? AND r.m = ? AND r.n = ? "
			       "AND r.kind = 'baseline' AND r.status = 'ok' AND r.time_us > 0 "
			       "ORDER BY r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return sql_fail(db, err, "reading the baselines");
	sqlite3_bind_int64(st, 1, key->gpu_id);
	sqlite3_bind_text(st, 2, key->op, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, at_dtype_name(key->dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, key->M);
	sqlite3_bind_int64(st, 5, key->N);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		double gbps = sqlite3_column_double(st, 1);
		if (strcmp(name, "naive") == 0)
			r->naive_gbps = gbps;
		else if (strcmp(name, "cudnn") == 0)
			r->cudnn_gbps = gbps;
		else if (strcmp(name, "copy") == 0)
			r->same_copy_gbps = gbps;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_fail(db, err, "reading the baselines");
}

int bench_collect(tdb *db, long long gpu_id, const sweep_shape *shapes, size_t n,
		  bench_row **rows, at_error *err)
{
	*rows = xcalloc(n ? n : 1, sizeof **rows);
	for (size_t i = 0; i < n; i++) {
		const sweep_shape *s = &shapes[i];
		bench_row *r = &(*rows)[i];
		r->op = op_find(s->op);
		r->dtype = s->dtype;
		r->M = s->M;
		r->N = s->N;
		shape_key key = { gpu_id, s->op, s->dtype, s->M, s->N };
		if (tdb_shape_winner(db, &key, take_winner, r, err) < 0 ||
		    read_baselines(db, &key, r, err)) {
			bench_rows_free(*rows, n);
			*rows = NULL;
			return -1;
		}
	}
	return 0;
}

void bench_rows_free(bench_row *rows, size_t n)
{
	if (!rows)
		return;
	for (size_t i = 0; i < n; i++) {
		free(rows[i].template_name);
		free(rows[i].params);
	}
	free(rows);
}

/* "%.<decimals>f" of v, or "" when v was not measured. */
static const char *num(char *buf, size_t cap, double v, int decimals)
{
	if (v > 0)
		snprintf(buf, cap, "%.*f", decimals, v);
	else
		buf[0] = '\0';
	return buf;
}

void bench_table(const bench_row *rows, size_t n, table *t, bench_tally *tally)
{
	static const char *const header[] = { "dtype", "M", "N", "MiB", "template", "params",
					      "gbps", "pct_copy", "pct_same_size_copy", "naive_gbps",
					      "cudnn_gbps", "goal", "target", "vs_baselines", NULL };
	table_init(t, header);
	memset(tally, 0, sizeof *tally);
	for (size_t i = 0; i < n; i++) {
		const bench_row *r = &rows[i];
		char m[32], nn[32], mib[32], gbps[32], pct[32], same[32], naive[32], cudnn[32];
		char target[96], detail[96], versus[128];
		snprintf(m, sizeof m, "%lld", r->M);
		snprintf(nn, sizeof nn, "%lld", r->N);
		snprintf(mib, sizeof mib, "%.1f", bench_row_bytes(r) / (1024.0 * 1024.0));
		int won = r->template_name != NULL;
		num(gbps, sizeof gbps, won ? r->gbps : 0, 0);
		num(pct, sizeof pct, won ? r->pct_copy : 0, 1);
		num(same, sizeof same, won && r->same_copy_gbps > 0 ? 100.0 * r->gbps / r->same_copy_gbps : 0, 1);
		num(naive, sizeof naive, r->naive_gbps, 0);
		num(cudnn, sizeof cudnn, r->cudnn_gbps, 0);
		goal_verdict bw = bench_bandwidth_goal(r, target, sizeof target);
		goal_verdict vs = bench_baseline_goal(r, detail, sizeof detail);
		bench_tally_add(tally, bw, vs);
		snprintf(versus, sizeof versus, "%s%s%s%s", goal_verdict_name(vs), detail[0] ? " (" : "",
			 detail, detail[0] ? ")" : "");
		const char *tmpl = won ? r->template_name : r->tuned ? "(none passed)" : "(not tuned)";
		const char *cells[] = { at_dtype_name(r->dtype), m, nn, mib, tmpl,
					won ? r->params : "", gbps, pct, same, naive, cudnn,
					goal_verdict_name(bw), target, versus };
		table_add(t, cells);
	}
}

void bench_summary(const bench_tally *t, char *buf, size_t cap)
{
	snprintf(buf, cap, "goals met: %d of %d (bandwidth: %d of %d; not slower than naive and "
		 "cuDNN: %d of %d)", t->bandwidth_met + t->baseline_met,
		 t->bandwidth_total + t->baseline_total, t->bandwidth_met, t->bandwidth_total,
		 t->baseline_met, t->baseline_total);
}

void bench_gpu_slug(const char *name, char *buf, size_t cap)
{
	size_t len = 0;
	int dash = 0;
	for (const char *p = name; *p && len + 2 < cap; p++) {
		if (isalnum((unsigned char)*p)) {
			if (dash && len)
				buf[len++] = '-';
			buf[len++] = (char)tolower((unsigned char)*p);
			dash = 0;
		} else {
			dash = 1;
		}
	}
	buf[len] = '\0';
	if (!len)
		snprintf(buf, cap, "gpu");
}

int bench_write_csv(const table *t, const char *path, at_error *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return at_error_set(err, "out of memory writing the CSV");
	table_print(t, f, TABLE_CSV, NULL);
	fclose(f);
	int rc = outfile_write(path, text, len, err);
	free(text);
	return rc;
}

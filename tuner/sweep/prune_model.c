/* Finding the sweep's pruning model: see prune_model.h. */
#include "tuner/sweep/prune_model.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sqlite_reader.h"
#include "common/strbuf.h"
#include "tuner/model/fit.h"

long long prune_model_cutoff(const char *db_path)
{
	sqlite3 *db = NULL;
	if (access(db_path, F_OK) != 0 || at_sqlite_open_reader(db_path, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return 1;
	}
	long long next = 1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM sweeps", -1, &st, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			next = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return next;
}

/* The GPU of compute capability cc, other than gpu_name, with the most
 * shapes of op tuned before before_sweep, into name; their count (0: none). */
static long long peer_gpu(const char *db_path, long long before_sweep, const char *gpu_name,
			  int cc, const char *op, char *name, size_t cap)
{
	sqlite3 *db = NULL;
	if (access(db_path, F_OK) != 0 || at_sqlite_open_reader(db_path, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	long long best = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT g.name, COUNT(*) AS n FROM winners w JOIN gpus g ON g.id = "
			       "w.gpu_id WHERE g.cc_major * 10 + g.cc_minor = ?1 AND g.name <> ?2 "
			       "AND w.op = ?4 AND w.sweep_id < ?3 GROUP BY g.name "
			       "ORDER BY n DESC, g.name LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int(st, 1, cc);
		sqlite3_bind_text(st, 2, gpu_name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, before_sweep);
		sqlite3_bind_text(st, 4, op, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			snprintf(name, cap, "%s", (const char *)sqlite3_column_text(st, 0));
			best = sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return best;
}

static size_t tuned_shapes(const model_samples *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nshapes; i++)
		n += s->shapes[i].winner_us > 0;
	return n;
}

/* Fits m on gpu's results of op when it has enough tuned shapes: 1 fitted,
 * 0 not enough (or none: the database or the GPU missing). */
static int fit_from(const char *db_path, long long before_sweep, const char *gpu, const char *op,
		    const tr_template *ts, int nts, perf_model *m, size_t *nshapes)
{
	model_samples s;
	at_error ignored;
	*nshapes = 0;
	if (access(db_path, F_OK) != 0 ||
	    model_samples_load_before(db_path, gpu, op, before_sweep, ts, nts, &s, &ignored))
		return 0;
	*nshapes = tuned_shapes(&s);
	int fitted = 0;
	if (*nshapes >= PRUNE_MIN_SHAPES) {
		model_matrix mx;
		model_fit_options o;
		model_fit_defaults(&o);
		model_matrix_build(&s, ts, nts, &mx);
		fitted = model_fit(&s, &mx, -1, &o, m) == 0;
		model_matrix_free(&mx);
	}
	model_samples_free(&s);
	return fitted;
}

/* The op whose templates compute op (their manifests' `op:`): softmax for
 * log_softmax, softmax_backward for log_softmax_backward; op itself when no
 * template serves it. */
static const char *family_of(const char *op, const tr_template *ts, int nts)
{
	for (int i = 0; i < nts; i++)
		if (tr_serves(&ts[i], op) && ts[i].op)
			return ts[i].op;
	return op;
}

void prune_seed_path(const char *templates_dir, const char *family, char *path, size_t cap)
{
	if (strcmp(family, "softmax") == 0)
		snprintf(path, cap, "%s/%s", templates_dir, PRUNE_SEED_FILE);
	else
		snprintf(path, cap, "%s/" PRUNE_SEED_PREFIX "%s.txt", templates_dir, family);
}

int prune_model_obtain(const char *db_path, long long before_sweep, const char *gpu_name, int cc,
		       const char *op, const tr_template *ts, int nts, const char *templates_dir,
		       perf_model *m, char *what, size_t cap, at_error *err)
{
	size_t own = 0, peer = 0;
	/* op's own results first; then its family's (softmax's for log_softmax:
	 * the same templates compute both, also_ops), whose model learned the
	 * templates op runs on */
	const char *family = family_of(op, ts, nts);
	const char *learn[2] = { op, strcmp(op, family) != 0 ? family : NULL };
	for (int i = 0; i < 2 && learn[i]; i++) {
		size_t n = 0;
		if (fit_from(db_path, before_sweep, gpu_name, learn[i], ts, nts, m, &n)) {
			snprintf(what, cap, "fitted on %zu tuned %s shapes of %s", n, learn[i], gpu_name);
			return 1;
		}
		own += i == 0 ? n : 0;
		char other[256] = "";
		if (peer_gpu(db_path, before_sweep, gpu_name, cc, learn[i], other, sizeof other) >=
			    PRUNE_MIN_SHAPES &&
		    fit_from(db_path, before_sweep, other, learn[i], ts, nts, m, &peer)) {
			snprintf(what, cap, "fitted on %zu tuned %s shapes of %s (sm_%d like this GPU; "
				 "%zu of its own, %d needed)", peer, learn[i], other, cc, n,
				 PRUNE_MIN_SHAPES);
			return 1;
		}
	}
	char path[4096];
	prune_seed_path(templates_dir, family, path, sizeof path);
	char *text = strbuf_read_file(path);
	if (text) {
		int rc = perf_model_from_text(text, m, err);
		free(text);
		if (rc)
			return at_error_set(err, "%s: %s", path, err->msg);
		snprintf(what, cap, "the seed model %s (%zu tuned shapes of this GPU, %d needed, "
			 "none of another sm_%d GPU)", path, own, PRUNE_MIN_SHAPES, cc);
		return 1;
	}
	snprintf(what, cap, "no model: %zu tuned shapes of this GPU (%d needed), none of another "
		 "sm_%d GPU, no seed model at %s", own, PRUNE_MIN_SHAPES, cc, path);
	return 0;
}

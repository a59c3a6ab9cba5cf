/* The models table: see models.h. */
#include "db/models.h"

#include <sqlite3.h>

int tdb_model_put(tdb *db, const char *gpu, const char *op, long long shapes, long long samples,
		  const char *text, at_error *err)
{
	sqlite3 *s = tdb_handle(db);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s,
			       "INSERT OR REPLACE INTO models (gpu_id, op, fitted_at, shapes, samples, "
			       "text) SELECT id, ?2, strftime('%Y-%m-%dT%H:%M:%SZ','now'), ?3, ?4, ?5 "
			       "FROM gpus WHERE name = ?1 ORDER BY id LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return at_error_set(err, "storing the model: %s", sqlite3_errmsg(s));
	sqlite3_bind_text(st, 1, gpu, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, shapes);
	sqlite3_bind_int64(st, 4, samples);
	sqlite3_bind_text(st, 5, text, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return at_error_set(err, "storing the model: %s", sqlite3_errmsg(s));
	if (sqlite3_changes(s) == 0)
		return at_error_set(err, "storing the model: no GPU named \"%s\"", gpu);
	return 0;
}

int db_copy_models(sqlite3 *s, at_error *err)
{
	sqlite3_stmt *st;
	int has = 0;
	if (sqlite3_prepare_v2(s, "SELECT 1 FROM src.sqlite_master WHERE type = 'table' AND "
				  "name = 'models'", -1, &st, NULL) == SQLITE_OK) {
		has = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	char *msg = NULL;
	if (has && sqlite3_exec(s, "INSERT INTO models SELECT * FROM src.models", NULL, NULL,
				&msg) != SQLITE_OK) {
		at_error_set(err, "copying the models: %s", msg ? msg : sqlite3_errmsg(s));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

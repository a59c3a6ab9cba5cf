/* The performance models a tuning database keeps (schema.sql's models
 * table): one text per (GPU, op), written by `autotune model fit --store`
 * and carried by `db export`; the dispatch library reads them. */
#ifndef AT_DB_MODELS_H
#define AT_DB_MODELS_H

#include "common/error.h"
#include "db/tuning_db.h"

struct sqlite3;

/* Stores (replacing) the model of the GPU named gpu (its first row of that
 * name) for op. Returns 0, or -1 with a message (no such GPU, SQLite). */
int tdb_model_put(tdb *db, const char *gpu, const char *op, long long shapes, long long samples,
		  const char *text, at_error *err);

/* Copies the attached database src's models into main, where src has the
 * table (one written before models existed has none). 0, or -1. */
int db_copy_models(struct sqlite3 *s, at_error *err);

#endif

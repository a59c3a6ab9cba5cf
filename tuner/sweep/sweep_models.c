/* A sweep's models: see sweep_models.h. */
#include "tuner/sweep/sweep_models.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sqlite_reader.h"
#include "common/strbuf.h"
#include "tuner/model/store.h"

#define MAX_GPUS 64 /* --devices: one sweep row a GPU */

/* The names of the GPUs that ran sweeps numbered first_sweep on; their count, -1 on error. */
static int sweep_gpus(const char *db_path, long long first_sweep, char names[][256], at_error *err)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	if (at_sqlite_open_reader(db_path, &db) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT DISTINCT g.name FROM sweeps s JOIN gpus g ON g.id = "
			       "s.gpu_id WHERE s.id >= ?1 ORDER BY g.name", -1, &st, NULL) != SQLITE_OK) {
		at_error_set(err, "%s: %s", db_path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return -1;
	}
	sqlite3_bind_int64(st, 1, first_sweep);
	int n = 0;
	while (n < MAX_GPUS && sqlite3_step(st) == SQLITE_ROW)
		snprintf(names[n++], 256, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

int sweep_store_models(const char *db_path, const sweep_plan *p, long long first_sweep,
		       at_error *err)
{
	static char gpus[MAX_GPUS][256];
	int ngpus = sweep_gpus(db_path, first_sweep, gpus, err);
	if (ngpus <= 0)
		return ngpus;
	manifest_rules *rules = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *rules);
	tr_template *ts = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *ts);
	for (size_t i = 0; i < p->ntemplates; i++) {
		manifest_rules_view(&p->templates[i], &rules[i]);
		ts[i] = rules[i].t;
	}
	int rc = 0;
	for (size_t i = 0; i < p->nshapes && rc == 0; i++) {
		const char *op = p->shapes[i].op;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(p->shapes[j].op, op) == 0;
		for (int g = 0; g < ngpus && rc == 0 && !seen; g++)
			rc = model_store_fitted(db_path, gpus[g], op, ts, (int)p->ntemplates, err);
	}
	for (size_t i = 0; i < p->ntemplates; i++)
		manifest_rules_free(&rules[i]);
	free(rules);
	free(ts);
	return rc;
}

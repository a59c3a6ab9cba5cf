/* The shippable database: see export.h. One transaction into a fresh file,
 * then VACUUM, so the file holds no free pages. */
#include "db/export.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/merge.h"
#include "db/models.h"
#include "db/tuning_db.h"
#include "db/winners.h"

static const char export_sql[] =
	"INSERT INTO gpus SELECT * FROM src.gpus;"
	"INSERT INTO sweeps SELECT * FROM src.sweeps WHERE id IN"
	"  (SELECT w.sweep_id FROM src.winners w WHERE w.result_id IS NOT NULL"
	"   UNION SELECT r.sweep_id FROM src.results r JOIN src.winners w ON w.result_id = r.id);"
	"INSERT INTO results SELECT * FROM src.results WHERE id IN"
	"  (SELECT result_id FROM src.winners WHERE result_id IS NOT NULL);"
	"INSERT INTO winners SELECT * FROM src.winners WHERE result_id IS NOT NULL;"
	"INSERT INTO kernels SELECT * FROM src.kernels WHERE result_id IN"
	"  (SELECT result_id FROM main.winners);";

static long long file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

int db_export(const char *in, const char *out, export_stats *stats, at_error *err)
{
	memset(stats, 0, sizeof *stats);
	if (access(out, F_OK) == 0)
		return at_error_set(err, "%s: exists; export writes a new file (remove it first)", out);
	if (db_check_input(in, "export", err))
		return -1;
	tdb *db;
	if (tdb_open(out, &db, err))
		return -1;
	sqlite3 *s = tdb_handle(db);
	char *msg = NULL;
	int rc = db_attach_source(s, in, err);
	if (rc == 0 && sqlite3_exec(s, "BEGIN", NULL, NULL, &msg) == SQLITE_OK &&
	    sqlite3_exec(s, export_sql, NULL, NULL, &msg) == SQLITE_OK) {
		/* what ships is what the library runs: every winner with its
		 * kernel, and the models it chooses with for untuned shapes */
		rc = winners_check_kernels(s, in, 0, err);
		if (rc == 0)
			rc = db_copy_models(s, err);
		if (rc == 0 && sqlite3_exec(s, "COMMIT", NULL, NULL, &msg) != SQLITE_OK)
			rc = at_error_set(err, "exporting %s: %s", in, msg ? msg : sqlite3_errmsg(s));
	} else if (rc == 0) {
		rc = at_error_set(err, "exporting %s: %s", in, msg ? msg : sqlite3_errmsg(s));
	}
	if (rc != 0)
		sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_free(msg);
	if (rc == 0) {
		stats->winners = db_query_ll(s, "SELECT count(*) FROM winners");
		stats->kernels = db_query_ll(s, "SELECT count(*) FROM kernels");
		sqlite3_exec(s, "DETACH src; PRAGMA journal_mode=DELETE; VACUUM", NULL, NULL, NULL);
	}
	tdb_close(db);
	if (rc != 0) {
		remove(out);
		return rc;
	}
	stats->bytes_in = file_size(in);
	stats->bytes_out = file_size(out);
	return 0;
}

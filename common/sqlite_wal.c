/* See sqlite_wal.h. Part of the dispatch library too. */
#include "common/sqlite_wal.h"

#include <sqlite3.h>
#include <stddef.h>

int at_sqlite_use_wal(sqlite3 *db, int timeout_ms)
{
	enum { PAUSE_MS = 2 };
	for (int waited_ms = 0;; waited_ms += PAUSE_MS) {
		int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if (rc != SQLITE_BUSY || waited_ms >= timeout_ms)
			return rc;
		sqlite3_sleep(PAUSE_MS);
	}
}

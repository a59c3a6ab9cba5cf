/* Turning a database's journal into a write-ahead log, for the tuner's
 * tuning databases (db/tuning_db.c) and the dispatch library's JIT cache
 * (dispatch/runtime/jit_cache.c). */
#ifndef AT_COMMON_SQLITE_WAL_H
#define AT_COMMON_SQLITE_WAL_H

struct sqlite3;

/* PRAGMA journal_mode = WAL, retried for up to timeout_ms while another
 * connection holds the file: SQLite takes that switch's exclusive lock
 * without calling the busy handler, so two processes opening one new file
 * at once had one fail at once with "database is locked". Returns an
 * SQLite result code. */
int at_sqlite_use_wal(struct sqlite3 *db, int timeout_ms);

#endif

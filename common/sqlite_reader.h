/* Opening a tuning database only to read it, so that reading writes
 * nothing that outlives the reader and works where nothing may be written
 * (a database installed under /usr/share). Plain SQLITE_OPEN_READONLY does
 * neither for a WAL database: it must create the -wal and -shm files beside
 * it (so it fails in a read-only folder, "attempt to write a readonly
 * database") and, unable to delete them, leaves them behind. The rule:
 *   - whoever may write the file and its folder opens it read-write with
 *     PRAGMA query_only: SQLite's own locking, and the last connection to
 *     close removes the -wal and -shm files;
 *   - else, when a -wal or -journal file is beside it (a writer is at work
 *     or was stopped mid-write), plain read-only through those files;
 *   - else no writer can be at work (one would need the folder to make its
 *     -wal or -journal), so the file is read as immutable: no locks and no
 *     files made. A writer with more rights than the reader (root) starting
 *     while it reads is the one case this does not cover.
 * Used by the tuner's readers (db/tuning_db.c, db/merge.c, db/export.c) and
 * the dispatch library (dispatch/policy/tuned_db.c). */
#ifndef AT_COMMON_SQLITE_READER_H
#define AT_COMMON_SQLITE_READER_H

struct sqlite3;

/* How path is to be opened for reading, by the rule above. */
typedef enum at_read_mode {
	AT_READ_QUERY_ONLY, /* read-write connection, PRAGMA query_only */
	AT_READ_SHARED,     /* read-only, through the writer's -wal/-shm */
	AT_READ_IMMUTABLE,  /* read-only, immutable=1: nothing is written */
} at_read_mode;

at_read_mode at_sqlite_read_mode(const char *path);

/* "file:PATH" with the characters a URI reserves escaped, and the query
 * that opens it in mode ("?mode=ro", "?immutable=1" or none); for
 * sqlite3_open_v2 with SQLITE_OPEN_URI and for ATTACH on a connection
 * opened so. malloc'd; NULL when out of memory. */
char *at_sqlite_uri(const char *path, at_read_mode mode);

/* Opens path, which must exist, for reading by the rule above. Returns an
 * SQLite result code; *out is set as sqlite3_open_v2 sets it (close it
 * whatever the result). */
int at_sqlite_open_reader(const char *path, struct sqlite3 **out);

#endif

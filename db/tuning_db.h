/* The tuning database as the tuner writes and lists it (SQLite; the schema
 * is db/schema.sql, documented in db/SCHEMA.md). The dispatch library has
 * its own read-only reader and does not use this module. */
#ifndef AT_DB_TUNING_DB_H
#define AT_DB_TUNING_DB_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"

#define TDB_SCHEMA_VERSION 4     /* written by this program */
#define TDB_SCHEMA_MIN_READ 1    /* the oldest version readers accept */
#define TDB_DEFAULT_PATH "autotune.db"
#define TDB_PATH_ENV "AUTOTUNE_DB"

typedef struct tdb tdb;

/* The database path to use: explicit if not NULL, else $AUTOTUNE_DB, else
 * "autotune.db". */
const char *tdb_default_path(const char *explicit_path);

/* Opens path for writing, creating it and its schema if needed. Refuses a
 * file that is not an SQLite database or whose schema version is newer than
 * this program's. */
int tdb_open(const char *path, tdb **out, at_error *err);

/* Opens an existing database read-only (for list/show/report). */
int tdb_open_readonly(const char *path, tdb **out, at_error *err);

/* Brings an existing tuning database of an older schema version to this
 * program's, in one transaction; *from gets the version it had (this
 * program's when there was nothing to do). Refuses a missing file, one
 * that is not a tuning database and a newer version. */
int tdb_migrate(const char *path, int *from, at_error *err);

/* NULL is a no-op. */
void tdb_close(tdb *db);

typedef struct gpu_info {
	char name[256];
	int cc_major, cc_minor;
	int sm_count;
	long long mem_bytes;
} gpu_info;

/* The id of the GPU's row, inserted if new. */
int tdb_gpu_id(tdb *db, const gpu_info *gpu, long long *id, at_error *err);

typedef struct sweep_info {
	long long gpu_id;
	int driver_version;
	const char *nvrtc_version;
	const char *tool_version;
	const char *config_path;
	const char *config_text;
	double copy_gbps;
} sweep_info;

int tdb_sweep_begin(tdb *db, const sweep_info *info, long long *sweep_id,
		    at_error *err);
int tdb_sweep_finish(tdb *db, long long sweep_id, double compile_s, double bench_s,
		     at_error *err);

/* Sets *done to 1 if the shape already has a winners row for this GPU. */
int tdb_shape_done(tdb *db, long long gpu_id, const char *op, at_dtype dt,
		   long long M, long long N, int *done, at_error *err);

typedef enum result_status {
	RESULT_OK,
	RESULT_COMPILE_FAILED,
	RESULT_CHECK_FAILED,
	RESULT_LAUNCH_FAILED,
} result_status;

const char *result_status_name(result_status s);

/* One variant's outcome at one shape. Strings are borrowed. */
typedef struct result_row {
	int baseline;          /* a baseline (never a winner) rather than a variant */
	const char *template_name;
	const char *params;
	result_status status;
	const char *reason;    /* NULL when ok */
	double rel_err;        /* < 0: not measured */
	double time_us, time_min_us, time_max_us; /* <= 0: not timed */
	int reps;
	double gbps, pct_copy;
	int registers, smem_bytes, spill_bytes; /* < 0: unknown */
	double compile_ms;
	int threads, rows_per_cta, dyn_smem, persistent;
	long long max_n;
	int ctas_per_row, cooperative; /* 0 ctas_per_row is stored as 1 */
	/* compiled code, stored if this row wins */
	const void *cubin;
	size_t cubin_size;
	const char *ptx;
	int arch;
	const char *entry;     /* the kernel's name in the code (NULL: "softmax_kernel") */
} result_row;

typedef struct shape_key {
	long long gpu_id;
	const char *op;
	at_dtype dtype;
	long long M, N;
} shape_key;

/* The winner rule, the one that picks every winner (db/SCHEMA.md): index
 * of the winner among rows, -1 if none passed: of the ok non-baseline rows
 * within `band` (relative, e.g. 0.01) of the fastest, the one with the
 * fewest registers, then the fastest, then the earlier row. The sweep
 * applies it to a shape's variants, `db merge` to the sweeps' picks
 * (db/winners.h). */
long tdb_pick_winner(const result_row *rows, size_t n, double band);

/* Stores every row of one shape, its winner (picked with the noise band,
 * which is stored too) and the winner's code in one transaction: an
 * interrupted sweep loses at most this shape. */
int tdb_store_shape_band(tdb *db, long long sweep_id, const shape_key *key,
			 const result_row *rows, size_t n, double band, at_error *err);

/* The same with a band of 0: the fastest wins. */
int tdb_store_shape(tdb *db, long long sweep_id, const shape_key *key,
		    const result_row *rows, size_t n, at_error *err);

/* A winner as listed by `autotune list`. Strings valid during the callback. */
typedef struct winner_row {
	const char *gpu_name;
	int cc_major, cc_minor;
	const char *op, *dtype;
	long long M, N;
	const char *template_name; /* NULL when no variant passed */
	const char *params;
	double time_us, gbps, pct_copy;
	int registers;
} winner_row;

typedef int (*tdb_winner_fn)(const winner_row *row, void *ctx);

/* Calls fn for each winners row, ordered by GPU, op, dtype, M, N. Stops
 * early (returning fn's value) if fn returns non-zero. */
int tdb_each_winner(tdb *db, tdb_winner_fn fn, void *ctx, at_error *err);

/* The same for one shape (fn is not called if the shape has no row). */
int tdb_shape_winner(tdb *db, const shape_key *key, tdb_winner_fn fn, void *ctx,
		     at_error *err);

/* The persistent compile cache (see compile_cache in db/schema.sql). */
typedef struct cache_entry {
	int status;          /* 0 compiled, 1 did not compile */
	void *cubin;         /* malloc'd (NULL when status is 1) */
	size_t cubin_size;
	char *ptx, *log;     /* malloc'd */
	int registers, smem_bytes, spill_bytes, stack_bytes;
	double compile_ms;
} cache_entry;

/* Looks key up; *found says whether it was there. Fills *out when found. */
int tdb_cache_get(tdb *db, const char *key, cache_entry *out, int *found, at_error *err);

/* Stores entries (keys[i] -> entries[i]) in one transaction; existing keys
 * are left as they are. */
int tdb_cache_put(tdb *db, const char *const *keys, const cache_entry *const *entries,
		  size_t n, int arch, const char *nvrtc, at_error *err);

/* The underlying handle, for modules that run their own queries (reports). */
struct sqlite3 *tdb_handle(tdb *db);

#endif

/* Read-only access to the tuning database for the dispatch library: see
 * tuned_db.h. Everything is read with two queries at open; code is read
 * one kernels row at a time, on first use. */
#include "dispatch/policy/tuned_db.h"
#include "dispatch/policy/row_ops.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sqlite_reader.h"
#include "common/sha256.h"
#include "db/tuning_db.h" /* TDB_SCHEMA_VERSION only: nothing is linked */

/* How long a read waits for the tuner's write transaction to end. */
#define BUSY_TIMEOUT_MS 5000

static atd_status fail(atd_status s, char *msg, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static atd_status fail(atd_status s, char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
	return s;
}

/* SQLite reports a non-database file when a statement is first prepared;
 * an out-of-memory there is not the file's fault. But SQLite also says
 * SQLITE_NOMEM, with no allocation failing, for some damaged files (e.g. a
 * sqlite_schema record with an absurd length): memory that can still be
 * had now tells that apart from a real shortage. */
static atd_status sql_status(sqlite3 *db)
{
	if (sqlite3_errcode(db) != SQLITE_NOMEM)
		return ATD_ERR_DB_CORRUPT;
	void *probe = sqlite3_malloc(1 << 20);
	int short_of_memory = probe == NULL;
	sqlite3_free(probe);
	return short_of_memory ? ATD_ERR_NO_MEMORY : ATD_ERR_DB_CORRUPT;
}

/* The first read tells a file that is no database from one that cannot be
 * read (locked, or a write-ahead log whose folder is read-only). */
static atd_status first_read_fail(sqlite3 *db, const char *path, char *msg, size_t cap)
{
	int code = sqlite3_errcode(db);
	return fail(sql_status(db), msg, cap, "%s: %s: %s", path,
		    code == SQLITE_NOTADB || code == SQLITE_CORRUPT ? "not a tuning database"
								      : "cannot read it",
		    sqlite3_errmsg(db));
}

static atd_status check_version(sqlite3 *db, const char *path, char *msg, size_t cap)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return first_read_fail(db, path, msg, cap);
	int rc = sqlite3_step(st);
	int version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	if (rc != SQLITE_ROW) {
		atd_status s = first_read_fail(db, path, msg, cap);
		sqlite3_finalize(st);
		return s;
	}
	sqlite3_finalize(st);
	if (version > TDB_SCHEMA_VERSION)
		return fail(ATD_ERR_DB_NEWER, msg, cap,
			    "%s: schema version %d is newer than this library's (%d); "
			    "use a newer libautotune-dispatch",
			    path, version, TDB_SCHEMA_VERSION);
	if (version < TDB_SCHEMA_MIN_READ)
		return fail(ATD_ERR_DB_CORRUPT, msg, cap,
			    "%s: not a tuning database (schema version %d, expected %d to %d)", path,
			    version, TDB_SCHEMA_MIN_READ, TDB_SCHEMA_VERSION);
	return ATD_OK;
}

atd_status atdi_db_open(const char *path, sqlite3 **out, char *msg, size_t cap)
{
	*out = NULL;
	struct stat sb;
	if (stat(path, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return fail(ATD_ERR_DB_MISSING, msg, cap, "%s: no such tuning database", path);
		return fail(ATD_ERR_DB_CORRUPT, msg, cap, "%s: %s", path, strerror(errno));
	}
	if (S_ISDIR(sb.st_mode))
		return fail(ATD_ERR_DB_CORRUPT, msg, cap, "%s: is a directory, not a tuning database",
			    path);
	sqlite3 *db = NULL;
	int rc = at_sqlite_open_reader(path, &db);
	if (rc != SQLITE_OK) {
		atd_status s = rc == SQLITE_NOMEM || !db ? ATD_ERR_NO_MEMORY : ATD_ERR_DB_CORRUPT;
		fail(s, msg, cap, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return s;
	}
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	atd_status s = check_version(db, path, msg, cap);
	if (s != ATD_OK) {
		sqlite3_close(db);
		return s;
	}
	*out = db;
	return ATD_OK;
}

/* array (count elements of size elem, capacity *cap) with room for one
 * more: itself, or reallocated at twice the capacity (first when empty).
 * NULL when out of memory, array untouched. */
static void *with_room(void *array, size_t count, size_t *cap, size_t elem, size_t first)
{
	if (count < *cap)
		return array;
	size_t n = *cap ? 2 * *cap : first;
	void *grown = realloc(array, n * elem);
	if (grown)
		*cap = n;
	return grown;
}

static char *dup_text(sqlite3_stmt *st, int col)
{
	const char *s = (const char *)sqlite3_column_text(st, col);
	return strdup(s ? s : "");
}

static atd_status load_gpus(sqlite3 *db, const char *path, atdi_table *t, char *msg,
			    size_t cap)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT id, name, cc_major, cc_minor, sm_count, mem_bytes "
			       "FROM gpus ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return fail(sql_status(db), msg, cap, "%s: not a tuning database: %s", path,
			    sqlite3_errmsg(db));
	size_t alloc = 0;
	atd_status s = ATD_OK;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		void *room = with_room(t->gpus, t->ngpus, &alloc, sizeof *t->gpus, 8);
		if (!room) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
		t->gpus = room;
		atdi_gpu_row *g = &t->gpus[t->ngpus];
		g->id = sqlite3_column_int64(st, 0);
		g->name = dup_text(st, 1);
		g->cc_major = sqlite3_column_int(st, 2);
		g->cc_minor = sqlite3_column_int(st, 3);
		g->sm_count = sqlite3_column_int(st, 4);
		g->mem_bytes = sqlite3_column_int64(st, 5);
		g->seeds = 0;
		if (!g->name) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
		t->ngpus++;
	}
	if (s == ATD_OK && rc != SQLITE_DONE)
		s = fail(sql_status(db), msg, cap, "%s: reading the GPUs: %s", path, sqlite3_errmsg(db));
	else if (s == ATD_ERR_NO_MEMORY)
		fail(s, msg, cap, "%s: out of memory reading the GPUs", path);
	sqlite3_finalize(st);
	return s;
}

static long gpu_index(const atdi_table *t, long long id)
{
	for (size_t i = 0; i < t->ngpus; i++)
		if (t->gpus[i].id == id)
			return (long)i;
	return -1;
}

/* Fills e from a row of the winners query; returns 0 if the row is not
 * usable (it is then skipped), -1 for no memory, 1 if kept. */
static int entry_from_row(const atdi_table *t, sqlite3_stmt *st, atdi_entry *e)
{
	memset(e, 0, sizeof *e);
	long gi = gpu_index(t, sqlite3_column_int64(st, 0));
	const char *dt = (const char *)sqlite3_column_text(st, 1);
	if (gi < 0 || !dt || at_dtype_parse(dt, &e->dtype) != 0)
		return 0;
	e->gpu = (size_t)gi;
	e->M = sqlite3_column_int64(st, 2);
	e->N = sqlite3_column_int64(st, 3);
	e->result_id = sqlite3_column_int64(st, 4);
	e->time_us = sqlite3_column_type(st, 7) == SQLITE_NULL ? INFINITY
							     : sqlite3_column_double(st, 7);
	e->geom.threads = sqlite3_column_int(st, 8);
	e->geom.rows_per_cta = sqlite3_column_int(st, 9);
	e->geom.dyn_smem = sqlite3_column_int(st, 10);
	e->geom.persistent = sqlite3_column_int(st, 11) != 0;
	e->geom.max_n = sqlite3_column_int64(st, 12);
	e->arch = sqlite3_column_int(st, 13);
	e->geom.ctas_per_row = sqlite3_column_int(st, 14);
	e->geom.cooperative = sqlite3_column_int(st, 15) != 0;
	e->op = atdi_op_find((const char *)sqlite3_column_text(st, 16));
	at_error why;
	if (e->op < 0 || e->M < 1 || e->N < 1 || launch_geometry_check(&e->geom, &why) != 0)
		return 0;
	e->template_name = dup_text(st, 5);
	e->params = dup_text(st, 6);
	if (!e->template_name || !e->params) {
		free(e->template_name);
		free(e->params);
		return -1;
	}
	return 1;
}

/* Whether table has both columns a and b (added by a later schema version). */
static int has_columns(sqlite3 *db, const char *table, const char *a, const char *b)
{
	sqlite3_stmt *st;
	int n = 0;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name IN (?2, ?3)",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, a, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, b, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	return n == 2;
}

/* Whether results has the launch columns of schema version 3; older
 * databases hold only kernels launched one CTA per row step, normally. */
static int has_v3_geometry(sqlite3 *db)
{
	return has_columns(db, "results", "ctas_per_row", "cooperative");
}

/* The end of a read of winners rows: st finalized; s as it stands, or the
 * step's error (rc not SQLITE_DONE), with the message of either. */
static atd_status rows_done(sqlite3 *db, const char *path, sqlite3_stmt *st, atd_status s, int rc,
			    char *msg, size_t cap)
{
	if (s == ATD_OK && rc != SQLITE_DONE)
		s = fail(sql_status(db), msg, cap, "%s: reading the winners: %s", path,
			 sqlite3_errmsg(db));
	else if (s == ATD_ERR_NO_MEMORY)
		fail(s, msg, cap, "%s: out of memory reading the winners", path);
	sqlite3_finalize(st);
	return s;
}

static atd_status load_entries(sqlite3 *db, const char *path, atdi_table *t, char *msg,
			       size_t cap)
{
	char sql[512];
	snprintf(sql, sizeof sql,
		 "SELECT w.gpu_id, w.dtype, w.m, w.n, r.id, r.template, r.params, "
		 "r.time_us, r.threads, r.rows_per_cta, r.dyn_smem, r.persistent, "
		 "r.max_n, k.arch, %s, w.op "
		 "FROM winners w JOIN results r ON r.id = w.result_id "
		 "JOIN kernels k ON k.result_id = w.result_id",
		 has_v3_geometry(db) ? "r.ctas_per_row, r.cooperative" : "1, 0");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return fail(sql_status(db), msg, cap, "%s: not a tuning database: %s", path,
			    sqlite3_errmsg(db));
	size_t alloc = 0;
	atd_status s = ATD_OK;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		void *room = with_room(t->entries, t->nentries, &alloc, sizeof *t->entries, 64);
		if (!room) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
		t->entries = room;
		int kept = entry_from_row(t, st, &t->entries[t->nentries]);
		if (kept < 0) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
		t->nentries += (size_t)kept;
	}
	return rows_done(db, path, st, s, rc, msg, cap);
}

/* The winners whose result has no stored code (load_entries leaves them
 * out), to be named in warnings rather than skipped in silence. */
static atd_status load_missing(sqlite3 *db, const char *path, atdi_table *t, char *msg,
			       size_t cap)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
			       "SELECT w.gpu_id, w.dtype, w.m, w.n, w.result_id, r.template, r.params, "
			       "w.op FROM winners w LEFT JOIN results r ON r.id = w.result_id "
			       "WHERE w.result_id IS NOT NULL AND NOT EXISTS "
			       "(SELECT 1 FROM kernels k WHERE k.result_id = w.result_id) "
			       "ORDER BY w.gpu_id, w.dtype, w.m, w.n",
			       -1, &st, NULL) != SQLITE_OK)
		return fail(sql_status(db), msg, cap, "%s: not a tuning database: %s", path,
			    sqlite3_errmsg(db));
	size_t alloc = 0;
	atd_status s = ATD_OK;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long gi = gpu_index(t, sqlite3_column_int64(st, 0));
		const char *dt = (const char *)sqlite3_column_text(st, 1);
		at_dtype dtype;
		if (gi < 0 || !dt || at_dtype_parse(dt, &dtype) != 0)
			continue;
		void *room = with_room(t->missing, t->nmissing, &alloc, sizeof *t->missing, 8);
		if (!room) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
		t->missing = room;
		atdi_missing *m = &t->missing[t->nmissing];
		*m = (atdi_missing){ .result_id = sqlite3_column_int64(st, 4),
				     .op = atdi_op_find((const char *)sqlite3_column_text(st, 7)),
				     .gpu = (size_t)gi,
				     .dtype = dtype, .M = sqlite3_column_int64(st, 2),
				     .N = sqlite3_column_int64(st, 3),
				     .template_name = dup_text(st, 5), .params = dup_text(st, 6) };
		if (m->op < 0) { /* an op this library does not serve: not its to warn about */
			free(m->template_name);
			free(m->params);
			continue;
		}
		t->nmissing++;
		if (!m->template_name || !m->params) {
			s = ATD_ERR_NO_MEMORY;
			break;
		}
	}
	return rows_done(db, path, st, s, rc, msg, cap);
}

/* The models rows (schema.sql: a table a database may lack), texts kept
 * to be parsed on first use. */
static atd_status load_models(sqlite3 *db, const char *path, atdi_table *t, char *msg,
			      size_t cap)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT gpu_id, op, text FROM models ORDER BY gpu_id, op", -1,
			       &st, NULL) != SQLITE_OK)
		return ATD_OK; /* no models table: no model */
	size_t alloc = 0;
	atd_status s = ATD_OK;
	while (sqlite3_step(st) == SQLITE_ROW) {
		long gi = gpu_index(t, sqlite3_column_int64(st, 0));
		int op = atdi_op_find((const char *)sqlite3_column_text(st, 1));
		if (gi < 0 || op < 0)
			continue;
		void *room = with_room(t->models, t->nmodels, &alloc, sizeof *t->models, 4);
		if (room)
			t->models = room;
		char *text = room ? dup_text(st, 2) : NULL;
		if (!text) {
			s = fail(ATD_ERR_NO_MEMORY, msg, cap, "%s: out of memory reading the models",
				 path);
			break;
		}
		t->models[t->nmodels++] = (atdi_model_row){ (size_t)gi, op, text };
	}
	sqlite3_finalize(st);
	return s;
}

atd_status atdi_db_load(sqlite3 *db, const char *path, atdi_table *t, char *msg, size_t cap)
{
	memset(t, 0, sizeof *t);
	atd_status s = load_gpus(db, path, t, msg, cap);
	if (s == ATD_OK)
		s = load_entries(db, path, t, msg, cap);
	if (s == ATD_OK)
		s = load_missing(db, path, t, msg, cap);
	if (s == ATD_OK)
		s = load_models(db, path, t, msg, cap);
	if (s != ATD_OK)
		atdi_table_free(t);
	return s;
}

/* Whether kernels carries the digests of schema version 4. */
static int has_digests(sqlite3 *db)
{
	return has_columns(db, "kernels", "cubin_sha256", "ptx_sha256");
}

/* The image of `what` (size bytes) against the digest stored beside it. */
static atd_status check_digest(long long result_id, const char *what, const void *image,
			       size_t size, const unsigned char *stored, char *msg, size_t cap)
{
	if (!stored)
		return fail(ATD_ERR_KERNEL_ALTERED, msg, cap,
			    "result %lld's %s has no digest in a database that keeps them: "
			    "refusing to load it unchecked",
			    result_id, what);
	char got[SHA256_HEX_LEN + 1];
	sha256_hex(image, size, got);
	if (strcmp((const char *)stored, got) != 0)
		return fail(ATD_ERR_KERNEL_ALTERED, msg, cap,
			    "result %lld's %s does not match the digest stored beside it "
			    "(sha256 %.16s... stored, %.16s... read): the image was altered after "
			    "the sweep stored it; refusing to load it",
			    result_id, what, (const char *)stored, got);
	return ATD_OK;
}

/* The row of result_id's code: arch, entry, cubin, ptx and (NULL in a
 * database older than version 4) their digests; SQLITE_ROW, or the step's
 * code with st finalised. */
static int code_row(sqlite3 *db, long long result_id, sqlite3_stmt **st)
{
	const char *sql = has_digests(db)
				  ? "SELECT arch, entry, cubin, ptx, cubin_sha256, ptx_sha256 FROM kernels "
				    "WHERE result_id = ?1"
				  : "SELECT arch, entry, cubin, ptx, NULL, NULL FROM kernels "
				    "WHERE result_id = ?1";
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		sqlite3_finalize(*st);
		*st = NULL;
		return SQLITE_ERROR;
	}
	sqlite3_bind_int64(*st, 1, result_id);
	int rc = sqlite3_step(*st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(*st);
		*st = NULL;
	}
	return rc;
}

static atd_status no_row(sqlite3 *db, int rc, long long result_id, char *msg, size_t cap)
{
	return rc == SQLITE_DONE
		       ? fail(ATD_ERR_NO_KERNEL, msg, cap, "result %lld has no stored code", result_id)
		       : fail(sql_status(db), msg, cap, "reading the code of result %lld: %s",
			      result_id, sqlite3_errmsg(db));
}

/* Whether the row of st keeps digests (a version 4 database) and the image
 * in column col (2: cubin, 3: PTX) matches its own. */
static atd_status check_column(sqlite3_stmt *st, int digests, long long result_id, int col,
			       char *msg, size_t cap)
{
	if (!digests)
		return ATD_OK;
	const void *image = col == 2 ? sqlite3_column_blob(st, 2) : sqlite3_column_text(st, 3);
	size_t size = (size_t)sqlite3_column_bytes(st, col);
	return check_digest(result_id, col == 2 ? "cubin" : "PTX", image ? image : "", size,
			    sqlite3_column_text(st, col + 2), msg, cap);
}

atd_status atdi_db_verify(sqlite3 *db, long long result_id, char *msg, size_t cap)
{
	sqlite3_stmt *st;
	int rc = code_row(db, result_id, &st);
	if (rc != SQLITE_ROW)
		return no_row(db, rc, result_id, msg, cap);
	int digests = has_digests(db);
	atd_status s = check_column(st, digests, result_id, 2, msg, cap);
	if (s == ATD_OK)
		s = check_column(st, digests, result_id, 3, msg, cap);
	sqlite3_finalize(st);
	return s;
}

atd_status atdi_db_code(sqlite3 *db, long long result_id, int gpu_arch, atdi_code *out,
			char *msg, size_t cap)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *st;
	int rc = code_row(db, result_id, &st);
	if (rc != SQLITE_ROW)
		return no_row(db, rc, result_id, msg, cap);
	atd_status s = ATD_OK;
	out->arch = sqlite3_column_int(st, 0);
	out->entry = dup_text(st, 1);
	/* Only the column used is read: SQLite fetches blobs lazily. */
	out->is_ptx = out->arch != gpu_arch;
	const void *src;
	size_t size;
	if (out->is_ptx) {
		src = sqlite3_column_text(st, 3);
		size = (size_t)sqlite3_column_bytes(st, 3) + 1; /* with its NUL */
	} else {
		src = sqlite3_column_blob(st, 2);
		size = (size_t)sqlite3_column_bytes(st, 2);
	}
	if (!src || size <= (out->is_ptx ? 1u : 0u)) {
		s = out->is_ptx ? fail(ATD_ERR_NO_KERNEL, msg, cap,
				       "result %lld was compiled for sm_%d and has no PTX for sm_%d",
				       result_id, out->arch, gpu_arch)
				: fail(ATD_ERR_NO_KERNEL, msg, cap, "result %lld has an empty cubin",
				       result_id);
	} else if ((s = check_column(st, has_digests(db), result_id, out->is_ptx ? 3 : 2, msg,
				     cap)) != ATD_OK) {
		/* never loaded */
	} else if (!out->entry || !(out->image = malloc(size))) {
		s = fail(ATD_ERR_NO_MEMORY, msg, cap, "out of memory reading the code of result %lld",
			 result_id);
	} else {
		memcpy(out->image, src, size);
		out->size = size;
	}
	sqlite3_finalize(st);
	if (s != ATD_OK)
		atdi_code_free(out);
	return s;
}

void atdi_code_free(atdi_code *c)
{
	if (!c)
		return;
	free(c->entry);
	free(c->image);
	memset(c, 0, sizeof *c);
}

void atdi_table_free(atdi_table *t)
{
	for (size_t i = 0; i < t->ngpus; i++)
		free(t->gpus[i].name);
	for (size_t i = 0; i < t->nentries; i++) {
		free(t->entries[i].template_name);
		free(t->entries[i].params);
	}
	for (size_t i = 0; i < t->nmissing; i++) {
		free(t->missing[i].template_name);
		free(t->missing[i].params);
	}
	for (size_t i = 0; i < t->nmodels; i++)
		free(t->models[i].text);
	free(t->models);
	free(t->gpus);
	free(t->entries);
	free(t->missing);
	memset(t, 0, sizeof *t);
}

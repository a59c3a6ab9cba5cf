/* The persistent cache of derived variants' images: see jit_cache.h. */
#include "dispatch/runtime/jit_cache.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/sqlite_reader.h"
#include "common/sqlite_wal.h"

#define BUSY_TIMEOUT_MS 10000

static const char cache_schema[] =
	"CREATE TABLE IF NOT EXISTS jit_kernels ("
	" key TEXT PRIMARY KEY,"   /* digest of source, architecture, NVRTC version and options */
	" template TEXT NOT NULL, dtype TEXT NOT NULL, params TEXT NOT NULL,"
	" arch INTEGER NOT NULL, nvrtc TEXT NOT NULL, cubin BLOB NOT NULL,"
	" compile_ms REAL NOT NULL, created_at TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS tuned ("  /* online tuning's winners (jit_tuned.c) */
	" gpu TEXT NOT NULL, sm_count INTEGER NOT NULL, dtype TEXT NOT NULL,"
	" m INTEGER NOT NULL, n INTEGER NOT NULL, template TEXT NOT NULL, params TEXT NOT NULL,"
	" time_us REAL NOT NULL, candidates INTEGER NOT NULL, created_at TEXT NOT NULL,"
	" PRIMARY KEY (gpu, sm_count, dtype, m, n))";

void atdi_jit_cache_path(char *buf, size_t cap)
{
	const char *explicit_path = getenv("ATD_JIT_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (explicit_path)
		snprintf(buf, cap, "%s", strcmp(explicit_path, "off") == 0 ? "" : explicit_path);
	else if (xdg && *xdg)
		snprintf(buf, cap, "%s/autotune/jit.db", xdg);
	else if (home && *home)
		snprintf(buf, cap, "%s/.cache/autotune/jit.db", home);
	else
		buf[0] = '\0';
}

/* 64-bit FNV-1a, twice with different bases: the cache key's digest. */
static unsigned long long fnv1a(const char *s, unsigned long long h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

void atdi_jit_cache_key(const char *src, int arch, char *out, size_t cap)
{
	char salt[256];
	snprintf(salt, sizeof salt, "|sm_%d|%s|%s", arch, nvrtc_version_string(),
		 nvrtc_options_string());
	unsigned long long a = fnv1a(salt, fnv1a(src, 14695981039346656037ULL));
	unsigned long long b = fnv1a(salt, fnv1a(src, 0x9e3779b97f4a7c15ULL));
	snprintf(out, cap, "%016llx%016llx", a, b);
}

/* Creates the cache's folder (one level above the file, and its parent). */
static void make_parent(const char *path)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	char *up = strrchr(dir, '/');
	if (up && up != dir) {
		*up = '\0';
		mkdir(dir, 0755);
		*up = '/';
	}
	mkdir(dir, 0755);
}

sqlite3 *atdi_jit_cache_open(const char *path, int write)
{
	if (!path)
		return NULL;
	if (write)
		make_parent(path);
	sqlite3 *db = NULL;
	int rc = write ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
		       : at_sqlite_open_reader(path, &db); /* leaves no -wal/-shm behind */
	if (rc != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	if (write && (at_sqlite_use_wal(db, BUSY_TIMEOUT_MS) != SQLITE_OK ||
		      sqlite3_exec(db, cache_schema, NULL, NULL, NULL) != SQLITE_OK)) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

int atdi_jit_cache_get(const char *path, const char *key, void **image, size_t *size)
{
	sqlite3 *db = atdi_jit_cache_open(path, 0);
	sqlite3_stmt *st = NULL;
	int found = 0;
	if (db && sqlite3_prepare_v2(db, "SELECT cubin FROM jit_kernels WHERE key = ?1", -1, &st,
				     NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) > 0) {
			size_t n = (size_t)sqlite3_column_bytes(st, 0);
			void *copy = malloc(n);
			if (copy) {
				memcpy(copy, sqlite3_column_blob(st, 0), n);
				*image = copy;
				*size = n;
				found = 1;
			}
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return found;
}

void atdi_jit_cache_put(const char *path, const char *key, const atdi_jit_job *job,
			const compiled_kernel *k)
{
	sqlite3 *db = atdi_jit_cache_open(path, 1);
	sqlite3_stmt *st = NULL;
	if (db && sqlite3_prepare_v2(db,
				     "INSERT OR IGNORE INTO jit_kernels (key, template, dtype, params, "
				     "arch, nvrtc, cubin, compile_ms, created_at) VALUES "
				     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
				     -1, &st, NULL) == SQLITE_OK) {
		char params[1024];
		atdi_jit_job_params(job, params, sizeof params);
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, job->rules->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, at_dtype_name(job->dtype), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, params, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 5, job->arch);
		sqlite3_bind_text(st, 6, nvrtc_version_string(), -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 7, k->cubin, (int)k->cubin_size, SQLITE_STATIC);
		sqlite3_bind_double(st, 8, k->compile_ms);
		sqlite3_step(st); /* a read-only or full cache only costs the next process a compile */
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

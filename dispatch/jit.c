/* Run-time compilation of derived variants and their persistent cache: see
 * jit.h. The cache database is opened per lookup (a miss path, once per
 * shape and process); writers race harmlessly (INSERT OR IGNORE of the same
 * bytes) under WAL and a busy timeout, so threads and processes that hit
 * the same new shape at once each compile at most once and agree. */
#include "dispatch/jit.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/kernel_source.h"
#include "common/sqlite_reader.h"
#include "cuda/nvrtc_compile.h"

#define BUSY_TIMEOUT_MS 10000

static const char cache_schema[] =
	"CREATE TABLE IF NOT EXISTS jit_kernels ("
	" key TEXT PRIMARY KEY,"   /* digest of source, architecture, NVRTC version and options */
	" template TEXT NOT NULL, dtype TEXT NOT NULL, params TEXT NOT NULL,"
	" arch INTEGER NOT NULL, nvrtc TEXT NOT NULL, cubin BLOB NOT NULL,"
	" compile_ms REAL NOT NULL, created_at TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS tuned ("  /* online tuning's winners */
	" gpu TEXT NOT NULL, sm_count INTEGER NOT NULL, dtype TEXT NOT NULL,"
	" m INTEGER NOT NULL, n INTEGER NOT NULL, template TEXT NOT NULL, params TEXT NOT NULL,"
	" time_us REAL NOT NULL, candidates INTEGER NOT NULL, created_at TEXT NOT NULL,"
	" PRIMARY KEY (gpu, sm_count, dtype, m, n))";

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && strcmp(v, value) == 0;
}

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

int atdi_jit_init(atdi_jit *j, unsigned open_flags)
{
	memset(j, 0, sizeof *j);
	j->mode = (open_flags & ATD_OPEN_NO_JIT)	   ? ATDI_JIT_OFF
		  : (open_flags & ATD_OPEN_JIT_BACKGROUND) ? ATDI_JIT_BACKGROUND
							   : ATDI_JIT_BLOCK;
	j->tune = (open_flags & ATD_OPEN_TUNE) || env_is("ATD_TUNE", "1");
	const char *budget = getenv("ATD_TUNE_BUDGET_MS");
	j->tune_budget_ms = budget && atof(budget) > 0 ? atof(budget) : 500;
	if (env_is("ATD_JIT", "off") || env_is("ATD_JIT", "0"))
		j->mode = ATDI_JIT_OFF;
	else if (env_is("ATD_JIT", "block"))
		j->mode = ATDI_JIT_BLOCK;
	else if (env_is("ATD_JIT", "background"))
		j->mode = ATDI_JIT_BACKGROUND;
	at_error err;
	if (j->mode != ATDI_JIT_OFF && nvrtc_load(&err) != 0) {
		snprintf(j->off_reason, sizeof j->off_reason, "%.500s", err.msg);
		j->mode = ATDI_JIT_OFF;
	}
	char path[4096];
	atdi_jit_cache_path(path, sizeof path);
	if (*path && !(j->cache_path = strdup(path)))
		return -1;
	if (pthread_mutex_init(&j->lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&j->wake, NULL) != 0) {
		pthread_mutex_destroy(&j->lock);
		return -1;
	}
	return 0;
}

void atdi_jit_free(atdi_jit *j)
{
	pthread_mutex_lock(&j->lock);
	j->stopping = 1;
	pthread_cond_broadcast(&j->wake);
	int started = j->worker_started;
	pthread_mutex_unlock(&j->lock);
	if (started)
		pthread_join(j->worker, NULL);
	for (size_t i = 0; i < j->nimages; i++) {
		free(j->images[i].key);
		free(j->images[i].cubin);
		free(j->images[i].reason);
	}
	free(j->images);
	free(j->queue);
	free(j->cache_path);
	pthread_cond_destroy(&j->wake);
	pthread_mutex_destroy(&j->lock);
	memset(j, 0, sizeof *j);
}

static void job_params(const atdi_jit_job *job, char *buf, size_t cap)
{
	const tr_template *t = job->rules;
	const char *names[TR_MAX_PARAMS];
	for (int i = 0; i < t->nparams && i < TR_MAX_PARAMS; i++)
		names[i] = t->params[i].name;
	kernel_params_text(names, job->values, (size_t)t->nparams, buf, cap);
}

void atdi_jit_key(const atdi_jit_job *job, char *buf, size_t cap)
{
	char params[1024];
	job_params(job, params, sizeof params);
	snprintf(buf, cap, "%s %s sm_%d %s", job->rules->name, at_dtype_name(job->dtype), job->arch,
		 params);
}

/* 64-bit FNV-1a, twice with different bases: the cache key's digest. */
static unsigned long long fnv1a(const char *s, unsigned long long h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static void digest(const char *src, int arch, char *out, size_t cap)
{
	char salt[256];
	snprintf(salt, sizeof salt, "|sm_%d|%s|%s", arch, nvrtc_version_string(),
		 nvrtc_options_string());
	unsigned long long a = fnv1a(salt, fnv1a(src, 14695981039346656037ULL));
	unsigned long long b = fnv1a(salt, fnv1a(src, 0x9e3779b97f4a7c15ULL));
	snprintf(out, cap, "%016llx%016llx", a, b);
}

static char *job_source(const atdi_jit_job *job)
{
	const tr_template *t = job->rules;
	const char *names[TR_MAX_PARAMS];
	for (int i = 0; i < t->nparams && i < TR_MAX_PARAMS; i++)
		names[i] = t->params[i].name;
	return kernel_source(t->name, t->source_file, job->dtype, names, job->values,
			     (size_t)t->nparams, t->body);
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

static sqlite3 *cache_open(const char *path, int write)
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
	if (write && (sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK ||
		      sqlite3_exec(db, cache_schema, NULL, NULL, NULL) != SQLITE_OK)) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int cache_get(const char *path, const char *key, void **image, size_t *size)
{
	sqlite3 *db = cache_open(path, 0);
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

static void cache_put(const char *path, const char *key, const atdi_jit_job *job,
		      const compiled_kernel *k)
{
	sqlite3 *db = cache_open(path, 1);
	sqlite3_stmt *st = NULL;
	if (db && sqlite3_prepare_v2(db,
				     "INSERT OR IGNORE INTO jit_kernels (key, template, dtype, params, "
				     "arch, nvrtc, cubin, compile_ms, created_at) VALUES "
				     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
				     -1, &st, NULL) == SQLITE_OK) {
		char params[1024];
		job_params(job, params, sizeof params);
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

/* Compiles (or reads from the cache database) job's cubin; counts the
 * compiles in j (under its lock). */
static atd_status build(atdi_jit *j, const char *cache_path, const atdi_jit_job *job,
			void **image, size_t *size, char *why, size_t cap)
{
	char *src = job_source(job);
	if (!src) {
		snprintf(why, cap, "out of memory building the source");
		return ATD_ERR_NO_MEMORY;
	}
	char key[40];
	digest(src, job->arch, key, sizeof key);
	if (cache_get(cache_path, key, image, size)) {
		free(src);
		return ATD_OK;
	}
	compiled_kernel k;
	at_error err;
	int rc = nvrtc_compile(src, job->rules->name, job->arch, &k, &err);
	free(src);
	pthread_mutex_lock(&j->lock);
	j->compiles++;
	pthread_mutex_unlock(&j->lock);
	if (rc == COMPILE_FAILED) {
		snprintf(why, cap, "NVRTC did not compile it: %.700s", k.log ? k.log : "");
		compiled_kernel_free(&k);
		return ATD_ERR_NO_KERNEL;
	}
	if (rc != COMPILE_OK) {
		snprintf(why, cap, "%.900s", err.msg);
		return ATD_ERR_NO_KERNEL;
	}
	cache_put(cache_path, key, job, &k);
	*image = k.cubin;
	*size = k.cubin_size;
	k.cubin = NULL;
	compiled_kernel_free(&k);
	return ATD_OK;
}

/* The image kept for key, or NULL. With lock held. */
static atdi_jit_image *find_image(atdi_jit *j, const char *key)
{
	for (size_t i = 0; i < j->nimages; i++)
		if (strcmp(j->images[i].key, key) == 0)
			return &j->images[i];
	return NULL;
}

/* Keeps a copy of the outcome for key. With lock held; best effort. */
static void keep_image(atdi_jit *j, const char *key, const void *cubin, size_t size,
		       const char *reason)
{
	if (find_image(j, key))
		return;
	if (j->nimages == j->image_cap) {
		size_t n = j->image_cap ? 2 * j->image_cap : 8;
		atdi_jit_image *v = realloc(j->images, n * sizeof *v);
		if (!v)
			return;
		j->images = v;
		j->image_cap = n;
	}
	atdi_jit_image im = { strdup(key), cubin ? malloc(size) : NULL, size,
			      reason ? strdup(reason) : NULL };
	if (!im.key || (cubin && !im.cubin)) {
		free(im.key);
		free(im.cubin);
		free(im.reason);
		return;
	}
	if (cubin)
		memcpy(im.cubin, cubin, size);
	j->images[j->nimages++] = im;
}

atd_status atdi_jit_get(atdi_jit *j, const atdi_jit_job *job, void **image, size_t *size,
			char *why, size_t cap)
{
	char key[1400];
	atdi_jit_key(job, key, sizeof key);
	pthread_mutex_lock(&j->lock);
	atdi_jit_image *im = find_image(j, key);
	atd_status s = ATD_ERR_NO_KERNEL;
	if (im && im->cubin && (*image = malloc(im->size))) {
		memcpy(*image, im->cubin, im->size);
		*size = im->size;
		s = ATD_OK;
	} else if (im) {
		snprintf(why, cap, "%s", im->cubin ? "out of memory" : im->reason ? im->reason : "");
		s = im->cubin ? ATD_ERR_NO_MEMORY : ATD_ERR_NO_KERNEL;
	}
	pthread_mutex_unlock(&j->lock);
	if (im)
		return s;
	s = build(j, j->cache_path, job, image, size, why, cap);
	pthread_mutex_lock(&j->lock);
	if (s != ATD_ERR_NO_MEMORY)
		keep_image(j, key, s == ATD_OK ? *image : NULL, s == ATD_OK ? *size : 0, why);
	pthread_mutex_unlock(&j->lock);
	return s;
}

static void *worker_main(void *arg)
{
	atdi_jit *j = arg;
	pthread_mutex_lock(&j->lock);
	for (;;) {
		while (!j->nqueue && !j->stopping)
			pthread_cond_wait(&j->wake, &j->lock);
		if (j->stopping)
			break;
		atdi_jit_job job = j->queue[0];
		memmove(j->queue, j->queue + 1, --j->nqueue * sizeof *j->queue);
		char *path = j->cache_path;
		pthread_mutex_unlock(&j->lock);
		void *image = NULL;
		size_t size = 0;
		char why[1024] = "";
		atd_status s = build(j, path, &job, &image, &size, why, sizeof why);
		char key[1400];
		atdi_jit_key(&job, key, sizeof key);
		pthread_mutex_lock(&j->lock);
		if (s != ATD_ERR_NO_MEMORY)
			keep_image(j, key, s == ATD_OK ? image : NULL, size, why);
		free(image);
		__atomic_add_fetch(&j->generation, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

static int queued(const atdi_jit *j, const char *key)
{
	for (size_t i = 0; i < j->nqueue; i++) {
		char other[1400];
		atdi_jit_key(&j->queue[i], other, sizeof other);
		if (strcmp(other, key) == 0)
			return 1;
	}
	return 0;
}

int atdi_jit_poll(atdi_jit *j, const atdi_jit_job *job)
{
	char key[1400];
	atdi_jit_key(job, key, sizeof key);
	pthread_mutex_lock(&j->lock);
	const atdi_jit_image *im = find_image(j, key);
	int state = im ? (im->cubin ? 1 : -1) : 0;
	if (!im && !queued(j, key) && !j->stopping) {
		if (!j->worker_started)
			j->worker_started = pthread_create(&j->worker, NULL, worker_main, j) == 0;
		if (j->worker_started && j->nqueue == j->queue_cap) {
			size_t n = j->queue_cap ? 2 * j->queue_cap : 8;
			atdi_jit_job *v = realloc(j->queue, n * sizeof *v);
			if (v) {
				j->queue = v;
				j->queue_cap = n;
			}
		}
		if (j->worker_started && j->nqueue < j->queue_cap) {
			j->queue[j->nqueue++] = *job;
			pthread_cond_signal(&j->wake);
		}
	}
	pthread_mutex_unlock(&j->lock);
	return state;
}

unsigned atdi_jit_generation(atdi_jit *j)
{
	return __atomic_load_n(&j->generation, __ATOMIC_ACQUIRE);
}

/* ?1-?5 of the tuned table's key: GPU model and shape. */
static void bind_shape(sqlite3_stmt *st, const atd_gpu *gpu, at_dtype dtype, long long M,
		       long long N)
{
	sqlite3_bind_text(st, 1, gpu->name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, gpu->sm_count);
	sqlite3_bind_text(st, 3, at_dtype_name(dtype), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, M);
	sqlite3_bind_int64(st, 5, N);
}

int atdi_jit_tuned_get(const atdi_jit *j, const atd_gpu *gpu, at_dtype dtype, long long M,
		       long long N, atdi_tuned *out)
{
	sqlite3 *db = cache_open(j->cache_path, 0);
	sqlite3_stmt *st = NULL;
	int found = 0;
	if (db && sqlite3_prepare_v2(db,
				     "SELECT template, params, time_us FROM tuned WHERE gpu = ?1 AND "
				     "sm_count = ?2 AND dtype = ?3 AND m = ?4 AND n = ?5",
				     -1, &st, NULL) == SQLITE_OK) {
		bind_shape(st, gpu, dtype, M, N);
		if (sqlite3_step(st) == SQLITE_ROW) {
			snprintf(out->template_name, sizeof out->template_name, "%s",
				 (const char *)sqlite3_column_text(st, 0));
			snprintf(out->params, sizeof out->params, "%s",
				 (const char *)sqlite3_column_text(st, 1));
			out->time_us = sqlite3_column_double(st, 2);
			found = 1;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return found;
}

void atdi_jit_tuned_put(const atdi_jit *j, const atd_gpu *gpu, at_dtype dtype, long long M,
			long long N, const atdi_tuned *t, int candidates)
{
	sqlite3 *db = cache_open(j->cache_path, 1);
	sqlite3_stmt *st = NULL;
	if (db && sqlite3_prepare_v2(db,
				     "INSERT OR REPLACE INTO tuned (gpu, sm_count, dtype, m, n, template, "
				     "params, time_us, candidates, created_at) VALUES (?1, ?2, ?3, ?4, ?5, "
				     "?6, ?7, ?8, ?9, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
				     -1, &st, NULL) == SQLITE_OK) {
		bind_shape(st, gpu, dtype, M, N);
		sqlite3_bind_text(st, 6, t->template_name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, t->params, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 8, t->time_us);
		sqlite3_bind_int(st, 9, candidates);
		sqlite3_step(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

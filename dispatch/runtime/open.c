/* The handle's life: atd_open reads the database's metadata (or, with
 * ATD_OPEN_FALLBACK, makes a built-in-only handle and keeps the reason),
 * atd_close unloads what was loaded, and atd_errmsg(NULL) says why the
 * last atd_open failed. The handle's message and log are handle.c. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/tuning_db.h" /* TDB_PATH_ENV, TDB_DEFAULT_PATH only */
#include "dispatch/runtime/resolve.h"
#include "dispatch/runtime/tune_worker.h"
#include "dispatch/runtime/models.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/modules.h"
#include "dispatch/policy/seeds.h"
#include "dispatch/policy/tuned_db.h"

/* Why the calling thread's last atd_open failed: a failed open has no
 * handle to hold it, so atd_errmsg(NULL) gives it. */
static _Thread_local char open_error[ATDI_MSG_CAP];

static void handle_free(atd_handle *h)
{
	if (h->tuner) { /* first: it may be tuning, through the JIT */
		atdi_tune_worker_free(h->tuner);
		free(h->tuner);
	}
	if (h->jit_inited)
		atdi_jit_free(&h->jit); /* its worker may be compiling */
	atdi_modules_unload(h);
	for (size_t i = 0; i < h->nstrings; i++)
		free(h->strings[i]);
	free(h->strings);
	for (size_t i = 0; i < h->nctxs; i++)
		free(h->ctxs[i]);
	free(h->ctxs);
	sqlite3_close(h->db);
	atdi_models_free(h);
	atdi_table_free(&h->table);
	atdi_lookup_free(&h->lookup);
	atdi_lookup_free(&h->warned);
	atdi_lookup_free(&h->warned_missing);
	free(h->pending);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->slow);
	pthread_mutex_destroy(&h->log_lock);
	free(h);
}

static atd_handle *handle_new(void)
{
	atd_handle *h = calloc(1, sizeof *h);
	if (!h)
		return NULL;
	pthread_mutexattr_t recursive;
	if (pthread_mutexattr_init(&recursive) != 0) {
		free(h);
		return NULL;
	}
	pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
	int made = 0;
	if (pthread_mutex_init(&h->lock, NULL) == 0 && ++made &&
	    pthread_mutex_init(&h->slow, NULL) == 0 && ++made &&
	    pthread_mutex_init(&h->log_lock, &recursive) == 0)
		made = 3;
	pthread_mutexattr_destroy(&recursive);
	if (made == 3)
		return h;
	if (made == 2)
		pthread_mutex_destroy(&h->slow);
	if (made >= 1)
		pthread_mutex_destroy(&h->lock);
	free(h);
	return NULL;
}

static atd_status open_failed(atd_status s, const char *msg)
{
	snprintf(open_error, sizeof open_error, "%s", msg);
	return s;
}

/* Winners whose code is not in the database are never served: says so (in
 * the message now, to the first log callback), naming the first few, so
 * that what their shapes get instead is never a silent downgrade. Each
 * such shape is warned about again when it is first called (resolve.c). */
static void warn_missing(atd_handle *h, const char *path)
{
	const atdi_table *t = &h->table;
	if (t->nmissing == 0)
		return;
	size_t len = (size_t)snprintf(h->errmsg, sizeof h->errmsg,
				      "%.300s: %zu tuned winner%s no stored kernel, so %s shape%s "
				      "the next choice (nearest winner, derived or built-in):",
				      path, t->nmissing, t->nmissing == 1 ? " has" : "s have",
				      t->nmissing == 1 ? "its" : "their",
				      t->nmissing == 1 ? " gets" : "s get");
	for (size_t i = 0; i < t->nmissing && i < 3 && len < sizeof h->errmsg; i++) {
		const atdi_missing *m = &t->missing[i];
		len += (size_t)snprintf(h->errmsg + len, sizeof h->errmsg - len,
					"%s %s M=%lld N=%lld on %s (%.60s %.120s, result %lld)",
					i ? ";" : "", at_dtype_name(m->dtype), m->M, m->N,
					t->gpus[m->gpu].name, m->template_name, m->params,
					m->result_id);
	}
	if (len < sizeof h->errmsg)
		snprintf(h->errmsg + len, sizeof h->errmsg - len, "%s",
			 t->nmissing > 3 ? "; ..." : "");
	h->pending = strdup(h->errmsg); /* lost if out of memory: only a log line */
}

ATD_API atd_status atd_open(const char *path, unsigned flags, atd_handle **out)
{
	if (!out)
		return open_failed(ATD_ERR_INVALID_ARGUMENT, "atd_open: out is NULL");
	*out = NULL;
	if (!path) {
		const char *env = getenv(TDB_PATH_ENV);
		path = env && *env ? env : TDB_DEFAULT_PATH;
	}
	atd_handle *h = handle_new();
	if (!h)
		return open_failed(ATD_ERR_NO_MEMORY, "out of memory creating a handle");
	if (atdi_jit_init(&h->jit, flags) != 0) {
		handle_free(h);
		return open_failed(ATD_ERR_NO_MEMORY, "out of memory creating a handle");
	}
	h->jit_inited = 1;
	h->tuner = malloc(sizeof *h->tuner);
	if (!h->tuner ||
	    atdi_tune_worker_init(h->tuner, atdi_tune_in_background, h, &h->jit.generation) != 0) {
		free(h->tuner);
		h->tuner = NULL;
		handle_free(h);
		return open_failed(ATD_ERR_NO_MEMORY, "out of memory creating a handle");
	}
	char msg[ATDI_MSG_CAP] = "";
	int no_db = (flags & ATD_OPEN_NO_DB) != 0;
	atd_status s = no_db ? ATD_ERR_DB_MISSING : atdi_db_open(path, &h->db, msg, sizeof msg);
	if (s == ATD_OK) {
		s = atdi_db_load(h->db, path, &h->table, msg, sizeof msg);
		if (s != ATD_OK) {
			sqlite3_close(h->db);
			h->db = NULL;
		}
	}
	if (s == ATD_OK) {
		warn_missing(h, path);
		*out = h;
		return ATD_OK;
	}
	if ((no_db || (flags & ATD_OPEN_FALLBACK)) && s != ATD_ERR_NO_MEMORY) {
		/* With NVRTC, the seed models and winners stand in for the
		 * database (dispatch/policy/seeds.h). */
		int seeded = h->jit.mode != ATDI_JIT_OFF && atdi_seed_table(&h->table) == ATD_OK;
		if (!no_db) { /* asked for: nothing to warn about */
			snprintf(h->errmsg, sizeof h->errmsg, "%.900s; %s", msg,
				 seeded ? "choosing with the library's seed models and seed winners"
					: "using the built-in kernel only");
			h->pending = strdup(h->errmsg); /* lost if out of memory: only a log line */
		}
		*out = h;
		return ATD_OK;
	}
	handle_free(h);
	return open_failed(s, msg);
}

ATD_API void atd_close(atd_handle *h)
{
	if (h)
		handle_free(h);
}

ATD_API const char *atd_errmsg(atd_handle *h)
{
	return h ? h->errmsg : open_error;
}

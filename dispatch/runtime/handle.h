/* The inside of an atd_handle, and what belongs to the handle itself: its
 * message, its log and the strings it keeps (handle.c). Its life (atd_open,
 * atd_close) is open.c; the parts it holds have their own headers
 * (context.h, modules.h, jit.h, lookup.h, tuned_table.h).
 * Locking: `lock` guards the lookup cache and the message, and is held only
 * for a hash probe or a copy (the fast path); `slow` guards the database
 * connection, the context and module caches (the miss path); `log_lock`
 * serialises log callbacks. Order: slow before lock; no callback runs with
 * lock or slow held, so a callback may call back into the library. */
#ifndef AT_DISPATCH_HANDLE_H
#define AT_DISPATCH_HANDLE_H

#include <pthread.h>

#include "cuda/driver.h"
#include "dispatch/runtime/jit.h"
#include "dispatch/policy/lookup.h"
#include "dispatch/policy/tuned_table.h"

/* The API's dtype (atd_dtype) and the inside's (at_dtype) are cast into each
 * other at every entry point: one list of values. */
_Static_assert(ATD_F32 == (int)AT_F32 && ATD_F16 == (int)AT_F16 && ATD_BF16 == (int)AT_BF16 &&
		       AT_DTYPE_COUNT == 3,
	       "atd_dtype and at_dtype must have the same values");

#define ATDI_MSG_CAP 1024

struct atd_handle {
	pthread_mutex_t lock;
	atdi_lookup lookup;
	char errmsg[ATDI_MSG_CAP];

	pthread_mutex_t slow;
	struct sqlite3 *db; /* NULL for a handle that serves the built-in only */
	atdi_table table;   /* immutable after atd_open: read with no lock */
	struct atdi_ctx_info **ctxs; /* context.h */
	size_t nctxs, ctx_cap;
	struct atdi_module *mods; /* modules.h */
	size_t nmods, mod_cap;
	atdi_lookup warned; /* shapes (ctx NULL) already warned about */
	atdi_lookup warned_missing; /* shapes whose winner's lost code was warned about */
	atdi_jit jit;       /* derived variants: compiling and their cache */
	int jit_inited;
	struct atdi_tune_worker *tuner; /* background mode's online tuning (tune_worker.h) */
	struct perf_model **models; /* table.models parsed (models.h), guarded by slow */
	signed char *model_state;   /* per row: 0 not yet, 1 parsed, -1 does not parse */
	char **strings;     /* derived params texts, kept until atd_close */
	size_t nstrings, string_cap;

	pthread_mutex_t log_lock; /* recursive */
	atd_log_fn log_fn;
	void *log_user;
	char *pending; /* why atd_open fell back, for the first callback */
};

/* Sets the handle's message and returns s. Takes lock: not with it held. */
atd_status atdi_fail(atd_handle *h, atd_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same for a failed driver call ("what: CUDA_ERROR_X (text)"). */
atd_status atdi_cuda_fail(atd_handle *h, atd_status s, CUresult rc, const char *what);

/* Log messages gathered under slow and delivered after it is released. */
typedef struct atdi_notes {
	int n;
	atd_log_level level[4];
	char text[4][ATDI_MSG_CAP];
} atdi_notes;

void atdi_note(atdi_notes *notes, atd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Delivers notes to the callback; warnings also become the message. */
void atdi_notes_emit(atd_handle *h, const atdi_notes *notes);

/* A copy of text that lives until atd_close, or NULL (no memory). With
 * slow held. */
const char *atdi_keep_string(atd_handle *h, const char *text);

/* Whether r was served while a derived kernel compiled in the background
 * and the compiler has finished a job since: then the shape is resolved
 * again. One atomic load on the fast path, only for provisional entries. */
static inline int atdi_stale(atd_handle *h, const atdi_resolved *r)
{
	return r->provisional && r->generation != atdi_jit_generation(&h->jit);
}

#endif

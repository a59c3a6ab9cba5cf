/* The inside of an atd_handle and the functions the library's files share.
 * Locking: `lock` guards the lookup cache and the message, and is held only
 * for a hash probe or a copy (the fast path); `slow` guards the database
 * connection, the context and module caches (the miss path); `log_lock`
 * serialises log callbacks. Order: slow before lock; no callback runs with
 * lock or slow held, so a callback may call back into the library. */
#ifndef AT_DISPATCH_HANDLE_H
#define AT_DISPATCH_HANDLE_H

#include <pthread.h>

#include "cuda/driver.h"
#include "dispatch/lookup.h"
#include "dispatch/tuned_table.h"

#define ATDI_MSG_CAP 1024

/* The GPU behind a context, read once per context. */
typedef struct atdi_ctx_info {
	CUcontext ctx;
	CUdevice dev;
	int arch; /* cc_major * 10 + cc_minor, as kernels.arch */
	char name[256];
	atd_gpu gpu; /* gpu.name points to name */
} atdi_ctx_info;

/* A module loaded in a context, or the remembered failure to load one. */
typedef struct atdi_module {
	CUcontext ctx;
	long long key; /* the result id, or -1 - dtype for the built-in */
	CUmodule mod;  /* NULL if loading failed */
	CUfunction fn;
	atd_status status; /* why it failed */
	char *reason;
} atdi_module;

struct atd_handle {
	pthread_mutex_t lock;
	atdi_lookup lookup;
	char errmsg[ATDI_MSG_CAP];

	pthread_mutex_t slow;
	struct sqlite3 *db; /* NULL for a handle that serves the built-in only */
	atdi_table table;   /* immutable after atd_open: read with no lock */
	atdi_ctx_info **ctxs;
	size_t nctxs, ctx_cap;
	atdi_module *mods;
	size_t nmods, mod_cap;
	atdi_lookup warned; /* shapes (ctx NULL) already warned about */

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

/* Loads libcuda and calls cuInit, once per process. ATD_OK or
 * ATD_ERR_NO_DRIVER (message set). */
atd_status atdi_driver(atd_handle *h);

/* The calling thread's context: ATD_OK, ATD_ERR_NO_CONTEXT or ATD_ERR_CUDA. */
atd_status atdi_current(atd_handle *h, CUcontext *ctx);

/* The GPU of ctx, the current context, read on first use. With slow held. */
atd_status atdi_ctx_info_get(atd_handle *h, CUcontext ctx, const atdi_ctx_info **out);

/* e's function (the built-in for dtype when e is NULL) in ctx, the current
 * context, loading its module on first use; a failure is remembered and
 * returned again without retrying. With slow held. On failure, why gets
 * the reason and the handle's message is left alone. */
atd_status atdi_module_fn(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e,
			  at_dtype dtype, CUfunction *fn, char *why, size_t cap);

/* Unloads every module in its own context and restores the caller's. */
void atdi_modules_unload(atd_handle *h);

/* Finds or computes what runs (dtype, M, N) in ctx, the current context,
 * and caches it. The miss path of atd_softmax. */
atd_status atdi_resolve(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M, long long N,
			atdi_resolved *out);

/* The embedded fat binary of the built-in kernel for dtype (NULL if none). */
const void *atdi_builtin_image(at_dtype dtype);

#endif

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
#include "dispatch/jit.h"
#include "dispatch/lookup.h"
#include "dispatch/plan.h"
#include "dispatch/tuned_table.h"

/* The API's dtype (atd_dtype) and the inside's (at_dtype) are cast into each
 * other at every entry point: one list of values. */
_Static_assert(ATD_F32 == (int)AT_F32 && ATD_F16 == (int)AT_F16 && ATD_BF16 == (int)AT_BF16 &&
		       AT_DTYPE_COUNT == 3,
	       "atd_dtype and at_dtype must have the same values");

#define ATDI_MSG_CAP 1024
#define ATDI_DERIVED_KEY (-1000LL)

/* The GPU behind a context, read once per context. */
typedef struct atdi_ctx_info {
	CUcontext ctx;
	CUdevice dev;
	int arch; /* cc_major * 10 + cc_minor, as kernels.arch */
	int max_threads, max_smem, regs_per_sm; /* for the manifests' rules */
	char name[256];
	atd_gpu gpu; /* gpu.name points to name */
} atdi_ctx_info;

/* A module loaded in a context, or the remembered failure to load one. */
typedef struct atdi_module {
	CUcontext ctx;
	long long key; /* the result id, -1 - dtype for the built-in, or ATDI_DERIVED_KEY */
	char *jit_key; /* ATDI_DERIVED_KEY: atdi_jit_key of the variant */
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
	atdi_lookup warned_missing; /* shapes whose winner's lost code was warned about */
	atdi_jit jit;       /* derived variants: compiling and their cache */
	int jit_inited;
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

/* The derived variant's function in ci's context (the current one): its
 * cubin from atdi_jit_get (compiled on first use), loaded once per context
 * like a tuned module. With slow held; why as for atdi_module_fn. */
atd_status atdi_module_derived(atd_handle *h, const atdi_ctx_info *ci, const atdi_jit_job *job,
			       CUfunction *fn, char *why, size_t cap);

/* A copy of text that lives until atd_close, or NULL (no memory). With
 * slow held. */
const char *atdi_keep_string(atd_handle *h, const char *text);

/* The shape variables of (M, N, dtype) on ci's GPU. */
atdi_env atdi_ctx_env(const atdi_ctx_info *ci, at_dtype dtype, long long M, long long N);

/* Online tuning (dispatch/tune.c): the fastest of the candidates the
 * nearest winners give for (dtype, M, N), timed on scratch buffers, into
 * *best and *best_us; *tried says how many ran. ATD_OK, or
 * ATD_ERR_NO_KERNEL with why (no candidate, no memory for scratch). With
 * slow held, ci's context current. */
atd_status atdi_tune(atd_handle *h, const atdi_ctx_info *ci, at_dtype dtype, long long M,
		     long long N, atdi_plan *best, double *best_us, int *tried, char *why,
		     size_t cap);

/* Unloads every module in its own context and restores the caller's. */
void atdi_modules_unload(atd_handle *h);

/* Finds or decides (decide.h) what runs (dtype, M, N) in ctx, the current
 * context, and caches it. The miss path of atd_softmax. */
atd_status atdi_resolve(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M, long long N,
			atdi_resolved *out);

/* Whether r was served while a derived kernel compiled in the background
 * and the compiler has finished a job since: then the shape is resolved
 * again. One atomic load on the fast path, only for provisional entries. */
static inline int atdi_stale(atd_handle *h, const atdi_resolved *r)
{
	return r->provisional && r->generation != atdi_jit_generation(&h->jit);
}

/* The embedded fat binary of the built-in kernel for dtype (NULL if none). */
const void *atdi_builtin_image(at_dtype dtype);

#endif

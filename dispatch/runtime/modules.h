/* The modules loaded in each context (the handle's mods, guarded by
 * slow): a stored winner's, the built-in kernel's or a derived variant's,
 * loaded on first use; a failure to load is remembered and not retried. */
#ifndef AT_DISPATCH_MODULES_H
#define AT_DISPATCH_MODULES_H

#include <stddef.h>

#include "common/dtype.h"
#include "cuda/driver.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/jit_job.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/tuned_table.h"
#include "include/autotune/dispatch.h"

#define ATDI_DERIVED_KEY (-1000LL)

/* A module loaded in a context, or the remembered failure to load one. */
typedef struct atdi_module {
	CUcontext ctx;
	long long key; /* the result id, -1 - (op * 3 + dtype) for the built-in, or ATDI_DERIVED_KEY */
	char *jit_key; /* ATDI_DERIVED_KEY: atdi_jit_key of the variant */
	CUmodule mod;  /* NULL if loading failed */
	CUfunction fn;
	CUfunction aux[ATDI_OP_MAX_AUX]; /* the op's other kernels (atdi_op_desc.aux), or NULL */
	atd_status status; /* why it failed */
	char *reason;
} atdi_module;

/* e's function (the built-in for (op, dtype) when e is NULL) in ctx, the current
 * context, loading its module on first use; a failure is remembered and
 * returned again without retrying. With slow held. On failure, why gets
 * the reason and the handle's message is left alone. aux (ATDI_OP_MAX_AUX, or NULL)
 * gets the op's other kernels from the same module (a module without
 * them does not load). */
atd_status atdi_module_fn(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e, int op,
			  at_dtype dtype, CUfunction *fn, CUfunction *aux, char *why, size_t cap);

/* The derived variant's function in ci's context (the current one): its
 * cubin from atdi_jit_get (compiled on first use), loaded once per context
 * like a tuned module. With slow held; why as for atdi_module_fn. */
atd_status atdi_module_derived(atd_handle *h, const atdi_ctx_info *ci, const atdi_jit_job *job,
			       CUfunction *fn, CUfunction *aux, char *why, size_t cap);

/* Unloads every module in its own context and restores the caller's. */
void atdi_modules_unload(atd_handle *h);

#endif

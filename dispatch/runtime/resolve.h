/* atd_softmax's miss path: the decision (decide.h) with the loader that
 * compiles, loads and sizes the grid, cached in the handle's lookup. */
#ifndef AT_DISPATCH_RESOLVE_H
#define AT_DISPATCH_RESOLVE_H

#include "dispatch/policy/row_ops.h"
#include "common/dtype.h"
#include "cuda/driver.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/policy/lookup.h"

/* atd_softmax's loader: modules loaded, grids sized. */
extern const atdi_loader atdi_launch_loader;

/* The handle's tune worker's job (tune_worker.h): user is the handle; sets
 * the job's context current on the worker, takes slow and tunes as a
 * blocking call does, keeping the winner in the cache database. */
int atdi_tune_in_background(void *user, atdi_tune_job *job);

/* atdi_waiting_kernels' bit for the op's own kernel. */
#define ATDI_MAIN_WAITS (1u << 31)

/* Which kernels of code whose aux kernels are aux (NULL where the code
 * lacks one) wait for the kernel before them, by the markers it defines
 * (row_ops.h): bit i aux[i], ATDI_MAIN_WAITS the op's own; none before
 * sm_90. */
unsigned atdi_waiting_kernels(int op, struct CUfunc_st *const *aux, int arch);

/* Takes op's shared aux kernels (atdi_op_desc.aux_shared) into out from
 * builtin_aux, the built-in module's, and whether they are dependent
 * launches by its markers; builtin_aux NULL (it did not load): out keeps
 * the variant's. */
void atdi_share_builtin_aux(int op, struct CUfunc_st *const *builtin_aux, int arch,
			    atdi_resolved *out);

/* The aux index of the reduce that cross_entropy's call launches after r's
 * row kernel: ATDI_CE_REDUCE_POLLED where r has it and the row kernel's
 * code stores its losses for it (CE_LOSSES_POLLED), else ATDI_CE_REDUCE. */
int atdi_ce_reduce_of(const atdi_resolved *r);

/* The calling thread's current context (*ctx) and whether the handle's
 * lookup holds a choice for op (atdi_op) over (dtype, M, N) there that is still good (*fresh,
 * and *out): the start of atd_softmax and of atd_query alike. Returns
 * ATD_OK, or the driver's or the context's status. */
atd_status atdi_cached(atd_handle *h, int op, int dtype, long long M, long long N,
		       CUcontext *ctx, atdi_resolved *out, int *fresh);

/* Finds or decides (decide.h) what runs (dtype, M, N) in ctx, the current
 * context, and caches it. The miss path of atd_softmax. */
atd_status atdi_resolve(atd_handle *h, CUcontext ctx, int op, at_dtype dtype, long long M,
			long long N, atdi_resolved *out);

#endif

/* What runs a shape: the one decision behind atd_softmax's miss path
 * (resolve.c) and atd_query's answer (query.c). The decision takes its
 * steps in order (a variant tuned online, the plan of plan.h, what needs
 * no compiling, the built-in kernel) and asks a loader whether each
 * step's choice can run. atd_softmax's loader (resolve.h) compiles, loads
 * and sizes the grid; atd_query's loader (query.h) is a dry run that does
 * none of that, so that what query says is what the launch path decides,
 * by the same code.
 * Tests put a loader of their own in (a GPU test double). */
#ifndef AT_DISPATCH_DECIDE_H
#define AT_DISPATCH_DECIDE_H

#include <stddef.h>

#include "dispatch/policy/row_ops.h"
#include "common/dtype.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/jit_job.h"
#include "dispatch/runtime/launch_geometry.h"
#include "dispatch/runtime/tune_worker.h"
#include "dispatch/policy/lookup.h"
#include "dispatch/policy/plan.h"

typedef struct atdi_loader atdi_loader;

/*
** The hooks a decision calls, with slow held. stored and rules return
** ATD_OK with out->fn, out->geom and out->grid set (out->fn NULL in a dry
** run), ATD_ERR_NO_MEMORY or ATD_ERR_KERNEL_ALTERED (errors, never fallen
** back from), or another status with why: the step cannot be used and the
** decision goes on to the next.
*/
struct atdi_loader {
	/* The stored winner e's kernel, or the built-in kernel of (op, dtype)
	 * (e NULL), launched with geometry g over M rows. */
	atd_status (*stored)(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			     const atdi_entry *e, int op, at_dtype dtype, const launch_geometry *g,
			     long long M, atdi_resolved *out, char *why, size_t cap);
	/* A variant made by its template's rules (job): compiled now, or
	 * taken from the cache. */
	atd_status (*rules)(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			    const atdi_jit_job *job, const launch_geometry *g, long long M,
			    atdi_resolved *out, char *why, size_t cap);
	/* Background mode: job's kernel is built (1), failed (-1), or not yet
	 * (0: it is queued, and what needs no compiling serves meanwhile). */
	int (*poll)(const atdi_loader *l, atd_handle *h, const atdi_jit_job *job);
	/* Tunes the shape online now (the handle tunes: ATD_OPEN_TUNE), as
	 * atdi_tune, keeping the winner for later processes. *pending: the
	 * candidates not compiled within the handle's wait are being tuned in
	 * the background, what this returns (if anything) serving until then.
	 * NULL: never. */
	atd_status (*tune)(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			   int op, at_dtype dtype, long long M, long long N, atdi_plan *best, double *us,
			   int *pending, char *why, size_t cap);
	/* Background mode's tune: the shape's tuning on the handle's worker
	 * (tune_worker.h), queued by the first ask; DONE fills best and us,
	 * FAILED why. NULL: never. */
	atdi_tune_state (*tune_later)(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
				      int op, at_dtype dtype, long long M, long long N,
				      atdi_plan *best, double *us, char *why, size_t cap);
	void *user; /* the hooks' own state */
};

/*
** What runs op (atdi_op) over (dtype, M, N) on ci's GPU, into out (level, entry, template
** and params of a variant made by rules, the loader's fn and grid). With
** slow held. notes gets a warning for a step fallen through, once a shape
** and handle; notes NULL (a dry run) says nothing and marks nothing.
** Returns ATD_OK, or an error with the handle's message set:
** ATD_ERR_NO_MEMORY, ATD_ERR_KERNEL_ALTERED, or the built-in kernel's
** failure.
*/
atd_status atdi_decide(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
		       long long M, long long N, const atdi_loader *l, atdi_resolved *out,
		       atdi_notes *notes);

#endif

/* The miss path of atd_softmax: the first call for a (context, dtype, M, N)
 * decides what runs (decide.h) through the loader that loads its module
 * and sizes its grid, says what it chose, and caches all of it, so that
 * later calls only probe the lookup table. */
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/runtime/jit_tuned.h"
#include "dispatch/runtime/modules.h"
#include "dispatch/runtime/resolve.h"
#include "dispatch/runtime/tune.h"
#include "dispatch/runtime/tune_worker.h"

/* fn's grid for M (launch_grid also opts into its shared memory), into
 * out with fn and op's other kernels (aux). An optional one is an
 * alternative entry (cross_entropy's plain kernel), launched on fn's
 * geometry and grid: opted in as fn is, or left out (fn serves). */
static atd_status prepare_launch(const atdi_ctx_info *ci, int op, CUfunction fn,
				 const CUfunction *aux, const launch_geometry *g, long long M,
				 atdi_resolved *out, char *why, size_t cap)
{
	at_error err;
	if (launch_grid(g, fn, M, ci->gpu.sm_count, &out->grid, &err) != 0) {
		snprintf(why, cap, "%.1000s", err.msg);
		return ATD_ERR_NO_KERNEL;
	}
	out->fn = fn;
	memcpy(out->aux, aux, sizeof out->aux);
	const atdi_op_desc *d = atdi_op_desc_of(op);
	/* the alternative entries (the one-CTA kernels, shared or not, take
	 * their own geometry) */
	const unsigned launched = d->aux_optional & ~d->aux_marker & ~d->aux_shared;
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		if ((launched >> i & 1u) && out->aux[i] && launch_prepare_fn(g, out->aux[i], &err))
			out->aux[i] = NULL;
	const unsigned waits = atdi_waiting_kernels(op, out->aux, ci->arch);
	out->dependent_launch = (waits & ATDI_MAIN_WAITS) != 0;
	out->aux_dependent = waits & ~ATDI_MAIN_WAITS;
	out->geom = *g;
	return ATD_OK;
}

unsigned atdi_waiting_kernels(int op, struct CUfunc_st *const *aux, int arch)
{
	const atdi_op_desc *d = atdi_op_desc_of(op);
	unsigned waits = 0;
	if (arch < 90) /* griddepcontrol is sm_90's */
		return 0;
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		if ((d->aux_marker >> i & 1u) && aux[i])
			waits |= d->marker_waits[i] | ((d->main_waits >> i & 1u) ? ATDI_MAIN_WAITS : 0u);
	return waits;
}

void atdi_share_builtin_aux(int op, struct CUfunc_st *const *builtin_aux, int arch,
			    atdi_resolved *out)
{
	const unsigned shared = atdi_op_desc_of(op)->aux_shared;
	if (!builtin_aux || !shared)
		return;
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		if (shared >> i & 1u)
			out->aux[i] = builtin_aux[i];
	out->aux_dependent = (out->aux_dependent & ~shared) |
			     (atdi_waiting_kernels(op, builtin_aux, arch) & shared);
}

int atdi_ce_reduce_of(const atdi_resolved *r)
{
	return r->aux[ATDI_CE_REDUCE_POLLED] && r->aux[ATDI_CE_LOSSES_POLLED] ? ATDI_CE_REDUCE_POLLED
									       : ATDI_CE_REDUCE;
}

/* out's shared aux kernels from the built-in module of (op, dtype), loaded
 * once a context; where it does not load, the variant's own serve (they do
 * the same work) and are launched as before. */
static void share_builtin_aux(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
			      atdi_resolved *out)
{
	CUfunction fn, aux[ATDI_OP_MAX_AUX];
	char why[ATDI_MSG_CAP];
	if (atdi_op_desc_of(op)->aux_shared &&
	    atdi_module_fn(h, ci, NULL, op, dtype, &fn, aux, why, sizeof why) == ATD_OK)
		atdi_share_builtin_aux(op, aux, ci->arch, out);
}

static atd_status load_stored(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			      const atdi_entry *e, int op, at_dtype dtype, const launch_geometry *g,
			      long long M, atdi_resolved *out, char *why, size_t cap)
{
	(void)l;
	CUfunction fn, aux[ATDI_OP_MAX_AUX];
	atd_status s = atdi_module_fn(h, ci, e, op, dtype, &fn, aux, why, cap);
	return s == ATD_OK ? prepare_launch(ci, op, fn, aux, g, M, out, why, cap) : s;
}

static atd_status load_rules(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			     const atdi_jit_job *job, const launch_geometry *g, long long M,
			     atdi_resolved *out, char *why, size_t cap)
{
	(void)l;
	CUfunction fn, aux[ATDI_OP_MAX_AUX];
	atd_status s = atdi_module_derived(h, ci, job, &fn, aux, why, cap);
	return s == ATD_OK ? prepare_launch(ci, job->op, fn, aux, g, M, out, why, cap) : s;
}

static int poll_compile(const atdi_loader *l, atd_handle *h, const atdi_jit_job *job)
{
	(void)l;
	return atdi_jit_poll(&h->jit, job);
}

/* Tunes and keeps the winner in the cache database for later processes,
 * unless candidates were left compiling past wait_ms (*left: a winner of
 * some of them is not the shape's); slow is released while the candidates
 * compile when release says so. */
static atd_status tune_and_keep(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
				long long M, long long N, atdi_plan *best, double *us,
				pthread_mutex_t *release, double wait_ms, int *left, char *why,
				size_t cap)
{
	int tried = 0;
	atd_status s = atdi_tune(h, ci, op, dtype, M, N, release, wait_ms, best, us, &tried, left,
				 why, cap);
	if (s != ATD_OK || *left)
		return s;
	atdi_tuned t = { "", "", *us };
	snprintf(t.template_name, sizeof t.template_name, "%s", best->rules->name);
	atdi_params_text(best->rules, best->values, t.params, sizeof t.params);
	atdi_jit_tuned_put(&h->jit, &ci->gpu, op, dtype, M, N, &t, tried);
	return ATD_OK;
}

/* A blocking handle's tuning: the candidates compiled within the handle's
 * wait are timed now; those left are handed to the background tuner with
 * the interim winner, which serves (provisionally) until it is done. */
static atd_status tune_now(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			   int op, at_dtype dtype, long long M, long long N, atdi_plan *best,
			   double *us, int *pending, char *why, size_t cap)
{
	(void)l;
	*us = 0;
	atdi_tune_state st =
		atdi_tune_worker_peek(h->tuner, ci, op, dtype, M, N, best, us, why, cap);
	*pending = st == ATDI_TUNE_PENDING;
	if (st == ATDI_TUNE_DONE || (st == ATDI_TUNE_PENDING && *us > 0))
		return ATD_OK;
	if (st != ATDI_TUNE_NONE) {
		if (st == ATDI_TUNE_PENDING)
			snprintf(why, cap, "it is being tuned in the background");
		return ATD_ERR_NO_KERNEL;
	}
	int left = 0;
	atd_status s = tune_and_keep(h, ci, op, dtype, M, N, best, us, NULL, h->jit.tune_wait_ms,
				     &left, why, cap);
	if (left && atdi_tune_worker_queue(h->tuner, ci, op, dtype, M, N,
					   s == ATD_OK ? best : NULL, s == ATD_OK ? *us : 0) == 0)
		*pending = 1;
	return s;
}

static atdi_tune_state tune_later(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
				  int op, at_dtype dtype, long long M, long long N,
				  atdi_plan *best, double *us, char *why, size_t cap)
{
	(void)l;
	return atdi_tune_worker_ask(h->tuner, ci, op, dtype, M, N, best, us, why, cap);
}

const atdi_loader atdi_launch_loader = { load_stored, load_rules, poll_compile, tune_now,
					 tune_later, NULL };

int atdi_tune_in_background(void *user, atdi_tune_job *job)
{
	atd_handle *h = user;
	CUresult rc = cudrv.cuCtxSetCurrent(job->ci.ctx);
	if (rc != CUDA_SUCCESS) {
		snprintf(job->why, sizeof job->why, "cuCtxSetCurrent on the tuning thread failed (%d)",
			 (int)rc);
		return -1;
	}
	char why[ATDI_MSG_CAP] = "";
	pthread_mutex_lock(&h->slow);
	int left = 0;
	atd_status s = tune_and_keep(h, &job->ci, job->op, job->dtype, job->M, job->N, &job->best,
				     &job->us, &h->slow, -1, &left, why, sizeof why);
	pthread_mutex_unlock(&h->slow);
	snprintf(job->why, sizeof job->why, "%s", why);
	return s == ATD_OK ? 0 : -1;
}

/* A winner tuned on this GPU at this very shape whose code is not in the
 * database (a merge or export lost it) is never served; what serves the
 * shape instead (out) is said, once a shape, rather than left silent. */
static void note_missing(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
			 long long M, long long N, const atdi_resolved *out, atdi_notes *notes)
{
	const atdi_missing *m = atdi_select_missing(&h->table, &ci->gpu, op, dtype, M, N);
	atdi_key key = { NULL, M, N, (int)dtype, op };
	if (!m || !atdi_lookup_mark(&h->warned_missing, &key))
		return;
	atdi_note(notes, ATD_LOG_WARNING,
		  "the winner tuned for %s M=%lld N=%lld on %s (%s %s, result %lld) has no stored "
		  "kernel in the database: serving the shape at the %s level instead",
		  atdi_op_dtype_name(op, dtype), M, N, h->table.gpus[m->gpu].name, m->template_name,
		  m->params, m->result_id, atd_level_name(out->level));
}

static void note_choice(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
			long long M, long long N, const atdi_resolved *r, atdi_notes *notes)
{
	const char *dt = atdi_op_dtype_name(op, dtype);
	const atdi_entry *e = r->entry;
	if (r->level == ATD_LEVEL_TUNED) {
		atdi_note(notes, ATD_LOG_INFO, "%s M=%lld N=%lld on %s: %s %s (tuned online, %.3f us)",
			  dt, M, N, ci->name, r->template_name, r->params, r->tuned_us);
	} else if (r->level == ATD_LEVEL_PREDICTED) {
		atdi_note(notes, ATD_LOG_INFO,
			  "%s M=%lld N=%lld on %s: %s %s (predicted fastest by the performance model "
			  "of %s)%s",
			  dt, M, N, ci->name, r->template_name, r->params, r->model_gpu,
			  r->provisional ? "; it is compiling" : "");
	} else if (r->level == ATD_LEVEL_DERIVED) {
		atdi_note(notes, ATD_LOG_INFO,
			  "%s M=%lld N=%lld on %s: %s %s (derived from %s, tuned on %s at M=%lld "
			  "N=%lld)",
			  dt, M, N, ci->name, r->template_name, r->params, e->params,
			  h->table.gpus[e->gpu].name, e->M, e->N);
	} else if (e) {
		atdi_note(notes, ATD_LOG_INFO,
			  "%s M=%lld N=%lld on %s: %s %s (%s: tuned on %s at M=%lld N=%lld, %.3f us)%s",
			  dt, M, N, ci->name, e->template_name, e->params, atd_level_name(r->level),
			  h->table.gpus[e->gpu].name, e->M, e->N, e->time_us,
			  r->provisional ? "; a derived kernel is compiling" : "");
	} else {
		const builtin_kernel *b = builtin_kernel_for(op, dtype);
		atdi_note(notes, ATD_LOG_INFO, "%s M=%lld N=%lld on %s: %s %s (built-in)%s", dt, M, N,
			  ci->name, b->template_name, b->params,
			  r->provisional ? "; a derived kernel is compiling" : "");
	}
}

static atd_status resolve_locked(atd_handle *h, CUcontext ctx, int op, at_dtype dtype,
				 long long M, long long N, atdi_resolved *out, atdi_notes *notes)
{
	const atdi_ctx_info *ci;
	atd_status s = atdi_ctx_info_get(h, ctx, &ci);
	if (s != ATD_OK ||
	    (s = atdi_decide(h, ci, op, dtype, M, N, &atdi_launch_loader, out, notes)) != ATD_OK)
		return s;
	share_builtin_aux(h, ci, op, dtype, out);
	note_missing(h, ci, op, dtype, M, N, out, notes);
	note_choice(h, ci, op, dtype, M, N, out, notes);
	pthread_mutex_lock(&h->lock);
	atdi_key key = { ctx, M, N, (int)dtype, op };
	atdi_lookup_put(&h->lookup, &key, out); /* no memory: resolve again next time */
	pthread_mutex_unlock(&h->lock);
	return ATD_OK;
}

atd_status atdi_resolve(atd_handle *h, CUcontext ctx, int op, at_dtype dtype, long long M,
			long long N, atdi_resolved *out)
{
	atdi_notes notes = { 0 };
	atdi_key key = { ctx, M, N, (int)dtype, op };
	pthread_mutex_lock(&h->slow);
	/* Another thread may have resolved the shape while this one waited. */
	pthread_mutex_lock(&h->lock);
	int found = atdi_lookup_find(&h->lookup, &key, out) && !atdi_stale(h, out);
	pthread_mutex_unlock(&h->lock);
	atd_status s = found ? ATD_OK : resolve_locked(h, ctx, op, dtype, M, N, out, &notes);
	pthread_mutex_unlock(&h->slow);
	atdi_notes_emit(h, &notes);
	return s;
}

atd_status atdi_cached(atd_handle *h, int op, int dtype, long long M, long long N,
		       CUcontext *ctx, atdi_resolved *out, int *fresh)
{
	atd_status s = atdi_driver(h);
	if (s != ATD_OK || (s = atdi_current(h, ctx)) != ATD_OK)
		return s;
	atdi_key key = { *ctx, M, N, dtype, op };
	pthread_mutex_lock(&h->lock);
	int hit = atdi_lookup_find(&h->lookup, &key, out);
	pthread_mutex_unlock(&h->lock);
	*fresh = hit && !atdi_stale(h, out);
	return ATD_OK;
}

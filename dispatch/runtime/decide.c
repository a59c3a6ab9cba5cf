/* The decision of decide.h. In order: a variant tuned online (from the
 * cache database, or tuned now when the handle tunes), unless the shape
 * itself was tuned; the plan of plan.h (a derived variant compiled now or,
 * in background mode, once a worker has built it; a stored winner); what
 * needs no compiling; the built-in kernel. Each step that cannot be used
 * falls through to the next with a warning, once a shape and handle. */
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/runtime/jit_tuned.h"
#include "dispatch/runtime/models.h"
#include "dispatch/policy/model_plan.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/template_table.h"

/* Whether the shape was not yet warned about (and marks it); never in a
 * dry run (notes NULL), which must leave the warnings to the launch. */
static int first_warning(atd_handle *h, const atdi_notes *notes, int op, at_dtype dtype,
			 long long M, long long N)
{
	atdi_key key = { NULL, M, N, (int)dtype, op };
	return notes && atdi_lookup_mark(&h->warned, &key);
}

/* The stored winner e at level, into out; NO_MEMORY and KERNEL_ALTERED
 * (its stored image does not match its digest) are returned as errors, any
 * other failure is warned about and returned so that the caller falls
 * back. */
static atd_status use_entry(atd_handle *h, const atdi_ctx_info *ci, const atdi_loader *l,
			    const atdi_entry *e, atd_level level, int op, at_dtype dtype, long long M,
			    long long N, atdi_resolved *out, atdi_notes *notes)
{
	char why[ATDI_MSG_CAP] = "";
	atd_status s = l->stored(l, h, ci, e, op, dtype, &e->geom, M, out, why, sizeof why);
	if (s == ATD_ERR_NO_MEMORY)
		return atdi_fail(h, s, "%s", why);
	if (s == ATD_ERR_KERNEL_ALTERED) /* an error, never a fallback */
		return atdi_fail(h, s, "%s M=%lld N=%lld: the tuned kernel %s %s (tuned at M=%lld "
				 "N=%lld): %s", atdi_op_dtype_name(op, dtype), M, N, e->template_name,
				 e->params, e->M, e->N, why);
	if (s == ATD_OK) {
		out->level = level;
		out->entry = e;
	} else if (first_warning(h, notes, op, dtype, M, N)) {
		atdi_note(notes, ATD_LOG_WARNING,
			  "cannot use the tuned kernel for %s M=%lld N=%lld (%s %s, result %lld): "
			  "%s; using the next choice",
			  atdi_op_dtype_name(op, dtype), M, N, e->template_name, e->params, e->result_id, why);
	}
	return s;
}

/* The variant of plan through its rules (derived, or tuned online at
 * level), compiled (or taken from the cache) now. */
static atd_status use_rules(atd_handle *h, const atdi_ctx_info *ci, const atdi_loader *l,
			    const atdi_plan *plan, atd_level level, at_dtype dtype, long long M,
			    long long N, atdi_resolved *out, atdi_notes *notes)
{
	char why[ATDI_MSG_CAP] = "", params[1024];
	const int op = plan->op;
	atdi_jit_job job = { plan->rules, dtype, { 0 }, ci->arch, op };
	memcpy(job.values, plan->values, sizeof job.values);
	atd_status s = l->rules(l, h, ci, &job, &plan->geom, M, out, why, sizeof why);
	atdi_params_text(plan->rules, plan->values, params, sizeof params);
	const char *kept = s == ATD_OK ? atdi_keep_string(h, params) : NULL;
	if (s == ATD_ERR_NO_MEMORY || (s == ATD_OK && !kept))
		return atdi_fail(h, ATD_ERR_NO_MEMORY, "out of memory deriving a kernel");
	if (s == ATD_OK) {
		out->level = level;
		out->entry = plan->entry;
		out->template_name = plan->rules->name;
		out->params = kept;
	} else if (first_warning(h, notes, op, dtype, M, N)) {
		atdi_note(notes, ATD_LOG_WARNING,
			  "cannot derive %s %s for %s M=%lld N=%lld: %s; using the next choice",
			  plan->rules->name, params, atdi_op_dtype_name(op, dtype), M, N, why);
	}
	return s;
}

static atd_status use_builtin(atd_handle *h, const atdi_ctx_info *ci, const atdi_loader *l,
			      int op, at_dtype dtype, long long M, long long N, atdi_resolved *out)
{
	char why[ATDI_MSG_CAP] = "";
	const builtin_kernel *b = builtin_kernel_for(op, dtype);
	if (!b)
		return atdi_fail(h, ATD_ERR_NO_KERNEL, "%s M=%lld N=%lld: no tuned kernel serves it "
				 "and the library has no built-in one", atdi_op_dtype_name(op, dtype), M, N);
	atd_status s = l->stored(l, h, ci, NULL, op, dtype, &b->geom, M, out, why, sizeof why);
	if (s != ATD_OK)
		return atdi_fail(h, s, "%s M=%lld N=%lld: %s", atdi_op_dtype_name(op, dtype), M, N, why);
	out->level = ATD_LEVEL_BUILTIN;
	out->entry = NULL;
	return ATD_OK;
}

/* The variant tuned online for the shape by an earlier process (the cache
 * database), as a plan with *us its time: 1, or 0 when there is none that
 * still applies (its template gone, its params no longer valid). */
static int tuned_earlier(atd_handle *h, const atdi_ctx_info *ci, const atdi_env *env, int op,
			 at_dtype dtype, atdi_plan *plan, double *us)
{
	atdi_tuned t;
	if (!atdi_jit_tuned_get(&h->jit, &ci->gpu, op, dtype, env->M, env->N, &t))
		return 0;
	memset(plan, 0, sizeof *plan);
	plan->op = op;
	plan->rules = atdi_rules_find(tr_templates, tr_ntemplates, t.template_name);
	*us = t.time_us;
	return plan->rules && atdi_params_parse(plan->rules, t.params, plan->values) == 0 &&
	       atdi_rules_valid(plan->rules, plan->values, env) &&
	       atdi_rules_geometry(plan->rules, plan->values, env, &plan->geom) == 0;
}

/* The online-tuned variant: from an earlier process, or tuned now (in
 * background mode: by the worker, *pending meanwhile) when the handle
 * tunes and the loader can. ATD_OK with out filled, or another status to
 * go on. */
static atd_status use_tuned(atd_handle *h, const atdi_ctx_info *ci, const atdi_loader *l,
			    int op, at_dtype dtype, long long M, long long N, atdi_resolved *out,
			    int *pending, atdi_notes *notes)
{
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	atdi_plan plan;
	double us = 0;
	char why[ATDI_MSG_CAP] = "";
	if (!tuned_earlier(h, ci, &env, op, dtype, &plan, &us)) {
		if (!h->jit.tune || !l->tune)
			return ATD_ERR_NO_KERNEL;
		/* background mode: the worker's (queued by the first ask), or
		 * tuned now if it could not be queued */
		atdi_tune_state st = h->jit.mode == ATDI_JIT_BACKGROUND && l->tune_later
					     ? l->tune_later(l, h, ci, op, dtype, M, N, &plan, &us,
							     why, sizeof why)
					     : ATDI_TUNE_NONE;
		if (st == ATDI_TUNE_PENDING) {
			*pending = 1;
			return ATD_ERR_NO_KERNEL;
		}
		int later = 0;
		atd_status s = st == ATDI_TUNE_DONE	 ? ATD_OK
			       : st == ATDI_TUNE_FAILED ? ATD_ERR_NO_KERNEL
							 : l->tune(l, h, ci, op, dtype, M, N, &plan,
								   &us, &later, why, sizeof why);
		*pending = later;
		if (s != ATD_OK) {
			if (!later && first_warning(h, notes, op, dtype, M, N))
				atdi_note(notes, ATD_LOG_WARNING,
					  "could not tune %s M=%lld N=%lld online: %s",
					  atdi_op_dtype_name(op, dtype), M, N, why);
			return s;
		}
	}
	plan.entry = NULL;
	atd_status s = use_rules(h, ci, l, &plan, ATD_LEVEL_TUNED, dtype, M, N, out, notes);
	if (s == ATD_OK)
		out->tuned_us = us;
	return s;
}

/* The variant of plan made by rules (derived, or predicted by the model):
 * compiled now or, in background mode or while the shape is tuned in the
 * background (tuning), once the worker has built it (meanwhile out is
 * marked provisional and the step falls through). */
static atd_status use_derived(atd_handle *h, const atdi_ctx_info *ci, const atdi_loader *l,
			      const atdi_plan *plan, at_dtype dtype, long long M, long long N,
			      int tuning, atdi_resolved *out, atdi_notes *notes)
{
	if (h->jit.mode == ATDI_JIT_BACKGROUND || tuning) {
		atdi_jit_job job = { plan->rules, dtype, { 0 }, ci->arch, plan->op };
		memcpy(job.values, plan->values, sizeof job.values);
		/* Read before polling: a job finished in between bumps it. */
		unsigned generation = atdi_jit_generation(&h->jit);
		int state = l->poll(l, h, &job);
		out->provisional = state == 0;
		out->generation = generation;
		if (state == 0)
			return ATD_ERR_NO_KERNEL;
	}
	return use_rules(h, ci, l, plan, plan->level, dtype, M, N, out, notes);
}

/* While the shape is tuned in the background, what serves it meanwhile is
 * provisional: decided again once a worker's job ends. */
static void mark_tuning(atdi_resolved *out, int tuning, unsigned generation)
{
	if (tuning) {
		out->provisional = 1;
		out->generation = generation;
	}
}

/* The performance model's plan for the shape, over *plan: 1, or 0 when the
 * database holds no model for this GPU model (or it chooses nothing). */
static int use_model(atd_handle *h, const atdi_ctx_info *ci, int op, const atdi_env *env,
		     at_dtype dtype, atdi_plan *plan, const char **model_gpu, atdi_notes *notes)
{
	const perf_model *m = atdi_model_for(h, &ci->gpu, op, model_gpu, notes);
	atdi_plan p;
	if (!m || !atdi_model_plan(m, tr_templates, tr_ntemplates, op, env, dtype, &p))
		return 0;
	*plan = p;
	return 1;
}

atd_status atdi_decide(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
		       long long M, long long N, const atdi_loader *l, atdi_resolved *out,
		       atdi_notes *notes)
{
	memset(out, 0, sizeof *out);
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	int jit = h->jit.mode != ATDI_JIT_OFF;
	atdi_plan plan;
	atdi_plan_shape(&h->table, jit ? tr_templates : NULL, tr_ntemplates, &ci->gpu, op, &env, dtype,
			&plan);
	atd_status s = ATD_ERR_NO_KERNEL;
	const char *model_gpu = NULL;
	if (jit && plan.level != ATD_LEVEL_EXACT)
		use_model(h, ci, op, &env, dtype, &plan, &model_gpu, notes);
	/* read before asking: a tuning that ends in between bumps it */
	unsigned generation = atdi_jit_generation(&h->jit);
	int tuning = 0;
	if (jit && plan.level != ATD_LEVEL_EXACT) {
		s = use_tuned(h, ci, l, op, dtype, M, N, out, &tuning, notes);
		if (s == ATD_ERR_NO_MEMORY)
			return s;
	}
	if (s != ATD_OK && (plan.level == ATD_LEVEL_DERIVED || plan.level == ATD_LEVEL_PREDICTED)) {
		s = use_derived(h, ci, l, &plan, dtype, M, N, tuning, out, notes);
		if (s == ATD_OK)
			out->model_gpu = plan.level == ATD_LEVEL_PREDICTED ? model_gpu : NULL;
		if (s == ATD_ERR_NO_MEMORY)
			return s;
		if (s != ATD_OK) /* what needs no compiling */
			atdi_plan_shape(&h->table, NULL, 0, &ci->gpu, op, &env, dtype, &plan);
	}
	if (s != ATD_OK && plan.entry && plan.level != ATD_LEVEL_DERIVED &&
	    plan.level != ATD_LEVEL_PREDICTED) {
		s = use_entry(h, ci, l, plan.entry, plan.level, op, dtype, M, N, out, notes);
		if (s == ATD_ERR_NO_MEMORY || s == ATD_ERR_KERNEL_ALTERED)
			return s;
	}
	if (s == ATD_OK) {
		mark_tuning(out, tuning, generation);
		return ATD_OK;
	}
	if (!plan.entry && builtin_kernel_for(op, dtype) && first_warning(h, notes, op, dtype, M, N))
		atdi_note(notes, ATD_LOG_WARNING,
			  "no tuned kernel for %s M=%lld N=%lld on %s (sm_%d): using the built-in "
			  "kernel",
			  atdi_op_dtype_name(op, dtype), M, N, ci->name, ci->arch);
	s = use_builtin(h, ci, l, op, dtype, M, N, out);
	mark_tuning(out, tuning, generation);
	return s;
}

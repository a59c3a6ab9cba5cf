/* The miss path of atd_softmax: the first call for a (context, dtype, M, N)
 * picks what runs, loads its module, sizes its grid, and caches all of it,
 * so that later calls only probe the lookup table. In order: a variant
 * tuned online (from the cache database, or tuned now with ATD_OPEN_TUNE);
 * the plan of plan.h (exact, a derived variant compiled now or, in
 * background mode, once a worker has built it, or the nearest stored
 * winner); the built-in kernel. Each step that cannot be used falls through
 * to the next with a warning, once a shape and handle. */
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "dispatch/builtin_kernels.h"
#include "dispatch/handle.h"
#include "dispatch/template_table.h"

/* Whether the shape is not yet in seen (and marks it). */
static int first_time(atdi_lookup *seen, at_dtype dtype, long long M, long long N)
{
	atdi_key key = { NULL, M, N, (int)dtype };
	atdi_resolved found;
	if (atdi_lookup_find(seen, &key, &found))
		return 0;
	atdi_resolved mark = { 0 };
	atdi_lookup_put(seen, &key, &mark); /* no memory: warn again later */
	return 1;
}

/* Whether the shape was not yet warned about (and marks it). */
static int first_warning(atd_handle *h, at_dtype dtype, long long M, long long N)
{
	return first_time(&h->warned, dtype, M, N);
}

/* A winner tuned on this GPU at this very shape whose code is not in the
 * database (a merge or export lost it) is never served; what serves the
 * shape instead (out) is said, once a shape, rather than left silent. */
static void note_missing(atd_handle *h, const atdi_ctx_info *ci, at_dtype dtype, long long M,
			 long long N, const atdi_resolved *out, atdi_notes *notes)
{
	const atdi_missing *m = atdi_select_missing(&h->table, &ci->gpu, dtype, M, N);
	if (!m || !first_time(&h->warned_missing, dtype, M, N))
		return;
	atdi_note(notes, ATD_LOG_WARNING,
		  "the winner tuned for %s M=%lld N=%lld on %s (%s %s, result %lld) has no stored "
		  "kernel in the database: serving the shape at the %s level instead",
		  at_dtype_name(dtype), M, N, h->table.gpus[m->gpu].name, m->template_name,
		  m->params, m->result_id, atd_level_name(out->level));
}

/* fn's grid for M (launch_grid also opts into its shared memory), into out. */
static atd_status prepare_launch(const atdi_ctx_info *ci, CUfunction fn,
				 const launch_geometry *g, long long M, atdi_resolved *out,
				 char *why, size_t cap)
{
	at_error err;
	if (launch_grid(g, fn, M, ci->gpu.sm_count, &out->grid, &err) != 0) {
		snprintf(why, cap, "%.1000s", err.msg);
		return ATD_ERR_NO_KERNEL;
	}
	out->fn = fn;
	out->geom = *g;
	return ATD_OK;
}

/* The tuned kernel e at level, into out; NO_MEMORY and KERNEL_ALTERED (its
 * stored image does not match its digest) are returned as errors, any other
 * failure is warned about (once a shape) and returned so that the caller
 * falls back. */
static atd_status use_entry(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e,
			    atd_level level, at_dtype dtype, long long M, long long N,
			    atdi_resolved *out, atdi_notes *notes)
{
	char why[ATDI_MSG_CAP];
	CUfunction fn;
	atd_status s = atdi_module_fn(h, ci, e, dtype, &fn, why, sizeof why);
	if (s == ATD_OK)
		s = prepare_launch(ci, fn, &e->geom, M, out, why, sizeof why);
	if (s == ATD_ERR_NO_MEMORY)
		return atdi_fail(h, s, "%s", why);
	if (s == ATD_ERR_KERNEL_ALTERED) /* an error, never a fallback */
		return atdi_fail(h, s, "%s M=%lld N=%lld: the tuned kernel %s %s (tuned at M=%lld "
				 "N=%lld): %s", at_dtype_name(dtype), M, N, e->template_name,
				 e->params, e->M, e->N, why);
	if (s == ATD_OK) {
		out->level = level;
		out->entry = e;
	} else if (first_warning(h, dtype, M, N)) {
		atdi_note(notes, ATD_LOG_WARNING,
			  "cannot use the tuned kernel for %s M=%lld N=%lld (%s %s, result %lld): "
			  "%s; using the next choice",
			  at_dtype_name(dtype), M, N, e->template_name, e->params, e->result_id, why);
	}
	return s;
}

/* The variant of plan through its rules (derived, or tuned online at
 * level), compiled (or taken from the cache) now. */
static atd_status use_rules(atd_handle *h, const atdi_ctx_info *ci, const atdi_plan *plan,
			    atd_level level, const atdi_jit_job *job, long long M, long long N,
			    atdi_resolved *out, atdi_notes *notes)
{
	char why[ATDI_MSG_CAP], params[1024];
	CUfunction fn;
	atd_status s = atdi_module_derived(h, ci, job, &fn, why, sizeof why);
	if (s == ATD_OK)
		s = prepare_launch(ci, fn, &plan->geom, M, out, why, sizeof why);
	atdi_params_text(plan->rules, plan->values, params, sizeof params);
	const char *kept = s == ATD_OK ? atdi_keep_string(h, params) : NULL;
	if (s == ATD_ERR_NO_MEMORY || (s == ATD_OK && !kept))
		return atdi_fail(h, ATD_ERR_NO_MEMORY, "out of memory deriving a kernel");
	if (s == ATD_OK) {
		out->level = level;
		out->entry = plan->entry;
		out->template_name = plan->rules->name;
		out->params = kept;
	} else if (first_warning(h, job->dtype, M, N)) {
		atdi_note(notes, ATD_LOG_WARNING,
			  "cannot derive %s %s for %s M=%lld N=%lld: %s; using the next choice",
			  plan->rules->name, params, at_dtype_name(job->dtype), M, N, why);
	}
	return s;
}

static atd_status use_builtin(atd_handle *h, const atdi_ctx_info *ci, at_dtype dtype,
			      long long M, long long N, atdi_resolved *out)
{
	char why[ATDI_MSG_CAP];
	CUfunction fn;
	const builtin_kernel *b = builtin_kernel_for(dtype);
	atd_status s = atdi_module_fn(h, ci, NULL, dtype, &fn, why, sizeof why);
	if (s == ATD_OK)
		s = prepare_launch(ci, fn, &b->geom, M, out, why, sizeof why);
	if (s != ATD_OK)
		return atdi_fail(h, s, "%s M=%lld N=%lld: %s", at_dtype_name(dtype), M, N, why);
	out->level = ATD_LEVEL_BUILTIN;
	out->entry = NULL;
	return ATD_OK;
}

static void note_choice(atd_handle *h, const atdi_ctx_info *ci, at_dtype dtype, long long M,
			long long N, const atdi_resolved *r, atdi_notes *notes)
{
	const char *dt = at_dtype_name(dtype);
	const atdi_entry *e = r->entry;
	if (r->level == ATD_LEVEL_TUNED) {
		atdi_note(notes, ATD_LOG_INFO, "%s M=%lld N=%lld on %s: %s %s (tuned online, %.3f us)",
			  dt, M, N, ci->name, r->template_name, r->params, r->tuned_us);
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
		const builtin_kernel *b = builtin_kernel_for(dtype);
		atdi_note(notes, ATD_LOG_INFO, "%s M=%lld N=%lld on %s: %s %s (built-in)%s", dt, M, N,
			  ci->name, b->template_name, b->params,
			  r->provisional ? "; a derived kernel is compiling" : "");
	}
}

int atdi_tuned_earlier(atd_handle *h, const atdi_ctx_info *ci, const atdi_env *env,
		       at_dtype dtype, atdi_plan *plan, double *us)
{
	atdi_tuned t;
	if (!atdi_jit_tuned_get(&h->jit, &ci->gpu, dtype, env->M, env->N, &t))
		return 0;
	memset(plan, 0, sizeof *plan);
	plan->rules = atdi_rules_find(tr_templates, tr_ntemplates, t.template_name);
	*us = t.time_us;
	return plan->rules && atdi_params_parse(plan->rules, t.params, plan->values) == 0 &&
	       atdi_rules_valid(plan->rules, plan->values, env) &&
	       atdi_rules_geometry(plan->rules, plan->values, env, &plan->geom) == 0;
}

/* The online-tuned variant: from an earlier process, or tuned now when the
 * handle tunes. ATD_OK with out filled, or another status to go on. */
static atd_status use_tuned(atd_handle *h, const atdi_ctx_info *ci, at_dtype dtype, long long M,
			    long long N, atdi_resolved *out, atdi_notes *notes)
{
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	atdi_plan plan;
	double us = 0;
	int tried = 0;
	char why[ATDI_MSG_CAP] = "";
	if (!atdi_tuned_earlier(h, ci, &env, dtype, &plan, &us)) {
		if (!h->jit.tune)
			return ATD_ERR_NO_KERNEL;
		atd_status s = atdi_tune(h, ci, dtype, M, N, &plan, &us, &tried, why, sizeof why);
		if (s != ATD_OK) {
			if (first_warning(h, dtype, M, N))
				atdi_note(notes, ATD_LOG_WARNING,
					  "could not tune %s M=%lld N=%lld online: %s",
					  at_dtype_name(dtype), M, N, why);
			return s;
		}
		atdi_tuned t = { "", "", us };
		snprintf(t.template_name, sizeof t.template_name, "%s", plan.rules->name);
		atdi_params_text(plan.rules, plan.values, t.params, sizeof t.params);
		atdi_jit_tuned_put(&h->jit, &ci->gpu, dtype, M, N, &t, tried);
	}
	atdi_jit_job job = { plan.rules, dtype, { 0 }, ci->arch };
	memcpy(job.values, plan.values, sizeof job.values);
	plan.entry = NULL;
	atd_status s = use_rules(h, ci, &plan, ATD_LEVEL_TUNED, &job, M, N, out, notes);
	if (s == ATD_OK)
		out->tuned_us = us;
	return s;
}

static atd_status resolve_locked(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M,
				 long long N, atdi_resolved *out, atdi_notes *notes)
{
	const atdi_ctx_info *ci;
	atd_status s = atdi_ctx_info_get(h, ctx, &ci);
	if (s != ATD_OK)
		return s;
	memset(out, 0, sizeof *out);
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	int jit = h->jit.mode != ATDI_JIT_OFF;
	atdi_plan plan;
	atdi_plan_shape(&h->table, jit ? tr_templates : NULL, tr_ntemplates, &ci->gpu, &env, dtype,
			&plan);
	s = ATD_ERR_NO_KERNEL;
	if (jit && plan.level != ATD_LEVEL_EXACT) {
		s = use_tuned(h, ci, dtype, M, N, out, notes);
		if (s == ATD_ERR_NO_MEMORY)
			return s;
	}
	if (s != ATD_OK && plan.level == ATD_LEVEL_DERIVED) {
		atdi_jit_job job = { plan.rules, dtype, { 0 }, ci->arch };
		memcpy(job.values, plan.values, sizeof job.values);
		int ready = 1;
		if (h->jit.mode == ATDI_JIT_BACKGROUND) {
			/* Read before polling: a job finished in between bumps it. */
			unsigned generation = atdi_jit_generation(&h->jit);
			int state = atdi_jit_poll(&h->jit, &job);
			ready = state != 0;
			out->provisional = state == 0;
			out->generation = generation;
		}
		if (ready)
			s = use_rules(h, ci, &plan, ATD_LEVEL_DERIVED, &job, M, N, out, notes);
		if (s == ATD_ERR_NO_MEMORY)
			return s;
		if (s != ATD_OK) /* what needs no compiling */
			atdi_plan_shape(&h->table, NULL, 0, &ci->gpu, &env, dtype, &plan);
	}
	if (s != ATD_OK && plan.entry && plan.level != ATD_LEVEL_DERIVED) {
		s = use_entry(h, ci, plan.entry, plan.level, dtype, M, N, out, notes);
		if (s == ATD_ERR_NO_MEMORY || s == ATD_ERR_KERNEL_ALTERED)
			return s;
	}
	if (s != ATD_OK) {
		if (!plan.entry && first_warning(h, dtype, M, N))
			atdi_note(notes, ATD_LOG_WARNING,
				  "no tuned kernel for %s M=%lld N=%lld on %s (sm_%d): using the "
				  "built-in kernel",
				  at_dtype_name(dtype), M, N, ci->name, ci->arch);
		if ((s = use_builtin(h, ci, dtype, M, N, out)) != ATD_OK)
			return s;
	}
	note_missing(h, ci, dtype, M, N, out, notes);
	note_choice(h, ci, dtype, M, N, out, notes);
	pthread_mutex_lock(&h->lock);
	atdi_key key = { ctx, M, N, (int)dtype };
	atdi_lookup_put(&h->lookup, &key, out); /* no memory: resolve again next time */
	pthread_mutex_unlock(&h->lock);
	return ATD_OK;
}

atd_status atdi_resolve(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M, long long N,
			atdi_resolved *out)
{
	atdi_notes notes = { 0 };
	atdi_key key = { ctx, M, N, (int)dtype };
	pthread_mutex_lock(&h->slow);
	/* Another thread may have resolved the shape while this one waited. */
	pthread_mutex_lock(&h->lock);
	int found = atdi_lookup_find(&h->lookup, &key, out) && !atdi_stale(h, out);
	pthread_mutex_unlock(&h->lock);
	atd_status s = found ? ATD_OK : resolve_locked(h, ctx, dtype, M, N, out, &notes);
	pthread_mutex_unlock(&h->slow);
	atdi_notes_emit(h, &notes);
	return s;
}

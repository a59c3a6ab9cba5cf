/* atd_query and atd_query_gpu: what serves a shape, for the current
 * context's GPU or for a GPU described by hand. Both apply atdi_select;
 * atd_query first looks in the lookup cache, so that once a shape has run
 * it reports what actually ran (the built-in kernel, if a tuned one failed
 * to load). */
#include <math.h>

#include "common/dtype.h"
#include "dispatch/builtin_kernels.h"
#include "dispatch/described_gpu.h"
#include "dispatch/handle.h"
#include "dispatch/template_table.h"
#include "dispatch/tuned_db.h"

static void fill_choice(const atd_handle *h, const atdi_entry *e, atd_level level,
			atd_dtype dtype, const char *derived_template, const char *derived_params,
			atd_choice *out)
{
	if (level == ATD_LEVEL_TUNED) {
		*out = (atd_choice){ .level = level, .template_name = derived_template,
				     .params = derived_params, .gpu_name = "this GPU, tuned online",
				     .from_params = derived_params };
		return;
	}
	if (!e) {
		const builtin_kernel *b = builtin_kernel_for((at_dtype)dtype);
		*out = (atd_choice){ .level = ATD_LEVEL_BUILTIN, .template_name = b->template_name,
				     .params = b->params, .gpu_name = "", .from_params = b->params };
		return;
	}
	int derived = level == ATD_LEVEL_DERIVED;
	*out = (atd_choice){
		.level = level,
		.template_name = derived ? derived_template : e->template_name,
		.params = derived ? derived_params : e->params,
		.gpu_name = h->table.gpus[e->gpu].name,
		.tuned_M = e->M,
		.tuned_N = e->N,
		.tuned_us = isfinite(e->time_us) ? e->time_us : 0,
		.from_params = e->params,
	};
}

/* Whether the stored kernel that plan would run (none for a derived or
 * built-in choice) matches its digests: a choice atd_softmax would refuse
 * is refused here too, naming the shape. Takes slow. */
static atd_status verify_stored(atd_handle *h, const atdi_plan *plan, atd_dtype dtype,
				int64_t M, int64_t N)
{
	const atdi_entry *e = plan->entry;
	if (!e || !h->db || plan->level == ATD_LEVEL_DERIVED || plan->level == ATD_LEVEL_TUNED)
		return ATD_OK;
	char why[ATDI_MSG_CAP];
	pthread_mutex_lock(&h->slow);
	atd_status s = atdi_db_verify(h->db, e->result_id, why, sizeof why);
	pthread_mutex_unlock(&h->slow);
	if (s != ATD_ERR_KERNEL_ALTERED)
		return ATD_OK; /* anything else is met, and fallen back from, at the call */
	return atdi_fail(h, s, "%s M=%lld N=%lld: the tuned kernel %s %s (tuned at M=%lld N=%lld): %s",
			 at_dtype_name((at_dtype)dtype), (long long)M, (long long)N,
			 e->template_name, e->params, e->M, e->N, why);
}

/* The choice from a plan; a derived variant's params are kept in the
 * handle. Takes slow. */
static atd_status fill_plan(atd_handle *h, const atdi_plan *plan, atd_dtype dtype,
			    atd_choice *out)
{
	const char *params = NULL;
	if (plan->level == ATD_LEVEL_DERIVED || plan->level == ATD_LEVEL_TUNED) {
		char text[1024];
		atdi_params_text(plan->rules, plan->values, text, sizeof text);
		pthread_mutex_lock(&h->slow);
		params = atdi_keep_string(h, text);
		pthread_mutex_unlock(&h->slow);
		if (!params)
			return atdi_fail(h, ATD_ERR_NO_MEMORY, "out of memory");
	}
	fill_choice(h, plan->entry, plan->level, dtype, plan->rules ? plan->rules->name : NULL,
		    params, out);
	return ATD_OK;
}

/* Shared memory a CTA may opt into, by compute capability, for a GPU
 * described by hand (the driver says it for a present one). */
static long long nominal_max_smem(int cc)
{
	switch (cc) {
	case 80: case 87: return 163 * 1024;
	case 86: case 89: return 99 * 1024;
	case 75: return 64 * 1024;
	default: return cc >= 90 ? 227 * 1024 : 48 * 1024;
	}
}

static void tuned_shape(atd_choice *out, int64_t M, int64_t N, double us)
{
	out->tuned_M = M;
	out->tuned_N = N;
	out->tuned_us = us;
}

static const tr_template *rules_if_jit(const atd_handle *h)
{
	return h->jit.mode != ATDI_JIT_OFF ? tr_templates : NULL;
}

static atd_status check_shape(atd_handle *h, const char *fn, atd_dtype dtype, int64_t M,
			      int64_t N, const atd_choice *out)
{
	if (!out)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
	if ((unsigned)dtype >= AT_DTYPE_COUNT)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)dtype);
	if (M < 1 || N < 1)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 "%s: M and N must be at least 1 (M = %lld, N = %lld)", fn,
				 (long long)M, (long long)N);
	return ATD_OK;
}

ATD_API atd_status atd_query_gpu(atd_handle *h, const atd_gpu *gpu, atd_dtype dtype,
				 int64_t M, int64_t N, atd_choice *out)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	atd_status s = check_shape(h, "atd_query_gpu", dtype, M, N, out);
	if (s != ATD_OK)
		return s;
	if (!gpu || !gpu->name)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "atd_query_gpu: %s is NULL",
				 gpu ? "gpu->name" : "gpu");
	/* an SM count left out is the database's, as `autotune show` takes it */
	atd_gpu g = atdi_described_gpu(h, gpu);
	int cc = g.cc_major * 10 + g.cc_minor;
	atdi_env env = { .M = M, .N = N, .elem_bytes = (long long)at_dtype_size((at_dtype)dtype),
			 .sm_count = g.sm_count, .cc = cc, .max_threads = 1024,
			 .max_smem = nominal_max_smem(cc), .regs_per_sm = 65536 };
	atdi_plan plan;
	atdi_plan_shape(&h->table, rules_if_jit(h), tr_ntemplates, &g, &env, (at_dtype)dtype,
			&plan);
	if ((s = verify_stored(h, &plan, dtype, M, N)) != ATD_OK)
		return s;
	return fill_plan(h, &plan, dtype, out);
}

ATD_API atd_status atd_query(atd_handle *h, atd_dtype dtype, int64_t M, int64_t N,
			     atd_choice *out)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	atd_status s = check_shape(h, "atd_query", dtype, M, N, out);
	if (s != ATD_OK || (s = atdi_driver(h)) != ATD_OK)
		return s;
	CUcontext ctx;
	if ((s = atdi_current(h, &ctx)) != ATD_OK)
		return s;
	atdi_key key = { ctx, M, N, (int)dtype };
	atdi_resolved r;
	pthread_mutex_lock(&h->lock);
	int hit = atdi_lookup_find(&h->lookup, &key, &r);
	pthread_mutex_unlock(&h->lock);
	if (hit && !atdi_stale(h, &r)) {
		fill_choice(h, r.entry, r.level, dtype, r.template_name, r.params, out);
		if (r.level == ATD_LEVEL_TUNED)
			tuned_shape(out, M, N, r.tuned_us);
		return ATD_OK;
	}
	pthread_mutex_lock(&h->slow);
	const atdi_ctx_info *ci;
	s = atdi_ctx_info_get(h, ctx, &ci);
	atd_gpu gpu;
	atdi_env env;
	if (s == ATD_OK) {
		gpu = ci->gpu; /* ci lives until atd_close */
		env = atdi_ctx_env(ci, (at_dtype)dtype, M, N);
	}
	atdi_plan plan;
	double us = 0;
	int tuned = s == ATD_OK && h->jit.mode != ATDI_JIT_OFF &&
		    atdi_tuned_earlier(h, ci, &env, (at_dtype)dtype, &plan, &us);
	pthread_mutex_unlock(&h->slow);
	if (s != ATD_OK)
		return s;
	if (tuned) {
		plan.level = ATD_LEVEL_TUNED;
		if ((s = fill_plan(h, &plan, dtype, out)) == ATD_OK)
			tuned_shape(out, M, N, us);
		return s;
	}
	atdi_plan_shape(&h->table, rules_if_jit(h), tr_ntemplates, &gpu, &env, (at_dtype)dtype,
			&plan);
	if ((s = verify_stored(h, &plan, dtype, M, N)) != ATD_OK)
		return s;
	return fill_plan(h, &plan, dtype, out);
}

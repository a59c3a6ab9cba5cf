/* atd_query and atd_query_gpu: what serves a shape, for the current
 * context's GPU or for a GPU described by hand. Both are a dry run of
 * atd_softmax's own decision (decide.h), so that they say what it would
 * launch; atd_query first looks in the lookup cache, so that once a shape
 * has run it reports what actually ran (the built-in kernel, if a tuned
 * one failed to load). */
#include <math.h>

#include "common/dtype.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/runtime/described_gpu.h"
#include "dispatch/runtime/query.h"
#include "dispatch/runtime/resolve.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/tuned_db.h"

/* A stored kernel's digests are what loading it would check first: one
 * that does not match is refused here too, naming the shape. Anything
 * else that loading may meet is met, and fallen back from, at the call. */
static atd_status dry_stored(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			     const atdi_entry *e, int op, at_dtype dtype, const launch_geometry *g,
			     long long M, atdi_resolved *out, char *why, size_t cap)
{
	(void)l, (void)ci, (void)op, (void)dtype, (void)M;
	out->fn = NULL;
	out->geom = *g;
	out->grid = 0;
	if (!e || !h->db)
		return ATD_OK;
	atd_status s = atdi_db_verify(h->db, e->result_id, why, cap);
	return s == ATD_ERR_KERNEL_ALTERED ? s : ATD_OK;
}

static atd_status dry_rules(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			    const atdi_jit_job *job, const launch_geometry *g, long long M,
			    atdi_resolved *out, char *why, size_t cap)
{
	(void)l, (void)h, (void)ci, (void)job, (void)M, (void)why, (void)cap;
	out->fn = NULL;
	out->geom = *g;
	out->grid = 0;
	return ATD_OK;
}

static int dry_poll(const atdi_loader *l, atd_handle *h, const atdi_jit_job *job)
{
	(void)l, (void)h, (void)job;
	return 1;
}

const atdi_loader atdi_dry_loader = { dry_stored, dry_rules, dry_poll, NULL, NULL, NULL };

/* The public choice of a decision r for (dtype, M, N). */
static void choice_of(const atd_handle *h, const atdi_resolved *r, int op, atd_dtype dtype,
		      int64_t M, int64_t N, atd_choice *out)
{
	const atdi_entry *e = r->entry;
	if (r->level == ATD_LEVEL_TUNED) {
		*out = (atd_choice){ .level = r->level, .template_name = r->template_name,
				     .params = r->params, .gpu_name = "this GPU, tuned online",
				     .tuned_M = M, .tuned_N = N, .tuned_us = r->tuned_us,
				     .from_params = r->params };
		return;
	}
	if (r->level == ATD_LEVEL_PREDICTED) {
		*out = (atd_choice){ .level = r->level, .template_name = r->template_name,
				     .params = r->params, .gpu_name = r->model_gpu,
				     .from_params = r->params };
		return;
	}
	if (!e) {
		const builtin_kernel *b = builtin_kernel_for(op, (at_dtype)dtype);
		*out = (atd_choice){ .level = ATD_LEVEL_BUILTIN, .template_name = b->template_name,
				     .params = b->params, .gpu_name = "", .from_params = b->params };
		return;
	}
	int derived = r->level == ATD_LEVEL_DERIVED;
	*out = (atd_choice){
		.level = r->level,
		.template_name = derived ? r->template_name : e->template_name,
		.params = derived ? r->params : e->params,
		.gpu_name = h->table.gpus[e->gpu].name,
		.tuned_M = e->M,
		.tuned_N = e->N,
		.tuned_us = isfinite(e->time_us) ? e->time_us : 0,
		.from_params = e->params,
	};
}

/* The dry run for ci, into out. Takes slow. */
static atd_status dry_run(atd_handle *h, const atdi_ctx_info *ci, int op, atd_dtype dtype,
			  int64_t M, int64_t N, atd_choice *out)
{
	atdi_resolved r;
	pthread_mutex_lock(&h->slow);
	atd_status s = atdi_decide(h, ci, op, (at_dtype)dtype, M, N, &atdi_dry_loader, &r, NULL);
	pthread_mutex_unlock(&h->slow);
	if (s == ATD_OK)
		choice_of(h, &r, op, dtype, M, N, out);
	return s;
}

static atd_status check_shape(atd_handle *h, const char *fn, int op, atd_dtype dtype, int64_t M,
			      int64_t N, const atd_choice *out)
{
	if (op < 0 || op >= ATDI_NOPS)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: unknown op %d", fn, op);
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

/* atd_query_op_gpu under the name fn. */
static atd_status query_gpu(atd_handle *h, const char *fn, int op, const atd_gpu *gpu,
			    atd_dtype dtype, int64_t M, int64_t N, atd_choice *out)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	atd_status s = check_shape(h, fn, op, dtype, M, N, out);
	if (s != ATD_OK)
		return s;
	if (!gpu || !gpu->name)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
				 gpu ? "gpu->name" : "gpu");
	/* an SM count left out is the database's, as `autotune show` takes it */
	atdi_ctx_info ci;
	atdi_described_ctx(h, gpu, &ci);
	return dry_run(h, &ci, op, dtype, M, N, out);
}

/* atd_query_op under the name fn. */
static atd_status query_current(atd_handle *h, const char *fn, int op, atd_dtype dtype, int64_t M,
				int64_t N, atd_choice *out)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	atd_status s = check_shape(h, fn, op, dtype, M, N, out);
	CUcontext ctx;
	atdi_resolved r;
	int fresh;
	if (s != ATD_OK || (s = atdi_cached(h, op, (int)dtype, M, N, &ctx, &r, &fresh)) != ATD_OK)
		return s;
	if (fresh) {
		choice_of(h, &r, op, dtype, M, N, out);
		return ATD_OK;
	}
	const atdi_ctx_info *ci;
	pthread_mutex_lock(&h->slow);
	s = atdi_ctx_info_get(h, ctx, &ci); /* ci lives until atd_close */
	pthread_mutex_unlock(&h->slow);
	return s == ATD_OK ? dry_run(h, ci, op, dtype, M, N, out) : s;
}

ATD_API atd_status atd_query_gpu(atd_handle *h, const atd_gpu *gpu, atd_dtype dtype,
				 int64_t M, int64_t N, atd_choice *out)
{
	return query_gpu(h, "atd_query_gpu", ATDI_SOFTMAX, gpu, dtype, M, N, out);
}

ATD_API atd_status atd_query_op_gpu(atd_handle *h, atd_op op, const atd_gpu *gpu,
				    atd_dtype dtype, int64_t M, int64_t N, atd_choice *out)
{
	return query_gpu(h, "atd_query_op_gpu", (int)op, gpu, dtype, M, N, out);
}

ATD_API atd_status atd_query(atd_handle *h, atd_dtype dtype, int64_t M, int64_t N,
			     atd_choice *out)
{
	return query_current(h, "atd_query", ATDI_SOFTMAX, dtype, M, N, out);
}

ATD_API atd_status atd_query_op(atd_handle *h, atd_op op, atd_dtype dtype, int64_t M, int64_t N,
				atd_choice *out)
{
	return query_current(h, "atd_query_op", (int)op, dtype, M, N, out);
}

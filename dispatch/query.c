/* atd_query and atd_query_gpu: what serves a shape, for the current
 * context's GPU or for a GPU described by hand. Both apply atdi_select;
 * atd_query first looks in the lookup cache, so that once a shape has run
 * it reports what actually ran (the built-in kernel, if a tuned one failed
 * to load). */
#include <math.h>

#include "common/dtype.h"
#include "dispatch/builtin_kernels.h"
#include "dispatch/handle.h"

static void fill_choice(const atd_handle *h, const atdi_entry *e, atd_level level,
			atd_dtype dtype, atd_choice *out)
{
	if (!e) {
		const builtin_kernel *b = builtin_kernel_for((at_dtype)dtype);
		*out = (atd_choice){ .level = ATD_LEVEL_BUILTIN, .template_name = b->template_name,
				     .params = b->params, .gpu_name = "" };
		return;
	}
	*out = (atd_choice){
		.level = level,
		.template_name = e->template_name,
		.params = e->params,
		.gpu_name = h->table.gpus[e->gpu].name,
		.tuned_M = e->M,
		.tuned_N = e->N,
		.tuned_us = isfinite(e->time_us) ? e->time_us : 0,
	};
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
	atd_level level;
	const atdi_entry *e = atdi_select(&h->table, gpu, (at_dtype)dtype, M, N, &level);
	fill_choice(h, e, level, dtype, out);
	return ATD_OK;
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
	if (hit) {
		fill_choice(h, r.entry, r.level, dtype, out);
		return ATD_OK;
	}
	pthread_mutex_lock(&h->slow);
	const atdi_ctx_info *ci;
	s = atdi_ctx_info_get(h, ctx, &ci);
	atd_gpu gpu;
	if (s == ATD_OK)
		gpu = ci->gpu; /* ci lives until atd_close */
	pthread_mutex_unlock(&h->slow);
	if (s != ATD_OK)
		return s;
	atd_level level;
	const atdi_entry *e = atdi_select(&h->table, &gpu, (at_dtype)dtype, M, N, &level);
	fill_choice(h, e, level, dtype, out);
	return ATD_OK;
}

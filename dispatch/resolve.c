/* The miss path of atd_softmax: the first call for a (context, dtype, M, N)
 * picks the variant (atdi_select), loads its module, sizes its grid, and
 * caches all of it, so that later calls only probe the lookup table. A
 * tuned kernel that cannot be used falls back to the built-in one with a
 * warning; each shape is warned about once per handle. */
#include <stdio.h>

#include "common/dtype.h"
#include "dispatch/builtin_kernels.h"
#include "dispatch/handle.h"

/* Whether the shape was not yet warned about (and marks it). */
static int first_warning(atd_handle *h, at_dtype dtype, long long M, long long N)
{
	atdi_key key = { NULL, M, N, (int)dtype };
	atdi_resolved seen;
	if (atdi_lookup_find(&h->warned, &key, &seen))
		return 0;
	atdi_resolved mark = { 0 };
	atdi_lookup_put(&h->warned, &key, &mark); /* no memory: warn again later */
	return 1;
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

static atd_status resolve_locked(atd_handle *h, CUcontext ctx, at_dtype dtype, long long M,
				 long long N, atdi_resolved *out, atdi_notes *notes)
{
	const atdi_ctx_info *ci;
	atd_status s = atdi_ctx_info_get(h, ctx, &ci);
	if (s != ATD_OK)
		return s;
	const char *dt = at_dtype_name(dtype);
	atd_level level;
	const atdi_entry *e = atdi_select(&h->table, &ci->gpu, dtype, M, N, &level);
	char why[ATDI_MSG_CAP];
	CUfunction fn;
	if (e) {
		s = atdi_module_fn(h, ci, e, dtype, &fn, why, sizeof why);
		if (s == ATD_OK)
			s = prepare_launch(ci, fn, &e->geom, M, out, why, sizeof why);
		if (s == ATD_ERR_NO_MEMORY)
			return atdi_fail(h, s, "%s", why);
		if (s == ATD_OK) {
			out->level = level;
			out->entry = e;
		} else if (first_warning(h, dtype, M, N)) {
			atdi_note(notes, ATD_LOG_WARNING,
				  "cannot use the tuned kernel for %s M=%lld N=%lld (%s %s, result %lld): "
				  "%s; using the built-in kernel",
				  dt, M, N, e->template_name, e->params, e->result_id, why);
		}
	} else if (first_warning(h, dtype, M, N)) {
		atdi_note(notes, ATD_LOG_WARNING,
			  "no tuned kernel for %s M=%lld N=%lld on %s (sm_%d): using the built-in kernel",
			  dt, M, N, ci->name, ci->arch);
	}
	if (!e || s != ATD_OK) {
		const builtin_kernel *b = builtin_kernel_for(dtype);
		s = atdi_module_fn(h, ci, NULL, dtype, &fn, why, sizeof why);
		if (s == ATD_OK)
			s = prepare_launch(ci, fn, &b->geom, M, out, why, sizeof why);
		if (s != ATD_OK)
			return atdi_fail(h, s, "%s M=%lld N=%lld: %s", dt, M, N, why);
		out->level = ATD_LEVEL_BUILTIN;
		out->entry = NULL;
	}
	if (out->entry) {
		const atdi_entry *r = out->entry;
		atdi_note(notes, ATD_LOG_INFO,
			  "%s M=%lld N=%lld on %s: %s %s (%s: tuned on %s at M=%lld N=%lld, %.3f us)",
			  dt, M, N, ci->name, r->template_name, r->params, atd_level_name(out->level),
			  h->table.gpus[r->gpu].name, r->M, r->N, r->time_us);
	} else {
		const builtin_kernel *b = builtin_kernel_for(dtype);
		atdi_note(notes, ATD_LOG_INFO, "%s M=%lld N=%lld on %s: %s %s (built-in)", dt, M, N,
			  ci->name, b->template_name, b->params);
	}
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
	int found = atdi_lookup_find(&h->lookup, &key, out);
	pthread_mutex_unlock(&h->lock);
	atd_status s = found ? ATD_OK : resolve_locked(h, ctx, dtype, M, N, out, &notes);
	pthread_mutex_unlock(&h->slow);
	atdi_notes_emit(h, &notes);
	return s;
}

/* Work for the next shapes, started early: see lookahead.h. */
#include "tuner/sweep/lookahead.h"

#include <stdlib.h>
#include <string.h>

#include "tuner/check/ref_ahead.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/variant_kernels.h"

static struct {
	const sweep_plan *plan;
	long long last;  /* the shape tuned before, -1 at first */
	size_t queued;   /* shapes before this one had their kernels queued */
	int off;         /* AUTOTUNE_LOOKAHEAD=0, or an error: do nothing more */
	int read_env;
} la;

static int enabled(void)
{
	if (!la.read_env) {
		const char *v = getenv("AUTOTUNE_LOOKAHEAD");
		la.off = v && strcmp(v, "0") == 0;
		la.read_env = 1;
	}
	return !la.off;
}

static int is_done(const lookahead_ctx *ctx, const sweep_shape *s)
{
	int done = 0;
	at_error err = { { 0 } };
	if (tdb_shape_done(ctx->db, ctx->gpu_id, s->op, s->dtype, s->M, s->N, &done, &err))
		return 1; /* the tuning itself will report the database's error */
	return done;
}

/* Queues shape s's kernels; -1 on an error (which the shape's own tuning
 * will meet and report). */
static int queue_kernels(const lookahead_ctx *ctx, const sweep_shape *s)
{
	tr_env env = gpu_shape_env(ctx->gpu, s->M, s->N, at_dtype_size(s->dtype));
	variant *vs;
	size_t n, nall;
	at_error err = { { 0 } };
	if (sweep_shape_variants(ctx->pruner, ctx->plan, s, &env, &vs, &n, &nall, &err))
		return -1;
	int rc = kernel_cache_queue_variants(ctx->cache, vs, n, NULL, &err);
	free(vs);
	return rc;
}

void lookahead_after(const lookahead_ctx *ctx, const sweep_shape *s)
{
	const sweep_plan *p = ctx->plan;
	if (!enabled() || !p || s < p->shapes || s >= p->shapes + p->nshapes)
		return;
	size_t i = (size_t)(s - p->shapes);
	if (la.plan != p) {
		la.plan = p;
		la.last = -1;
		la.queued = 0;
	}
	size_t stride = la.last >= 0 && (long long)i > la.last ? i - (size_t)la.last : 1;
	la.last = (long long)i;

	/* the next two shapes' data: the second gets a whole shape's more lead */
	size_t next = i + stride;
	while (next < p->nshapes && is_done(ctx, &p->shapes[next]))
		next += stride;
	for (size_t k = next, prepared = 0; k < p->nshapes && prepared < REF_AHEAD_SLOTS - 1;
	     k += stride) {
		const sweep_shape *n = &p->shapes[k];
		if (k > next && is_done(ctx, n))
			continue;
		const at_op *op = op_find(n->op);
		if (op)
			ref_ahead_prepare(op, n->dtype, n->M, n->N,
					  ref_shape_seed(ctx->seed, n->dtype, n->M, n->N));
		prepared++;
	}

	size_t enough = (size_t)ctx->cache->nthreads * LOOKAHEAD_KERNELS_PER_THREAD;
	size_t k = la.queued > next ? la.queued : next;
	for (; k < p->nshapes && k <= i + LOOKAHEAD_MAX_SHAPES * stride &&
	       (k <= i + LOOKAHEAD_MIN_SHAPES * stride ||
		kernel_cache_pending(ctx->cache) < enough);
	     k += stride) {
		if (!is_done(ctx, &p->shapes[k]) && queue_kernels(ctx, &p->shapes[k])) {
			la.off = 1;
			return;
		}
		la.queued = k + stride;
	}
}

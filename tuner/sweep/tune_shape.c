/* Tuning one shape: see tune_shape.h. */
#include "tuner/sweep/tune_shape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/op.h"
#include "common/strbuf.h"
#include "tuner/sweep/enumerate.h"
#include "tuner/sweep/baselines.h"
#include "tuner/check/gpu_compare.h"
#include "tuner/sweep/lookahead.h"
#include "tuner/sweep/op_shape.h"
#include "tuner/check/ref_ahead.h"
#include "tuner/check/reference.h"
#include "tuner/ops/ops.h"
#include "tuner/timing/refine.h"
#include "tuner/sweep/phases.h"
#include "tuner/sweep/variant_kernels.h"

/* The buffers of one shape, on both sides. */
typedef struct shape_data {
	CUdeviceptr x, y;    /* x: the op's inputs, input_stride bytes apart */
	const void *host_x;  /* the three owned by ref_ahead */
	const float *ref;    /* M x N */
	const double *rows;  /* the row results (an op's: common/op.h) */
	CUdeviceptr ref_dev; /* the reference on the GPU, for gpu_compare */
	size_t bytes;        /* of one M x N tensor: the output, each input */
	size_t input_stride; /* from one input's start to the next's on the GPU */
	int ninputs;
	op_shape op;         /* the op's own part: side inputs, other outputs */
} shape_data;

/* One variant being launched (for gpu_time's callback). */
typedef struct variant_launch {
	tune_ctx *ctx;
	int index;                /* among the shape's variants */
	const result_row *row;    /* names it for the supervisor */
	kernel_entry *entry;
	launch_geometry geom;
	unsigned grid;
	CUdeviceptr y, x;
	long long M, N;
	/* an op of two inputs: the second, after x (launch_softmax_backward) */
	CUdeviceptr x2;
	const op_shape *op; /* the shape's, which launches it */
	double check_us; /* its check run, timed by events (0: not timed) */
} variant_launch;

/* Where a shape's time goes (phases.h). */
enum { PHASE_REF, PHASE_DATA, PHASE_LOAD, PHASE_CHECK, PHASE_QUICK, PHASE_FINISH, PHASE_BASELINES, PHASE_STORE,
       PHASE_COUNT };

static void phase_end(double *phase, int which, double *mark)
{
	double t = phases_now_ms();
	phase[which] += t - *mark;
	*mark = t;
}

static void phases_report(const sweep_shape *s, size_t n, size_t npassed, const double *ms)
{
	if (!phases_wanted())
		return;
	fprintf(stderr, "phases %s %lld %lld variants %zu passed %zu: ref %.1f data %.1f load %.1f "
		"check %.1f quick %.1f finish %.1f baselines %.1f store %.1f ms\n",
		at_dtype_name(s->dtype), s->M, s->N, n, npassed, ms[PHASE_REF], ms[PHASE_DATA], ms[PHASE_LOAD], ms[PHASE_CHECK], ms[PHASE_QUICK],
		ms[PHASE_FINISH], ms[PHASE_BASELINES], ms[PHASE_STORE]);
}

static void free_data(shape_data *d)
{
	if (d->x)
		cudrv.cuMemFree(d->x);
	if (d->y)
		cudrv.cuMemFree(d->y);
	if (d->ref_dev)
		cudrv.cuMemFree(d->ref_dev);
	op_shape_free(&d->op);
	memset(d, 0, sizeof *d);
}

/* The op s names (plan_load checked that it is described). */
static const at_op *shape_op(const sweep_shape *s)
{
	return op_find(s->op);
}

/* The shape's input and reference on the GPU; the wait for the CPU's part
 * is timed apart as PHASE_REF. */
static int make_data(tune_ctx *ctx, const sweep_shape *s, shape_data *d, double *phase,
		     double *mark, at_error *err)
{
	memset(d, 0, sizeof *d);
	size_t count = (size_t)(s->M * s->N);
	d->bytes = count * at_dtype_size(s->dtype);
	/* Fresh data for every shape and sweep: the seed mixes both. */
	uint64_t seed = ref_shape_seed(ctx->seed, s->dtype, s->M, s->N);
	ref_ahead_acquire(shape_op(s), s->dtype, s->M, s->N, seed, &d->host_x, &d->ref, &d->rows);
	phase_end(phase, PHASE_REF, mark);
	const at_op *op = shape_op(s);
	d->ninputs = at_op_inputs(op);
	/* the inputs, and a side input after them (an op's, as targets) */
	size_t in_bytes = at_op_input_bytes(op, s->dtype, s->M, s->N);
	/* Each of several inputs starts 256-byte aligned: packed as on the
	 * host, the second input of a shape whose bytes are no multiple of 16
	 * started past a vector boundary, and every vector template took its
	 * element path there (f16 591129 x 2 timed at 8 us in the sweep, 7
	 * through the library; H200). */
	d->input_stride = at_op_device_input_stride(op, s->dtype, s->M, s->N);
	size_t pad = (d->input_stride - d->bytes) * (size_t)(d->ninputs - 1);
	CU_TRY(err, cudrv.cuMemAlloc(&d->x, in_bytes + pad));
	CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->bytes));
	if (pad == 0) {
		CU_TRY(err, cudrv.cuMemcpyHtoD(d->x, d->host_x, in_bytes));
	} else {
		for (int k = 0; k < d->ninputs; k++)
			CU_TRY(err, cudrv.cuMemcpyHtoD(d->x + (size_t)k * d->input_stride,
						       (const char *)d->host_x + (size_t)k * d->bytes,
						       d->bytes));
	}
	/* the M x N reference: an op's row results stay here */
	CU_TRY(err, cudrv.cuMemAlloc(&d->ref_dev, count * sizeof *d->ref));
	CU_TRY(err, cudrv.cuMemcpyHtoD(d->ref_dev, d->ref, count * sizeof *d->ref));
	/* a copy from pageable memory may still be landing when it returns,
	 * and the timer's non-blocking stream does not wait for the legacy one */
	CU_TRY(err, cudrv.cuCtxSynchronize());
	if (op_shape_make(&d->op, op, s->dtype, s->M, s->N, d->host_x, d->x, d->rows, err))
		return -1;
	ref_ahead_done(); /* its slot may take a shape ahead */
	d->host_x = NULL;
	d->ref = NULL;
	d->rows = NULL;
	return 0;
}

/* Tells the supervisor (if any) that variant `index` is on the GPU now. */
static void on_gpu(tune_ctx *ctx, int index, const result_row *row)
{
	ctx->current_variant = index;
	if (ctx->hooks.on_gpu)
		ctx->hooks.on_gpu(ctx->hooks.arg, index, row ? row->template_name : "baselines",
				  row ? row->params : "");
}

static void on_cpu(tune_ctx *ctx)
{
	if (ctx->hooks.on_cpu)
		ctx->hooks.on_cpu(ctx->hooks.arg);
}

/* What the op's launch and probe are given of l. */
static op_variant as_op_variant(const variant_launch *l)
{
	return (op_variant){ .fn = l->entry->fn, .module = l->entry->module, .geom = &l->geom,
			     .grid = l->grid, .y = l->y, .x = l->x, .x2 = l->x2, .M = l->M,
			     .N = l->N };
}

static int launch_variant(void *arg, CUstream stream, at_error *err)
{
	variant_launch *l = arg;
	on_gpu(l->ctx, l->index, l->row); /* a heartbeat while timing */
	op_variant v = as_op_variant(l);
	return op_shape_launch(l->op, &v, stream, err);
}

/* Errors after which the context is unusable: the sweep cannot go on in
 * this process. */
static int context_is_dead(CUresult rc)
{
	return rc == CUDA_ERROR_ILLEGAL_ADDRESS || rc == CUDA_ERROR_LAUNCH_FAILED ||
	       rc == CUDA_ERROR_MISALIGNED_ADDRESS || rc == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
	       rc == CUDA_ERROR_HARDWARE_STACK_ERROR || rc == CUDA_ERROR_INVALID_PC ||
	       rc == CUDA_ERROR_LAUNCH_TIMEOUT || rc == CUDA_ERROR_INVALID_ADDRESS_SPACE;
}

/* Runs the launch once on a poisoned output and compares with the
 * reference; *us (when not NULL) gets the launch's time by events, for
 * refine_screen, or 0. Returns 0 (row->status says pass or fail), or -1
 * when the context died. */
static int check_launch(tune_ctx *ctx, const sweep_shape *s, shape_data *d,
			timed_launch_fn launch, void *arg, result_row *row, char *reason,
			size_t cap, double *us, at_error *err)
{
	at_error lerr = { { 0 } };
	gpu_timer *t = ctx->timer;
	int timed = us && t->nevents > 0;
	if (us)
		*us = 0;
	/* 0xff bytes are NaN in every dtype: an unwritten element fails. */
	CUresult rc = cudrv.cuMemsetD8Async(d->y, 0xff, d->bytes, t->stream);
	if (rc == CUDA_SUCCESS && op_shape_poison(&d->op, t->stream, &lerr))
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS && timed)
		rc = cudrv.cuEventRecord(t->start[0], t->stream);
	if (rc == CUDA_SUCCESS && launch(arg, t->stream, &lerr) != 0)
		rc = CUDA_ERROR_LAUNCH_FAILED;
	if (rc == CUDA_SUCCESS && timed)
		rc = cudrv.cuEventRecord(t->stop[0], t->stream);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuStreamSynchronize(t->stream);
	float ms = 0;
	if (rc == CUDA_SUCCESS && timed &&
	    cudrv.cuEventElapsedTime(&ms, t->start[0], t->stop[0]) == CUDA_SUCCESS)
		*us = ms * 1e3;
	if (rc != CUDA_SUCCESS) {
		if (!lerr.msg[0])
			cudrv_error(&lerr, rc, "running the variant");
		row->status = RESULT_LAUNCH_FAILED;
		snprintf(reason, cap, "%s", lerr.msg);
		if (context_is_dead(rc))
			return at_error_set(err, "%s (the GPU context is lost)", lerr.msg);
		return 0;
	}
	check_result c;
	if (gpu_compare_run(ctx->compare, s->dtype, d->y, d->ref_dev, s->M, s->N, s->N,
			    ctx->timer->stream, &c, err))
		return -1;
	row->rel_err = c.rel_l2;
	double tol = at_op_tolerance(shape_op(s), s->dtype);
	if (c.mismatches) {
		row->status = RESULT_CHECK_FAILED;
		snprintf(reason, cap, "%lld elements NaN where the reference is not, or the "
			 "reverse (first at row %lld, column %lld)", c.mismatches,
			 c.first_bad / s->N, c.first_bad % s->N);
	} else if (!(c.rel_l2 <= tol)) {
		row->status = RESULT_CHECK_FAILED;
		snprintf(reason, cap, "relative L2 error %.3g exceeds %.0e", c.rel_l2, tol);
	} else {
		row->status = RESULT_OK;
	}
	int rows_ok = 1;
	if (row->status == RESULT_OK &&
	    op_shape_compare(&d->op, t->stream, tol, &rows_ok, reason, cap, err))
		return -1;
	if (!rows_ok)
		row->status = RESULT_CHECK_FAILED;
	return 0;
}

/* A variant that passed its check, run again by its op's probe (if any)
 * on what the check does not cover. Returns -1 only when the GPU context
 * is lost. */
static int probe_variant(tune_ctx *ctx, const sweep_shape *s, const variant_launch *l,
			 result_row *row, char *reason, size_t cap, at_error *err)
{
	at_error perr = { { 0 } };
	int ok = 1;
	op_variant v = as_op_variant(l);
	if (op_shape_probe(l->op, &v, ctx->timer->stream, at_op_tolerance(shape_op(s), s->dtype),
			   &ok, reason, cap, &perr)) {
		row->status = RESULT_LAUNCH_FAILED;
		snprintf(reason, cap, "%s", perr.msg);
		CUresult rc = cudrv.cuCtxSynchronize();
		return context_is_dead(rc) ? at_error_set(err, "%s (the GPU context is lost)", perr.msg)
					   : 0;
	}
	if (!ok)
		row->status = RESULT_CHECK_FAILED;
	return 0;
}

/* Fills row for variant v (entry is its compiled kernel) and checks it;
 * a variant that passed is left in *l_out to be timed. */
static int try_variant(tune_ctx *ctx, const sweep_shape *s, shape_data *d,
		       int index, const variant *v, kernel_entry *entry, const tr_env *env,
		       const char *excluded, result_row *row, variant_launch *l_out, char *reason,
		       size_t cap, at_error *err)
{
	row->template_name = v->tmpl->name;
	row->rel_err = -1;
	row->registers = row->smem_bytes = row->spill_bytes = -1;
	row->arch = ctx->cache->cc;
	row->entry = shape_op(s)->kernel_name;
	variant_launch l = { .ctx = ctx, .index = index, .row = row, .entry = entry, .y = d->y,
			     .x = d->x, .M = s->M, .N = s->N,
			     .x2 = d->ninputs > 1 ? d->x + d->input_stride : 0, .op = &d->op };
	at_error verr = { { 0 } };
	if (variant_geometry(v, env, &l.geom, &verr))
		return at_error_set(err, "%s", verr.msg); /* a manifest bug: stop */
	row->threads = l.geom.threads;
	row->rows_per_cta = l.geom.rows_per_cta;
	row->dyn_smem = l.geom.dyn_smem;
	row->persistent = l.geom.persistent;
	row->max_n = l.geom.max_n;
	row->ctas_per_row = l.geom.ctas_per_row;
	row->cooperative = l.geom.cooperative;
	if (entry->status != COMPILE_OK) {
		row->status = RESULT_COMPILE_FAILED;
		snprintf(reason, cap, "%s", entry->status == COMPILE_FAILED ? entry->k.log : entry->error);
		return 0;
	}
	row->compile_ms = entry->k.compile_ms;
	if (excluded) {
		row->status = RESULT_LAUNCH_FAILED;
		snprintf(reason, cap, "%s", excluded);
		return 0;
	}
	row->cubin = entry->k.cubin;
	row->cubin_size = entry->k.cubin_size;
	row->ptx = entry->k.ptx;
	int loaded = kernel_entry_load(entry, shape_op(s)->kernel_name, &verr);
	row->registers = entry->k.registers;
	row->smem_bytes = entry->k.smem_bytes;
	row->spill_bytes = entry->k.spill_bytes;
	if (loaded || launch_grid(&l.geom, entry->fn, s->M, ctx->gpu->info.sm_count, &l.grid, &verr) ||
	    op_shape_prepare(l.op, entry->module, ctx->timer->stream, &verr)) {
		row->status = RESULT_LAUNCH_FAILED;
		snprintf(reason, cap, "%s", verr.msg);
		return 0;
	}
	*l_out = l;
	on_gpu(ctx, index, row);
	int rc = check_launch(ctx, s, d, launch_variant, l_out, row, reason, cap, &l_out->check_us,
			      err);
	if (rc == 0 && row->status == RESULT_OK)
		rc = probe_variant(ctx, s, l_out, row, reason, cap, err);
	on_cpu(ctx);
	return rc;
}

/* Checks the baselines of this shape into rows[0..] (at most 3), then
 * times those that ran all together beside winner (NULL: none; see
 * refine_beside); returns how many rows it filled, or -1 when the context
 * died. A baseline is timed also when it is inaccurate (the seeds' naive
 * softmax in bf16 is): its speed is what it is there for. */
static int run_baselines(tune_ctx *ctx, const sweep_shape *s, shape_data *d,
			 const refine_candidate *winner, result_row *rows, char *reasons,
			 size_t cap, at_error *err)
{
	for (size_t i = 0; i < ctx->nexcluded; i++)
		if (ctx->excluded[i].variant < 0)
			return 0; /* they killed an earlier worker: none this time */
	baseline_run run;
	at_error berr = { { 0 } };
	if (baseline_run_init(&run, ctx->baselines, s->dtype, d->y, d->x, s->M, s->N, &berr)) {
		baseline_run_free(&run);
		return 0; /* no room for the naive intermediates: skip baselines */
	}
	static const char *const names[] = { "naive", "cudnn", "copy" };
	const timed_launch_fn launchers[] = { baseline_launch_naive, baseline_launch_cudnn,
					      baseline_launch_copy };
	timed_launch_fn launch[3];
	void *arg[3];
	result_row *timed[3];
	int n = 0, ntimed = 0;
	on_gpu(ctx, -1, NULL);
	for (int i = 0; i < 3; i++) {
		/* the naive and cuDNN baselines compute softmax; the copy serves
		 * every op of one input (its bytes moved are not an op's of two) */
		if ((i < 2 && !shape_op(s)->softmax_baselines) || (i == 2 && d->ninputs > 1) ||
		    (i == 1 && !baselines_cudnn_available(ctx->baselines)) ||
		    (i == 2 && d->bytes % 16))
			continue;
		result_row *row = &rows[n];
		memset(row, 0, sizeof *row);
		row->baseline = 1;
		row->template_name = names[i];
		row->params = "";
		row->rel_err = -1;
		row->registers = row->smem_bytes = row->spill_bytes = -1;
		row->status = RESULT_OK;
		char *reason = reasons + (size_t)n * cap;
		/* the copy has no softmax to check */
		if (i != 2 &&
		    check_launch(ctx, s, d, launchers[i], &run, row, reason, cap, NULL, err)) {
			baseline_run_free(&run);
			return -1;
		}
		if (reason[0])
			row->reason = reason;
		if (row->status != RESULT_LAUNCH_FAILED) {
			launch[ntimed] = launchers[i];
			arg[ntimed] = &run;
			timed[ntimed++] = row;
		}
		n++;
	}
	at_error terr = { { 0 } };
	if (ntimed && refine_beside(ctx->timer, winner, launch, arg, ntimed,
				    at_op_bytes_moved(shape_op(s), s->dtype, s->M, s->N),
				    ctx->copy_gbps, timed, &terr)) {
		/* not the winner's failure: it ran many times before */
		for (int i = 0; i < ntimed; i++) {
			char *reason = reasons + (size_t)(timed[i] - rows) * cap;
			snprintf(reason, cap, "%s", terr.msg);
			timed[i]->reason = reason;
			timed[i]->status = RESULT_LAUNCH_FAILED;
			timed[i]->time_us = 0;
		}
	}
	baseline_run_free(&run);
	on_cpu(ctx);
	return n;
}

static void summarize(const result_row *rows, char **params, size_t n, double band,
		      shape_summary *sum)
{
	memset(sum, 0, sizeof *sum);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].baseline) {
			const char *name = rows[i].template_name;
			double *slot = strcmp(name, "naive") == 0   ? &sum->naive_gbps
				       : strcmp(name, "cudnn") == 0 ? &sum->cudnn_gbps
								    : &sum->copy_gbps;
			*slot = rows[i].time_us > 0 ? rows[i].gbps : 0;
			continue;
		}
		sum->variants++;
		sum->passed += rows[i].status == RESULT_OK;
	}
	long w = tdb_pick_winner(rows, n, band);
	if (w < 0)
		return;
	snprintf(sum->winner_template, sizeof sum->winner_template, "%s", rows[w].template_name);
	snprintf(sum->winner_params, sizeof sum->winner_params, "%s", params[w]);
	sum->time_us = rows[w].time_us;
	sum->gbps = rows[w].gbps;
	sum->pct_copy = rows[w].pct_copy;
}

#define REASON_CAP sizeof(((at_error *)0)->msg)

/* sweep --audit: how the winner the rounds picked compares with the best
 * that full timing of every passing variant finds, in this run: the ratio
 * of their full-timing medians, and of their medians timed head to head
 * (interleaved, so that drift between the two measurements cancels). The
 * rows keep the rounds' numbers, which are what is stored. */
static int audit_rounds(tune_ctx *ctx, result_row *rows, size_t n, refine_candidate *passed,
			size_t npassed, size_t nfull, double band, double moved,
			shape_summary *sum, at_error *err)
{
	long w = tdb_pick_winner(rows, n, band);
	if (w < 0 || npassed < 2)
		return 0;
	result_row *saved = xmalloc(n * sizeof *saved);
	memcpy(saved, rows, n * sizeof *saved);
	int rc = refine_all(ctx->timer, passed, npassed, moved, ctx->copy_gbps, err);
	size_t best = 0, mine = 0;
	for (size_t i = 0; i < npassed; i++) {
		if (passed[i].row->time_us < passed[best].row->time_us)
			best = i;
		if (passed[i].row == &rows[w])
			mine = i;
	}
	if (rc == 0) {
		sum->audit_full_ratio = passed[mine].row->time_us / passed[best].row->time_us;
		sum->audit_head_ratio = 1.0;
		sum->audit_best_rounds_ratio =
			saved[passed[best].row - rows].time_us / saved[w].time_us;
		sum->audit_best_full = best < nfull;
	}
	if (rc == 0 && best != mine) {
		timed_launch_fn launch[2] = { passed[mine].launch, passed[best].launch };
		void *arg[2] = { passed[mine].arg, passed[best].arg };
		timing t[2];
		rc = gpu_time_interleaved(ctx->timer, launch, arg, 2, t, err);
		if (rc == 0)
			sum->audit_head_ratio = t[0].median_us / t[1].median_us;
	}
	memcpy(rows, saved, n * sizeof *saved);
	free(saved);
	return rc;
}

/* The candidate that tdb_pick_winner picks among rows, or NULL. */
static const refine_candidate *winner_of(const result_row *rows, size_t n,
					 const refine_candidate *passed, size_t npassed,
					 double band)
{
	long w = tdb_pick_winner(rows, n, band);
	for (size_t i = 0; w >= 0 && i < npassed; i++)
		if (passed[i].row == &rows[w])
			return &passed[i];
	return NULL;
}

/* Why variant i must not run, or NULL. */
static const char *exclusion_reason(const tune_ctx *ctx, size_t i)
{
	for (size_t k = 0; k < ctx->nexcluded; k++)
		if (ctx->excluded[k].variant == (int)i)
			return ctx->excluded[k].reason;
	return NULL;
}

/* Whether the shape is to be dropped (Ctrl-C); sets err if so. */
static int interrupted(const tune_ctx *ctx, at_error *err)
{
	if (!ctx->interrupted || !ctx->interrupted())
		return 0;
	return at_error_set(err, "interrupted");
}

int tune_shape(tune_ctx *ctx, const sweep_shape *s, shape_summary *sum, at_error *err)
{
	if (!shape_op(s))
		return at_error_set(err, "op \"%s\" is not described (tuner/ops/ops.c)", s->op);
	tr_env env = gpu_shape_env(ctx->gpu, s->M, s->N, at_dtype_size(s->dtype));
	variant *vs = NULL;
	size_t n = 0;
	size_t nall = 0;
	if (sweep_shape_variants(ctx->pruner, ctx->plan, s, &env, &vs, &n, &nall, err))
		return -1;
	kernel_entry **entries = xcalloc(n ? n : 1, sizeof *entries);
	int got = kernel_cache_get_variants(ctx->cache, vs, n, entries, err);
	if (got) {
		if (got == KERNEL_CACHE_INTERRUPTED)
			at_error_set(err, "interrupted");
		free(entries);
		free(vs);
		return -1;
	}

	double start = phases_now_ms();
	shape_data d;
	result_row *rows = xcalloc(n + 3, sizeof *rows); /* + the baselines */
	char **params = xcalloc(n ? n : 1, sizeof *params);
	char *reasons = xcalloc(n + 3, REASON_CAP);
	variant_launch *launches = xcalloc(n ? n : 1, sizeof *launches);
	refine_candidate *passed = xcalloc(n ? n : 1, sizeof *passed);
	size_t npassed = 0;
	double band = 0;
	size_t nfull = 0;
	shape_summary audit = { 0 };
	double phase[PHASE_COUNT] = { 0 }, mark = start;
	int rc = make_data(ctx, s, &d, phase, &mark, err);
	phase_end(phase, PHASE_DATA, &mark);
	if (phases_wanted()) /* timed apart; a failure is met again in try_variant */
		for (size_t i = 0; i < n; i++) {
			at_error ignored;
			if (entries[i]->status == COMPILE_OK)
				kernel_entry_load(entries[i], shape_op(s)->kernel_name, &ignored);
		}
	phase_end(phase, PHASE_LOAD, &mark);
	if (rc == 0)
		lookahead_after(&(lookahead_ctx){ ctx->plan, ctx->gpu, ctx->cache, ctx->db,
						  ctx->gpu_id, ctx->seed, ctx->pruner },
				s);
	for (size_t i = 0; i < n && rc == 0; i++) {
		if ((rc = interrupted(ctx, err)))
			break;
		params[i] = variant_params_str(&vs[i]);
		rows[i].params = params[i];
		rc = try_variant(ctx, s, &d, (int)i, &vs[i], entries[i], &env,
				 exclusion_reason(ctx, i), &rows[i], &launches[i],
				 reasons + i * REASON_CAP, REASON_CAP, err);
		if (reasons[i * REASON_CAP])
			rows[i].reason = reasons + i * REASON_CAP;
		if (rc == 0 && rows[i].status == RESULT_OK)
			passed[npassed++] = (refine_candidate){ &rows[i], launch_variant, &launches[i],
								launches[i].check_us };
		if (ctx->hooks.on_step)
			ctx->hooks.on_step(ctx->hooks.arg, i + 1, n);
	}
	phase_end(phase, PHASE_CHECK, &mark);
	if (rc == 0)
		rc = interrupted(ctx, err);
	/* a timing failure is the GPU's, not a variant's: it ends the sweep */
	double moved = at_op_bytes_moved(shape_op(s), s->dtype, s->M, s->N);
	if (rc == 0 && ctx->full_timing)
		rc = refine_all(ctx->timer, passed, npassed, moved, ctx->copy_gbps, err);
	else if (rc == 0) {
		size_t ntimed = refine_screen(passed, npassed, moved, ctx->copy_gbps);
		rc = refine_quick(ctx->timer, passed, ntimed, moved, ctx->copy_gbps, err);
		phase_end(phase, PHASE_QUICK, &mark);
		rc = rc || refine_finish(ctx->timer, passed, ntimed, moved, ctx->copy_gbps, &band,
					 &nfull, err);
	}
	phase_end(phase, PHASE_FINISH, &mark);
	if (rc == 0 && ctx->audit && !ctx->full_timing)
		rc = audit_rounds(ctx, rows, n, passed, npassed, nfull, band, moved, &audit, err);
	on_cpu(ctx);
	if (rc == 0)
		rc = interrupted(ctx, err);
	size_t nrows = n;
	if (rc == 0 && ctx->baselines) {
		int nb = run_baselines(ctx, s, &d, winner_of(rows, n, passed, npassed, band),
				       rows + n, reasons + n * REASON_CAP, REASON_CAP, err);
		if (nb < 0)
			rc = -1;
		else
			nrows += (size_t)nb;
	}
	phase_end(phase, PHASE_BASELINES, &mark);
	ctx->bench_ms += phases_now_ms() - start;
	if (rc == 0) {
		shape_key key = { ctx->gpu_id, s->op, s->dtype, s->M, s->N };
		rc = tdb_store_shape_band(ctx->db, ctx->sweep_id, &key, rows, nrows, band, err);
		phase_end(phase, PHASE_STORE, &mark);
		phases_report(s, n, npassed, phase);
		summarize(rows, params, nrows, band, sum);
		sum->enumerated = nall;
		sum->audit_full_ratio = audit.audit_full_ratio;
		sum->audit_head_ratio = audit.audit_head_ratio;
		sum->audit_best_rounds_ratio = audit.audit_best_rounds_ratio;
		sum->audit_best_full = audit.audit_best_full;
	}
	free_data(&d);
	for (size_t i = 0; i < n; i++)
		free(params[i]);
	free(params);
	free(reasons);
	free(launches);
	free(passed);
	free(rows);
	free(entries);
	free(vs);
	return rc;
}

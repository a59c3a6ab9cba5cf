/* The sweep's worker process: see sweep_worker.h. */
#include "tuner/sweep/sweep_worker.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "cuda/nvrtc_compile.h"
#include "tuner/sweep/baselines.h"
#include "tuner/check/gpu_compare.h"
#include "tuner/sweep/interrupt.h"
#include "tuner/sweep/phases.h"
#include "tuner/sweep/tune_shape.h"
#include "tuner/version.h"

#define COPY_BENCH_BYTES (1ull << 30)
#define HEARTBEAT_MS 200 /* repeats of the same variant are sent at most this often */

/* Everything one worker process holds. */
typedef struct worker {
	const worker_start *start;
	const sweep_options *o;
	sweep_plan *p;
	int in, out;
	gpu_device gpu;
	int gpu_open;
	tdb *db;
	gpu_timer b;
	int timer_open;
	kernel_cache cache;
	int cache_open;
	gpu_compare compare;
	sweep_pruner pruner;
	int pruner_open;
	tune_ctx ctx;
	tune_exclusion *excl;
	size_t nexcl, excl_cap;
	int last_variant;
	double last_sent_ms;
	worker_stats reported; /* totals already sent with SHAPE_DONE */
} worker;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compile_threads(const sweep_options *o, int nworkers)
{
	if (o->threads > 0)
		return o->threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN) / (nworkers > 0 ? nworkers : 1);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static void send(worker *w, const worker_msg *m)
{
	/* a write error means the supervisor is gone: PR_SET_PDEATHSIG ends us */
	(void)worker_msg_write(w->out, m);
}

static void hook_gpu(void *arg, int index, const char *tmpl, const char *params)
{
	worker *w = arg;
	double t = now_ms();
	if (index == w->last_variant && t - w->last_sent_ms < HEARTBEAT_MS)
		return;
	worker_msg m = worker_msg_make(WMSG_GPU);
	m.variant = index;
	snprintf(m.text, sizeof m.text, "%.100s %.900s", tmpl, params);
	send(w, &m);
	w->last_variant = index;
	w->last_sent_ms = t;
}

static void hook_cpu(void *arg)
{
	worker *w = arg;
	worker_msg m = worker_msg_make(WMSG_CPU);
	send(w, &m);
	w->last_variant = -2;
}

static void hook_step(void *arg, size_t step, size_t steps)
{
	worker *w = arg;
	if (!w->start->report_steps)
		return;
	worker_msg m = worker_msg_make(WMSG_STEP);
	m.step = step;
	m.steps = steps;
	send(w, &m);
}

/* Refuses, before anything is written, a shape whose buffers cannot fit. */
static int check_memory(const sweep_plan *p, const gpu_device *gpu, at_error *err)
{
	size_t free_b = 0, total_b = 0;
	CU_TRY(err, cudrv.cuMemGetInfo(&free_b, &total_b));
	size_t reserve = 2 * (size_t)gpu->l2_bytes + (64u << 20);
	for (size_t i = 0; i < p->nshapes; i++) {
		const sweep_shape *s = &p->shapes[i];
		/* input, output and the reference in double for checking on the GPU */
		double need = (double)s->M * (double)s->N * (2.0 * (double)at_dtype_size(s->dtype) + 8.0);
		if (need + (double)reserve > (double)free_b) {
			char label[128];
			sweep_shape_label(s, label, sizeof label);
			return at_error_set(err, "%s:%d: shape %s needs %.1f GiB of GPU memory for "
					    "input, output and reference; %s has %.1f GiB free",
					    p->cfg.path, s->spec->line, label, need / (1 << 30),
					    gpu->info.name, (double)free_b / (1 << 30));
		}
	}
	return 0;
}

/* The model that prunes each shape's variants, said once a GPU. */
static int open_pruner(worker *w, at_error *err)
{
	const prune_options *po = &w->o->prune;
	if (sweep_pruner_open(&w->pruner, w->p, po, tdb_default_path(w->o->db_path),
			      w->o->prune_before, w->gpu.info.name, w->gpu.cc,
			      plan_templates_dir(w->o->templates_dir), err))
		return -1;
	w->pruner_open = 1;
	w->ctx.pruner = &w->pruner;
	if (w->start->sweep_id != 0)
		return 0;
	if (po->exhaustive)
		fprintf(stderr, "autotune: GPU %d: every variant compiled and timed (--exhaustive)\n",
			w->start->device);
	for (int i = 0; i < w->pruner.nops; i++) {
		const sweep_op_model *om = &w->pruner.ops[i];
		if (om->have_model)
			fprintf(stderr, "autotune: GPU %d: %s: pruning each shape to the model's best %d "
				"variants (each weighing (its template's compile time / the typical "
				"one)^%g), %.0f%% of the rest at random and the best of each "
				"template; model %s\n",
				w->start->device, om->op, po->keep, po->compile_weight,
				100 * po->explore, om->source);
		else
			fprintf(stderr, "autotune: GPU %d: %s: no pruning, every variant compiled and "
				"timed: %s\n", w->start->device, om->op, om->source);
	}
	return 0;
}

/* The time since *mark into the startup line, with AUTOTUNE_PHASES=1. */
static void startup_step(strbuf *line, const char *what, double *mark)
{
	double now = phases_now_ms();
	strbuf_printf(line, " %s %.0f", what, now - *mark);
	*mark = now;
}

static int open_worker_timed(worker *w, strbuf *line, at_error *err);

static int open_worker(worker *w, at_error *err)
{
	strbuf line = { 0 };
	double start = phases_now_ms();
	int rc = open_worker_timed(w, &line, err);
	if (rc == 0 && phases_wanted())
		fprintf(stderr, "startup GPU %d:%s ms; %.0f ms in all\n", w->start->device, line.data,
			phases_now_ms() - start);
	strbuf_free(&line);
	return rc;
}

static int open_worker_timed(worker *w, strbuf *line, at_error *err)
{
	const worker_start *st = w->start;
	double mark = phases_now_ms();
	if (gpu_open(st->device, &w->gpu, err))
		return -1;
	startup_step(line, "gpu", &mark);
	w->gpu_open = 1;
	if (w->o->arch && w->o->arch != w->gpu.cc)
		return at_error_set(err, "--arch sm_%d does not match the GPU (%s is sm_%d)",
				    w->o->arch, w->gpu.info.name, w->gpu.cc);
	if (check_memory(w->p, &w->gpu, err))
		return -1;
	if (tdb_open(tdb_default_path(w->o->db_path), &w->db, err))
		return -1;
	kernel_cache_init(&w->cache, w->gpu.cc, compile_threads(w->o, st->nworkers), w->db);
	w->cache.interrupted = interrupt_caught;
	w->cache_open = 1;
	tune_ctx *ctx = &w->ctx;
	*ctx = (tune_ctx){ .plan = w->p, .gpu = &w->gpu, .timer = &w->b, .cache = &w->cache,
			   .db = w->db, .full_timing = w->o->full_timing,
			   .audit = w->o->audit, .compare = &w->compare,
			   .seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32),
			   .hooks = { hook_gpu, hook_cpu, hook_step, w },
			   .interrupted = interrupt_caught };
	startup_step(line, "db", &mark);
	if (gpu_timer_open(&w->b, &w->gpu, &w->p->cfg, err))
		return -1;
	w->timer_open = 1;
	startup_step(line, "timer", &mark);
	if (gpu_compare_open(&w->compare, w->gpu.cc, err))
		return -1;
	startup_step(line, "compare", &mark);
	if (baselines_open(&ctx->baselines, w->gpu.cc, err))
		return -1;
	startup_step(line, "baselines", &mark);
	int first = st->sweep_id == 0;
	if (first && st->slot == 0 && !baselines_cudnn_available(ctx->baselines))
		fprintf(stderr, "autotune: cuDNN baseline not timed: %s\n",
			baselines_cudnn_reason(ctx->baselines));
	if (tdb_gpu_id(w->db, &w->gpu.info, &ctx->gpu_id, err) || open_pruner(w, err))
		return -1;
	startup_step(line, "pruner", &mark);
	if (!first) {
		/* a restarted worker continues its predecessor's sweep */
		ctx->sweep_id = st->sweep_id;
		ctx->copy_gbps = st->copy_gbps;
		return 0;
	}
	size_t free_b = 0, total_b = 0;
	cudrv.cuMemGetInfo(&free_b, &total_b);
	size_t bytes = COPY_BENCH_BYTES < free_b / 4 ? COPY_BENCH_BYTES : free_b / 4;
	if (gpu_copy_gbps(&w->b, bytes, &ctx->copy_gbps, err))
		return -1;
	startup_step(line, "copy", &mark);
	fprintf(stderr, "autotune: GPU %d: %s (sm_%d, %d SMs), driver %d, NVRTC %s; "
		"device-to-device copy %.0f GB/s\n", st->device, w->gpu.info.name, w->gpu.cc,
		w->gpu.info.sm_count, w->gpu.driver_version, nvrtc_version_string(), ctx->copy_gbps);
	sweep_info info = { ctx->gpu_id, w->gpu.driver_version, nvrtc_version_string(),
			    AUTOTUNE_VERSION, w->p->cfg.path, w->p->cfg.text, ctx->copy_gbps };
	return tdb_sweep_begin(w->db, &info, &ctx->sweep_id, err);
}

static void close_worker(worker *w)
{
	baselines_close(w->ctx.baselines);
	gpu_compare_close(&w->compare);
	if (w->cache_open)
		kernel_cache_free(&w->cache);
	if (w->pruner_open)
		sweep_pruner_close(&w->pruner);
	if (w->timer_open)
		gpu_timer_close(&w->b);
	tdb_close(w->db);
	if (w->gpu_open)
		gpu_close(&w->gpu);
	free(w->excl);
}

static int summary_from_db(const winner_row *r, void *arg)
{
	shape_summary *sum = arg;
	if (r->template_name) {
		snprintf(sum->winner_template, sizeof sum->winner_template, "%s", r->template_name);
		snprintf(sum->winner_params, sizeof sum->winner_params, "%s", r->params);
		sum->time_us = r->time_us;
		sum->gbps = r->gbps;
		sum->pct_copy = r->pct_copy;
	}
	return 0;
}

static void describe(const shape_summary *sum, char *buf, size_t cap)
{
	char kept[64] = "";
	if (sum->enumerated > sum->variants)
		snprintf(kept, sizeof kept, " kept of %zu", sum->enumerated);
	if (sum->winner_template[0])
		snprintf(buf, cap, "%zu variants%s, %zu passed; %s %s: %.0f GB/s (%.1f%% of copy; "
			 "naive %.0f, cuDNN %.0f GB/s)", sum->variants, kept, sum->passed,
			 sum->winner_template, sum->winner_params, sum->gbps, sum->pct_copy,
			 sum->naive_gbps, sum->cudnn_gbps);
	else
		snprintf(buf, cap, "%zu variants%s, none passed (no template serves this shape, or "
			 "every variant failed its check)", sum->variants, kept);
	size_t len = strlen(buf);
	if (sum->audit_full_ratio > 0 && len < cap)
		snprintf(buf + len, cap - len, "; audit: %+.1f%% of full timing's best (%+.1f%% "
			 "head to head; the rounds had that best at %+.1f%%, %s)",
			 100 * (sum->audit_full_ratio - 1), 100 * (sum->audit_head_ratio - 1),
			 100 * (sum->audit_best_rounds_ratio - 1),
			 sum->audit_best_full ? "timed in full" : "first round only");
}

/* The totals since the last report. */
static worker_stats stats_delta(worker *w)
{
	worker_stats now = { w->cache.compiled, w->cache.from_db, w->cache.compile_ms,
			     w->ctx.bench_ms };
	worker_stats d = { now.compiled - w->reported.compiled, now.from_db - w->reported.from_db,
			   now.compile_ms - w->reported.compile_ms,
			   now.bench_ms - w->reported.bench_ms };
	w->reported = now;
	return d;
}

/* Tunes one shape (or finds it done) and reports it; -1 when this process
 * must end (it has sent why), -2 when Ctrl-C dropped the shape (the
 * supervisor knows: it was interrupted too, or it sent the SIGTERM). */
static int run_shape(worker *w, int index)
{
	const sweep_shape *s = &w->p->shapes[index];
	tune_ctx *ctx = &w->ctx;
	worker_msg m = worker_msg_make(WMSG_SHAPE_DONE);
	m.shape = index;
	at_error err = { { 0 } };
	shape_key key = { ctx->gpu_id, s->op, s->dtype, s->M, s->N };
	int done = 0;
	int rc = tdb_shape_done(w->db, ctx->gpu_id, s->op, s->dtype, s->M, s->N, &done, &err);
	if (rc == 0 && done) {
		m.earlier = 1;
		rc = tdb_shape_winner(w->db, &key, summary_from_db, &m.summary, &err) < 0 ? -1 : 0;
		snprintf(m.text, sizeof m.text, "already tuned, skipped");
	} else if (rc == 0) {
		ctx->excluded = w->excl;
		ctx->nexcluded = w->nexcl;
		ctx->current_variant = -1;
		rc = tune_shape(ctx, s, &m.summary, &err);
		describe(&m.summary, m.text, sizeof m.text);
	}
	w->nexcl = 0;
	if (rc == 0) {
		m.stats = stats_delta(w);
		send(w, &m);
		return 0;
	}
	if (interrupt_caught() && cudrv.cuCtxSynchronize() == CUDA_SUCCESS)
		return -2;
	/* a dead context shows in every later call: then the variant is to blame */
	worker_msg f = worker_msg_make(cudrv.cuCtxSynchronize() != CUDA_SUCCESS ? WMSG_CONTEXT_LOST
										: WMSG_FATAL);
	f.shape = index;
	f.variant = ctx->current_variant;
	snprintf(f.text, sizeof f.text, "%.1000s", err.msg);
	send(w, &f);
	return -1;
}

static void add_exclusion(worker *w, const worker_msg *m)
{
	if (w->nexcl == w->excl_cap) {
		w->excl_cap = w->excl_cap ? 2 * w->excl_cap : 8;
		tune_exclusion *grown = realloc(w->excl, w->excl_cap * sizeof *grown);
		if (!grown)
			abort();
		w->excl = grown;
	}
	tune_exclusion *e = &w->excl[w->nexcl++];
	e->variant = m->variant;
	snprintf(e->reason, sizeof e->reason, "%.500s", m->text);
}

int sweep_worker_main(void *arg, const worker_start *start, int in, int out)
{
	/* never outlive the supervisor (kill -9 of the sweep ends its workers) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	const sweep_worker_arg *a = arg;
	worker w = { .start = start, .o = a->options, .p = a->plan, .in = in, .out = out,
		     .last_variant = -2 };
	at_error err = { { 0 } };
	if (open_worker(&w, &err)) {
		worker_msg f = worker_msg_make(WMSG_FATAL);
		snprintf(f.text, sizeof f.text, "%.1000s", err.msg);
		send(&w, &f);
		close_worker(&w);
		return 1;
	}
	worker_msg ready = worker_msg_make(WMSG_READY);
	ready.sweep_id = w.ctx.sweep_id;
	ready.copy_gbps = w.ctx.copy_gbps;
	send(&w, &ready);
	int rc = 0;
	worker_msg m;
	while (rc == 0 && !interrupt_caught() && worker_msg_read(in, &m) == 0 &&
	       m.type != WMSG_QUIT) {
		if (m.type == WMSG_EXCLUDE)
			add_exclusion(&w, &m);
		else if (m.type == WMSG_TUNE)
			rc = run_shape(&w, m.shape);
	}
	/* after a lost context, tearing down would only report more errors */
	if (rc == -1)
		_exit(1);
	/* interrupted or told to quit: closing the cache finishes the kernels
	 * being compiled and stores every one compiled */
	close_worker(&w);
	return interrupt_caught() ? interrupt_status(interrupt_caught()) : 0;
}

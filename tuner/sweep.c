/* The sweep driver: see sweep.h. */
#include "tuner/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "gen/nvrtc_compile.h"
#include "tuner/baselines.h"
#include "tuner/gpu_compare.h"
#include "tuner/table.h"
#include "tuner/tune_shape.h"
#include "tuner/version.h"

#define COPY_BENCH_BYTES (1ull << 30)

static int compile_threads(const sweep_options *o)
{
	if (o->threads > 0)
		return o->threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static void shape_label(const sweep_shape *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s M=%lld N=%lld", s->op, at_dtype_name(s->dtype), s->M, s->N);
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
			shape_label(s, label, sizeof label);
			return at_error_set(err, "%s:%d: shape %s needs %.1f GiB of GPU memory for "
					    "input, output and reference; %s has %.1f GiB free",
					    p->cfg.path, s->spec->line, label, need / (1 << 30),
					    gpu->info.name, (double)free_b / (1 << 30));
		}
	}
	return 0;
}

typedef struct summary_row {
	char label[128];
	shape_summary sum;
	int earlier; /* tuned by an earlier sweep */
} summary_row;

static int summary_from_db(const winner_row *w, void *ctx)
{
	shape_summary *sum = ctx;
	if (w->template_name) {
		snprintf(sum->winner_template, sizeof sum->winner_template, "%s", w->template_name);
		snprintf(sum->winner_params, sizeof sum->winner_params, "%s", w->params);
		sum->time_us = w->time_us;
		sum->gbps = w->gbps;
		sum->pct_copy = w->pct_copy;
	}
	return 0;
}

static void print_summary(const sweep_plan *p, const summary_row *rows, double copy_gbps)
{
	static const char *const header[] = { "op", "dtype", "M", "N", "winner", "params",
					      "time_us", "GB/s", "%copy", "%same-size copy", "naive GB/s",
					      "cuDNN GB/s", NULL };
	table t;
	table_init(&t, header);
	for (size_t i = 0; i < p->nshapes; i++) {
		const sweep_shape *s = &p->shapes[i];
		const shape_summary *sum = &rows[i].sum;
		char m[32], n[32], us[32] = "", gbps[32] = "", pct[32] = "", naive[32] = "",
			cudnn[32] = "", same[32] = "";
		snprintf(m, sizeof m, "%lld", s->M);
		snprintf(n, sizeof n, "%lld", s->N);
		if (sum->winner_template[0]) {
			snprintf(us, sizeof us, "%.2f", sum->time_us);
			snprintf(gbps, sizeof gbps, "%.0f", sum->gbps);
			snprintf(pct, sizeof pct, "%.1f", sum->pct_copy);
		}
		if (sum->copy_gbps > 0 && sum->winner_template[0])
			snprintf(same, sizeof same, "%.1f", 100.0 * sum->gbps / sum->copy_gbps);
		if (sum->naive_gbps > 0)
			snprintf(naive, sizeof naive, "%.0f", sum->naive_gbps);
		if (sum->cudnn_gbps > 0)
			snprintf(cudnn, sizeof cudnn, "%.0f", sum->cudnn_gbps);
		const char *cells[] = { s->op, at_dtype_name(s->dtype), m, n,
					sum->winner_template[0] ? sum->winner_template : "(none passed)",
					sum->winner_params, us, gbps, pct, same, naive, cudnn };
		table_add(&t, cells);
	}
	printf("\nWinners (device-to-device copy: %.0f GB/s):\n", copy_gbps);
	table_print(&t, stdout, TABLE_TEXT, NULL);
	table_free(&t);
}

static int run_shapes(tune_ctx *ctx, const sweep_plan *p, summary_row *rows, at_error *err)
{
	progress_init(ctx->progress, p->nshapes);
	for (size_t i = 0; i < p->nshapes; i++) {
		const sweep_shape *s = &p->shapes[i];
		shape_label(s, rows[i].label, sizeof rows[i].label);
		progress_begin_shape(ctx->progress, rows[i].label);
		shape_key key = { ctx->gpu_id, s->op, s->dtype, s->M, s->N };
		int done = 0;
		if (tdb_shape_done(ctx->db, ctx->gpu_id, s->op, s->dtype, s->M, s->N, &done, err))
			return -1;
		if (done) {
			rows[i].earlier = 1;
			if (tdb_shape_winner(ctx->db, &key, summary_from_db, &rows[i].sum, err) < 0)
				return -1;
			progress_end_shape(ctx->progress, "already tuned, skipped");
			continue;
		}
		if (tune_shape(ctx, s, &rows[i].sum, err)) {
			progress_finish(ctx->progress);
			return -1;
		}
		char outcome[512];
		const shape_summary *sum = &rows[i].sum;
		if (sum->winner_template[0])
			snprintf(outcome, sizeof outcome, "%zu variants, %zu passed; %s %s: %.0f GB/s "
				 "(%.1f%% of copy; naive %.0f, cuDNN %.0f GB/s)",
				 sum->variants, sum->passed, sum->winner_template, sum->winner_params,
				 sum->gbps, sum->pct_copy, sum->naive_gbps, sum->cudnn_gbps);
		else
			snprintf(outcome, sizeof outcome, "%zu variants, none passed (no template serves "
				 "this shape, or every variant failed its check)", sum->variants);
		progress_end_shape(ctx->progress, outcome);
	}
	progress_finish(ctx->progress);
	return 0;
}

static int sweep_on_gpu(const sweep_options *o, sweep_plan *p, gpu_device *gpu, at_error *err)
{
	if (o->arch && o->arch != gpu->cc)
		return at_error_set(err, "--arch sm_%d does not match the GPU (%s is sm_%d)",
				    o->arch, gpu->info.name, gpu->cc);
	if (check_memory(p, gpu, err))
		return -1;
	const char *db_path = tdb_default_path(o->db_path);
	tdb *db;
	if (tdb_open(db_path, &db, err))
		return -1;
	bench b;
	kernel_cache cache;
	kernel_cache_init(&cache, gpu->cc, compile_threads(o), db);
	progress prog;
	tune_ctx ctx = { .plan = p, .gpu = gpu, .bench = &b, .cache = &cache, .db = db,
			 .progress = &prog, .seed = (unsigned long long)time(NULL),
			 .full_timing = o->full_timing };
	summary_row *rows = xcalloc(p->nshapes ? p->nshapes : 1, sizeof *rows);
	int rc = bench_open(&b, gpu, p->cfg.warmup, p->cfg.repetitions, err);
	gpu_compare compare = { 0 };
	ctx.compare = &compare;
	if (rc == 0)
		rc = gpu_compare_open(&compare, gpu->cc, err);
	if (rc == 0)
		rc = baselines_open(&ctx.baselines, gpu->cc, err);
	if (rc == 0 && !baselines_cudnn_available(ctx.baselines))
		fprintf(stderr, "autotune: cuDNN baseline not timed: %s\n",
			baselines_cudnn_reason(ctx.baselines));
	if (rc == 0)
		rc = tdb_gpu_id(db, &gpu->info, &ctx.gpu_id, err);
	if (rc == 0) {
		size_t free_b = 0, total_b = 0;
		cudrv.cuMemGetInfo(&free_b, &total_b);
		size_t bytes = COPY_BENCH_BYTES < free_b / 4 ? COPY_BENCH_BYTES : free_b / 4;
		rc = bench_copy_gbps(&b, bytes, &ctx.copy_gbps, err);
	}
	if (rc == 0) {
		fprintf(stderr, "autotune: %s (sm_%d, %d SMs), driver %d, NVRTC %s; "
			"device-to-device copy %.0f GB/s\n", gpu->info.name, gpu->cc,
			gpu->info.sm_count, gpu->driver_version, nvrtc_version_string(),
			ctx.copy_gbps);
		sweep_info info = { ctx.gpu_id, gpu->driver_version, nvrtc_version_string(),
				    AUTOTUNE_VERSION, p->cfg.path, p->cfg.text, ctx.copy_gbps };
		rc = tdb_sweep_begin(db, &info, &ctx.sweep_id, err);
	}
	if (rc == 0)
		rc = run_shapes(&ctx, p, rows, err);
	if (rc == 0)
		rc = tdb_sweep_finish(db, ctx.sweep_id, cache.compile_ms / 1e3, ctx.bench_ms / 1e3, err);
	if (rc == 0) {
		print_summary(p, rows, ctx.copy_gbps);
		printf("%%copy: of the sweep's 1 GiB device-to-device copy; %%same-size copy: of a "
		       "16-byte copy kernel moving the shape's bytes.\n");
		printf("Compiled %zu kernels in %.1f s (%zu more from the compile cache); checked and "
		       "timed in %.1f s. Database: %s\n",
		       cache.compiled, cache.compile_ms / 1e3, cache.from_db, ctx.bench_ms / 1e3, db_path);
	}
	free(rows);
	baselines_close(ctx.baselines);
	gpu_compare_close(&compare);
	kernel_cache_free(&cache);
	bench_close(&b);
	tdb_close(db);
	return rc;
}

/* Loads the plan and keeps this shard's shapes. */
static int load_plan(const sweep_options *o, sweep_plan *p, at_error *err)
{
	if (plan_load(p, o->config_path, o->templates_dir, err))
		return -1;
	if (o->shard.count > 1) {
		size_t all = p->nshapes;
		p->nshapes = shard_filter(p->shapes, p->nshapes, &o->shard);
		fprintf(stderr, "autotune: shard %d/%d: %zu of %zu shapes\n", o->shard.index,
			o->shard.count, p->nshapes, all);
	}
	return 0;
}

int sweep_run(const sweep_options *o, at_error *err)
{
	sweep_plan p;
	if (load_plan(o, &p, err))
		return -1;
	gpu_device gpu;
	int rc = gpu_open(o->device, &gpu, err);
	if (rc == 0)
		rc = sweep_on_gpu(o, &p, &gpu, err);
	gpu_close(&gpu);
	plan_free(&p);
	return rc;
}

int sweep_compile_only(const sweep_options *o, at_error *err)
{
	sweep_plan p;
	if (load_plan(o, &p, err))
		return -1;
	int cc = o->arch ? o->arch : 90;
	tdb *db;
	if (tdb_open(tdb_default_path(o->db_path), &db, err)) {
		plan_free(&p);
		return -1;
	}
	kernel_cache cache;
	kernel_cache_init(&cache, cc, compile_threads(o), db);
	size_t variants = 0, failed = 0, errors = 0;
	int rc = 0;
	for (size_t i = 0; i < p.nshapes && rc == 0; i++) {
		const sweep_shape *s = &p.shapes[i];
		shape_env env = nominal_shape_env(cc, s->M, s->N, at_dtype_size(s->dtype));
		variant *vs;
		size_t n;
		if (plan_shape_variants(&p, s, &env, &vs, &n, err)) {
			rc = -1;
			break;
		}
		char **sources = plan_sources(vs, n, err);
		if (!sources) {
			free(vs);
			rc = -1;
			break;
		}
		kernel_entry **entries = xcalloc(n ? n : 1, sizeof *entries);
		if (kernel_cache_get(&cache, sources, n, entries, err))
			rc = -1;
		variants += n;
		plan_free_sources(sources, n);
		free(entries);
		free(vs);
	}
	/* Report each distinct kernel once, failures with their logs. */
	for (size_t b = 0; b < cache.nbuckets && rc == 0; b++) {
		for (kernel_entry *e = cache.buckets[b]; e; e = e->next) {
			if (e->status == COMPILE_OK)
				continue;
			if (e->status == COMPILE_FAILED)
				failed++;
			else
				errors++;
			/* the source's first two lines name the template and params */
			const char *second = strchr(e->source, '\n');
			int len = second ? (int)(strcspn(second + 1, "\n") + (size_t)(second - e->source) + 1)
					 : (int)strlen(e->source);
			printf("FAILED:\n%.*s\n%s\n", len, e->source,
			       e->status == COMPILE_FAILED ? e->k.log : e->error);
		}
	}
	if (rc == 0)
		printf("compile-only for sm_%d: %zu shapes, %zu variants, %zu distinct kernels: "
		       "%zu compiled, %zu failed; %zu compiled now (%.1f s with %d threads), %zu "
		       "from the compile cache in %s\n",
		       cc, p.nshapes, variants, cache.count, cache.count - failed - errors,
		       failed + errors, cache.compiled, cache.compile_ms / 1e3, cache.nthreads,
		       cache.from_db, tdb_default_path(o->db_path));
	kernel_cache_free(&cache);
	tdb_close(db);
	plan_free(&p);
	if (rc)
		return rc;
	return failed + errors ? 1 : 0;
}

/* The sweep driver: see sweep.h. */
#include "tuner/sweep/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "cuda/nvrtc_compile.h"
#include "tuner/sweep/baselines.h"
#include "tuner/check/gpu_compare.h"
#include "tuner/sweep/interrupt.h"
#include "tuner/sweep/progress.h"
#include "tuner/sweep/prune_model.h"
#include "tuner/table.h"
#include "tuner/sweep/sweep_models.h"
#include "tuner/sweep/supervisor.h"
#include "tuner/sweep/sweep_worker.h"
#include "tuner/sweep/tune_shape.h"
#include "tuner/sweep/variant_kernels.h"

/* A shape whose worker dies more often than this is abandoned. */
#define SWEEP_MAX_DEATHS 8

static int compile_threads(const sweep_options *o)
{
	if (o->threads > 0)
		return o->threads;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static void print_summary(const sweep_plan *p, const supervisor_report *r)
{
	static const char *const header[] = { "op", "dtype", "M", "N", "winner", "params",
					      "time_us", "GB/s", "%copy", "%same-size copy", "naive GB/s",
					      "cuDNN GB/s", NULL };
	table t;
	table_init(&t, header);
	for (size_t i = 0; i < p->nshapes; i++) {
		const sweep_shape *s = &p->shapes[i];
		const shape_outcome *out = &r->shapes[i];
		const shape_summary *sum = &out->summary;
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
		const char *winner = sum->winner_template[0]		    ? sum->winner_template
				     : out->state == SHAPE_ABANDONED	    ? "(abandoned)"
				     : out->state == SHAPE_PENDING	    ? "(not tuned)"
									    : "(none passed)";
		const char *cells[] = { s->op, at_dtype_name(s->dtype), m, n, winner,
					sum->winner_params, us, gbps, pct, same, naive, cudnn };
		table_add(&t, cells);
	}
	printf("\nWinners (device-to-device copy:");
	for (int i = 0; r->slots && i < r->nslots; i++)
		printf("%s%.0f GB/s on GPU %d", i ? "; " : " ", r->slots[i].copy_gbps,
		       r->slots[i].device);
	printf("):\n");
	table_print(&t, stdout, TABLE_TEXT, NULL);
	table_free(&t);
}

/* The variants the model kept of those enumerated, over the shapes tuned
 * now (tuner/sweep/prune_shape.h). */
static void print_pruned(const sweep_plan *p, const supervisor_report *r)
{
	size_t kept = 0, all = 0, shapes = 0;
	for (size_t i = 0; i < p->nshapes; i++) {
		const shape_summary *s = &r->shapes[i].summary;
		if (!s->enumerated)
			continue;
		shapes++;
		kept += s->variants;
		all += s->enumerated;
	}
	if (all > kept)
		printf("Pruned: %zu of %zu variants kept (%.1f%%) at the %zu shapes tuned now.\n", kept,
		       all, 100.0 * (double)kept / (double)all, shapes);
}

/* --audit: how often the rounds' winner is within 2% of full timing's best. */
static void print_audit(const sweep_plan *p, const supervisor_report *r)
{
	size_t n = 0, full_ok = 0, head_ok = 0;
	double worst = 0;
	size_t worst_i = 0;
	for (size_t i = 0; i < p->nshapes; i++) {
		const shape_summary *s = &r->shapes[i].summary;
		if (s->audit_full_ratio <= 0)
			continue;
		n++;
		full_ok += s->audit_full_ratio <= 1.02;
		head_ok += s->audit_head_ratio <= 1.02;
		if (s->audit_head_ratio > worst) {
			worst = s->audit_head_ratio;
			worst_i = i;
		}
	}
	if (!n)
		return;
	char label[128];
	sweep_shape_label(&p->shapes[worst_i], label, sizeof label);
	printf("Audit: the rounds' winner is within 2%% of the best variant of full timing on "
	       "%zu of %zu shapes (%.1f%%) timed head to head, %zu (%.1f%%) by full-timing "
	       "medians; worst %.1f%% slower (%s).\n", head_ok, n, 100.0 * head_ok / n, full_ok,
	       100.0 * full_ok / n, 100.0 * (worst - 1), label);
}

/* Closes each device's sweep row with its compile and benchmark time (the
 * workers cannot: a restarted one does not know its predecessors' times). */
static int finish_sweeps(const char *db_path, const supervisor_report *r, at_error *err)
{
	tdb *db;
	if (tdb_open(db_path, &db, err))
		return -1;
	int rc = 0;
	for (int i = 0; i < r->nslots && rc == 0; i++)
		if (r->slots[i].sweep_id)
			rc = tdb_sweep_finish(db, r->slots[i].sweep_id,
					      r->slots[i].stats.compile_ms / 1e3,
					      r->slots[i].stats.bench_ms / 1e3, err);
	tdb_close(db);
	return rc;
}

static int sweep_on_gpus(const sweep_options *o, sweep_plan *p, at_error *err)
{
	int single = o->device;
	const int *devices = o->ndevices ? o->devices : &single;
	int ndevices = o->ndevices ? o->ndevices : 1;
	char **labels = xcalloc(p->nshapes ? p->nshapes : 1, sizeof *labels);
	for (size_t i = 0; i < p->nshapes; i++) {
		labels[i] = xmalloc(128);
		sweep_shape_label(&p->shapes[i], labels[i], 128);
	}
	sweep_worker_arg warg = { o, p };
	supervisor_options so = { .devices = devices, .ndevices = ndevices, .nshapes = p->nshapes,
				  .labels = (const char *const *)labels,
				  .watchdog_ms = o->watchdog_ms, .max_deaths = SWEEP_MAX_DEATHS,
				  .worker_main = sweep_worker_main, .worker_arg = &warg };
	supervisor_report r;
	int rc = supervise(&so, &r, err);
	const char *db_path = tdb_default_path(o->db_path);
	int started = 0;
	for (int i = 0; i < r.nslots; i++)
		started |= r.slots[i].sweep_id != 0;
	at_error ferr = { { 0 } };
	if (started && finish_sweeps(db_path, &r, &ferr) && (rc == 0 || r.interrupted))
		rc = at_error_set(err, "%s", ferr.msg);
	else if (r.interrupted) {
		size_t tuned = 0;
		for (size_t i = 0; i < p->nshapes; i++)
			tuned += r.shapes[i].state == SHAPE_TUNED;
		fprintf(stderr, "autotune: interrupted: %zu of %zu shapes done; the kernels compiled "
			"so far are kept in %s's compile cache; run the same command to resume\n",
			tuned, p->nshapes, db_path);
		rc = interrupt_status(r.interrupted);
	}
	if (rc == 0) {
		print_summary(p, &r);
		printf("%%copy: of the sweep's 1 GiB device-to-device copy; %%same-size copy: of a "
		       "16-byte copy kernel moving the shape's bytes.\n");
		printf("Compiled %zu kernels in %.1f s (%zu more from the compile cache); checked and "
		       "timed in %.1f s. Database: %s\n", r.stats.compiled, r.stats.compile_ms / 1e3,
		       r.stats.from_db, r.stats.bench_ms / 1e3, db_path);
		print_pruned(p, &r);
		print_audit(p, &r);
		if (r.restarts)
			printf("%zu worker processes were restarted after a variant faulted or hung; "
			       "those variants are stored as failed with the reason.\n", r.restarts);
		if (r.abandoned)
			rc = at_error_set(err, "%zu shapes were abandoned (see above); run the sweep "
					  "again to retry them", r.abandoned);
	}
	supervisor_report_free(&r);
	for (size_t i = 0; i < p->nshapes; i++)
		free(labels[i]);
	free(labels);
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
	sweep_options with_cutoff = *o;
	with_cutoff.prune_before = prune_model_cutoff(tdb_default_path(o->db_path));
	int rc = sweep_on_gpus(&with_cutoff, &p, err);
	/* a shard saw part of the config: its model waits for the merge */
	if (rc == 0 && !o->no_model && o->shard.count <= 1)
		rc = sweep_store_models(tdb_default_path(o->db_path), &p, with_cutoff.prune_before,
					err);
	else if (rc == 0 && !o->no_model)
		printf("Model not fitted for a shard: `autotune db merge` fits it on the merged "
		       "results.\n");
	plan_free(&p);
	return rc;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Compile-only progress: the kernels compiled of those queued, the time
 * left, on the bar (at most ten redraws a second). */
typedef struct compile_progress {
	progress bar;
	kernel_cache *cache;
	double last_draw;
	compile_counts n;
} compile_progress;

static void kernels_text(compile_progress *cp, char *buf, size_t cap)
{
	kernel_cache_counts(cp->cache, &cp->n);
	const compile_counts *n = &cp->n;
	if (n->compiled + n->pending == 0)
		snprintf(buf, cap, "every kernel from the compile cache");
	else
		progress_kernels_text(n->compiled, n->running, n->compiled + n->pending,
				      n->compiling_s, buf, cap);
}

static void on_compiled(void *arg)
{
	compile_progress *cp = arg;
	double t = now_s();
	if (t - cp->last_draw < 0.1)
		return;
	cp->last_draw = t;
	char text[160];
	kernels_text(cp, text, sizeof text);
	size_t all = cp->n.compiled + cp->n.pending;
	progress_status(&cp->bar, all ? (double)cp->n.compiled / all : 1, text);
}

/* Ctrl-C: the pool finishes what it is compiling, everything compiled is
 * stored, and the sweep says so; returns the exit status (130), or -1 when
 * the database fails. */
static int compile_interrupted(kernel_cache *cache, const char *db_path, size_t done,
			       size_t nshapes, at_error *err)
{
	fprintf(stderr, "autotune: interrupted: finishing the kernels being compiled, to keep "
		"them (Ctrl-C again to stop at once)\n");
	if (kernel_cache_stop(cache, err))
		return -1;
	fprintf(stderr, "autotune: interrupted: %zu of %zu shapes done; the %zu kernels compiled "
		"so far are kept in %s's compile cache; run the same command to resume\n", done,
		nshapes, cache->compiled, db_path);
	return interrupt_status(interrupt_caught());
}

int sweep_compile_only(const sweep_options *o, at_error *err)
{
	sweep_plan p;
	if (load_plan(o, &p, err))
		return -1;
	int cc = o->arch ? o->arch : 90;
	tdb *db;
	/* without NVRTC, one message rather than one per kernel, and no database */
	if (nvrtc_load(err) || tdb_open(tdb_default_path(o->db_path), &db, err)) {
		plan_free(&p);
		return -1;
	}
	kernel_cache cache;
	kernel_cache_init(&cache, cc, compile_threads(o), db);
	interrupt_catch();
	cache.interrupted = interrupt_caught;
	compile_progress cp = { .cache = &cache };
	progress_init(&cp.bar, p.nshapes);
	cache.progress = on_compiled;
	cache.progress_arg = &cp;
	size_t variants = 0, failed = 0, errors = 0;
	int rc = 0;
	/* Every shape's kernels are queued first (the pool compiles meanwhile),
	 * so that the count to compile, and the time left, is known; then the
	 * shapes are waited for in turn. */
	kernel_entry ***entries = xcalloc(p.nshapes ? p.nshapes : 1, sizeof *entries);
	size_t *counts = xcalloc(p.nshapes ? p.nshapes : 1, sizeof *counts);
	for (size_t i = 0; i < p.nshapes && rc == 0 && !interrupt_caught(); i++) {
		const sweep_shape *s = &p.shapes[i];
		char label[128];
		sweep_shape_label(s, label, sizeof label);
		progress_begin_shape(&cp.bar, label);
		progress_status(&cp.bar, 0, "queueing its variants");
		tr_env env = nominal_shape_env(cc, s->M, s->N, at_dtype_size(s->dtype));
		variant *vs;
		size_t n;
		if (plan_shape_variants(&p, s, &env, &vs, &n, err)) {
			rc = -1;
			break;
		}
		entries[i] = xcalloc(n ? n : 1, sizeof **entries);
		counts[i] = n;
		if (kernel_cache_queue_variants(&cache, vs, n, entries[i], err))
			rc = -1;
		variants += n;
		free(vs);
	}
	size_t done = 0;
	for (size_t i = 0; i < p.nshapes && rc == 0 && !interrupt_caught(); i++) {
		char label[128];
		sweep_shape_label(&p.shapes[i], label, sizeof label);
		progress_begin_shape(&cp.bar, label);
		int waited = kernel_cache_wait(&cache, entries[i], counts[i], err);
		if (waited < 0)
			rc = -1;
		if (waited)
			break;
		done++;
		char text[160], outcome[256];
		kernels_text(&cp, text, sizeof text);
		snprintf(outcome, sizeof outcome, "%zu variants; %s", counts[i], text);
		progress_end_shape(&cp.bar, outcome);
	}
	progress_finish(&cp.bar);
	cache.progress = NULL;
	for (size_t i = 0; i < p.nshapes; i++)
		free(entries[i]);
	free(entries);
	free(counts);
	if (rc == 0 && interrupt_caught())
		rc = compile_interrupted(&cache, tdb_default_path(o->db_path), done, p.nshapes, err);
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
	interrupt_release();
	tdb_close(db);
	plan_free(&p);
	if (rc)
		return rc;
	return failed + errors ? 1 : 0;
}

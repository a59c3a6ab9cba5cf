/* Tests that atd_query says what atd_softmax would launch, without a GPU.
 * Both go through one decision (dispatch/runtime/decide.h); atd_softmax's loader
 * is replaced here by a test double that records what it is asked to load
 * or compile and grants it (or fails it, when told to). Over a grid of
 * shapes, dtypes and GPUs, against the example sweep's database, the
 * library's seeds and tuner-written fixtures, the request the launch path
 * makes last (the one that runs) must be the kernel atd_query_gpu names.
 * Then the launch path's fallbacks, and what a dry run must never do. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/runtime/builtin_kernels.h"
#include "dispatch/runtime/decide.h"
#include "dispatch/runtime/described_gpu.h"
#include "dispatch/runtime/jit_tuned.h"
#include "dispatch/policy/template_table.h"
#include "tests/test_dispatch_fixture.h"

static void setup(void)
{
	tmp_setup();
	/* no user's cache of kernels tuned online, no mode from outside */
	setenv("ATD_JIT_CACHE", tmp_path("jit.db"), 1);
	unsetenv("ATD_JIT");
	unsetenv("ATD_TUNE");
}

TestSuite(dispatch_decide, .init = setup, .fini = tmp_teardown, .timeout = 120);

#define EXAMPLE_DB "results/example/h100-default.db"
#define SXM_NAME "NVIDIA H100 80GB HBM3"
static const atd_gpu sxm = { SXM_NAME, 9, 0, 132, 0 };
static const atd_gpu pcie = { "NVIDIA H100 PCIe", 9, 0, 114, 0 };
static const atd_gpu a100 = { "NVIDIA A100-SXM4-80GB", 8, 0, 108, 0 };

/* The test double: grants or fails each request, and keeps the last one
 * granted (the kernel that would run) as text. */
typedef struct fake {
	atdi_loader loader;
	atd_status stored, builtin, rules, tune; /* what each kind of request gets */
	int poll;                                /* every background compile's state */
	atdi_tune_state tuned_later;             /* the background tuning's state */
	int tune_leaves;                         /* tuning leaves candidates compiling */
	int requests, tunings, asks;
	char granted[1400];
} fake;

/* What a granted request says: the same text expect_text makes of a
 * choice. */
static void say(fake *f, atd_status s, const char *text)
{
	f->requests++;
	if (s == ATD_OK)
		snprintf(f->granted, sizeof f->granted, "%s", text);
}

static atd_status fake_stored(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			      const atdi_entry *e, int op, at_dtype dtype, const launch_geometry *g,
			      long long M, atdi_resolved *out, char *why, size_t cap)
{
	(void)h, (void)ci, (void)M;
	fake *f = l->user;
	char text[1400];
	const builtin_kernel *b = builtin_kernel_for(op, dtype);
	if (e)
		snprintf(text, sizeof text, "stored %s %s (tuned at %lld x %lld)", e->template_name,
			 e->params, e->M, e->N);
	else
		snprintf(text, sizeof text, "built-in %s %s", b->template_name, b->params);
	atd_status s = e ? f->stored : f->builtin;
	say(f, s, text);
	snprintf(why, cap, "the test double fails it");
	out->geom = *g;
	return s;
}

static atd_status fake_rules(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			     const atdi_jit_job *job, const launch_geometry *g, long long M,
			     atdi_resolved *out, char *why, size_t cap)
{
	(void)h, (void)ci, (void)M;
	fake *f = l->user;
	char params[1024], text[1400];
	atdi_params_text(job->rules, job->values, params, sizeof params);
	snprintf(text, sizeof text, "compiled %s %s for sm_%d", job->rules->name, params, job->arch);
	say(f, f->rules, text);
	snprintf(why, cap, "the test double fails it");
	out->geom = *g;
	return f->rules;
}

static int fake_poll(const atdi_loader *l, atd_handle *h, const atdi_jit_job *job)
{
	(void)h, (void)job;
	return ((fake *)l->user)->poll;
}

/* What tuning "finds": the nearest winner's variant, in 1.5 us. */
static int nearest_variant(atd_handle *h, const atdi_ctx_info *ci, int op, at_dtype dtype,
			   long long M, long long N, atdi_plan *best, double *us)
{
	atdi_env env = atdi_ctx_env(ci, dtype, M, N);
	*us = 1.5;
	return atdi_plan_candidates(&h->table, tr_templates, tr_ntemplates, &ci->gpu, op, &env,
				    dtype, best, 1) == 1;
}

/* Tuning "times" the candidates and finds the nearest winner's fastest. */
static atd_status fake_tune(const atdi_loader *l, atd_handle *h, const atdi_ctx_info *ci,
			    int op, at_dtype dtype, long long M, long long N, atdi_plan *best,
			    double *us, int *pending, char *why, size_t cap)
{
	fake *f = l->user;
	f->tunings++;
	*pending = f->tune_leaves;
	snprintf(why, cap, "the test double fails it");
	return f->tune == ATD_OK && nearest_variant(h, ci, op, dtype, M, N, best, us)
		       ? ATD_OK
		       : ATD_ERR_NO_KERNEL;
}

/* Background tuning's worker, as the double: PENDING until told DONE (then
 * the nearest winner's variant, as fake_tune) or FAILED. */
static atdi_tune_state fake_tune_later(const atdi_loader *l, atd_handle *h,
				       const atdi_ctx_info *ci, int op, at_dtype dtype, long long M,
				       long long N, atdi_plan *best, double *us, char *why,
				       size_t cap)
{
	fake *f = l->user;
	f->asks++;
	if (f->tuned_later == ATDI_TUNE_DONE && !nearest_variant(h, ci, op, dtype, M, N, best, us))
		return ATDI_TUNE_FAILED;
	snprintf(why, cap, "the test double's tuning failed");
	return f->tuned_later;
}

/* A double that grants everything and finds every compile done. */
static void fake_init(fake *f)
{
	memset(f, 0, sizeof *f);
	f->loader = (atdi_loader){ fake_stored, fake_rules, fake_poll, fake_tune, fake_tune_later, f };
	f->poll = 1;
}

/* The launch path's decision through the double, for a described GPU. */
static atd_status launch(atd_handle *h, fake *f, const atd_gpu *gpu, at_dtype dt, long long M,
			 long long N, atdi_resolved *r, atdi_notes *notes)
{
	atdi_ctx_info ci;
	atdi_described_ctx(h, gpu, &ci);
	f->granted[0] = '\0';
	pthread_mutex_lock(&h->slow);
	atd_status s = atdi_decide(h, &ci, ATDI_SOFTMAX, dt, M, N, &f->loader, r, notes);
	pthread_mutex_unlock(&h->slow);
	return s;
}

/* The request that runs c's kernel, as the double words it. */
static void expect_text(const atd_choice *c, const atd_gpu *gpu, char *buf, size_t cap)
{
	switch (c->level) {
	case ATD_LEVEL_BUILTIN:
		snprintf(buf, cap, "built-in %s %s", c->template_name, c->params);
		break;
	case ATD_LEVEL_DERIVED:
	case ATD_LEVEL_PREDICTED:
	case ATD_LEVEL_TUNED:
		snprintf(buf, cap, "compiled %s %s for sm_%d%d", c->template_name, c->params,
			 gpu->cc_major, gpu->cc_minor);
		break;
	default:
		snprintf(buf, cap, "stored %s %s (tuned at %lld x %lld)", c->template_name,
			 c->params, (long long)c->tuned_M, (long long)c->tuned_N);
	}
}

static const long long grid_M[] = { 1, 8, 100, 4096, 65536 };
static const long long grid_N[] = { 1, 32, 77, 100, 1000, 1001, 1024, 3000, 4096, 5000, 12001,
				    50000, 262144, 1048576 };

/* Over the grid, for every GPU and dtype: query's choice is what the
 * launch path would run. Counts the shapes served at each level. */
static void query_is_launch(atd_handle *h, const atd_gpu *const *gpus, int ngpus, int levels[8])
{
	memset(levels, 0, 8 * sizeof levels[0]);
	for (int g = 0; g < ngpus; g++)
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
	for (size_t i = 0; i < sizeof grid_M / sizeof grid_M[0]; i++)
	for (size_t j = 0; j < sizeof grid_N / sizeof grid_N[0]; j++) {
		long long M = grid_M[i], N = grid_N[j];
		atd_choice c;
		cr_assert_eq(atd_query_gpu(h, gpus[g], (atd_dtype)dt, M, N, &c), ATD_OK, "%s",
			     atd_errmsg(h));
		fake f;
		fake_init(&f);
		atdi_resolved r;
		atdi_notes notes = { 0 };
		cr_assert_eq(launch(h, &f, gpus[g], (at_dtype)dt, M, N, &r, &notes), ATD_OK);
		char want[1400];
		expect_text(&c, gpus[g], want, sizeof want);
		cr_assert_str_eq(f.granted, want, "%s %s M=%lld N=%lld", gpus[g]->name,
				 at_dtype_name((at_dtype)dt), M, N);
		cr_assert_eq(r.level, c.level, "%s %s M=%lld N=%lld: launched at %s, queried %s",
			     gpus[g]->name, at_dtype_name((at_dtype)dt), M, N,
			     atd_level_name(r.level), atd_level_name(c.level));
		levels[c.level]++;
	}
}

static atd_handle *open_db(const char *path, unsigned flags)
{
	atd_handle *h = NULL;
	cr_assert_eq(atd_open(path, flags, &h), ATD_OK, "%s", atd_errmsg(NULL));
	return h;
}

static const atd_gpu *const three_gpus[] = { &sxm, &pcie, &a100 };

Test(dispatch_decide, query_is_what_launches_at_every_shape_of_the_example_sweep)
{
	int levels[8];
	atd_handle *h = open_db(EXAMPLE_DB, 0);
	query_is_launch(h, three_gpus, 3, levels);
	cr_assert_gt(levels[ATD_LEVEL_EXACT], 0);
	cr_assert_gt(levels[ATD_LEVEL_DERIVED], 100);
	cr_assert_gt(levels[ATD_LEVEL_NEAREST], 0, "a winner whose params come out as tuned");
	cr_assert_gt(levels[ATD_LEVEL_SAME_ARCH], 0, "the PCIe board");
	cr_assert_gt(levels[ATD_LEVEL_BUILTIN], 0, "the A100");
	atd_close(h);
	/* without compiling: the stored levels alone */
	h = open_db(EXAMPLE_DB, ATD_OPEN_NO_JIT);
	query_is_launch(h, three_gpus, 3, levels);
	cr_assert_eq(levels[ATD_LEVEL_DERIVED], 0);
	cr_assert_gt(levels[ATD_LEVEL_NEAREST], 100);
	atd_close(h);
	/* in background mode, once every compile is done */
	h = open_db(EXAMPLE_DB, ATD_OPEN_JIT_BACKGROUND);
	query_is_launch(h, three_gpus, 3, levels);
	cr_assert_gt(levels[ATD_LEVEL_DERIVED], 100);
	atd_close(h);
}

Test(dispatch_decide, query_is_what_launches_from_the_seeds_of_a_handle_without_a_database)
{
	int levels[8];
	atd_handle *h = open_db(tmp_path("absent.db"), ATD_OPEN_FALLBACK);
	query_is_launch(h, three_gpus, 3, levels);
	/* the seed models choose on the sm_90 boards, the A100 derives from
	 * the seed winners: both compiled, neither has code */
	cr_assert_gt(levels[ATD_LEVEL_PREDICTED], 100, "the seed models on sm_90");
	cr_assert_gt(levels[ATD_LEVEL_DERIVED], 50, "the seed winners elsewhere");
	cr_assert_eq(levels[ATD_LEVEL_EXACT] + levels[ATD_LEVEL_NEAREST], 0, "seeds have no code");
	atd_close(h);
}

/* A tuner-written database: real templates on two H100 models, a
 * template the library has no rules for, a winner that holds rows only up
 * to its max_n, and a winner whose code was lost. */
static void write_fixture(const char *name)
{
	tdb *db = td_db_new(name);
	long long g1 = td_gpu(db, sxm.name, 9, 0, 132, 85017493504LL);
	long long g2 = td_gpu(db, pcie.name, 9, 0, 114, 85029158912LL);
	long long s1 = td_sweep(db, g1), s2 = td_sweep(db, g2);
	td_shape(db, s1, g1, "softmax", AT_F32, 4096, 1024, "softmax_block",
		 "threads=128 vec=4 elems_per_thread=8", 5, 1024);
	td_shape(db, s1, g1, "softmax", AT_F32, 4096, 3000, "softmax_block",
		 "threads=256 vec=4 elems_per_thread=12", 7, 3072);
	td_shape(db, s1, g1, "softmax", AT_F32, 64, 100000, "made_up", "x=1", 9, 0);
	td_shape(db, s1, g1, "softmax", AT_F16, 4096, 4096, "softmax_block",
		 "threads=256 vec=8 elems_per_thread=16", 6, 4096);
	td_shape(db, s2, g2, "softmax", AT_F32, 8, 262144, "made_up", "x=2", 30, 0);
	td_shape(db, s2, g2, "softmax", AT_BF16, 1, 1000, "softmax_block",
		 "threads=128 vec=8 elems_per_thread=8", 4, 1024);
	td_shape_nocode(db, s1, g1, AT_F32, 4096, 4096, "softmax_block");
	tdb_close(db);
}

Test(dispatch_decide, query_is_what_launches_over_a_tuner_written_database)
{
	write_fixture("t.db");
	int levels[8];
	atd_handle *h = open_db(tmp_path("t.db"), 0);
	query_is_launch(h, three_gpus, 3, levels);
	cr_assert_gt(levels[ATD_LEVEL_EXACT], 0);
	cr_assert_gt(levels[ATD_LEVEL_DERIVED], 0);
	cr_assert_gt(levels[ATD_LEVEL_SAME_ARCH], 0);
	atd_close(h);
	h = open_db(tmp_path("t.db"), ATD_OPEN_NO_JIT);
	query_is_launch(h, three_gpus, 3, levels);
	cr_assert_gt(levels[ATD_LEVEL_NEAREST], 0);
	atd_close(h);
}

Test(dispatch_decide, a_dry_run_compiles_loads_queues_caches_and_warns_nothing)
{
	write_fixture("t.db");
	unsigned modes[] = { 0, ATD_OPEN_JIT_BACKGROUND, ATD_OPEN_TUNE };
	for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
		atd_handle *h = open_db(tmp_path("t.db"), modes[m]);
		for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
			for (size_t j = 0; j < sizeof grid_N / sizeof grid_N[0]; j++) {
				atd_choice c;
				cr_assert_eq(atd_query_gpu(h, &sxm, (atd_dtype)dt, 4096, grid_N[j],
							   &c), ATD_OK);
			}
		cr_assert_eq(h->jit.compiles, 0, "mode %u", modes[m]);
		cr_assert_eq(h->jit.images.n, 0);
		cr_assert_eq(h->jit.queue.n, 0);
		cr_assert_eq(h->jit.queue.worker_started, 0);
		cr_assert_eq(h->nmods, 0, "no module loaded");
		cr_assert_eq(h->lookup.count, 0, "nothing cached as launched");
		cr_assert_eq(h->warned.count, 0, "the launch's warnings left to it");
		cr_assert_eq(h->warned_missing.count, 0);
		atd_close(h);
	}
}

Test(dispatch_decide, a_background_compile_not_yet_done_serves_what_needs_none_meanwhile)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), ATD_OPEN_JIT_BACKGROUND);
	atd_handle *nojit = open_db(tmp_path("t.db"), ATD_OPEN_NO_JIT);
	fake f;
	fake_init(&f);
	f.poll = 0;
	atdi_resolved r;
	atdi_notes notes = { 0 };
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert(r.provisional);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(nojit, &sxm, ATD_F32, 4096, 2000, &c), ATD_OK);
	char want[1400];
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want, "meanwhile: what a handle that never compiles runs");
	cr_assert_eq(c.level, ATD_LEVEL_NEAREST);
	/* once built, the derived kernel that query names */
	f.poll = 1;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_not(r.provisional);
	cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 4096, 2000, &c), ATD_OK);
	cr_assert_eq(c.level, ATD_LEVEL_DERIVED);
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want);
	atd_close(nojit);
	atd_close(h);
}

Test(dispatch_decide, the_launch_falls_back_a_step_at_a_time_and_warns_once_a_shape)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), 0);
	atd_handle *nojit = open_db(tmp_path("t.db"), ATD_OPEN_NO_JIT);
	fake f;
	fake_init(&f);
	f.rules = ATD_ERR_NO_KERNEL; /* NVRTC refuses the derived variant */
	atdi_resolved r;
	atdi_notes notes = { 0 };
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(nojit, &sxm, ATD_F32, 4096, 2000, &c), ATD_OK);
	char want[1400];
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want, "the nearest stored winner that holds the row");
	cr_assert_eq(r.level, ATD_LEVEL_NEAREST);
	cr_assert_eq(f.requests, 2);
	cr_assert_eq(notes.n, 1);
	cr_assert(strstr(notes.text[0], "cannot derive softmax_block") != NULL, "%s", notes.text[0]);
	/* its module does not load either: the built-in kernel */
	f.stored = ATD_ERR_NO_KERNEL;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2001, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_BUILTIN);
	cr_assert_eq(f.requests, 5);
	cr_assert_eq(notes.n, 2, "one warning for the new shape");
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2001, &r, &notes), ATD_OK);
	cr_assert_eq(notes.n, 2, "none again for it");
	/* the built-in kernel failing is an error, as is a stored kernel altered */
	f.builtin = ATD_ERR_NO_KERNEL;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2002, &r, &notes), ATD_ERR_NO_KERNEL);
	f.stored = ATD_ERR_KERNEL_ALTERED;
	f.builtin = ATD_OK;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2003, &r, &notes), ATD_ERR_KERNEL_ALTERED);
	cr_assert(strstr(atd_errmsg(h), "f32 M=4096 N=2003: the tuned kernel softmax_block") != NULL,
		  "%s", atd_errmsg(h));
	cr_assert_str_eq(f.granted, "", "nothing runs after an altered kernel");
	atd_close(nojit);
	atd_close(h);
}

Test(dispatch_decide, a_shape_tuned_online_earlier_serves_both_unless_it_was_tuned_in_the_sweep)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), 0);
	atd_gpu model = sxm;
	model.sm_count = 132;
	atdi_tuned t512 = { "softmax_block", "threads=64 vec=4 elems_per_thread=8", 3.25 };
	atdi_tuned t1024 = { "softmax_block", "threads=128 vec=4 elems_per_thread=8", 4.5 };
	atdi_jit_tuned_put(&h->jit, &model, ATDI_SOFTMAX, AT_F32, 4096, 512, &t512, 4);
	atdi_jit_tuned_put(&h->jit, &model, ATDI_SOFTMAX, AT_F32, 4096, 1024, &t1024, 4); /* the sweep's shape */
	long long Ns[] = { 512, 1024 };
	atd_level want_level[] = { ATD_LEVEL_TUNED, ATD_LEVEL_EXACT };
	for (int i = 0; i < 2; i++) {
		atd_choice c;
		cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 4096, Ns[i], &c), ATD_OK);
		cr_assert_eq(c.level, want_level[i], "N=%lld: %s", Ns[i], atd_level_name(c.level));
		fake f;
		fake_init(&f);
		atdi_resolved r;
		atdi_notes notes = { 0 };
		cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, Ns[i], &r, &notes), ATD_OK);
		char want[1400];
		expect_text(&c, &sxm, want, sizeof want);
		cr_assert_str_eq(f.granted, want);
	}
	atd_close(h);
}

Test(dispatch_decide, a_handle_that_tunes_has_the_launch_tune_and_the_dry_run_answer_untuned)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), ATD_OPEN_TUNE);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &sxm, ATD_F32, 4096, 2000, &c), ATD_OK);
	cr_assert_eq(c.level, ATD_LEVEL_DERIVED, "only timing can say which candidate wins");
	fake f;
	fake_init(&f);
	atdi_resolved r;
	atdi_notes notes = { 0 };
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(f.tunings, 1);
	cr_assert_eq(r.level, ATD_LEVEL_TUNED);
	cr_assert_float_eq(r.tuned_us, 1.5, 1e-12);
	/* tuning that fails falls through, with a warning, to what query said */
	f.tune = ATD_ERR_NO_KERNEL;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_DERIVED);
	char want[1400];
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want);
	cr_assert(strstr(notes.text[0], "could not tune f32 M=4096 N=2000 online") != NULL, "%s",
		  notes.text[0]);
	atd_close(h);
}

Test(dispatch_decide, a_tuning_past_its_wait_serves_its_interim_or_what_needs_no_compiling)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), ATD_OPEN_TUNE);
	atd_handle *nojit = open_db(tmp_path("t.db"), ATD_OPEN_NO_JIT);
	fake f;
	fake_init(&f);
	f.tune_leaves = 1;
	f.poll = 0;
	atdi_resolved r;
	atdi_notes notes = { 0 };
	/* some candidates timed: the fastest of them, until the rest are */
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_TUNED);
	cr_assert(r.provisional, "decided again once the background tuning ends");
	/* none compiled in time: no warning, and no compile on the caller's
	 * time either: what a handle that never compiles runs */
	f.tune = ATD_ERR_NO_KERNEL;
	f.requests = 0;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2001, &r, &notes), ATD_OK);
	cr_assert(r.provisional);
	cr_assert_eq(notes.n, 0, "%s", notes.text[0]);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(nojit, &sxm, ATD_F32, 4096, 2001, &c), ATD_OK);
	char want[1400];
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want);
	cr_assert_eq(f.requests, 1, "nothing compiled: the stored kernel, asked for once");
	/* a tuning that ends within its wait is not provisional */
	f.tune = ATD_OK;
	f.tune_leaves = 0;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2002, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_TUNED);
	cr_assert_not(r.provisional);
	atd_close(nojit);
	atd_close(h);
}

Test(dispatch_decide, background_tuning_serves_what_is_at_hand_until_the_worker_is_done)
{
	write_fixture("t.db");
	atd_handle *h = open_db(tmp_path("t.db"), ATD_OPEN_TUNE | ATD_OPEN_JIT_BACKGROUND);
	atd_handle *nojit = open_db(tmp_path("t.db"), ATD_OPEN_NO_JIT);
	fake f;
	fake_init(&f);
	f.poll = 0;
	f.tuned_later = ATDI_TUNE_PENDING;
	atdi_resolved r;
	atdi_notes notes = { 0 };
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(f.asks, 1);
	cr_assert_eq(f.tunings, 0, "the caller never tunes while the worker can");
	cr_assert(r.provisional);
	atd_choice c;
	cr_assert_eq(atd_query_gpu(nojit, &sxm, ATD_F32, 4096, 2000, &c), ATD_OK);
	char want[1400];
	expect_text(&c, &sxm, want, sizeof want);
	cr_assert_str_eq(f.granted, want, "meanwhile: what a handle that never compiles runs");
	/* the derived kernel built, the tuning still running: derived, still provisional */
	f.poll = 1;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_DERIVED);
	cr_assert(r.provisional, "decided again once the tuning ends");
	/* tuned: the winner, for good */
	f.tuned_later = ATDI_TUNE_DONE;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2000, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_TUNED);
	cr_assert_not(r.provisional);
	cr_assert_float_eq(r.tuned_us, 1.5, 1e-12);
	cr_assert_eq(notes.n, 0, "%s", notes.text[0]);
	/* a failed tuning warns and serves what query says */
	f.tuned_later = ATDI_TUNE_FAILED;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2001, &r, &notes), ATD_OK);
	cr_assert_eq(r.level, ATD_LEVEL_DERIVED);
	cr_assert_not(r.provisional);
	cr_assert(strstr(notes.text[0], "could not tune f32 M=4096 N=2001 online") != NULL, "%s",
		  notes.text[0]);
	cr_assert_eq(f.tunings, 0);
	/* a worker that cannot take the job: tuned now, as a blocking handle */
	f.tuned_later = ATDI_TUNE_NONE;
	cr_assert_eq(launch(h, &f, &sxm, AT_F32, 4096, 2002, &r, &notes), ATD_OK);
	cr_assert_eq(f.tunings, 1);
	cr_assert_eq(r.level, ATD_LEVEL_TUNED);
	atd_close(nojit);
	atd_close(h);
}

/* Tests for the sweep's pruning (tuner/model/prune.h) on a fixture of
 * scores: the best-ranked K kept, the exploration share reproducible from
 * its seed, at least one variant of every template, --exhaustive keeping
 * all; and `autotune sweep`'s pruning options. No GPU. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tuner/model/prune.h"
#include "tuner/sweep/sweep_options.h"

#include "tests/template_fixture.h"
#include "tests/test_run_fixture.h"

/* 40 variants of three templates: template 0 the 20 best-scored, template 1
 * the next 18, template 2 the two worst; one template 1 variant unscored. */
#define NV 40
static double score[NV];
static int group[NV];

static void fixture(void)
{
	for (int i = 0; i < NV; i++) {
		score[i] = 0.01 * (double)((i * 7) % NV); /* a permutation: no ties */
		group[i] = 0;
	}
	/* order the groups by score */
	int order[NV];
	for (int i = 0; i < NV; i++)
		order[(i * 7) % NV] = i;
	for (int r = 0; r < NV; r++)
		group[order[r]] = r < 20 ? 0 : r < 38 ? 1 : 2;
	score[order[30]] = NAN;
}

static size_t count(const unsigned char *kept, int g)
{
	size_t n = 0;
	for (int i = 0; i < NV; i++)
		n += kept[i] && (g < 0 || group[i] == g);
	return n;
}

TestSuite(prune, .init = fixture);

Test(prune, keeps_the_best_k_by_score)
{
	prune_options o = { .keep = 5, .explore = 0, .seed = 1 };
	unsigned char kept[NV];
	size_t n = prune_select(score, group, NV, &o, 42, kept);
	/* the five smallest scores (0.00 .. 0.04), and the best of templates 1 and 2 */
	cr_assert_eq(n, 7);
	for (int i = 0; i < NV; i++)
		if (!isnan(score[i]) && score[i] < 0.045)
			cr_assert(kept[i], "score %.2f not kept", score[i]);
	cr_assert_eq(count(kept, 0), 5);
	cr_assert_eq(count(kept, 1), 1);
	cr_assert_eq(count(kept, 2), 1);
}

Test(prune, each_template_keeps_its_best_scored_variant)
{
	prune_options o = { .keep = 1, .explore = 0, .seed = 1 };
	unsigned char kept[NV];
	prune_select(score, group, NV, &o, 42, kept);
	for (int g = 1; g <= 2; g++) {
		double best = INFINITY;
		for (int i = 0; i < NV; i++)
			if (group[i] == g && score[i] < best)
				best = score[i];
		for (int i = 0; i < NV; i++)
			if (group[i] == g)
				cr_assert_eq(kept[i], score[i] == best, "template %d score %.2f", g,
					     score[i]);
	}
}

Test(prune, an_unscored_variant_ranks_last)
{
	prune_options o = { .keep = NV - 1, .explore = 0, .seed = 1 };
	unsigned char kept[NV];
	cr_assert_eq(prune_select(score, group, NV, &o, 42, kept), NV - 1);
	for (int i = 0; i < NV; i++)
		cr_assert_eq(kept[i], !isnan(score[i]));
}

Test(prune, exploration_is_reproducible_from_its_seed)
{
	prune_options o = { .keep = 4, .explore = 0.25, .seed = 1 };
	unsigned char a[NV], b[NV], c[NV];
	/* 4 best, the best of templates 1 and 2, 0.25 x 36 drawn (which may
	 * draw those two again) */
	size_t na = prune_select(score, group, NV, &o, 1234, a);
	size_t nb = prune_select(score, group, NV, &o, 1234, b);
	cr_assert_eq(na, nb);
	cr_assert_arr_eq(a, b, NV);
	cr_assert(na >= 13 && na <= 15, "%zu kept", na);
	/* the draw only adds to what is kept without it */
	prune_options none = o;
	none.explore = 0;
	prune_select(score, group, NV, &none, 1234, c);
	for (int i = 0; i < NV; i++)
		cr_assert(!c[i] || a[i], "variant %d kept without the draw, not with it", i);
	int differs = 0;
	for (unsigned long long seed = 1; seed < 10 && !differs; seed++) {
		prune_select(score, group, NV, &o, 1234 + seed, c);
		differs = memcmp(a, c, NV) != 0;
	}
	cr_assert(differs, "another seed draws the same variants");
	cr_assert_eq(prune_explore_count(0.1, 36), 4);
	cr_assert_eq(prune_explore_count(0, 36), 0);
	cr_assert_eq(prune_explore_count(1, 36), 36);
}

Test(prune, a_shapes_seed_depends_on_the_shape_alone)
{
	unsigned long long s = prune_shape_seed(1, AT_F32, 4096, 1000);
	cr_assert_eq(s, prune_shape_seed(1, AT_F32, 4096, 1000));
	cr_assert_neq(s, prune_shape_seed(1, AT_F16, 4096, 1000));
	cr_assert_neq(s, prune_shape_seed(1, AT_F32, 1000, 4096));
	cr_assert_neq(s, prune_shape_seed(2, AT_F32, 4096, 1000));
}

Test(prune, exhaustive_or_a_k_past_the_count_keeps_all)
{
	prune_options o = { .exhaustive = 1, .keep = 1, .explore = 0, .seed = 1 };
	unsigned char kept[NV];
	cr_assert_eq(prune_select(score, group, NV, &o, 42, kept), NV);
	cr_assert_eq(count(kept, -1), NV);
	o = (prune_options){ .keep = NV, .explore = 0, .seed = 1 };
	cr_assert_eq(prune_select(score, group, NV, &o, 42, kept), NV);
}

Test(prune, defaults)
{
	prune_options o;
	prune_defaults(&o);
	cr_assert_eq(o.exhaustive, 0);
	cr_assert_eq(o.keep, PRUNE_DEFAULT_KEEP);
	cr_assert_float_eq(o.explore, PRUNE_DEFAULT_EXPLORE, 1e-12);
	cr_assert_float_eq(o.compile_weight, PRUNE_DEFAULT_COMPILE_WEIGHT, 1e-12);
}

/* What `autotune sweep` and `autotune bench` start from: the pruning's
 * defaults (a bench once swept with them zeroed: K = 0, no exploration,
 * each template's best variant alone at every shape). */
Test(prune, a_sweep_starts_from_the_pruning_defaults)
{
	sweep_options o;
	memset(&o, 0xff, sizeof o);
	sweep_options_defaults(&o);
	cr_assert_eq(o.prune.exhaustive, 0);
	cr_assert_eq(o.prune.keep, PRUNE_DEFAULT_KEEP);
	cr_assert_float_eq(o.prune.explore, PRUNE_DEFAULT_EXPLORE, 1e-12);
	cr_assert_float_eq(o.prune.compile_weight, PRUNE_DEFAULT_COMPILE_WEIGHT, 1e-12);
	cr_assert_eq(o.watchdog_ms, SWEEP_DEFAULT_WATCHDOG_S * 1000);
	cr_assert_null(o.config_path);
	cr_assert_eq(o.ndevices, 0);
	cr_assert_eq(o.device, 0);
}

Test(prune, a_template_weighs_its_compile_time_over_the_median_one)
{
	/* the median of the known times (100, 200, 400, 800) is 300 */
	const double ms[] = { 100, 200, 0, 400, 800 };
	double w[5];
	prune_template_weights(ms, 5, 1, w);
	cr_assert_float_eq(w[0], 1, 1e-12, "faster than the median: still 1");
	cr_assert_float_eq(w[1], 1, 1e-12);
	cr_assert_float_eq(w[2], 1, 1e-12, "not known: 1");
	cr_assert_float_eq(w[3], 4.0 / 3, 1e-12);
	cr_assert_float_eq(w[4], 8.0 / 3, 1e-12);
	prune_template_weights(ms, 5, 0.5, w);
	cr_assert_float_eq(w[4], sqrt(8.0 / 3), 1e-12);
	prune_template_weights(ms, 5, 0, w);
	for (int i = 0; i < 5; i++)
		cr_assert_float_eq(w[i], 1, 1e-12, "exponent 0: every template weighs 1");
	const double none[] = { 0, 0 };
	prune_template_weights(none, 2, 1, w);
	cr_assert_float_eq(w[0], 1, 1e-12);
	cr_assert_float_eq(w[1], 1, 1e-12);
}

Test(prune, costly_variants_count_for_more_of_k)
{
	prune_options o = { .keep = 5, .explore = 0, .seed = 1 };
	unsigned char plain[NV], weighed[NV];
	double weight[NV];
	/* unit weights keep what prune_select keeps */
	for (int i = 0; i < NV; i++)
		weight[i] = 1;
	cr_assert_eq(prune_select_weighted(score, group, weight, NV, &o, 42, weighed),
		     prune_select(score, group, NV, &o, 42, plain));
	cr_assert_arr_eq(weighed, plain, NV);
	/* template 0 (the best-scored 20) weighs 2: the top holds two of it
	 * (2 + 2 <= 5, a third would pass 5), then the best of 1 and 2 */
	for (int i = 0; i < NV; i++)
		weight[i] = group[i] == 0 ? 2 : 1;
	cr_assert_eq(prune_select_weighted(score, group, weight, NV, &o, 42, weighed), 4);
	cr_assert_eq(count(weighed, 0), 2);
	for (int i = 0; i < NV; i++)
		if (group[i] == 0)
			cr_assert_eq(weighed[i], score[i] < 0.015, "score %.2f", score[i]);
	/* the best one is kept whatever it weighs */
	for (int i = 0; i < NV; i++)
		weight[i] = group[i] == 0 ? 50 : 1;
	prune_select_weighted(score, group, weight, NV, &o, 42, weighed);
	cr_assert_eq(count(weighed, 0), 1);
	/* weights whose sum is within K keep everything */
	o.keep = 3 * NV;
	for (int i = 0; i < NV; i++)
		weight[i] = 2;
	cr_assert_eq(prune_select_weighted(score, group, weight, NV, &o, 42, weighed), NV);
}

/* ---- autotune sweep's options ---------------------------------------------------- */

TestSuite(prune_cli, .init = tmp_setup, .fini = tmp_teardown);

Test(prune_cli, sweep_rejects_bad_pruning_options)
{
	static const char *const cases[][2] = {
		{ "--keep", "0" },	{ "--keep", "x" },     { "--keep", "-3" },
		{ "--explore", "-0.1" }, { "--explore", "1.5" }, { "--explore", "0.1x" },
		{ "--explore", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tr_result r = RUN("sweep", cases[i][0], cases[i][1]);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, cases[i][0]);
		tr_free(&r);
	}
	tr_result r = RUN("sweep", "--exhaustive", "--keep", "8");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "cannot be combined with --keep, --explore or --compile-weight");
	tr_free(&r);
	r = RUN("sweep", "--compile-weight", "5");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--compile-weight expects an exponent from 0 to 4");
	tr_free(&r);
	r = RUN("sweep", "--exhaustive", "--compile-weight", "0.5");
	tr_expect_status(&r, 2);
	tr_free(&r);
	r = RUN("sweep", "--explore", "0.2", "--exhaustive");
	tr_expect_status(&r, 2);
	tr_free(&r);
}

Test(prune_cli, sweep_accepts_pruning_options_and_meets_the_missing_gpu)
{
	static const char config[] = "sweeps:\n  - op: softmax\n    dtypes: [f32]\n"
				     "    M: [64]\n    N: [1000]\n";
	tmp_write("c.yaml", config);
	const char *const *sets[] = {
		(const char *const[]){ "--exhaustive", NULL },
		(const char *const[]){ "--keep", "8", "--explore", "0", NULL },
		(const char *const[]){ "--keep", "100000", "--explore", "1", NULL },
		(const char *const[]){ "--keep", "8", "--compile-weight", "0", NULL },
	};
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		const char *args[12] = { "sweep", "-c", tmp_path("c.yaml"), "--db",
					 tmp_path("p.db") };
		size_t n = 5;
		for (const char *const *a = sets[i]; *a; a++)
			args[n++] = *a;
		args[n] = NULL;
		tr_result r = tr_run(args, NULL);
		tr_expect_status(&r, 1); /* past the options: no GPU here */
		cr_assert(strstr(r.err, "no NVIDIA driver") || strstr(r.err, "no NVIDIA GPU"),
			  "stderr:\n%s", r.err);
		tr_free(&r);
	}
}

Test(prune_cli, sweep_help_names_the_options)
{
	tr_result r = RUN("help", "sweep");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "--exhaustive");
	tr_expect_in(r.out, "--keep K");
	tr_expect_in(r.out, "--explore F");
	tr_expect_in(r.out, "--compile-weight P");
	tr_free(&r);
}

/* ---- where the sweep's model comes from ------------------------------------------ */

#include "common/strbuf.h"
#include "gen/manifest.h"
#include "tuner/sweep/plan.h"
#include "tuner/device.h"
#include "tuner/sweep/prune_model.h"
#include "tuner/sweep/prune_shape.h"

static const char h100_db[] = "results/example/h100-default.db";

typedef struct rules_set {
	tmpl_manifest *ms;
	size_t n;
	manifest_rules *rules;
	tr_template *ts;
} rules_set;

static void rules_load(rules_set *r)
{
	at_error err;
	cr_assert_eq(manifest_load_dir(plan_templates_dir(NULL), &r->ms, &r->n, &err), 0, "%s",
		     err.msg);
	r->rules = calloc(r->n, sizeof *r->rules);
	r->ts = calloc(r->n, sizeof *r->ts);
	for (size_t i = 0; i < r->n; i++) {
		manifest_rules_view(&r->ms[i], &r->rules[i]);
		r->ts[i] = r->rules[i].t;
	}
}

static void rules_free(rules_set *r)
{
	for (size_t i = 0; i < r->n; i++)
		manifest_rules_free(&r->rules[i]);
	free(r->rules);
	free(r->ts);
	manifest_free_all(r->ms, r->n);
}

TestSuite(prune_model, .init = tmp_setup, .fini = tmp_teardown);

Test(prune_model, a_gpu_of_the_same_cc_lends_its_results, .timeout = 120)
{
	rules_set r;
	rules_load(&r);
	perf_model m;
	char what[768];
	at_error err;
	long long cutoff = prune_model_cutoff(h100_db);
	cr_assert_gt(cutoff, 1);
	int got = prune_model_obtain(h100_db, cutoff, "A GPU never tuned", 90, "softmax", r.ts, (int)r.n,
				     tmp_path("no-templates"), &m, what, sizeof what, &err);
	cr_assert_eq(got, 1, "%s", what);
	tr_expect_in(what, "NVIDIA H100");
	tr_expect_in(what, "sm_90 like this GPU");
	perf_model_free(&m);
	/* sm_80 has no peer there and no seed: no model, and why */
	got = prune_model_obtain(h100_db, cutoff, "A GPU never tuned", 80, "softmax", r.ts, (int)r.n,
				 tmp_path("no-templates"), &m, what, sizeof what, &err);
	cr_assert_eq(got, 0);
	tr_expect_in(what, "no model");
	/* sweeps from the cutoff on are not learnt from: none before sweep 1 */
	got = prune_model_obtain(h100_db, 1, "A GPU never tuned", 90, "softmax", r.ts, (int)r.n,
				 tmp_path("no-templates"), &m, what, sizeof what, &err);
	cr_assert_eq(got, 0, "%s", what);
	/* an op with no results of its own learns from softmax's, whose
	 * templates compute it too */
	got = prune_model_obtain(h100_db, cutoff, "A GPU never tuned", 90, "log_softmax", r.ts,
				 (int)r.n, tmp_path("no-templates"), &m, what, sizeof what, &err);
	cr_assert_eq(got, 1, "%s", what);
	tr_expect_in(what, "tuned softmax shapes of NVIDIA H100");
	perf_model_free(&m);
	rules_free(&r);
}

Test(prune_model, the_seed_model_beside_the_templates)
{
	rules_set r;
	rules_load(&r);
	perf_model m;
	char what[768];
	at_error err;
	/* the shipped seed reads back */
	int got = prune_model_obtain(tmp_path("none.db"), 1, "A GPU never tuned", 90, "softmax", r.ts,
				     (int)r.n, plan_templates_dir(NULL), &m, what, sizeof what, &err);
	cr_assert_eq(got, 1, "%s", got < 0 ? err.msg : what);
	tr_expect_in(what, "the seed model");
	/* it knows what its templates cost to compile (the H200 host's NVRTC) */
	cr_assert_gt(perf_model_compile_ms(&m, "softmax_block"), 0);
	cr_assert_gt(perf_model_compile_ms(&m, "softmax_split"),
		     3 * perf_model_compile_ms(&m, "softmax_block"));
	perf_model_free(&m);
	cr_assert(access(tmp_path("none.db"), F_OK) != 0, "the database was created");
	/* a damaged seed is an error, not a silent exhaustive sweep */
	mkdir(tmp_path("t"), 0755);
	tmp_write("t/" PRUNE_SEED_FILE, "not a model\n");
	got = prune_model_obtain(tmp_path("none.db"), 1, "A GPU never tuned", 90, "softmax", r.ts, (int)r.n,
				 tmp_path("t"), &m, what, sizeof what, &err);
	cr_assert_eq(got, -1);
	tr_expect_in(err.msg, PRUNE_SEED_FILE);
	rules_free(&r);
}

/* Each family of ops has its seed, found by the op's family (the op whose
 * templates compute it): a backward op's is never softmax's, whose model
 * knows none of its templates (its sweep would then be exhaustive). */
Test(prune_model, each_family_has_its_seed_model)
{
	rules_set r;
	rules_load(&r);
	perf_model m;
	char what[768], path[4096];
	at_error err;
	static const struct {
		const char *op, *file, *a_template;
	} cases[] = {
		{ "softmax", PRUNE_SEED_FILE, "softmax_block" },
		{ "log_softmax", PRUNE_SEED_FILE, "softmax_block" },
		{ "softmax_backward", "perf-model-seed-softmax_backward.txt", "softmax_backward_warp" },
		{ "log_softmax_backward", "perf-model-seed-softmax_backward.txt",
		  "softmax_backward_warp" },
		{ "cross_entropy", "perf-model-seed-cross_entropy.txt", "cross_entropy_regs" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int got = prune_model_obtain(tmp_path("none.db"), 1, "A GPU never tuned", 90,
					     cases[i].op, r.ts, (int)r.n, plan_templates_dir(NULL), &m,
					     what, sizeof what, &err);
		cr_assert_eq(got, 1, "%s: %s", cases[i].op, got < 0 ? err.msg : what);
		tr_expect_in(what, cases[i].file);
		cr_assert_gt(perf_model_compile_ms(&m, cases[i].a_template), 0, "%s: %s learnt",
			     cases[i].op, cases[i].a_template);
		perf_model_free(&m);
	}
	prune_seed_path("t", "cross_entropy", path, sizeof path);
	cr_assert_str_eq(path, "t/perf-model-seed-cross_entropy.txt");
	prune_seed_path("t", "softmax", path, sizeof path);
	cr_assert_str_eq(path, "t/" PRUNE_SEED_FILE);
	/* a family without its seed: no model, though softmax's is there */
	mkdir(tmp_path("t"), 0755);
	snprintf(path, sizeof path, "%s/%s", plan_templates_dir(NULL), PRUNE_SEED_FILE);
	char *seed = strbuf_read_file(path);
	cr_assert_not_null(seed);
	tmp_write("t/" PRUNE_SEED_FILE, seed);
	free(seed);
	int got = prune_model_obtain(tmp_path("none.db"), 1, "A GPU never tuned", 90,
				     "softmax_backward", r.ts, (int)r.n, tmp_path("t"), &m, what,
				     sizeof what, &err);
	cr_assert_eq(got, 0, "%s", what);
	tr_expect_in(what, "no seed model at");
	tr_expect_in(what, "perf-model-seed-softmax_backward.txt");
	rules_free(&r);
}

/* The templates of vs[0..n) named name. */
static size_t count_template(const variant *vs, size_t n, const char *name)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += strcmp(vs[i].tmpl->name, name) == 0;
	return k;
}

Test(prune_model, the_sweep_keeps_fewer_of_a_template_slow_to_compile, .timeout = 120)
{
	/* few long rows: softmax_split's (NVRTC 1.5 s a variant) and a few
	 * others' (0.3 s) */
	tmp_write("c.yaml", "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: [8]\n"
			    "    N: [1048576]\n");
	sweep_plan p;
	at_error err;
	cr_assert_eq(plan_load(&p, tmp_path("c.yaml"), NULL, &err), 0, "%s", err.msg);
	const sweep_shape *s = &p.shapes[0];
	tr_env env = nominal_shape_env(90, s->M, s->N, at_dtype_size(s->dtype));
	size_t kept[2], split[2], all = 0;
	for (int w = 0; w < 2; w++) {
		prune_options o;
		prune_defaults(&o);
		o.compile_weight = w;
		sweep_pruner pr;
		cr_assert_eq(sweep_pruner_open(&pr, &p, &o, tmp_path("none.db"), 1, "A GPU never tuned",
					       90, plan_templates_dir(NULL), &err), 0, "%s", err.msg);
		cr_assert(sweep_op_model_of(&pr, "softmax")->have_model);
		variant *vs;
		cr_assert_eq(sweep_shape_variants(&pr, &p, s, &env, &vs, &kept[w], &all, &err), 0,
			     "%s", err.msg);
		split[w] = count_template(vs, kept[w], "softmax_split");
		free(vs);
		sweep_pruner_close(&pr);
	}
	cr_assert_gt(all, kept[0]);
	cr_assert_gt(split[0], 0);
	cr_assert_lt(split[1], split[0], "split variants kept: %zu weighed, %zu not", split[1],
		     split[0]);
	cr_assert_lt(kept[1], kept[0]);
	plan_free(&p);
}

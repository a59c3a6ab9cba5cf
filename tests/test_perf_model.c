/* Tests for the performance model (common/perf_model.h, tuner/model/):
 * boosting recovers a step, a model fitted on a toy template's synthetic
 * times (a known formula of its params and the shape) chooses the fastest
 * variant at a shape it was not fitted on, and a model written as text
 * reads back to the same predictions; a damaged text is refused. No GPU,
 * no database. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/perf_features.h"
#include "common/perf_model.h"
#include "tuner/model/fit.h"
#include "tuner/model/loo.h"

static const long long threads_v[] = { 32, 64, 128 };
static const long long vec_v[] = { 1, 2, 4 };
static const long long elems_v[] = { 4, 8 };
static const tr_param toy_params[] = {
	{ "threads", threads_v, 3, 64 },
	{ "vec", vec_v, 3, 4 },
	{ "elems", elems_v, 2, 8 },
};
static const char *const toy_constraints[] = {
	"elems % vec == 0",
	"threads * elems >= N",
};
static const tr_template toy = {
	"toy", "toy.cu", NULL, 7u, toy_params, 3, toy_constraints, 2,
	{ "threads", "1", "0", "0", "threads * elems", "1", "0" },
	NULL, 0, NULL, 0, NULL, 0, NULL, NULL, 0,
};

#define COPY_GBPS 3000.0

static tr_env toy_env(long long M, long long N)
{
	return (tr_env){ .M = M, .N = N, .elem_bytes = 4, .sm_count = 132, .cc = 90,
			 .max_threads = 1024, .max_smem = 232448, .regs_per_sm = 65536 };
}

/* The toy's "measured" time: the copy time, slower for narrow vectors, for
 * a hold larger than the row, and off 64 threads. */
static double toy_time(const long long *v, const tr_env *env)
{
	double waste = 1 - (double)env->N / (double)(v[0] * v[2]);
	return perf_copy_us(env, COPY_GBPS) * (1 + 0.5 * (v[1] == 1) + 0.25 * (v[1] == 2)) *
	       (1 + 0.6 * waste) * (1 + 0.05 * (v[0] != 64));
}

typedef struct collect {
	model_samples *s;
	const tr_env *env;
	size_t cap;
} collect;

static void add_sample(void *ctx, const long long *values)
{
	collect *c = ctx;
	model_samples *s = c->s;
	if (s->nsamples == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		s->samples = realloc(s->samples, c->cap * sizeof *s->samples);
	}
	model_sample *x = &s->samples[s->nsamples++];
	memset(x, 0, sizeof *x);
	memcpy(x->values, values, 3 * sizeof *values);
	x->time_us = toy_time(values, c->env);
	model_shape *sh = &s->shapes[s->nshapes - 1];
	if (sh->n++ == 0 || x->time_us < sh->best_us)
		sh->best_us = sh->winner_us = x->time_us;
}

/* Every valid toy variant at 3 x 4 shapes, timed by the formula. */
static void toy_samples(model_samples *s, collect *c)
{
	static const long long Ms[] = { 1024, 4096, 16384 }, Ns[] = { 64, 128, 256, 512 };
	static tr_env envs[12];
	memset(s, 0, sizeof *s);
	s->shapes = calloc(12, sizeof *s->shapes);
	*c = (collect){ .s = s };
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 4; j++) {
			tr_env *env = &envs[s->nshapes];
			*env = toy_env(Ms[i], Ns[j]);
			model_shape *sh = &s->shapes[s->nshapes++];
			*sh = (model_shape){ .dtype = AT_F32, .M = Ms[i], .N = Ns[j], .env = *env,
					     .copy_gbps = COPY_GBPS, .first = s->nsamples };
			c->env = env;
			tr_rules *r;
			at_error err;
			cr_assert_eq(tr_rules_new(&toy, env, &r, &err), 0, "%s", err.msg);
			const long long start[] = { 64, 4, 8 };
			const int idx[] = { 2, 1, 0 };
			cr_assert_eq(tr_walk(r, start, idx, 3, add_sample, c, &err), 0);
			tr_rules_free(r);
		}
	}
}

/* The toy's samples and their feature matrix: what most tests fit on. */
typedef struct toy_data {
	model_samples s;
	collect c;
	model_matrix mx;
} toy_data;

static void toy_data_open(toy_data *d)
{
	toy_samples(&d->s, &d->c);
	model_matrix_build(&d->s, &toy, 1, &d->mx);
}

static void toy_data_close(toy_data *d)
{
	model_matrix_free(&d->mx);
	free(d->s.samples);
	free(d->s.shapes);
}

static model_fit_options small_fit(void)
{
	model_fit_options o;
	model_fit_defaults(&o);
	o.variant.ntrees = 150;
	o.variant.depth = 4;
	o.variant.subsample = 1;
	o.shape.min_leaf_weight = 1;
	return o;
}

/* A row's alignment feature: the largest power of two (to 2^6) dividing
 * its bytes, for any N a query may name (INT64_MAX x 4 bytes overflowed
 * under UBSan once the seed models ranked variants with no database). */
Test(perf_model, the_row_alignment_feature_holds_for_any_n)
{
	static const struct { long long N; int elem_bytes; double align; } rows[] = {
		{ 7, 4, 2 }, { 3, 2, 1 }, { 1024, 4, 6 }, { 24, 2, 4 }, { 1, 2, 1 },
		{ 9223372036854775807LL, 4, 2 }, { 4611686018427387904LL, 2, 6 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		tr_env env = toy_env(1, rows[i].N);
		env.elem_bytes = rows[i].elem_bytes;
		double x[PF_SHAPE_FEATURES];
		pf_shape_features(&env, x);
		cr_assert_eq(x[PF_ROW_ALIGN], rows[i].align, "N=%lld x %d bytes: %g", rows[i].N,
			     rows[i].elem_bytes, x[PF_ROW_ALIGN]);
	}
}

Test(perf_model, boosting_recovers_a_step)
{
	double x[8], y[8];
	for (int i = 0; i < 8; i++) {
		x[i] = i;
		y[i] = i < 5 ? 1 : 3;
	}
	boost_data d = { .x = x, .y = y, .n = 8, .nfeatures = 1 };
	boost_params p = { .ntrees = 1, .depth = 1, .learning_rate = 1, .min_leaf_weight = 1,
			   .lambda = 0, .subsample = 1, .seed = 1 };
	te_ensemble e;
	cr_assert_eq(boost_fit(&d, &p, &e), 0);
	cr_assert_eq(e.trees[0].nnodes, 3);
	cr_assert_eq(e.trees[0].nodes[0].threshold, 4.5);
	cr_assert_float_eq(te_predict(&e, (double[]){ 2 }), 1, 1e-12);
	cr_assert_float_eq(te_predict(&e, (double[]){ 6 }), 3, 1e-12);
	double contrib, bias = te_explain(&e, (double[]){ 6 }, &contrib, 1);
	cr_assert_float_eq(bias + contrib, 3, 1e-12, "the explanation sums to the prediction");
	te_free(&e);
}

Test(perf_model, an_average_of_ensembles_predicts_the_mean_of_theirs)
{
	double x[16], y1[16], y2[16];
	for (int i = 0; i < 16; i++) {
		x[i] = i;
		y1[i] = i < 5 ? 1 : 3;
		y2[i] = i < 11 ? -2 : 6;
	}
	boost_params p = { .ntrees = 3, .depth = 2, .learning_rate = 0.5, .min_leaf_weight = 1,
			   .lambda = 0, .subsample = 1, .seed = 1 };
	te_ensemble parts[2], avg;
	cr_assert_eq(boost_fit(&(boost_data){ .x = x, .y = y1, .n = 16, .nfeatures = 1 }, &p,
			       &parts[0]), 0);
	cr_assert_eq(boost_fit(&(boost_data){ .x = x, .y = y2, .n = 16, .nfeatures = 1 }, &p,
			       &parts[1]), 0);
	double want[16];
	for (int i = 0; i < 16; i++)
		want[i] = (te_predict(&parts[0], &x[i]) + te_predict(&parts[1], &x[i])) / 2;
	boost_average(parts, 2, &avg);
	cr_assert_eq(avg.ntrees, 6, "every part's trees");
	cr_assert_eq(parts[0].ntrees + parts[1].ntrees, 0, "the parts are left empty");
	for (int i = 0; i < 16; i++) {
		cr_assert_float_eq(te_predict(&avg, &x[i]), want[i], 1e-12, "x = %d", i);
		double contrib, bias = te_explain(&avg, &x[i], &contrib, 1);
		cr_assert_float_eq(bias + contrib, want[i], 1e-12, "its explanation sums to it");
	}
	te_free(&avg);
}

/* What the toy model ranks every sample of s by (perf_model_rank_score:
 * its variant ensemble's prediction, unless it ranks by its worst fit),
 * into out. */
static void score_samples(const perf_model *m, const model_samples *s, double *out)
{
	double x[64];
	cr_assert_leq(pf_nfeatures(&m->space), 64);
	for (size_t k = 0; k < s->nshapes; k++)
		for (size_t i = s->shapes[k].first; i < s->shapes[k].first + s->shapes[k].n; i++) {
			at_error err;
			cr_assert_eq(pf_variant_features(&m->space, &toy, s->samples[i].values,
							 &s->shapes[k].env, x, &err), 0);
			out[i] = perf_model_rank_score(m, x);
		}
}

Test(perf_model, several_fits_average_one_fit_per_seed, .timeout = 60)
{
	toy_data d;
	toy_data_open(&d);
	model_fit_options o = small_fit();
	o.variant.subsample = 0.5; /* what makes a seed matter */
	o.variant.ntrees = 40;
	perf_model one[2], avg;
	double *p0 = malloc(d.s.nsamples * sizeof *p0), *p1 = malloc(d.s.nsamples * sizeof *p1),
	       *pa = malloc(d.s.nsamples * sizeof *pa);
	for (int k = 0; k < 2; k++) {
		model_fit_options ok = o;
		ok.variant.seed = o.variant.seed + (unsigned)k;
		cr_assert_eq(model_fit(&d.s, &d.mx, -1, &ok, &one[k]), 0);
	}
	o.fits = 2;
	cr_assert_eq(model_fit(&d.s, &d.mx, -1, &o, &avg), 0);
	score_samples(&one[0], &d.s, p0);
	score_samples(&one[1], &d.s, p1);
	score_samples(&avg, &d.s, pa);
	int differ = 0;
	for (size_t i = 0; i < d.s.nsamples; i++) {
		differ |= fabs(p0[i] - p1[i]) > 1e-6;
		cr_assert_float_eq(pa[i], (p0[i] + p1[i]) / 2, 1e-9, "sample %zu", i);
	}
	cr_assert(differ, "the two seeds fitted the same trees: the test would prove nothing");
	free(p0);
	free(p1);
	free(pa);
	perf_model_free(&one[0]);
	perf_model_free(&one[1]);
	perf_model_free(&avg);
	toy_data_close(&d);
}

Test(perf_model, ranked_by_the_worst_fit_a_variant_scores_its_slowest_fit, .timeout = 60)
{
	toy_data d;
	toy_data_open(&d);
	model_fit_options o = small_fit();
	o.variant.subsample = 0.5;
	o.variant.ntrees = 40;
	size_t n = d.s.nsamples;
	double *p[2], *worst = malloc(n * sizeof *worst), *mean = malloc(n * sizeof *mean);
	for (int k = 0; k < 2; k++) {
		model_fit_options ok = o;
		ok.variant.seed = o.variant.seed + (unsigned)k;
		perf_model one;
		cr_assert_eq(model_fit(&d.s, &d.mx, -1, &ok, &one), 0);
		p[k] = malloc(n * sizeof *p[k]);
		score_samples(&one, &d.s, p[k]);
		perf_model_free(&one);
	}
	o.fits = 2;
	o.rank = PERF_RANK_WORST;
	perf_model m;
	cr_assert_eq(model_fit(&d.s, &d.mx, -1, &o, &m), 0);
	cr_assert_eq(m.fits, 2);
	cr_assert_eq(m.rank, PERF_RANK_WORST);
	score_samples(&m, &d.s, worst);
	m.rank = PERF_RANK_MEAN;
	score_samples(&m, &d.s, mean);
	m.rank = PERF_RANK_WORST;
	int differ = 0;
	for (size_t i = 0; i < n; i++) {
		double hi = p[0][i] > p[1][i] ? p[0][i] : p[1][i];
		cr_assert_float_eq(worst[i], hi, 1e-9, "sample %zu", i);
		cr_assert_float_eq(mean[i], (p[0][i] + p[1][i]) / 2, 1e-9, "sample %zu", i);
		differ |= worst[i] > mean[i] + 1e-6;
	}
	cr_assert(differ, "the fits agree everywhere: the test would prove nothing");
	/* the choice at a shape is the variant whose slowest fit is fastest
	 * (every valid variant is among the shape's samples) */
	const model_shape *sh = &d.s.shapes[5];
	double want = INFINITY;
	for (size_t i = sh->first; i < sh->first + sh->n; i++)
		want = worst[i] < want ? worst[i] : want;
	perf_choice c;
	at_error err;
	cr_assert_eq(perf_model_choose(&m, &toy, 1, AT_F32, &sh->env, &c, &err), 0, "%s", err.msg);
	cr_assert_float_eq(c.log_behind, want, 1e-12);
	/* and the ranking travels with the text */
	strbuf text = { 0 };
	perf_model_to_text(&m, &text);
	cr_assert(strstr(text.data, "\nfits 2 worst\n"), "%.300s", text.data);
	perf_model back;
	cr_assert_eq(perf_model_from_text(text.data, &back, &err), 0, "%s", err.msg);
	cr_assert_eq(back.fits, 2);
	cr_assert_eq(back.rank, PERF_RANK_WORST);
	perf_choice cb;
	cr_assert_eq(perf_model_choose(&back, &toy, 1, AT_F32, &sh->env, &cb, &err), 0);
	cr_assert_eq(memcmp(cb.values, c.values, sizeof c.values), 0);
	strbuf_free(&text);
	perf_model_free(&back);
	perf_model_free(&m);
	free(p[0]);
	free(p[1]);
	free(worst);
	free(mean);
	toy_data_close(&d);
}

Test(perf_model, a_bad_fits_line_is_refused_with_what_was_expected)
{
	static const char *const bad[] = { "fits 0 mean", "fits 2 best", "fits 2", "fits x worst",
					   "fits 3 mean" /* 2 trees: not shared equally */ };
	perf_model m;
	at_error err;
	char text[512];
	const char *trees = "ensemble 0 0\nensemble 0 2\ntree 1\n-1 0 0 0 1\ntree 1\n-1 0 0 0 2\n";
	snprintf(text, sizeof text, "perf_model 1\ntemplate toy\nfits 2 mean\n%s", trees);
	cr_assert_eq(perf_model_from_text(text, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.fits, 2);
	perf_model_free(&m);
	snprintf(text, sizeof text, "perf_model 1\ntemplate toy\n%s", trees);
	cr_assert_eq(perf_model_from_text(text, &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.fits, 1, "no fits line: one fit");
	perf_model_free(&m);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		snprintf(text, sizeof text, "perf_model 1\ntemplate toy\n%s\n%s", bad[i], trees);
		cr_assert_eq(perf_model_from_text(text, &m, &err), -1, "%s", bad[i]);
		cr_assert(strstr(err.msg, i == 4 ? "cannot share 2 trees" : "expected \"fits K mean\""),
			  "%s: %s", bad[i], err.msg);
	}
}

Test(perf_model, a_fixed_model_chooses_at_every_shape_without_a_fit, .timeout = 60)
{
	toy_data d;
	toy_data_open(&d);
	/* a weak model (two stumps), which misses at some shapes where a fit
	 * on the other shapes would not: were it ignored, the choices differ */
	model_fit_options weak = small_fit();
	weak.variant.ntrees = 2;
	weak.variant.depth = 1;
	perf_model m;
	cr_assert_eq(model_fit(&d.s, &d.mx, -1, &weak, &m), 0);
	model_fit_options o = small_fit();
	loo_outcome out[12];
	size_t n;
	at_error err;
	cr_assert_eq(model_loo(&d.s, &d.mx, &toy, 1, &o, &m, (loo_part){ 0, 0 }, 2, out, &n, &err),
		     0, "%s", err.msg);
	cr_assert_eq(n, d.s.nshapes);
	/* in three parts, each shape held out once, the same outcome */
	int seen[12] = { 0 };
	for (int k = 1; k <= 3; k++) {
		loo_outcome part[12];
		size_t np;
		cr_assert_eq(model_loo(&d.s, &d.mx, &toy, 1, &o, &m, (loo_part){ k, 3 }, 2, part, &np,
				       &err), 0, "%s", err.msg);
		cr_assert_eq(np, 4, "part %d of 3 of 12 shapes", k);
		for (size_t i = 0; i < np; i++) {
			seen[part[i].shape]++;
			cr_assert_eq(part[i].rules_us, out[part[i].shape].rules_us);
		}
	}
	for (size_t i = 0; i < 12; i++)
		cr_assert_eq(seen[i], 1, "shape %zu held out %d times", i, seen[i]);
	int misses = 0;
	for (size_t i = 0; i < n; i++) {
		const model_shape *sh = &d.s.shapes[out[i].shape];
		perf_choice ch;
		cr_assert_eq(perf_model_choose(&m, &toy, 1, AT_F32, &sh->env, &ch, &err), 0);
		cr_assert_eq(out[i].rules_t, &toy);
		cr_assert_eq(memcmp(out[i].rules_values, ch.values, 3 * sizeof *ch.values), 0,
			     "M=%lld N=%lld: the fixed model's own choice", sh->M, sh->N);
		cr_assert_float_eq(out[i].rules_us, toy_time(ch.values, &sh->env), 1e-9,
				   "its stored time");
		misses += out[i].rules_us > sh->best_us * 1.001;
	}
	cr_assert_gt(misses, 0, "the weak model chose the best everywhere: the test proves nothing");
	perf_model_free(&m);
	toy_data_close(&d);
}

Test(perf_model, a_held_out_shape_gets_its_fastest_variant, .timeout = 60)
{
	toy_data d;
	toy_data_open(&d);
	model_fit_options o = small_fit();
	for (size_t k = 0; k < d.s.nshapes; k++) {
		const model_shape *sh = &d.s.shapes[k];
		perf_model m;
		cr_assert_eq(model_fit(&d.s, &d.mx, (long)k, &o, &m), 0);
		perf_choice ch;
		at_error err;
		cr_assert_eq(perf_model_choose(&m, &toy, 1, AT_F32, &sh->env, &ch, &err), 0);
		cr_assert_eq(ch.t, &toy);
		cr_assert_eq(ch.nvalid, (long long)sh->n, "every valid variant was predicted");
		double chosen = toy_time(ch.values, &sh->env);
		cr_assert_leq(chosen, sh->best_us * 1.001,
			      "M=%lld N=%lld: chose threads=%lld vec=%lld elems=%lld, %.3f us "
			      "against the best %.3f",
			      sh->M, sh->N, ch.values[0], ch.values[1], ch.values[2], chosen, sh->best_us);
		perf_prediction p;
		cr_assert_eq(perf_model_predict(&m, ch.t, ch.values, &sh->env, COPY_GBPS, &p, &err), 0);
		cr_assert(p.time_us > 0.8 * chosen && p.time_us < 1.25 * chosen,
			  "predicted %.3f us for %.3f", p.time_us, chosen);
		perf_model_free(&m);
	}
	toy_data_close(&d);
}

Test(perf_model, its_ranking_is_best_first_and_starts_with_its_choice, .timeout = 60)
{
	toy_data d;
	toy_data_open(&d);
	model_fit_options o = small_fit();
	perf_model m;
	cr_assert_eq(model_fit(&d.s, &d.mx, -1, &o, &m), 0);
	const model_shape *sh = &d.s.shapes[d.s.nshapes / 2];
	perf_choice one, five[5];
	at_error err;
	cr_assert_eq(perf_model_choose(&m, &toy, 1, AT_F32, &sh->env, &one, &err), 0);
	int n = perf_model_rank(&m, &toy, 1, AT_F32, &sh->env, five, 5, &err);
	cr_assert_eq(n, sh->n < 5 ? (int)sh->n : 5);
	cr_assert_eq(memcmp(five[0].values, one.values, sizeof one.values), 0,
		     "the ranking's first is the choice");
	for (int i = 1; i < n; i++) {
		cr_assert_geq(five[i].log_behind, five[i - 1].log_behind, "best first (%d)", i);
		cr_assert_neq(memcmp(five[i].values, five[i - 1].values, sizeof one.values), 0,
			      "distinct variants");
		cr_assert_eq(five[i].nvalid, (long long)sh->n);
	}
	cr_assert_eq(perf_model_rank(&m, &toy, 1, AT_F32, &sh->env, five, 0, &err), 0);
	perf_model_free(&m);
	toy_data_close(&d);
}

Test(perf_model, its_text_reads_back_to_the_same_predictions)
{
	toy_data d;
	toy_data_open(&d);
	model_fit_options o = small_fit();
	perf_model m, back;
	cr_assert_eq(model_fit(&d.s, &d.mx, -1, &o, &m), 0);
	strbuf text = { 0 }, again = { 0 };
	perf_model_to_text(&m, &text);
	at_error err;
	cr_assert_eq(perf_model_from_text(text.data, &back, &err), 0, "%s", err.msg);
	perf_model_to_text(&back, &again);
	cr_assert_str_eq(again.data, text.data);
	for (size_t i = 0; i < d.s.nsamples; i += 7) {
		const model_shape *sh = &d.s.shapes[0];
		for (size_t k = 0; k < d.s.nshapes; k++)
			if (i >= d.s.shapes[k].first)
				sh = &d.s.shapes[k];
		perf_prediction a, b;
		cr_assert_eq(perf_model_predict(&m, &toy, d.s.samples[i].values, &sh->env, COPY_GBPS, &a,
						&err), 0);
		cr_assert_eq(perf_model_predict(&back, &toy, d.s.samples[i].values, &sh->env, COPY_GBPS,
						&b, &err), 0);
		cr_assert_eq(a.time_us, b.time_us, "the same double, bit for bit");
	}
	strbuf why = { 0 };
	perf_model_explain(&back, &toy, d.s.samples[0].values, &d.s.shapes[0].env, 3, &why);
	cr_assert(strstr(why.data, "log(time / best)"), "%s", why.data);
	perf_model_free(&back);

	/* damaged: a child before its parent, a node cut off, another version */
	const char *good = "perf_model 1\ntemplate toy\nensemble 0 1\ntree 3\n0 1 1 2 0\n"
			   "-1 0 0 0 -1\n-1 0 0 0 1\nensemble 0 0\n";
	cr_assert_eq(perf_model_from_text(good, &back, &err), 0, "%s", err.msg);
	perf_model_free(&back);
	char *bad = strdup(good);
	bad[strlen("perf_model 1\ntemplate toy\nensemble 0 1\ntree 3\n0 1 ")] = '0';
	cr_assert_eq(perf_model_from_text(bad, &back, &err), -1);
	cr_assert(strstr(err.msg, "out of order"), "%s", err.msg);
	cr_assert_eq(perf_model_from_text("perf_model 2\n", &back, &err), -1);
	text.data[text.len - 1] = 0;
	*strrchr(text.data, '\n') = 0; /* the last node cut off */
	cr_assert_eq(perf_model_from_text(text.data, &back, &err), -1);
	free(bad);
	strbuf_free(&text);
	strbuf_free(&again);
	strbuf_free(&why);
	perf_model_free(&m);
	toy_data_close(&d);
}

Test(perf_model, a_template_without_results_is_never_learned_nor_ranked, .timeout = 60)
{
	model_samples s;
	collect c;
	toy_samples(&s, &c);
	/* a second template, the toy's twin by another name, with no results */
	tr_template both[2] = { toy, toy };
	both[1].name = "toy_new";
	model_matrix mx;
	model_matrix_build(&s, both, 2, &mx);
	cr_assert(pf_space_has_template(&mx.space, "toy"));
	cr_assert_not(pf_space_has_template(&mx.space, "toy_new"));
	model_fit_options o = small_fit();
	perf_model m;
	cr_assert_eq(model_fit(&s, &mx, -1, &o, &m), 0);
	const model_shape *sh = &s.shapes[s.nshapes / 2];
	perf_choice five[5];
	at_error err;
	int n = perf_model_rank(&m, both, 2, AT_F32, &sh->env, five, 5, &err);
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++)
		cr_assert_str_eq(five[i].t->name, "toy", "ranked %s", five[i].t->name);
	perf_model_free(&m);
	model_matrix_free(&mx);
	free(s.samples);
	free(s.shapes);
}

Test(perf_model, carries_its_templates_median_compile_time_through_its_text, .timeout = 60)
{
	model_samples s;
	collect c;
	toy_samples(&s, &c);
	/* compile times 100, 200, 300, ... ms by sample, one sample unstored */
	for (size_t i = 0; i < s.nsamples; i++)
		s.samples[i].compile_ms = 100.0 * (double)(i % 5 + 1);
	s.samples[0].compile_ms = 0;
	cr_assert_float_eq(model_samples_compile_ms(&s, 0), 300, 1e-9);
	cr_assert_eq(model_samples_compile_ms(&s, 1), 0, "no sample of template 1");
	model_matrix mx;
	model_matrix_build(&s, &toy, 1, &mx);
	model_fit_options o = small_fit();
	o.variant.ntrees = 5;
	perf_model m, back;
	cr_assert_eq(model_fit(&s, &mx, -1, &o, &m), 0);
	cr_assert_float_eq(perf_model_compile_ms(&m, "toy"), 300, 1e-9);
	cr_assert_eq(perf_model_compile_ms(&m, "other"), 0);
	strbuf text = { 0 };
	perf_model_to_text(&m, &text);
	cr_assert(strstr(text.data, "\ncompile_ms toy 300.0\n"), "%.200s", text.data);
	at_error err;
	cr_assert_eq(perf_model_from_text(text.data, &back, &err), 0, "%s", err.msg);
	cr_assert_float_eq(perf_model_compile_ms(&back, "toy"), 300, 1e-9);
	perf_model_free(&back);

	/* a model written before compile times were stored knows none */
	const char *old = "perf_model 1\ntemplate toy\nensemble 0 0\nensemble 0 0\n";
	cr_assert_eq(perf_model_from_text(old, &back, &err), 0, "%s", err.msg);
	cr_assert_eq(perf_model_compile_ms(&back, "toy"), 0);
	perf_model_free(&back);
	/* a compile time of a template the model does not name, or no number */
	const char *bad[] = {
		"perf_model 1\ntemplate toy\ncompile_ms nope 12.0\nensemble 0 0\nensemble 0 0\n",
		"perf_model 1\ntemplate toy\ncompile_ms toy\nensemble 0 0\nensemble 0 0\n",
		"perf_model 1\ntemplate toy\ncompile_ms toy 1x\nensemble 0 0\nensemble 0 0\n",
		"perf_model 1\ntemplate toy\ncompile_ms toy -4\nensemble 0 0\nensemble 0 0\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		cr_assert_eq(perf_model_from_text(bad[i], &back, &err), -1, "%s", bad[i]);
		cr_assert(strstr(err.msg, "compile_ms"), "%s", err.msg);
	}
	strbuf_free(&text);
	perf_model_free(&m);
	model_matrix_free(&mx);
	free(s.samples);
	free(s.shapes);
}

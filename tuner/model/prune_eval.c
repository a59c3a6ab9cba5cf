/* Offline measurement of the sweep's pruning: see prune_eval.h. Each
 * held-out shape is one fit, independent of the others: threads take
 * shapes in turn, as in loo.c. */
#include "tuner/model/prune_eval.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/model/workers.h"

typedef struct eval_job {
	const model_samples *s;
	const model_matrix *mx;
	const tr_template *ts;
	int nts;
	const unsigned char *use;
	const model_fit_options *o;
	const perf_model *fixed;
	prune_eval *out;
	atomic_size_t next;
	atomic_int failed;
	at_error err;
} eval_job;

/* A shape's enumeration as it is walked: the template, the model. */
typedef struct walk_state {
	const eval_job *j;
	const model_shape *sh;
	const perf_model *m;
	int tmpl;
	double *x;
	prune_eval_shape *out;
	size_t cap;
} walk_state;

static unsigned long long kernel_hash(int tmpl, at_dtype dt, const long long *values, int n)
{
	unsigned long long h = 1469598103934665603ull;
	long long parts[2] = { tmpl, dt };
	for (int i = 0; i < 2 + n; i++) {
		unsigned long long v = (unsigned long long)(i < 2 ? parts[i] : values[i - 2]);
		for (int b = 0; b < 8; b++) {
			h ^= (v >> (8 * b)) & 0xff;
			h *= 1099511628211ull;
		}
	}
	return h;
}

/* The fastest stored time of the variant at sh; 0: none. */
static double stored_time(const walk_state *w, const long long *values)
{
	const tr_template *t = &w->j->ts[w->tmpl];
	double best = 0;
	for (size_t i = w->sh->first; i < w->sh->first + w->sh->n; i++) {
		const model_sample *x = &w->j->s->samples[i];
		if (x->tmpl == w->tmpl &&
		    memcmp(x->values, values, (size_t)t->nparams * sizeof *values) == 0 &&
		    (best == 0 || x->time_us < best))
			best = x->time_us;
	}
	return best;
}

static void visit(void *ctx, const long long *values)
{
	walk_state *w = ctx;
	prune_eval_shape *o = w->out;
	if (o->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		o->score = xrealloc(o->score, w->cap * sizeof *o->score);
		o->group = xrealloc(o->group, w->cap * sizeof *o->group);
		o->stored_us = xrealloc(o->stored_us, w->cap * sizeof *o->stored_us);
		o->kernel = xrealloc(o->kernel, w->cap * sizeof *o->kernel);
	}
	const tr_template *t = &w->j->ts[w->tmpl];
	at_error ignored;
	/* as the sweep: a variant without features is ranked last, not dropped */
	o->score[o->n] = pf_variant_features(&w->m->space, t, values, &w->sh->env, w->x, &ignored) == 0
				 ? perf_model_rank_score(w->m, w->x)
				 : NAN;
	o->group[o->n] = w->tmpl;
	o->stored_us[o->n] = stored_time(w, values);
	o->kernel[o->n] = kernel_hash(w->tmpl, w->sh->dtype, values, t->nparams);
	o->n++;
}

static int score_shape(const eval_job *j, const perf_model *m, prune_eval_shape *out,
		       at_error *err)
{
	walk_state w = { .j = j, .sh = &j->s->shapes[out->shape], .m = m, .out = out };
	w.x = xmalloc((size_t)pf_nfeatures(&m->space) * sizeof *w.x);
	int rc = 0;
	for (int i = 0; i < j->nts && rc == 0; i++) {
		const tr_template *t = &j->ts[i];
		if ((j->use && !j->use[i]) || !(t->dtype_mask & (1u << w.sh->dtype)))
			continue;
		tr_rules *r;
		if (tr_rules_new(t, &w.sh->env, &r, err)) {
			rc = -1;
			break;
		}
		long long start[TR_MAX_PARAMS];
		int idx[TR_MAX_PARAMS];
		for (int k = 0; k < t->nparams; k++) {
			start[k] = t->params[k].def;
			idx[k] = t->nparams - 1 - k; /* the sweep's order: the last param fastest */
		}
		w.tmpl = i;
		at_error walk_err;
		tr_walk(r, start, idx, t->nparams, visit, &w, &walk_err);
		tr_rules_free(r);
	}
	free(w.x);
	return rc;
}

static int evaluate(eval_job *j, prune_eval_shape *out, at_error *err)
{
	if (j->fixed)
		return score_shape(j, j->fixed, out, err);
	perf_model m;
	if (model_fit(j->s, j->mx, (long)out->shape, j->o, &m))
		return at_error_set(err, "nothing to fit on without shape %zu", out->shape);
	int rc = score_shape(j, &m, out, err);
	perf_model_free(&m);
	return rc;
}

static void *worker(void *arg)
{
	eval_job *j = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&j->next, 1);
		if (k >= j->out->nshapes || atomic_load(&j->failed))
			return NULL;
		at_error err;
		if (evaluate(j, &j->out->shapes[k], &err) && !atomic_exchange(&j->failed, 1))
			j->err = err;
	}
}

int prune_eval_score(const model_samples *s, const model_matrix *mx, const tr_template *ts,
		     int nts, const unsigned char *use, const model_fit_options *o,
		     const perf_model *fixed, int threads, prune_eval *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	out->ntemplates = nts;
	out->template_ms = xcalloc((size_t)(nts > 0 ? nts : 1), sizeof *out->template_ms);
	for (int i = 0; i < nts; i++)
		out->template_ms[i] = model_samples_compile_ms(s, i);
	out->shapes = xcalloc(s->nshapes ? s->nshapes : 1, sizeof *out->shapes);
	for (size_t k = 0; k < s->nshapes; k++)
		if (s->shapes[k].winner_us > 0)
			out->shapes[out->nshapes++].shape = k;
	eval_job j = { .s = s, .mx = mx, .ts = ts, .nts = nts, .use = use, .o = o, .fixed = fixed,
		       .out = out };
	atomic_init(&j.next, 0);
	atomic_init(&j.failed, 0);
	model_run_workers(worker, &j, threads);
	if (atomic_load(&j.failed)) {
		*err = j.err;
		prune_eval_free(out);
		return -1;
	}
	return 0;
}

void prune_eval_free(prune_eval *e)
{
	for (size_t i = 0; e->shapes && i < e->nshapes; i++) {
		free(e->shapes[i].score);
		free(e->shapes[i].group);
		free(e->shapes[i].stored_us);
		free(e->shapes[i].kernel);
	}
	free(e->shapes);
	free(e->template_ms);
	memset(e, 0, sizeof *e);
}

static int by_value(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return (x > y) - (x < y);
}

/* A kernel and the compile time it is counted at. */
typedef struct kernel_cost {
	unsigned long long kernel;
	double ms;
} kernel_cost;

static int by_kernel(const void *a, const void *b)
{
	return by_value(&((const kernel_cost *)a)->kernel, &((const kernel_cost *)b)->kernel);
}

/* How many distinct kernels v holds; *seconds: their compile time. */
static size_t distinct(kernel_cost *v, size_t n, double *seconds)
{
	qsort(v, n, sizeof *v, by_kernel);
	size_t d = 0;
	*seconds = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || v[i].kernel != v[i - 1].kernel) {
			d++;
			*seconds += v[i].ms / 1e3;
		}
	return d;
}

void prune_eval_measure(const prune_eval *e, const model_samples *s, const prune_options *o,
			prune_eval_result *r)
{
	memset(r, 0, sizeof *r);
	size_t total = 0;
	for (size_t i = 0; i < e->nshapes; i++)
		total += e->shapes[i].n;
	kernel_cost *all = xmalloc((total ? total : 1) * sizeof *all);
	kernel_cost *kept_k = xmalloc((total ? total : 1) * sizeof *kept_k);
	size_t nall = 0, nkept = 0;
	double *tw = xmalloc((size_t)(e->ntemplates > 0 ? e->ntemplates : 1) * sizeof *tw);
	prune_template_weights(e->template_ms, e->ntemplates, o->compile_weight, tw);
	double log_sum = 0;
	for (size_t i = 0; i < e->nshapes; i++) {
		const prune_eval_shape *sh = &e->shapes[i];
		const model_shape *ms = &s->shapes[sh->shape];
		unsigned char *kept = xmalloc(sh->n ? sh->n : 1);
		double *weight = xmalloc((sh->n ? sh->n : 1) * sizeof *weight);
		for (size_t k = 0; k < sh->n; k++)
			weight[k] = tw[sh->group[k]];
		r->kept += prune_select_weighted(sh->score, sh->group, weight, sh->n, o,
						 prune_shape_seed(o->seed, ms->dtype, ms->M, ms->N),
						 kept);
		free(weight);
		r->all += sh->n;
		double best = 0;
		for (size_t k = 0; k < sh->n; k++) {
			kernel_cost kc = { sh->kernel[k], e->template_ms[sh->group[k]] };
			all[nall++] = kc;
			if (!kept[k])
				continue;
			kept_k[nkept++] = kc;
			if (sh->stored_us[k] > 0 && (best == 0 || sh->stored_us[k] < best))
				best = sh->stored_us[k];
		}
		free(kept);
		/* nothing timed among the kept: as if ten times slower */
		double behind = best > 0 ? best / ms->winner_us : 10;
		r->shapes++;
		r->within2 += behind <= 1.02;
		r->within5 += behind <= 1.05;
		log_sum += log(1 / behind);
		if (behind > r->worst) {
			r->worst = behind;
			r->worst_shape = sh->shape;
		}
	}
	r->geomean = r->shapes ? exp(log_sum / (double)r->shapes) : 0;
	r->kernels_all = distinct(all, nall, &r->compile_s_all);
	r->kernels_kept = distinct(kept_k, nkept, &r->compile_s_kept);
	free(tw);
	free(all);
	free(kept_k);
}

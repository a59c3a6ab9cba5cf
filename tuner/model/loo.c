/* Leave-one-out evaluation of the performance model: see loo.h. Each
 * held-out shape is one fit, independent of the others: threads take
 * shapes in turn. */
#include "tuner/model/loo.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/model/workers.h"

typedef struct loo_job {
	const model_samples *s;
	const model_matrix *mx;
	const tr_template *ts;
	int nts;
	const model_fit_options *o;
	const perf_model *fixed; /* NULL: a fit per held-out shape */
	loo_outcome *out;
	size_t nout;
	atomic_size_t next;
	atomic_int failed;
	at_error err;
} loo_job;

/* The stored time of variant values of template t at shape sh; 0: none. */
static double stored_us(const loo_job *j, const model_shape *sh, const tr_template *t,
			const long long *values)
{
	int ti = (int)(t - j->ts);
	double best = 0;
	for (size_t i = sh->first; i < sh->first + sh->n; i++) {
		const model_sample *x = &j->s->samples[i];
		if (x->tmpl == ti && memcmp(x->values, values, (size_t)t->nparams * sizeof *values) == 0 &&
		    (best == 0 || x->time_us < best))
			best = x->time_us;
	}
	return best;
}

/* The timed variant of the smallest prediction at shape sh; the features
 * in m's own space (a fixed model's may differ from the samples' matrix). */
static size_t timed_choice(const loo_job *j, const perf_model *m, const model_shape *sh)
{
	size_t pick = sh->first;
	double best = 0;
	int any = 0;
	double *x = xmalloc((size_t)pf_nfeatures(&m->space) * sizeof *x);
	for (size_t i = sh->first; i < sh->first + sh->n; i++) {
		const model_sample *v = &j->s->samples[i];
		at_error ignored;
		if (!j->mx->ok[i] ||
		    pf_variant_features(&m->space, &j->ts[v->tmpl], v->values, &sh->env, x, &ignored))
			continue;
		double p = perf_model_rank_score(m, x);
		if (!any || p < best) {
			any = 1;
			best = p;
			pick = i;
		}
	}
	free(x);
	return pick;
}

static int evaluate(loo_job *j, loo_outcome *r, at_error *err)
{
	const model_shape *sh = &j->s->shapes[r->shape];
	perf_model fitted;
	if (!j->fixed && model_fit(j->s, j->mx, (long)r->shape, j->o, &fitted))
		return at_error_set(err, "nothing to fit on without shape %zu", r->shape);
	const perf_model *m = j->fixed ? j->fixed : &fitted;
	perf_choice c;
	int rc = perf_model_choose(m, j->ts, j->nts, sh->dtype, &sh->env, &c, err);
	if (rc == 0) {
		r->rules_t = c.t;
		r->nvalid = c.nvalid;
		if (c.t) {
			memcpy(r->rules_values, c.values, sizeof c.values);
			r->rules_us = stored_us(j, sh, c.t, c.values);
			perf_prediction p;
			if (perf_model_predict(m, c.t, c.values, &sh->env, sh->copy_gbps, &p, err) == 0)
				r->predicted_us = p.time_us;
		}
		r->timed_pick = timed_choice(j, m, sh);
		r->timed_us = j->s->samples[r->timed_pick].time_us;
	}
	if (rc == 0 && m->fits > 1) {
		/* the same fits ranked the other way: both rules for one fit's cost */
		perf_model other = *m;
		other.rank = m->rank == PERF_RANK_MEAN ? PERF_RANK_WORST : PERF_RANK_MEAN;
		rc = perf_model_choose(&other, j->ts, j->nts, sh->dtype, &sh->env, &c, err);
		if (rc == 0 && c.t)
			r->other_rank_us = stored_us(j, sh, c.t, c.values);
	}
	if (!j->fixed)
		perf_model_free(&fitted);
	return rc;
}

static void *worker(void *arg)
{
	loo_job *j = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&j->next, 1);
		if (k >= j->nout || atomic_load(&j->failed))
			return NULL;
		at_error err;
		if (evaluate(j, &j->out[k], &err) && !atomic_exchange(&j->failed, 1))
			j->err = err;
	}
}

int model_loo(const model_samples *s, const model_matrix *mx, const tr_template *ts, int nts,
	      const model_fit_options *o, const perf_model *fixed, loo_part part, int threads,
	      loo_outcome *out, size_t *n, at_error *err)
{
	loo_job j = { .s = s, .mx = mx, .ts = ts, .nts = nts, .o = o, .fixed = fixed, .out = out };
	size_t with_winner = 0;
	for (size_t k = 0; k < s->nshapes; k++) {
		if (s->shapes[k].winner_us <= 0)
			continue;
		if (part.count > 1 && (int)(with_winner++ % (size_t)part.count) != part.index - 1)
			continue;
		memset(&out[j.nout], 0, sizeof *out);
		out[j.nout++].shape = k;
	}
	atomic_init(&j.next, 0);
	atomic_init(&j.failed, 0);
	model_run_workers(worker, &j, threads);
	*n = j.nout;
	if (atomic_load(&j.failed)) {
		*err = j.err;
		return -1;
	}
	return 0;
}

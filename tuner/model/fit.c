/* Fitting the performance model: see fit.h. */
#include "tuner/model/fit.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/model/workers.h"

void model_fit_defaults(model_fit_options *o)
{
	/* 131 shapes: small trees, or each shape becomes its own leaf */
	o->shape = (boost_params){ .ntrees = 200, .depth = 3, .learning_rate = 0.05,
				   .min_leaf_weight = 3, .lambda = 1, .subsample = 1, .seed = 7 };
	/* weights are a shape's share (each shape weighs 1 in all) */
	o->variant = (boost_params){ .ntrees = 300, .depth = 8, .learning_rate = 0.1,
				     .min_leaf_weight = 0.05, .lambda = 0.01, .subsample = 0.5,
				     .seed = 11 };
	o->clip = log(3.0);
	o->near = 1.25;
	o->near_weight = 4;
	o->fits = 1;
	o->rank = PERF_RANK_MEAN;
}

void model_matrix_build(const model_samples *s, const tr_template *ts, int nts,
			model_matrix *out)
{
	memset(out, 0, sizeof *out);
	/* only the templates with results: one the model never learned stays
	 * out of its space, so that the sweep's pruner and the library's
	 * ranking know not to trust a prediction for it */
	unsigned char *learned = calloc((size_t)(nts > 0 ? nts : 1), 1);
	for (size_t i = 0; learned && i < s->nsamples; i++)
		learned[s->samples[i].tmpl] = 1;
	for (int i = 0; i < nts; i++)
		if (!learned || learned[i])
			pf_space_add(&out->space, &ts[i]);
	out->compile_ms = xcalloc((size_t)(out->space.ntemplates > 0 ? out->space.ntemplates : 1),
				  sizeof *out->compile_ms);
	for (int k = 0; k < out->space.ntemplates; k++)
		for (int i = 0; i < nts; i++)
			if (strcmp(ts[i].name, out->space.templates[k]) == 0) {
				out->compile_ms[k] = model_samples_compile_ms(s, i);
				break;
			}
	free(learned);
	out->nfeatures = pf_nfeatures(&out->space);
	out->x = xmalloc(s->nsamples * (size_t)out->nfeatures * sizeof *out->x);
	out->ok = xmalloc(s->nsamples);
	for (size_t k = 0; k < s->nshapes; k++) {
		const model_shape *sh = &s->shapes[k];
		for (size_t i = sh->first; i < sh->first + sh->n; i++) {
			at_error err;
			const model_sample *x = &s->samples[i];
			out->ok[i] = pf_variant_features(&out->space, &ts[x->tmpl], x->values, &sh->env,
							 out->x + i * (size_t)out->nfeatures, &err) == 0;
		}
	}
}

void model_matrix_free(model_matrix *m)
{
	pf_space_free(&m->space);
	free(m->x);
	free(m->ok);
	free(m->compile_ms);
	memset(m, 0, sizeof *m);
}

static void copy_space(const pf_space *from, pf_space *to)
{
	memset(to, 0, sizeof *to);
	for (int i = 0; i < from->ntemplates; i++)
		pf_space_add_name(to, 0, from->templates[i]);
	for (int i = 0; i < from->nparams; i++)
		pf_space_add_name(to, 1, from->params[i]);
}

/* The shape ensemble: log(best / copy time) of each shape but held_out. */
static int fit_shapes(const model_samples *s, const model_matrix *mx, long held_out,
		      const model_fit_options *o, te_ensemble *e)
{
	double *x = xmalloc(s->nshapes * PF_SHAPE_FEATURES * sizeof *x);
	double *y = xmalloc(s->nshapes * sizeof *y);
	size_t n = 0;
	for (size_t k = 0; k < s->nshapes; k++) {
		const model_shape *sh = &s->shapes[k];
		if ((long)k == held_out || sh->n == 0)
			continue;
		pf_shape_features(&sh->env, x + n * PF_SHAPE_FEATURES);
		y[n++] = log(sh->best_us / perf_copy_us(&sh->env, sh->copy_gbps));
	}
	boost_data d = { .x = x, .y = y, .n = n, .nfeatures = PF_SHAPE_FEATURES };
	int rc = boost_fit(&d, &o->shape, e);
	if (rc == 0)
		te_round(e); /* short text, read back fast */
	free(x);
	free(y);
	(void)mx;
	return rc;
}

/* A sample's weight before normalising: those near their shape's best are
 * the ones a choice is made among. */
static double near_weight(const model_fit_options *o, double behind)
{
	return behind <= o->near ? o->near_weight : 1.0;
}

/* The fits of one variant ensemble, each its own seed: independent, so
 * threads take them in turn; the parts are averaged in seed order, so the
 * ensemble is the same however many threads ran. */
typedef struct fits_job {
	const boost_data *d;
	const boost_params *p;
	te_ensemble *parts;
	int fits;
	atomic_int next, failed;
} fits_job;

static void *fit_one_seed(void *arg)
{
	fits_job *j = arg;
	for (int k; (k = atomic_fetch_add(&j->next, 1)) < j->fits;) {
		boost_params p = *j->p;
		p.seed += (unsigned)k;
		if (boost_fit(j->d, &p, &j->parts[k]))
			atomic_store(&j->failed, 1);
	}
	return NULL;
}

/* The variant ensemble: log(time / the shape's best) of every sample but
 * held_out's, each shape's samples weighing 1 together. */
static int fit_variants(const model_samples *s, const model_matrix *mx, long held_out,
			const model_fit_options *o, te_ensemble *e)
{
	size_t nf = (size_t)mx->nfeatures, n = 0;
	double *x = xmalloc(s->nsamples * nf * sizeof *x);
	double *y = xmalloc(s->nsamples * sizeof *y), *w = xmalloc(s->nsamples * sizeof *w);
	for (size_t k = 0; k < s->nshapes; k++) {
		const model_shape *sh = &s->shapes[k];
		if ((long)k == held_out)
			continue;
		double total = 0; /* of the shape's weights before they are made to sum to 1 */
		for (size_t i = sh->first; i < sh->first + sh->n; i++)
			total += mx->ok[i] ? near_weight(o, s->samples[i].time_us / sh->best_us) : 0;
		for (size_t i = sh->first; i < sh->first + sh->n; i++) {
			if (!mx->ok[i])
				continue;
			memcpy(x + n * nf, mx->x + i * nf, nf * sizeof *x);
			double behind = log(s->samples[i].time_us / sh->best_us);
			y[n] = behind < o->clip ? behind : o->clip;
			w[n++] = near_weight(o, s->samples[i].time_us / sh->best_us) / total;
		}
	}
	boost_data d = { .x = x, .y = y, .w = w, .n = n, .nfeatures = (int)nf };
	int fits = o->fits > 1 ? o->fits : 1;
	te_ensemble *parts = xcalloc((size_t)fits, sizeof *parts);
	fits_job job = { .d = &d, .p = &o->variant, .parts = parts, .fits = fits };
	atomic_init(&job.next, 0);
	atomic_init(&job.failed, 0);
	model_run_workers(fit_one_seed, &job, fits);
	int rc = atomic_load(&job.failed) ? -1 : 0;
	if (rc == 0) {
		boost_average(parts, fits, e);
		te_round(e);
	}
	for (int k = 0; k < fits; k++)
		te_free(&parts[k]);
	free(parts);
	free(x);
	free(y);
	free(w);
	return rc;
}

int model_fit(const model_samples *s, const model_matrix *mx, long held_out,
	      const model_fit_options *o, perf_model *out)
{
	memset(out, 0, sizeof *out);
	copy_space(&mx->space, &out->space);
	if (mx->compile_ms) {
		out->compile_ms = xcalloc((size_t)(out->space.ntemplates > 0 ? out->space.ntemplates : 1),
					  sizeof *out->compile_ms);
		memcpy(out->compile_ms, mx->compile_ms,
		       (size_t)out->space.ntemplates * sizeof *out->compile_ms);
	}
	out->fits = o->fits > 1 ? o->fits : 1;
	out->rank = o->rank;
	if (fit_shapes(s, mx, held_out, o, &out->shape) ||
	    fit_variants(s, mx, held_out, o, &out->variant)) {
		perf_model_free(out);
		return -1;
	}
	return 0;
}

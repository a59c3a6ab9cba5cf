/* A shape's variants pruned by the model: see prune_shape.h. */
#include "tuner/sweep/prune_shape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/sweep/prune_model.h"

/* What a variant of each of p's templates counts against K: the model's
 * compile time of the template against the typical one's (prune.h). */
static double *template_weights(const perf_model *m, const sweep_plan *p, double exponent)
{
	size_t nt = p->ntemplates ? p->ntemplates : 1;
	double *ms = xcalloc(nt, sizeof *ms), *weight = xmalloc(nt * sizeof *weight);
	for (size_t t = 0; t < p->ntemplates; t++)
		ms[t] = perf_model_compile_ms(m, p->templates[t].name);
	prune_template_weights(ms, (int)p->ntemplates, exponent, weight);
	free(ms);
	return weight;
}

int sweep_pruner_open(sweep_pruner *pr, const sweep_plan *p, const prune_options *o,
		      const char *db_path, long long before_sweep, const char *gpu_name, int cc,
		      const char *templates_dir, at_error *err)
{
	memset(pr, 0, sizeof *pr);
	pr->o = *o;
	pr->plan = p;
	if (o->exhaustive)
		return 0;
	pr->rules = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *pr->rules);
	tr_template *ts = xcalloc(p->ntemplates ? p->ntemplates : 1, sizeof *ts);
	for (size_t i = 0; i < p->ntemplates; i++) {
		manifest_rules_view(&p->templates[i], &pr->rules[i]);
		ts[i] = pr->rules[i].t;
	}
	int rc = 0;
	for (size_t i = 0; i < p->nshapes && rc == 0; i++) {
		/* past PRUNE_MAX_OPS ops the rest are swept in full: still right */
		if (sweep_op_model_of(pr, p->shapes[i].op) || pr->nops == PRUNE_MAX_OPS)
			continue;
		sweep_op_model *om = &pr->ops[pr->nops];
		om->op = p->shapes[i].op;
		int got = prune_model_obtain(db_path, before_sweep, gpu_name, cc, om->op, ts,
					     (int)p->ntemplates, templates_dir, &om->model, om->source,
					     sizeof om->source, err);
		if (got < 0)
			rc = -1;
		else
			om->have_model = got;
		if (om->have_model)
			om->template_weight = template_weights(&om->model, p, o->compile_weight);
		pr->nops++;
	}
	free(ts);
	if (rc)
		sweep_pruner_close(pr);
	return rc;
}

const sweep_op_model *sweep_op_model_of(const sweep_pruner *pr, const char *op)
{
	for (int i = 0; pr && i < pr->nops; i++)
		if (strcmp(pr->ops[i].op, op) == 0)
			return &pr->ops[i];
	return NULL;
}

void sweep_pruner_close(sweep_pruner *pr)
{
	for (int i = 0; i < pr->nops; i++) {
		if (pr->ops[i].have_model)
			perf_model_free(&pr->ops[i].model);
		free(pr->ops[i].template_weight);
	}
	pr->nops = 0;
	for (size_t i = 0; pr->rules && i < pr->plan->ntemplates; i++)
		manifest_rules_free(&pr->rules[i]);
	free(pr->rules);
	pr->rules = NULL;
}

void sweep_prune_variants(const sweep_pruner *pr, const sweep_shape *s, const tr_env *env,
			  variant *vs, size_t *n)
{
	const sweep_op_model *om = sweep_op_model_of(pr, s->op);
	if (!om || !om->have_model || pr->o.exhaustive || *n == 0)
		return;
	/* a template the model never learned (a new one, the backward ops'):
	 * its predictions mean nothing, so the shape is swept in full */
	for (size_t i = 0; i < *n; i++)
		if (!pf_space_has_template(&om->model.space, vs[i].tmpl->name))
			return;
	double *score = xmalloc(*n * sizeof *score);
	int *group = xmalloc(*n * sizeof *group);
	unsigned char *kept = xmalloc(*n);
	for (size_t i = 0; i < *n; i++) {
		group[i] = (int)(vs[i].tmpl - pr->plan->templates);
		perf_prediction pred;
		at_error ignored;
		/* the ranking needs log_behind only: the copy rate does not matter */
		score[i] = perf_model_predict(&om->model, &pr->rules[group[i]].t, vs[i].values, env,
					      1.0, &pred, &ignored) == 0
				   ? pred.log_behind
				   : NAN;
	}
	/* a variant weighs its template's compile time against K */
	double *weight = xmalloc(*n * sizeof *weight);
	for (size_t i = 0; i < *n; i++)
		weight[i] = om->template_weight[group[i]];
	prune_select_weighted(score, group, weight, *n, &pr->o,
			      prune_shape_seed(pr->o.seed, s->dtype, s->M, s->N), kept);
	free(weight);
	size_t k = 0;
	for (size_t i = 0; i < *n; i++)
		if (kept[i])
			vs[k++] = vs[i];
	*n = k;
	free(kept);
	free(group);
	free(score);
}

int sweep_shape_variants(const sweep_pruner *pr, const sweep_plan *p, const sweep_shape *s,
			 const tr_env *env, variant **out, size_t *n, size_t *nall,
			 at_error *err)
{
	if (plan_shape_variants(p, s, env, out, n, err))
		return -1;
	*nall = *n;
	sweep_prune_variants(pr, s, env, *out, n);
	return 0;
}

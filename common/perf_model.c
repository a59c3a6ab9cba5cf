/* Predicting, choosing and storing with the performance model: see
 * perf_model.h. */
#include "common/perf_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double perf_copy_us(const tr_env *env, double copy_gbps)
{
	double bytes = 2.0 * (double)env->M * (double)env->N * (double)env->elem_bytes;
	return bytes / (copy_gbps * 1e3);
}

int perf_model_predict(const perf_model *m, const tr_template *t, const long long *values,
		       const tr_env *env, double copy_gbps, perf_prediction *out, at_error *err)
{
	int nf = pf_nfeatures(&m->space);
	double *x = xmalloc((size_t)nf * sizeof *x);
	if (pf_variant_features(&m->space, t, values, env, x, err)) {
		free(x);
		return -1;
	}
	out->copy_us = perf_copy_us(env, copy_gbps);
	out->best_us = out->copy_us * exp(te_predict(&m->shape, x));
	out->log_behind = perf_model_rank_score(m, x);
	out->time_us = out->best_us * exp(out->log_behind);
	free(x);
	return 0;
}

/* Fit k's log(time / best) for x: its run of trees, unscaled. */
static double fit_prediction(const perf_model *m, const double *x, int k)
{
	int per = m->variant.ntrees / m->fits;
	return m->variant.base + m->fits * te_predict_trees(&m->variant, x, k * per, per);
}

double perf_model_rank_score(const perf_model *m, const double *x)
{
	if (m->fits <= 1 || m->rank == PERF_RANK_MEAN)
		return te_predict(&m->variant, x);
	double worst = fit_prediction(m, x, 0);
	for (int k = 1; k < m->fits; k++) {
		double p = fit_prediction(m, x, k);
		worst = p > worst ? p : worst;
	}
	return worst;
}

const char *perf_rank_name(perf_rank r)
{
	return r == PERF_RANK_WORST ? "worst" : "mean";
}

int perf_rank_parse(const char *name, perf_rank *out)
{
	for (int r = PERF_RANK_MEAN; r <= PERF_RANK_WORST; r++)
		if (strcmp(name, perf_rank_name((perf_rank)r)) == 0) {
			*out = (perf_rank)r;
			return 0;
		}
	return -1;
}

/* Indices of the n largest |contrib|, largest first. */
static int top_contributions(const double *contrib, int nf, int *idx, int n)
{
	int k = 0;
	for (int i = 0; i < nf; i++) {
		if (contrib[i] == 0 || (k == n && fabs(contrib[i]) <= fabs(contrib[idx[n - 1]])))
			continue;
		int j = k < n ? k++ : n - 1;
		while (j > 0 && fabs(contrib[idx[j - 1]]) < fabs(contrib[i])) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	return k;
}

void perf_model_explain(const perf_model *m, const tr_template *t, const long long *values,
			const tr_env *env, int top, strbuf *out)
{
	int nf = pf_nfeatures(&m->space);
	double *x = xmalloc((size_t)nf * sizeof *x), *contrib = xmalloc((size_t)nf * sizeof *x);
	int *idx = xmalloc((size_t)nf * sizeof *idx);
	at_error err;
	char name[128];
	if (pf_variant_features(&m->space, t, values, env, x, &err)) {
		strbuf_printf(out, "no prediction: %s\n", err.msg);
		goto done;
	}
	strbuf_puts(out, "features:");
	for (int i = 0; i < PF_FIXED_FEATURES; i++)
		strbuf_printf(out, " %s=%.4g", pf_feature_name(&m->space, i, name, sizeof name), x[i]);
	double bias = te_explain(&m->variant, x, contrib, nf);
	strbuf_printf(out, "\nlog(time / best) %.4f = %.4f (mean)", te_predict(&m->variant, x), bias);
	int n = top_contributions(contrib, nf, idx, top > 0 && top < nf ? top : nf);
	for (int k = 0; k < n; k++)
		strbuf_printf(out, " %+.4f %s", contrib[idx[k]],
			      pf_feature_name(&m->space, idx[k], name, sizeof name));
	strbuf_puts(out, "\n");
	if (m->fits > 1) {
		strbuf_printf(out, "fits' log(time / best), ranked by the %s:", perf_rank_name(m->rank));
		for (int k = 0; k < m->fits; k++)
			strbuf_printf(out, " %.4f", fit_prediction(m, x, k));
		strbuf_puts(out, "\n");
	}
done:
	free(x);
	free(contrib);
	free(idx);
}

/* The walk's state: the k best variants so far of all templates walked,
 * best first. */
typedef struct choose_state {
	const perf_model *m;
	const tr_template *t;
	const tr_env *env;
	double *x;
	perf_choice *out;
	int k, kept;
	long long nvalid;
} choose_state;

static void consider(void *ctx, const long long *values)
{
	choose_state *s = ctx;
	at_error err;
	if (pf_variant_features(&s->m->space, s->t, values, s->env, s->x, &err))
		return; /* no launch at this shape: not a variant to serve */
	double p = perf_model_rank_score(s->m, s->x);
	s->nvalid++;
	int at = s->kept;
	while (at > 0 && p < s->out[at - 1].log_behind)
		at--;
	if (at == s->k)
		return;
	int last = s->kept < s->k ? s->kept++ : s->k - 1;
	memmove(&s->out[at + 1], &s->out[at], (size_t)(last - at) * sizeof s->out[0]);
	perf_choice *c = &s->out[at];
	memset(c, 0, sizeof *c);
	c->t = s->t;
	c->log_behind = p;
	memcpy(c->values, values, (size_t)s->t->nparams * sizeof *values);
}

int perf_model_rank(const perf_model *m, const tr_template *ts, int n, at_dtype dtype,
		    const tr_env *env, perf_choice *out, int k, at_error *err)
{
	memset(out, 0, (size_t)(k > 0 ? k : 0) * sizeof *out);
	choose_state s = { .m = m, .env = env, .out = out, .k = k };
	if (k < 1)
		return 0;
	s.x = xmalloc((size_t)pf_nfeatures(&m->space) * sizeof *s.x);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		const tr_template *t = &ts[i];
		if (!(t->dtype_mask & (1u << dtype)) || t->nparams > TR_MAX_PARAMS ||
		    !pf_space_has_template(&m->space, t->name))
			continue; /* never learned: its prediction would mean nothing */
		tr_rules *r;
		if (tr_rules_new(t, env, &r, err)) {
			rc = -1;
			break;
		}
		long long start[TR_MAX_PARAMS];
		int idx[TR_MAX_PARAMS];
		for (int j = 0; j < t->nparams; j++) {
			start[j] = t->params[j].def;
			idx[j] = t->nparams - 1 - j;
		}
		s.t = t;
		at_error walk_err;
		/* a constraint that cannot be evaluated holds no variant: not an error */
		tr_walk(r, start, idx, t->nparams, consider, &s, &walk_err);
		tr_rules_free(r);
	}
	free(s.x);
	for (int j = 0; j < s.kept; j++)
		out[j].nvalid = s.nvalid;
	return rc ? -1 : s.kept;
}

int perf_model_choose(const perf_model *m, const tr_template *ts, int n, at_dtype dtype,
		      const tr_env *env, perf_choice *out, at_error *err)
{
	int kept = perf_model_rank(m, ts, n, dtype, env, out, 1, err);
	return kept < 0 ? -1 : 0;
}

void perf_model_to_text(const perf_model *m, strbuf *out)
{
	strbuf_puts(out, "perf_model 1\n");
	for (int i = 0; i < m->space.ntemplates; i++)
		strbuf_printf(out, "template %s\n", m->space.templates[i]);
	for (int i = 0; i < m->space.nparams; i++)
		strbuf_printf(out, "param %s\n", m->space.params[i]);
	for (int i = 0; m->compile_ms && i < m->space.ntemplates; i++)
		if (m->compile_ms[i] > 0)
			strbuf_printf(out, "compile_ms %s %.1f\n", m->space.templates[i],
				      m->compile_ms[i]);
	if (m->fits > 1)
		strbuf_printf(out, "fits %d %s\n", m->fits, perf_rank_name(m->rank));
	te_to_text(&m->shape, out);
	te_to_text(&m->variant, out);
}

/* The "template NAME" and "param NAME" lines at *p. */
static void read_space(const char **p, pf_space *s)
{
	for (;;) {
		int is_param = strncmp(*p, "param ", 6) == 0;
		if (!is_param && strncmp(*p, "template ", 9) != 0)
			return;
		const char *name = *p + (is_param ? 6 : 9);
		size_t len = strcspn(name, "\n");
		char *copy = xmalloc(len + 1);
		memcpy(copy, name, len);
		copy[len] = 0;
		pf_space_add_name(s, is_param, copy);
		free(copy);
		*p = name + len + (name[len] == '\n');
	}
}

/* The "compile_ms NAME MS" lines at *p (a model written before they were
 * has none: every compile time is then unknown). */
static int read_compile_ms(const char **p, perf_model *m, at_error *err)
{
	while (strncmp(*p, "compile_ms ", 11) == 0) {
		const char *name = *p + 11;
		size_t len = strcspn(name, " \n");
		char *end = (char *)name;
		double ms = name[len] == ' ' ? strtod(name + len + 1, &end) : -1;
		int t = -1;
		for (int i = 0; i < m->space.ntemplates && t < 0; i++)
			if (strlen(m->space.templates[i]) == len &&
			    strncmp(m->space.templates[i], name, len) == 0)
				t = i;
		if (t < 0 || !(ms >= 0) || (*end != '\n' && *end != 0))
			return at_error_set(err, "performance model: bad line \"%.*s\" (expected "
					    "\"compile_ms TEMPLATE MS\" of a template above)",
					    (int)strcspn(*p, "\n"), *p);
		if (!m->compile_ms)
			m->compile_ms = xcalloc((size_t)m->space.ntemplates, sizeof *m->compile_ms);
		m->compile_ms[t] = ms;
		*p = end + (*end == '\n');
	}
	return 0;
}

/* The "fits K RANK" line at *p, if there (a model of one fit has none). */
static int read_fits(const char **p, perf_model *m, at_error *err)
{
	m->fits = 1;
	if (strncmp(*p, "fits ", 5) != 0)
		return 0;
	char *end;
	long k = strtol(*p + 5, &end, 10);
	char rank[16] = "";
	size_t len = *end == ' ' ? strcspn(end + 1, "\n") : 0;
	if (len && len < sizeof rank)
		memcpy(rank, end + 1, len);
	if (k < 1 || k > 1024 || !len || perf_rank_parse(rank, &m->rank))
		return at_error_set(err, "performance model: bad line \"%.*s\" (expected \"fits K "
				    "mean\" or \"fits K worst\", K from 1 to 1024)",
				    (int)strcspn(*p, "\n"), *p);
	m->fits = (int)k;
	*p = end + 1 + len + (end[1 + len] == '\n');
	return 0;
}

double perf_model_compile_ms(const perf_model *m, const char *name)
{
	for (int i = 0; m->compile_ms && i < m->space.ntemplates; i++)
		if (strcmp(m->space.templates[i], name) == 0)
			return m->compile_ms[i];
	return 0;
}

int perf_model_from_text(const char *text, perf_model *m, at_error *err)
{
	memset(m, 0, sizeof *m);
	const char *p = text;
	if (strncmp(p, "perf_model 1\n", 13) != 0)
		return at_error_set(err, "not a performance model (expected \"perf_model 1\")");
	p += 13;
	read_space(&p, &m->space);
	if (read_compile_ms(&p, m, err) || read_fits(&p, m, err)) {
		perf_model_free(m);
		return -1;
	}
	if (te_from_text(&p, PF_SHAPE_FEATURES, &m->shape, err) ||
	    te_from_text(&p, pf_nfeatures(&m->space), &m->variant, err)) {
		at_error_prefix(err, "performance model");
		perf_model_free(m);
		return -1;
	}
	if (*p) {
		perf_model_free(m);
		return at_error_set(err, "performance model: text after the variant ensemble");
	}
	if (m->variant.ntrees % m->fits) {
		int k = m->fits, n = m->variant.ntrees;
		perf_model_free(m);
		return at_error_set(err, "performance model: %d fits cannot share %d trees equally",
				    k, n);
	}
	return 0;
}

void perf_model_free(perf_model *m)
{
	free(m->compile_ms);
	m->compile_ms = NULL;
	pf_space_free(&m->space);
	te_free(&m->shape);
	te_free(&m->variant);
}

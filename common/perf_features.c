/* The performance model's features of a variant at a shape: see
 * perf_features.h. */
#include "common/perf_features.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"

static const char *const fixed_names[PF_FIXED_FEATURES] = {
	[PF_LOG2_M] = "log2_M",
	[PF_LOG2_N] = "log2_N",
	[PF_ELEM_BYTES] = "elem_bytes",
	[PF_LOG2_BYTES] = "log2_bytes",
	[PF_LOG2_ROWS_PER_SM] = "log2_rows_per_sm",
	[PF_ROW_ALIGN] = "row_align",
	[PF_THREADS] = "threads",
	[PF_ROWS_PER_CTA] = "rows_per_cta",
	[PF_LOG2_SMEM] = "log2_smem",
	[PF_PERSISTENT] = "persistent",
	[PF_CTAS_PER_ROW] = "ctas_per_row",
	[PF_COOPERATIVE] = "cooperative",
	[PF_FILL] = "fill",
	[PF_LOG2_ELEMS_THREAD] = "log2_elems_per_thread",
	[PF_LOG2_ROW_STEPS] = "log2_row_steps",
	[PF_RESIDENT] = "resident",
	[PF_LOG2_WAVES] = "log2_waves",
	[PF_WAVE_TAIL] = "wave_tail",
	[PF_VEC_BYTES] = "vec_bytes",
	[PF_VEC_ALIGNED] = "vec_aligned",
};

/* Threads an SM runs at once (sm_80 and sm_90 alike; the rules' env does
 * not say). */
#define THREADS_PER_SM 2048
#define CTAS_PER_SM 32

int pf_nfeatures(const pf_space *s)
{
	return PF_FIXED_FEATURES + s->ntemplates + s->nparams;
}

const char *pf_feature_name(const pf_space *s, int i, char *buf, size_t cap)
{
	if (i < PF_FIXED_FEATURES)
		snprintf(buf, cap, "%s", fixed_names[i]);
	else if (i < PF_FIXED_FEATURES + s->ntemplates)
		snprintf(buf, cap, "template=%s", s->templates[i - PF_FIXED_FEATURES]);
	else
		snprintf(buf, cap, "param=%s", s->params[i - PF_FIXED_FEATURES - s->ntemplates]);
	return buf;
}

static int name_index(char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

static void add_name(char ***names, int *n, const char *name)
{
	if (name_index(*names, *n, name) >= 0)
		return;
	*names = xrealloc(*names, (size_t)(*n + 1) * sizeof **names);
	(*names)[(*n)++] = xstrdup(name);
}

void pf_space_add_name(pf_space *s, int is_param, const char *name)
{
	if (is_param)
		add_name(&s->params, &s->nparams, name);
	else
		add_name(&s->templates, &s->ntemplates, name);
}

int pf_space_has_template(const pf_space *s, const char *name)
{
	for (int i = 0; i < s->ntemplates; i++)
		if (strcmp(s->templates[i], name) == 0)
			return 1;
	return 0;
}

void pf_space_add(pf_space *s, const tr_template *t)
{
	pf_space_add_name(s, 0, t->name);
	for (int i = 0; i < t->nparams; i++)
		pf_space_add_name(s, 1, t->params[i].name);
}

void pf_space_free(pf_space *s)
{
	for (int i = 0; i < s->ntemplates; i++)
		free(s->templates[i]);
	for (int i = 0; i < s->nparams; i++)
		free(s->params[i]);
	free(s->templates);
	free(s->params);
	memset(s, 0, sizeof *s);
}

static double log2_pos(double v)
{
	return v > 0 ? log2(v) : -1;
}

/* The power of two (up to 2^6) that a row's bytes are a multiple of: N's
 * factors of two and the element's, so that no product overflows (a query
 * may name any N: the library's model ranks variants for it). */
static int row_align(long long N, long long elem_bytes)
{
	if (N == 0 || elem_bytes == 0)
		return 6;
	int align = 0;
	for (long long n = N; align < 6 && n % 2 == 0; n /= 2)
		align++;
	for (long long e = elem_bytes; align < 6 && e % 2 == 0; e /= 2)
		align++;
	return align;
}

void pf_shape_features(const tr_env *env, double *x)
{
	double bytes = 2.0 * (double)env->M * (double)env->N * (double)env->elem_bytes;
	int align = row_align(env->N, env->elem_bytes);
	x[PF_LOG2_M] = log2_pos((double)env->M);
	x[PF_LOG2_N] = log2_pos((double)env->N);
	x[PF_ELEM_BYTES] = (double)env->elem_bytes;
	x[PF_LOG2_BYTES] = log2_pos(bytes);
	x[PF_LOG2_ROWS_PER_SM] = log2_pos((double)env->M / (double)(env->sm_count ? env->sm_count : 1));
	x[PF_ROW_ALIGN] = align;
}

/* CTAs of g an SM holds at once, by threads and shared memory (registers
 * are the compiler's to say: the template params stand in for them). */
static int resident_ctas(const launch_geometry *g, const tr_env *env)
{
	int by_threads = THREADS_PER_SM / (g->threads > 0 ? g->threads : 1);
	int r = by_threads < CTAS_PER_SM ? by_threads : CTAS_PER_SM;
	if (g->dyn_smem > 0) {
		long long by_smem = (env->max_smem + 1024) / (g->dyn_smem + 1024);
		if (by_smem < r)
			r = (int)by_smem;
	}
	return r > 0 ? r : 1;
}

/* The launch's features: what the grid does at this shape. */
static void launch_features(const launch_geometry *g, const tr_env *env, double *x)
{
	int ctas = g->ctas_per_row > 1 ? g->ctas_per_row : 1;
	int rows = g->rows_per_cta > 0 ? g->rows_per_cta : 1;
	double steps = ceil((double)env->M / rows);
	int resident = resident_ctas(g, env);
	double slots = (double)env->sm_count * resident;
	double waves;
	if (g->persistent || g->cooperative)
		waves = steps * ctas / (slots < steps * ctas ? slots : steps * ctas);
	else
		waves = steps * ctas / slots;
	x[PF_THREADS] = g->threads;
	x[PF_ROWS_PER_CTA] = rows;
	x[PF_LOG2_SMEM] = log2(1.0 + g->dyn_smem);
	x[PF_PERSISTENT] = g->persistent;
	x[PF_CTAS_PER_ROW] = ctas;
	x[PF_COOPERATIVE] = g->cooperative;
	x[PF_FILL] = g->max_n > 0 ? (double)env->N / (double)g->max_n : 1;
	x[PF_LOG2_ELEMS_THREAD] = log2_pos((double)env->N * rows / ((double)g->threads * ctas));
	x[PF_LOG2_ROW_STEPS] = log2_pos(steps);
	x[PF_RESIDENT] = resident;
	x[PF_LOG2_WAVES] = log2_pos(waves);
	x[PF_WAVE_TAIL] = waves - floor(waves) > 1e-9 ? waves - floor(waves) : 1;
}

int pf_variant_features(const pf_space *s, const tr_template *t, const long long *values,
			const tr_env *env, double *x, at_error *err)
{
	launch_geometry g;
	if (tr_geometry(t, values, env, &g, err))
		return -1;
	pf_shape_features(env, x);
	launch_features(&g, env, x);
	int vec = tr_param_index(t, "vec", 3);
	x[PF_VEC_BYTES] = vec >= 0 ? (double)(values[vec] * env->elem_bytes) : -1;
	x[PF_VEC_ALIGNED] = vec >= 0 && values[vec] > 0 ? env->N % values[vec] == 0 : 1;
	double *onehot = x + PF_FIXED_FEATURES, *params = onehot + s->ntemplates;
	for (int i = 0; i < s->ntemplates; i++)
		onehot[i] = strcmp(s->templates[i], t->name) == 0;
	for (int i = 0; i < s->nparams; i++) {
		int k = tr_param_index(t, s->params[i], strlen(s->params[i]));
		params[i] = k >= 0 ? (double)values[k] : -1;
	}
	return 0;
}

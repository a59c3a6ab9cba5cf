/* Enumeration of a template's variants: see enumerate.h. */
#include "tuner/sweep/enumerate.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

/* The enumeration walks the params depth first in manifest order (the last
 * varying fastest, the order of a flat odometer loop) and evaluates each
 * constraint as soon as the params it names are bound, so a prefix that
 * fails prunes every combination below it. Checking every combination
 * instead cost ~140 ms per shape for softmax_warp's 138240 and was most of a
 * warm sweep's CPU time. */
typedef struct enum_walk {
	const tmpl_manifest *t;
	expr_var *vars;    /* the params (in order), then the shape variables */
	size_t nvars;
	size_t *ready_at;  /* per constraint: params bound when it can be evaluated */
	variant v;
	variant *out;
	size_t n, cap;
	at_error *err;
} enum_walk;

/* The number of leading params a constraint needs bound, or nparams + 1
 * when it names a variable that is not given (no shape: it is skipped, as
 * manifest_check does). */
static size_t ready_depth(const tmpl_manifest *t, const char *expr, const expr_var *vars,
			  size_t nvars)
{
	const char **names = xmalloc((nvars ? nvars : 1) * sizeof *names);
	size_t nshape = nvars - t->nparams, depth = 0;
	for (; depth <= t->nparams; depth++) {
		size_t k = 0;
		for (size_t i = 0; i < depth; i++)
			names[k++] = vars[i].name;
		for (size_t i = 0; i < nshape; i++)
			names[k++] = vars[t->nparams + i].name;
		at_error ignored = { { 0 } };
		if (expr_validate(expr, names, k, &ignored) == EXPR_OK)
			break;
	}
	free(names);
	return depth;
}

static void keep(enum_walk *w)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 64;
		w->out = xrealloc(w->out, w->cap * sizeof *w->out);
	}
	w->out[w->n++] = w->v;
}

/* Params [0, depth) are bound. Returns -1 when a constraint cannot be
 * evaluated. */
static int walk(enum_walk *w, size_t depth)
{
	const tmpl_manifest *t = w->t;
	for (size_t c = 0; c < t->nconstraints; c++) {
		if (w->ready_at[c] != depth)
			continue;
		long long holds;
		if (expr_eval(t->constraints[c].expr, w->vars, w->nvars, &holds, w->err) != EXPR_OK)
			return -1;
		if (!holds)
			return 0;
	}
	if (depth == t->nparams) {
		keep(w);
		return 0;
	}
	const tmpl_param *p = &t->params[depth];
	for (size_t i = 0; i < p->nvalues; i++) {
		w->v.values[depth] = w->vars[depth].value = p->values[i];
		if (walk(w, depth + 1))
			return -1;
	}
	return 0;
}

int enumerate_variants(const tmpl_manifest *t, at_dtype dt, const shape_env *env,
		       variant **out, size_t *n, at_error *err)
{
	*out = NULL;
	*n = 0;
	if (!(t->dtype_mask & (1u << dt)))
		return 0;
	if (t->nparams > VARIANT_MAX_PARAMS)
		return at_error_set(err, "template %s has more than %d params", t->name,
				    VARIANT_MAX_PARAMS);
	enum_walk w = { .t = t, .err = err };
	variant_defaults(&w.v, t, dt);
	w.vars = xmalloc((t->nparams + MANIFEST_SHAPE_VARS) * sizeof *w.vars);
	w.nvars = manifest_vars(t, w.v.values, env, w.vars);
	w.ready_at = xmalloc((t->nconstraints ? t->nconstraints : 1) * sizeof *w.ready_at);
	for (size_t c = 0; c < t->nconstraints; c++)
		w.ready_at[c] = ready_depth(t, t->constraints[c].expr, w.vars, w.nvars);
	int rc = walk(&w, 0);
	free(w.vars);
	free(w.ready_at);
	if (rc) {
		free(w.out);
		return -1;
	}
	*out = w.out;
	*n = w.n;
	return 0;
}

static int eval_int(const variant *v, const shape_env *env, const char *expr, int *out,
		    at_error *err)
{
	long long value;
	if (manifest_eval(v->tmpl, expr, v->values, env, &value, err))
		return -1;
	if (value < 0 || value > 0x7fffffff)
		return at_error_set(err, "template %s: launch value `%s` = %lld is out of range",
				    v->tmpl->name, expr, value);
	*out = (int)value;
	return 0;
}

int variant_geometry(const variant *v, const shape_env *env, launch_geometry *g,
		     at_error *err)
{
	const tmpl_launch *l = &v->tmpl->launch;
	memset(g, 0, sizeof *g);
	if (eval_int(v, env, l->threads, &g->threads, err) ||
	    eval_int(v, env, l->rows_per_cta, &g->rows_per_cta, err) ||
	    eval_int(v, env, l->smem_bytes, &g->dyn_smem, err) ||
	    eval_int(v, env, l->persistent, &g->persistent, err) ||
	    manifest_eval(v->tmpl, l->max_n, v->values, env, &g->max_n, err) ||
	    eval_int(v, env, l->ctas_per_row, &g->ctas_per_row, err) ||
	    eval_int(v, env, l->cooperative, &g->cooperative, err))
		return -1;
	at_error why;
	if (launch_geometry_check(g, &why))
		return at_error_set(err, "template %s: %s", v->tmpl->name, why.msg);
	return 0;
}

/* Enumeration of a template's variants: see enumerate.h. */
#include "tuner/enumerate.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

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
	size_t idx[VARIANT_MAX_PARAMS] = { 0 };
	size_t cap = 0;
	variant v;
	variant_defaults(&v, t, dt);
	for (;;) {
		for (size_t i = 0; i < t->nparams; i++)
			v.values[i] = t->params[i].values[idx[i]];
		int ok = manifest_check(t, v.values, env, err);
		if (ok < 0) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
		if (ok) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 64;
				*out = xrealloc(*out, cap * sizeof **out);
			}
			(*out)[(*n)++] = v;
		}
		/* advance the odometer, last param fastest */
		size_t i = t->nparams;
		while (i > 0 && ++idx[i - 1] == t->params[i - 1].nvalues)
			idx[--i] = 0;
		if (i == 0)
			return 0;
	}
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

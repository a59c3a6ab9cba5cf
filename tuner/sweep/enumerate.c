/* Enumeration of a template's variants: see enumerate.h. A walk of the
 * rules engine (common/template_rules.h's tr_walk) over every param, the
 * last varying fastest (the order of a flat odometer loop): each
 * constraint is evaluated as soon as the params it names are bound, so a
 * prefix that fails prunes every combination below it. Checking every
 * combination instead cost ~140 ms per shape for softmax_warp's 138240 and
 * was most of a warm sweep's CPU time. */
#include "tuner/sweep/enumerate.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

typedef struct enum_out {
	variant v; /* template and dtype of every variant */
	variant *out;
	size_t n, cap;
} enum_out;

static void keep(void *ctx, const long long *values)
{
	enum_out *e = ctx;
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->out = xrealloc(e->out, e->cap * sizeof *e->out);
	}
	variant *v = &e->out[e->n++];
	*v = e->v;
	memcpy(v->values, values, v->tmpl->nparams * sizeof *values);
}

int enumerate_variants(const tmpl_manifest *t, at_dtype dt, const tr_env *env,
		       variant **out, size_t *n, at_error *err)
{
	*out = NULL;
	*n = 0;
	if (!(t->dtype_mask & (1u << dt)))
		return 0;
	manifest_rules r;
	manifest_rules_view(t, &r);
	tr_rules *lexed;
	if (tr_rules_new(&r.t, env, &lexed, err)) {
		manifest_rules_free(&r);
		return -1;
	}
	enum_out e = { 0 };
	variant_defaults(&e.v, t, dt);
	int idx[TR_MAX_PARAMS];
	for (size_t k = 0; k < t->nparams; k++)
		idx[k] = (int)(t->nparams - 1 - k);
	int rc = tr_walk(lexed, e.v.values, idx, (int)t->nparams, keep, &e, err);
	tr_rules_free(lexed);
	manifest_rules_free(&r);
	if (rc) {
		free(e.out);
		return -1;
	}
	*out = e.out;
	*n = e.n;
	return 0;
}

int variant_geometry(const variant *v, const tr_env *env, launch_geometry *g,
		     at_error *err)
{
	manifest_rules r;
	manifest_rules_view(v->tmpl, &r);
	int rc = tr_geometry(&r.t, v->values, env, g, err);
	manifest_rules_free(&r);
	return rc;
}

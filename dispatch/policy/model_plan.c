/* The performance model's plan: see model_plan.h. */
#include "dispatch/policy/model_plan.h"

#include <string.h>

#include "dispatch/policy/derive.h"
#include "dispatch/policy/row_ops.h"

/* More than the tree holds (8 templates) with room to grow. */
#define MAX_TEMPLATES 64

int atdi_model_candidates(const perf_model *m, const tr_template *ts, int nts, int op,
			  const atdi_env *env, at_dtype dtype, atdi_plan *out, int k)
{
	tr_template serving[MAX_TEMPLATES];
	int n = 0;
	for (int i = 0; i < nts && n < MAX_TEMPLATES; i++)
		if (tr_serves(&ts[i], atdi_op_name(op)))
			serving[n++] = ts[i];
	perf_choice c[ATDI_MODEL_MAX_CANDIDATES];
	at_error err;
	if (k > ATDI_MODEL_MAX_CANDIDATES)
		k = ATDI_MODEL_MAX_CANDIDATES;
	int ranked = n ? perf_model_rank(m, serving, n, dtype, env, c, k, &err) : 0;
	int kept = 0;
	for (int i = 0; i < ranked; i++) {
		atdi_plan *p = &out[kept];
		memset(p, 0, sizeof *p);
		p->op = op;
		p->level = ATD_LEVEL_PREDICTED;
		p->rules = atdi_rules_find(ts, nts, c[i].t->name);
		if (!p->rules)
			continue;
		memcpy(p->values, c[i].values, sizeof p->values);
		if (atdi_rules_geometry(p->rules, p->values, env, &p->geom) == 0)
			kept++;
	}
	return kept;
}

int atdi_model_plan(const perf_model *m, const tr_template *ts, int nts, int op,
		    const atdi_env *env, at_dtype dtype, atdi_plan *out)
{
	return atdi_model_candidates(m, ts, nts, op, env, dtype, out, 1) == 1;
}

/* The performance model's plan: see model_plan.h. */
#include "dispatch/policy/model_plan.h"

#include <string.h>

#include "dispatch/policy/derive.h"
#include "dispatch/policy/row_ops.h"

/* More than the tree holds (8 templates) with room to grow. */
#define MAX_TEMPLATES 64

int atdi_model_plan(const perf_model *m, const tr_template *ts, int nts, int op,
		    const atdi_env *env, at_dtype dtype, atdi_plan *out)
{
	tr_template serving[MAX_TEMPLATES];
	int n = 0;
	for (int i = 0; i < nts && n < MAX_TEMPLATES; i++)
		if (tr_serves(&ts[i], atdi_op_name(op)))
			serving[n++] = ts[i];
	perf_choice c;
	at_error err;
	if (n == 0 || perf_model_choose(m, serving, n, dtype, env, &c, &err) != 0 || !c.t)
		return 0;
	memset(out, 0, sizeof *out);
	out->op = op;
	out->level = ATD_LEVEL_PREDICTED;
	out->rules = atdi_rules_find(ts, nts, c.t->name);
	if (!out->rules)
		return 0;
	memcpy(out->values, c.values, sizeof out->values);
	return atdi_rules_geometry(out->rules, out->values, env, &out->geom) == 0;
}

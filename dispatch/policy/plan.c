/* Choosing what serves a shape, derivation included: see plan.h. Which
 * winners are nearest is the policy's (select.h); this file only tries
 * them through their templates' rules. */
#include "dispatch/policy/plan.h"

#include <string.h>

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/select.h"

static int try_derive(const tr_template *ts, int nts, const atdi_ranked *r, int op,
		      const atdi_env *env, at_dtype dtype, atdi_plan *out)
{
	const atdi_entry *e = r->e;
	const tr_template *rules = atdi_rules_find(ts, nts, e->template_name);
	long long winner[ATDI_MAX_PARAMS];
	if (!rules || !(rules->dtype_mask & (1u << dtype)) || !tr_serves(rules, atdi_op_name(op)) ||
	    atdi_params_parse(rules, e->params, winner) != 0)
		return 0;
	/* another op's winner at this very shape: its params as they won
	 * (the ops move the same bytes), not re-derived */
	int as_won = r->other_op && e->M == env->M && e->N == env->N &&
		     atdi_rules_valid(rules, winner, env);
	if (as_won)
		memcpy(out->values, winner, (size_t)rules->nparams * sizeof *winner);
	if ((!as_won && !atdi_derive(rules, winner, env, 1, out->values)) ||
	    atdi_rules_geometry(rules, out->values, env, &out->geom) != 0)
		return 0;
	out->op = op;
	out->entry = e;
	out->rules = rules;
	int unchanged = memcmp(winner, out->values, (size_t)rules->nparams * sizeof *winner) == 0;
	if (!r->gpu->seeds && !r->other_op && unchanged &&
	    (e->geom.max_n == 0 || e->geom.max_n >= env->N))
		out->level = r->other_model ? ATD_LEVEL_SAME_ARCH : ATD_LEVEL_NEAREST;
	else
		out->level = ATD_LEVEL_DERIVED;
	return 1;
}

/* Whether a and b run the same code. */
static int same_variant(const atdi_plan *a, const atdi_plan *b)
{
	return a->rules == b->rules &&
	       memcmp(a->values, b->values, (size_t)a->rules->nparams * sizeof a->values[0]) == 0;
}

int atdi_plan_candidates(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
			 int op, const atdi_env *env, at_dtype dtype, atdi_plan *out, int max)
{
	atdi_ranked top[ATDI_DERIVE_CANDIDATES];
	int n = atdi_rank(t, gpu, op, dtype, env->M, env->N, &atdi_weights_derive, top,
			  ATDI_DERIVE_CANDIDATES), k = 0;
	for (int i = 0; i < n && k < max; i++) {
		atdi_plan p;
		memset(&p, 0, sizeof p);
		if (!try_derive(ts, nts, &top[i], op, env, dtype, &p))
			continue;
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = same_variant(&out[j], &p);
		if (!dup)
			out[k++] = p;
	}
	return k;
}

void atdi_plan_shape(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
		     int op, const atdi_env *env, at_dtype dtype, atdi_plan *out)
{
	memset(out, 0, sizeof *out);
	out->op = op;
	atd_level level;
	const atdi_entry *e = atdi_select(t, gpu, op, dtype, env->M, env->N, &level);
	if (ts && (!e || level != ATD_LEVEL_EXACT)) {
		atdi_ranked top[ATDI_DERIVE_CANDIDATES];
		int n = atdi_rank(t, gpu, op, dtype, env->M, env->N, &atdi_weights_derive, top,
				  ATDI_DERIVE_CANDIDATES);
		/* The nearest winner that derives, widened or not. Trying every
		 * winner that derives unwidened first (as before 2026-11-25) took
		 * farther winners of other regimes: over the H100 grid, leave one
		 * out (tools/derive_loo.py), 8 shapes chose better in distance
		 * order and none worse by more than noise; bf16 32 x 500000 took
		 * 64 x 1048576's split winner as it was (29.7 us) over 64 x
		 * 262144's cluster widened to 512 threads (26.3). */
		for (int i = 0; i < n; i++)
			if (try_derive(ts, nts, &top[i], op, env, dtype, out))
				return;
	}
	out->level = level;
	out->entry = e;
}

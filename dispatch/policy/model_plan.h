/* A plan chosen by a performance model (common/perf_model.h) rather than
 * derived from the nearest winners: the variant of the fastest predicted
 * time among every one that the templates computing op hold valid at the
 * shape. Pure: no locks, no GPU. */
#ifndef AT_DISPATCH_MODEL_PLAN_H
#define AT_DISPATCH_MODEL_PLAN_H

#include "common/perf_model.h"
#include "dispatch/policy/plan.h"

/* Fills out (level ATD_LEVEL_PREDICTED, no entry, rules one of ts) and
 * returns 1, or returns 0 when no template holds a valid variant there or
 * the chosen one's geometry does not evaluate. */
int atdi_model_plan(const perf_model *m, const tr_template *ts, int nts, int op,
		    const atdi_env *env, at_dtype dtype, atdi_plan *out);

/* The most candidates atdi_model_candidates gives. */
#define ATDI_MODEL_MAX_CANDIDATES 8

/* The k (at most ATDI_MODEL_MAX_CANDIDATES) variants of the smallest
 * predicted times, best first, as atdi_model_plan fills one: how many
 * (fewer where fewer are valid). Online tuning times them. */
int atdi_model_candidates(const perf_model *m, const tr_template *ts, int nts, int op,
			  const atdi_env *env, at_dtype dtype, atdi_plan *out, int k);

#endif

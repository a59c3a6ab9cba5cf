/* What serves a shape, with run-time derivation: the exact winner; else the
 * nearest winner (atdi_rank under atdi_weights_derive, select.h: this GPU
 * model first, then others of its compute capability; nearest in (ln M,
 * ln N), a winner whose rows are of the other alignment class counting as
 * three times as far) that its template's rules (derive.h) re-derive for
 * the shape, widened where they must, a winner whose params come out
 * unchanged being reused as it is; else atdi_select's nearest winner valid
 * for N; else the built-in kernel. Pure: no locks, no GPU. */
#ifndef AT_DISPATCH_PLAN_H
#define AT_DISPATCH_PLAN_H

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/derive.h"
#include "dispatch/policy/select.h"

/* How many of the nearest winners are tried for a derivation. */
#define ATDI_DERIVE_CANDIDATES 8

typedef struct atdi_plan {
	int op; /* atdi_op: what the variant computes */
	atd_level level;
	/* The winner that runs (exact, nearest, same-arch) or that the derived
	 * variant comes from; NULL for the built-in kernel. */
	const atdi_entry *entry;
	/* Set whenever the variant came through its template's rules (always
	 * for ATD_LEVEL_DERIVED; for a winner reused as stored too, when
	 * deriving is on): */
	const tr_template *rules;
	long long values[ATDI_MAX_PARAMS];
	launch_geometry geom;
} atdi_plan;

/* The plan for (dtype, env->M, env->N) on gpu. ts (nts templates) are the
 * rules to derive with; NULL when deriving is off (no NVRTC, or not
 * wanted), which gives atdi_select's choice. */
void atdi_plan_shape(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
		     int op, const atdi_env *env, at_dtype dtype, atdi_plan *out);

/* Online tuning's candidates: the distinct variants that the nearest
 * winners give for env (derived or reused as stored), nearest first, at
 * most max. Returns how many. */
int atdi_plan_candidates(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
			 int op, const atdi_env *env, at_dtype dtype, atdi_plan *out, int max);

#endif

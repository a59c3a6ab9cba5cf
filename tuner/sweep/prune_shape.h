/* The sweep's pruning of a shape's variants (tuner/model/prune.h) by the
 * performance model's ranking: what a worker compiles, checks and times,
 * and what the look-ahead compiles for it. A shape's kept variants depend
 * only on the model, the options and the shape, so that the look-ahead,
 * the tuning and a restarted worker agree on them (a failed variant is
 * excluded by its index among them: supervisor.h). */
#ifndef AT_TUNER_SWEEP_PRUNE_SHAPE_H
#define AT_TUNER_SWEEP_PRUNE_SHAPE_H

#include "common/perf_model.h"
#include "tuner/model/prune.h"
#include "tuner/sweep/plan.h"

/* The most ops one sweep prunes with models of their own. */
#define PRUNE_MAX_OPS 8

/* The model that ranks one op's variants. */
typedef struct sweep_op_model {
	const char *op;   /* points into the plan's shapes */
	perf_model model;
	int have_model;   /* 0: every variant of the op's shapes kept */
	double *template_weight; /* what a variant of each plan template counts
				  * against K (its compile time); with the model */
	char source[768]; /* where the model came from, or why there is none */
} sweep_op_model;

typedef struct sweep_pruner {
	prune_options o;
	const sweep_plan *plan;
	manifest_rules *rules; /* one for each of the plan's templates */
	sweep_op_model ops[PRUNE_MAX_OPS];
	int nops;
} sweep_pruner;

/* Finds a model for each op of the plan's shapes (prune_model.h) unless
 * o->exhaustive. Returns 0 (with or without models: each op's source
 * says), or -1 on an error. */
int sweep_pruner_open(sweep_pruner *pr, const sweep_plan *p, const prune_options *o,
		      const char *db_path, long long before_sweep, const char *gpu_name, int cc,
		      const char *templates_dir, at_error *err);
void sweep_pruner_close(sweep_pruner *pr);

/* The model slot of op, or NULL (pr NULL, or op not among the plan's). */
const sweep_op_model *sweep_op_model_of(const sweep_pruner *pr, const char *op);

/* plan_shape_variants, then only those pr keeps, in the same order; *nall
 * says how many there were. pr NULL, or without a model: all of them. */
int sweep_shape_variants(const sweep_pruner *pr, const sweep_plan *p, const sweep_shape *s,
			 const tr_env *env, variant **out, size_t *n, size_t *nall,
			 at_error *err);

/* Keeps in vs[0..*n) those pr keeps at s; the plan's variants, enumerated
 * at env. */
void sweep_prune_variants(const sweep_pruner *pr, const sweep_shape *s, const tr_env *env,
			  variant *vs, size_t *n);

#endif

/* Leave-one-out evaluation of the performance model on a sweep: for each
 * tuned shape, the model is fitted on every other shape's results and
 * makes its choice for the shape it has not seen, two ways:
 *   rules  among every variant the template rules hold valid there
 *          (perf_model_choose: what the library would do), the choice's
 *          time looked up among the shape's results (it may never have
 *          been timed there: counted apart);
 *   timed  among the variants the sweep timed there: ranking alone.
 * No GPU: the sweep's times are the truth. */
#ifndef AT_TUNER_MODEL_LOO_H
#define AT_TUNER_MODEL_LOO_H

#include "tuner/model/fit.h"

typedef struct loo_outcome {
	size_t shape; /* index into the samples' shapes */
	const tr_template *rules_t; /* NULL: no valid variant */
	long long rules_values[TR_MAX_PARAMS];
	long long nvalid;
	double rules_us;    /* the rules choice's stored time; 0: never timed there */
	size_t timed_pick;  /* the timed choice: a sample index */
	double timed_us;
	double predicted_us; /* the model's time for the rules choice */
	/* a model of several fits: the rules choice's stored time when they
	 * rank the other way (perf_rank); 0: never timed there, or one fit */
	double other_rank_us;
} loo_outcome;

/* Which of the shapes with a winner are held out: part K of N takes every
 * N-th from the K-th (1-based), so that the N parts, run apart (each fit
 * still on every other shape), hold out each shape once; N 0 or 1: all. */
typedef struct loo_part {
	int index, count;
} loo_part;

/* Fills out[0..*n) with one outcome per shape of part that has a winner,
 * using threads threads. With fixed, that model chooses at every shape
 * instead (no fit): a held-out evaluation where the shapes are not the
 * ones it was fitted on. Returns 0, or -1 with a message. */
int model_loo(const model_samples *s, const model_matrix *mx, const tr_template *ts, int nts,
	      const model_fit_options *o, const perf_model *fixed, loo_part part, int threads,
	      loo_outcome *out, size_t *n, at_error *err);

#endif

/* Fitting the performance model (common/perf_model.h) to a sweep's
 * samples (tuner/model/samples.h): the features of every sample computed
 * once, then both ensembles boosted (tuner/model/boost.h), on every shape
 * or on all but one (what the leave-one-out evaluation needs). */
#ifndef AT_TUNER_MODEL_FIT_H
#define AT_TUNER_MODEL_FIT_H

#include "common/perf_model.h"
#include "tuner/model/boost.h"
#include "tuner/model/samples.h"

typedef struct model_fit_options {
	boost_params shape, variant;
	/* log(time / best) above this is taken as this: how much slower than
	 * the best a variant runs matters only near the best */
	double clip;
	/* a sample within near times its shape's best weighs near_weight times
	 * one further behind (each shape's weights summing to 1) */
	double near, near_weight;
	/* the variant ensemble is the average of this many fits, each with its
	 * own seed (variant.seed + k), fitted on as many threads: each fit's
	 * trees see other rows, so variants predicted nearly equal stop
	 * swapping places with the seed */
	int fits;
	perf_rank rank; /* how the model's choices rank by those fits */
} model_fit_options;

void model_fit_defaults(model_fit_options *o);

/* Every sample's features over the feature space of the templates ts. */
typedef struct model_matrix {
	pf_space space;
	int nfeatures;
	double *x;         /* nsamples rows */
	unsigned char *ok; /* 0: the sample's launch expressions failed; not learnt from */
	double *compile_ms; /* per space template: its samples' median compile time (0: none) */
} model_matrix;

void model_matrix_build(const model_samples *s, const tr_template *ts, int nts,
			model_matrix *out);
void model_matrix_free(model_matrix *m);

/* Fits out on every shape but held_out (an index into s->shapes; -1: none).
 * Returns 0, or -1 when nothing is left to fit on. */
int model_fit(const model_samples *s, const model_matrix *mx, long held_out,
	      const model_fit_options *o, perf_model *out);

#endif

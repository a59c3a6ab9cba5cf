/* Gradient boosting of regression trees on squared error: fits the tree
 * ensembles that common/tree_ensemble.h evaluates. Each tree is grown
 * depth-first to a depth limit on a random part of the rows, its splits
 * chosen over each feature's values binned into at most 64 (histograms:
 * the cost is rows x features a level), its values shrunk by the learning
 * rate. Deterministic for a seed. */
#ifndef AT_TUNER_MODEL_BOOST_H
#define AT_TUNER_MODEL_BOOST_H

#include <stddef.h>

#include "common/tree_ensemble.h"

typedef struct boost_data {
	const double *x; /* n rows of nfeatures, row after row */
	const double *y;
	const double *w; /* each row's weight; NULL: 1 each */
	size_t n;
	int nfeatures;
} boost_data;

typedef struct boost_params {
	int ntrees;
	int depth;
	double learning_rate;
	double min_leaf_weight; /* a split leaves at least this weight on each side */
	double lambda;          /* added to a leaf's weight: shrinks thin leaves */
	double subsample;       /* the part of the rows each tree sees */
	unsigned seed;
} boost_params;

/* Fits e (empty before) to d; 0, or -1 when d has no rows. */
int boost_fit(const boost_data *d, const boost_params *p, te_ensemble *e);

/* The average of the k ensembles parts[0..k) as one (what a prediction of
 * out gives is the mean of theirs): their trees, values scaled by 1 / k,
 * moved into out (empty before); the parts are left empty. */
void boost_average(te_ensemble *parts, int k, te_ensemble *out);

#endif

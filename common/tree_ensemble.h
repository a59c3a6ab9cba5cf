/* A sum of regression trees over a vector of numeric features (what
 * gradient boosting fits: tuner/model/boost.h), evaluated, explained and
 * written as text here so that the dispatch library can carry one without
 * the fitter.
 *
 * A tree is an array of nodes, node 0 its root. An inner node sends x left
 * when x[feature] <= threshold; a leaf has feature -1. Every node keeps the
 * value the tree would give if it stopped there (the weighted mean of what
 * reached it), so that a prediction can be told as the sum of what each
 * split on its path added (explain below). */
#ifndef AT_COMMON_TREE_ENSEMBLE_H
#define AT_COMMON_TREE_ENSEMBLE_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"

typedef struct te_node {
	int feature; /* -1: a leaf */
	double threshold;
	int left, right; /* node indices; unused in a leaf */
	double value;    /* this tree's output, were the path to stop here */
} te_node;

typedef struct te_tree {
	te_node *nodes;
	int nnodes;
} te_tree;

typedef struct te_ensemble {
	double base; /* added to the trees' sum */
	te_tree *trees;
	int ntrees;
} te_ensemble;

/* base plus each tree's leaf value for x. */
double te_predict(const te_ensemble *e, const double *x);

/* The leaf values for x of trees [first, first + n) alone, without base:
 * one part of an ensemble made of several (tuner/model/boost.h's average). */
double te_predict_trees(const te_ensemble *e, const double *x, int first, int n);

/* What each feature added to the prediction for x: contrib[f] (nfeatures
 * of them, zeroed first) sums, over every tree, the change of node value at
 * each split on feature f along x's path. Returns the bias, base plus every
 * root's value: the bias plus the sum of contrib is te_predict's value. */
double te_explain(const te_ensemble *e, const double *x, double *contrib, int nfeatures);

/* The significant digits a fitted model's numbers are rounded to
 * (te_round): read back by te_parse_double's fast path, exactly. */
#define TE_SHORT_DIGITS 15

/* v rounded to TE_SHORT_DIGITS significant digits. */
double te_round_digits(double v);

/* Rounds e's base, thresholds and values to TE_SHORT_DIGITS digits, so
 * that its text is short and reads back fast (a library parses a model of
 * ~200,000 numbers at its first decision: 28 ms by strtod). */
void te_round(te_ensemble *e);

/* Appends e as text: "ensemble BASE NTREES", then per tree "tree NNODES"
 * and a line per node "FEATURE THRESHOLD LEFT RIGHT VALUE" (each number in
 * 15 significant digits when they read back the same double, else 17: the
 * text always reads back to the same doubles). */
void te_to_text(const te_ensemble *e, strbuf *out);

/* The number at s (after spaces or newlines), into *out, *end past it:
 * 0, or -1 if there is none. Exact: decimals of at most 15 significant
 * digits and exponents within 10^+-22 by one rounded operation, anything
 * else by strtod. */
int te_parse_double(const char *s, double *out, const char **end);

/* Reads what te_to_text wrote at *text, advancing *text past it. Feature
 * indices must be below nfeatures and children inside their tree, each
 * after its parent (so that every path ends). Returns 0, or -1 with a
 * message (e is then empty). */
int te_from_text(const char **text, int nfeatures, te_ensemble *e, at_error *err);

void te_free(te_ensemble *e);

#endif

/* Pruning a shape's variants to those worth compiling and timing: the
 * performance model's best-ranked few, an exploration share of the rest
 * drawn at random, and at least one of every template, so that a template
 * the model misjudges is never left out of a shape altogether.
 *
 * Only the ranking is decided here, from each candidate's score (the
 * model's log(time / best), perf_prediction.log_behind) and group (its
 * template): the sweep (tuner/sweep/prune_shape.h) and the offline
 * measurement (tuner/model/prune_eval.h) both choose through it. */
#ifndef AT_TUNER_MODEL_PRUNE_H
#define AT_TUNER_MODEL_PRUNE_H

#include <stddef.h>

#include "common/dtype.h"

/* Tuned on the H200's and H100's default sweeps (docs/NOTES.md, "Pruned
 * sweeps"): autotune model prune-eval. F 0.02 keeps as many shapes within
 * 2% as 0.05 (96.2% on the H200 by the H100's seed) with 521 fewer of
 * the 10,762 kernels: the cold sweep's 120 s (issue 35). On the H200's
 * 180-shape exhaustive sweep, leave-one-out, K 24 weighing compile times
 * keeps 176 shapes within 2% (K 32 unweighed: 177) for 1079 s of compiling
 * against 1483 (results/h200/prune-eval-compile-weight-h200.log). */
#define PRUNE_DEFAULT_KEEP 24
#define PRUNE_DEFAULT_EXPLORE 0.02
#define PRUNE_DEFAULT_SEED 1
/* How a variant's compile time counts against K (prune_template_weights):
 * chosen by autotune model prune-eval on the H200's exhaustive sweep
 * (docs/NOTES.md, "Pruned sweeps"). */
#define PRUNE_DEFAULT_COMPILE_WEIGHT 1.0

typedef struct prune_options {
	int exhaustive;     /* keep everything */
	int keep;           /* the best-ranked kept (K), in kernels of a typical compile time */
	double explore;     /* the share of the rest drawn at random, 0..1 */
	unsigned long long seed;
	/* the exponent of a template's compile time over the typical one in
	 * its weight (0: every variant weighs 1, K counts variants) */
	double compile_weight;
} prune_options;

void prune_defaults(prune_options *o);

/* The draw's seed at one shape: the sweep's seed and the shape alone, so
 * that the same shape keeps the same variants whichever worker, and in
 * whichever order, enumerates it. */
unsigned long long prune_shape_seed(unsigned long long seed, at_dtype dt, long long M,
				    long long N);

/* How many of the rest (n_rest) the exploration draws: explore x n_rest,
 * rounded to the nearest. */
size_t prune_explore_count(double explore, size_t n_rest);

/* Marks kept[i] (1 or 0) for n candidates of scores score[i] (smaller is
 * better; NaN: not predicted, ranked after every other) and groups
 * group[i] >= 0: the o->keep smallest scores (ties by index); the
 * best-scored of each group with none among them; and prune_explore_count
 * of the candidates outside the first o->keep drawn with shape_seed (a
 * group's best may be drawn again: the draw only ever adds). Returns how
 * many are kept. */
size_t prune_select(const double *score, const int *group, size_t n, const prune_options *o,
		    unsigned long long shape_seed, unsigned char *kept);

/* prune_select where candidate i weighs weight[i] (NULL: 1 each) against
 * K: the best-scored are kept while their weights sum to K at most (the
 * best one always), so that a shape of costly kernels keeps fewer. */
size_t prune_select_weighted(const double *score, const int *group, const double *weight,
			     size_t n, const prune_options *o, unsigned long long shape_seed,
			     unsigned char *kept);

/* The weight of each of n templates from their compile times ms[i] (0:
 * not known): (ms / the median of the known ones)^exponent, and 1 where
 * that is below 1 or not known: a variant never counts for less than one
 * (its timing costs too), one of a costly template for more. NVRTC took
 * 2.3 s a softmax_split variant against 0.4 a softmax_block one on the
 * H200's host. */
void prune_template_weights(const double *ms, int n, double exponent, double *weight);

#endif

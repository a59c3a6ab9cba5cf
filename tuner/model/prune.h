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
 * the 10,762 kernels: the cold sweep's 120 s (issue 35). */
#define PRUNE_DEFAULT_KEEP 32
#define PRUNE_DEFAULT_EXPLORE 0.02
#define PRUNE_DEFAULT_SEED 1

typedef struct prune_options {
	int exhaustive;     /* keep everything */
	int keep;           /* the best-ranked kept (K) */
	double explore;     /* the share of the rest drawn at random, 0..1 */
	unsigned long long seed;
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

#endif

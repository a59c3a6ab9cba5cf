/* Measuring the sweep's pruning (tuner/model/prune.h) without a GPU, on a
 * database holding an exhaustive sweep: for each tuned shape the model is
 * fitted on every other shape (leave-one-out, as loo.h) or given, scores
 * every variant the template rules enumerate there (what a sweep would
 * enumerate), and the pruning keeps some; the best stored time among the
 * kept is set against the shape's winner. A kept variant with no stored
 * time (the sweep's screening dropped it, or it failed) does not help. */
#ifndef AT_TUNER_MODEL_PRUNE_EVAL_H
#define AT_TUNER_MODEL_PRUNE_EVAL_H

#include "tuner/model/fit.h"
#include "tuner/model/prune.h"

/* One shape's enumerated variants, scored. */
typedef struct prune_eval_shape {
	size_t shape;                /* index into the samples' shapes */
	size_t n;                    /* variants the rules enumerate there */
	double *score;               /* the model's log(time / best); NaN: not predicted */
	int *group;                  /* the template's index */
	double *stored_us;           /* the stored time; 0: none */
	unsigned long long *kernel;  /* what the kernel depends on (template, dtype, params), hashed */
} prune_eval_shape;

typedef struct prune_eval {
	prune_eval_shape *shapes;
	size_t nshapes;
	double *template_ms; /* per template given: its samples' median compile time (0: none) */
	int ntemplates;
} prune_eval;

/* Scores every tuned shape of s: with fixed, or (fixed NULL) with a model
 * fitted on the other shapes, threads fits at once. use[i] says whether
 * ts[i] is enumerated (NULL: all). Returns 0, or -1 with a message. */
int prune_eval_score(const model_samples *s, const model_matrix *mx, const tr_template *ts,
		     int nts, const unsigned char *use, const model_fit_options *o,
		     const perf_model *fixed, int threads, prune_eval *out, at_error *err);

void prune_eval_free(prune_eval *e);

typedef struct prune_eval_result {
	size_t shapes;
	size_t within2, within5;     /* pruned best within 2%, 5% of the winner */
	double geomean;              /* winner / pruned best */
	size_t kept, all;            /* variants, summed over the shapes */
	size_t kernels_kept, kernels_all; /* distinct kernels over all the shapes */
	double compile_s_kept, compile_s_all; /* theirs, each at its template's compile time */
	double worst;                /* the largest pruned best / winner */
	size_t worst_shape;          /* its index into the samples' shapes */
} prune_eval_result;

/* Prunes each scored shape by o (a variant weighing its template's
 * compile time, o->compile_weight) and measures the outcome. */
void prune_eval_measure(const prune_eval *e, const model_samples *s, const prune_options *o,
			prune_eval_result *r);

#endif

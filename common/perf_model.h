/* A performance model learned from a sweep's measurements: it predicts a
 * variant's time at a shape nobody timed it at, from the features of
 * common/perf_features.h, and chooses the variant of the fastest
 * prediction among those the template rules hold valid at a shape.
 *
 * Two tree ensembles (common/tree_ensemble.h), fitted by the tuner
 * (tuner/model/fit.h):
 *   shape    log(the best time at a shape / the copy time of its bytes),
 *            from the shape's features: how far from the copy rate the
 *            shape's best variant runs;
 *   variant  log(a variant's time / the best time at its shape), from all
 *            the features: how far behind the shape's best it runs.
 * A prediction is their sum, times the copy time; the choice at a shape
 * needs only the second (the first is the same for every variant), which
 * is fitted on times relative to each shape's best so that what it learns
 * is the ranking, not the shape's scale.
 *
 * A model is written and read back as text (perf_model_to_text), to be
 * stored beside the sweep's results. Only common/ is used: the dispatch
 * library can link it. */
#ifndef AT_COMMON_PERF_MODEL_H
#define AT_COMMON_PERF_MODEL_H

#include "common/dtype.h"
#include "common/error.h"
#include "common/perf_features.h"
#include "common/strbuf.h"
#include "common/template_rules.h"
#include "common/tree_ensemble.h"

/* How a choice ranks variants when the variant ensemble is the average of
 * several fits (perf_model.fits > 1): by the fits' mean, or by the worst
 * of them, so that a variant only one fit puts near the top (a fit's
 * artefact, not a measurement) loses to one every fit puts there. */
typedef enum perf_rank { PERF_RANK_MEAN, PERF_RANK_WORST } perf_rank;

typedef struct perf_model {
	pf_space space;
	te_ensemble shape;   /* over the first PF_SHAPE_FEATURES features */
	/* over all of them: fits equal runs of trees, each one fit's trees
	 * scaled by 1 / fits (they share the base) */
	te_ensemble variant;
	int fits; /* 0 or 1: one fit */
	perf_rank rank;
	/* per template of the space: the median NVRTC time of its kernels in
	 * the results fitted on, in ms (0: not known); what the sweep's
	 * pruning weighs a variant's compile by. NULL: none known. */
	double *compile_ms;
} perf_model;

/* A prediction and its parts. */
typedef struct perf_prediction {
	double time_us;     /* the variant's predicted time */
	double best_us;     /* the shape's best variant's, predicted */
	double copy_us;     /* a copy of the shape's bytes at the GPU's copy rate */
	double log_behind;  /* log(time_us / best_us): what the choice ranks by */
} perf_prediction;

/* What a choice ranks variant features x by: the variant ensemble's
 * log(time / best), its fits' mean or the worst fit's (m->rank). */
double perf_model_rank_score(const perf_model *m, const double *x);

/* The name of rank r ("mean", "worst"), and the rank of a name: 0, or -1
 * when it names none. */
const char *perf_rank_name(perf_rank r);
int perf_rank_parse(const char *name, perf_rank *out);

/* The copy time of env's shape's bytes (read + written) at copy_gbps. */
double perf_copy_us(const tr_env *env, double copy_gbps);

/* Predicts variant values of t at env on a GPU copying at copy_gbps (GB/s,
 * bytes read + written). Returns 0, or -1 when its launch expressions fail. */
int perf_model_predict(const perf_model *m, const tr_template *t, const long long *values,
		       const tr_env *env, double copy_gbps, perf_prediction *out, at_error *err);

/* Appends what the prediction was made from: the features, and the
 * largest of what each added to log(time / best) (te_explain), top of
 * them at most (all when top <= 0). */
void perf_model_explain(const perf_model *m, const tr_template *t, const long long *values,
			const tr_env *env, int top, strbuf *out);

/* The model's choice at a shape. */
typedef struct perf_choice {
	const tr_template *t; /* NULL: no template holds a variant valid there */
	long long values[TR_MAX_PARAMS];
	double log_behind;  /* the chosen variant's prediction */
	long long nvalid;   /* the variants predicted */
} perf_choice;

/* Walks every variant of each of the n templates ts serving dtype that the
 * rules hold valid at env (tr_walk over all the params) and keeps the one
 * of the smallest predicted time. Returns 0, or -1 when a template's rules
 * cannot be lexed. */
int perf_model_choose(const perf_model *m, const tr_template *ts, int n, at_dtype dtype,
		      const tr_env *env, perf_choice *out, at_error *err);

/* perf_model_choose's walk keeping the k variants of the smallest
 * predicted times, best first, in out[0..k): returns how many (fewer where
 * fewer are valid), or -1 as perf_model_choose. Online tuning times them. */
int perf_model_rank(const perf_model *m, const tr_template *ts, int n, at_dtype dtype,
		    const tr_env *env, perf_choice *out, int k, at_error *err);

/* Appends m as text: "perf_model 1", its feature space ("template NAME",
 * "param NAME" lines), "compile_ms NAME MS" for each template whose
 * compile time is known, "fits K RANK" when the variant ensemble is the
 * average of K > 1 fits, the shape ensemble and the variant ensemble. */
void perf_model_to_text(const perf_model *m, strbuf *out);

/* Reads what perf_model_to_text wrote. Returns 0, or -1 with a message
 * (m is then empty). */
int perf_model_from_text(const char *text, perf_model *m, at_error *err);

/* The compile time of template name in m, in ms; 0 when not known. */
double perf_model_compile_ms(const perf_model *m, const char *name);

void perf_model_free(perf_model *m);

#endif

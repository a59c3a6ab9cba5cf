/* What the performance model (common/perf_model.h) knows of a variant at a
 * shape: a vector of numbers computed from the template's rules alone (its
 * launch expressions, its params), the shape and the GPU, so that the
 * library can compute it for a variant that was never compiled or timed.
 *
 * The vector is the shape's features (PF_SHAPE_FEATURES of them, first),
 * the launch's, a one-hot of the template among those the model was fitted
 * on, and the value of every param of those templates by name (-1 where
 * the variant's template has no such param). The templates and param names
 * are the feature space's: stored with the model, so that a model read back
 * computes the features it was fitted on. */
#ifndef AT_COMMON_PERF_FEATURES_H
#define AT_COMMON_PERF_FEATURES_H

#include <stddef.h>

#include "common/error.h"
#include "common/template_rules.h"

enum {
	/* of the shape and GPU only */
	PF_LOG2_M,
	PF_LOG2_N,
	PF_ELEM_BYTES,
	PF_LOG2_BYTES,       /* read + written */
	PF_LOG2_ROWS_PER_SM, /* M / SMs */
	PF_ROW_ALIGN,        /* log2 of the largest power of two dividing a row's bytes, up to 6 */
	PF_SHAPE_FEATURES,
	/* of the launch, from the template's launch expressions */
	PF_THREADS = PF_SHAPE_FEATURES,
	PF_ROWS_PER_CTA,
	PF_LOG2_SMEM,
	PF_PERSISTENT,
	PF_CTAS_PER_ROW,
	PF_COOPERATIVE,
	PF_FILL,              /* N / the longest row the variant holds (1 when it serves any) */
	PF_LOG2_ELEMS_THREAD, /* a row step's elements per thread */
	PF_LOG2_ROW_STEPS,
	PF_RESIDENT,          /* CTAs an SM holds, from threads and shared memory */
	PF_LOG2_WAVES,        /* CTAs launched / (SMs x resident); a persistent CTA's row steps */
	PF_WAVE_TAIL,         /* how full the last wave is */
	PF_VEC_BYTES,         /* vec x element size; -1 without a vec param */
	PF_VEC_ALIGNED,       /* N % vec == 0 */
	PF_FIXED_FEATURES
};

/* The templates and params a model's features name. */
typedef struct pf_space {
	char **templates;
	int ntemplates;
	char **params;
	int nparams;
} pf_space;

/* PF_FIXED_FEATURES + templates + params. */
int pf_nfeatures(const pf_space *s);

/* Feature i's name ("log2_M", "template=softmax_block", "param=vec"), into
 * buf; returns buf. */
const char *pf_feature_name(const pf_space *s, int i, char *buf, size_t cap);

/* Adds t's name and its params' names where not there yet. */
/* Whether the space holds template name (the model learned it). */
int pf_space_has_template(const pf_space *s, const char *name);

void pf_space_add(pf_space *s, const tr_template *t);

/* Adds one name to the templates (is_param 0) or params; for reading. */
void pf_space_add_name(pf_space *s, int is_param, const char *name);

void pf_space_free(pf_space *s);

/* The shape's features into x[0..PF_SHAPE_FEATURES). */
void pf_shape_features(const tr_env *env, double *x);

/* Every feature of variant values of t at env into x (pf_nfeatures of
 * them). Returns 0, or -1 when the launch expressions fail (err says why). */
int pf_variant_features(const pf_space *s, const tr_template *t, const long long *values,
			const tr_env *env, double *x, at_error *err);

#endif

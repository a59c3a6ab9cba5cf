/* What the performance model learns from: every passing variant result of
 * one GPU in a sweep database, with its params parsed by the templates'
 * rules, grouped by shape. */
#ifndef AT_TUNER_MODEL_SAMPLES_H
#define AT_TUNER_MODEL_SAMPLES_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"
#include "common/template_rules.h"

typedef struct model_shape {
	at_dtype dtype;
	long long M, N;
	tr_env env;        /* the rules' environment at this shape on the GPU */
	double copy_gbps;  /* the sweep's copy rate */
	double best_us;    /* the fastest passing variant's time */
	double winner_us;  /* the stored winner's; 0 when the shape has none */
	size_t first, n;   /* its samples */
} model_shape;

typedef struct model_sample {
	int tmpl; /* index into the templates given to the loader */
	long long values[TR_MAX_PARAMS];
	double time_us;
	double compile_ms; /* its kernel's NVRTC time; 0: not stored */
} model_sample;

typedef struct model_samples {
	char gpu[256];
	model_shape *shapes;
	size_t nshapes;
	model_sample *samples;
	size_t nsamples;
	size_t skipped; /* results of a template not given, or params it does not parse */
} model_samples;

/* Loads op's results (NULL: softmax's) of the GPU named gpu (NULL: the
 * database's only one) from the database at path: a model is fitted per
 * op, as the ops' winners are stored. Returns 0, or -1 with a message. */
int model_samples_load(const char *path, const char *gpu, const char *op, const tr_template *ts,
		       int nts, model_samples *out, at_error *err);

/* The same, from the sweeps numbered below before_sweep only (0: all):
 * what a sweep learns from is what the database held when it started, so
 * that a restarted worker prunes as its predecessor did. */
int model_samples_load_before(const char *path, const char *gpu, const char *op,
			      long long before_sweep, const tr_template *ts, int nts,
			      model_samples *out, at_error *err);

/* The median compile time of template t's samples (an index into the
 * templates given to the loader), in ms; 0 when none is stored. Every
 * sample counts, a kernel timed at many shapes as often: the sweep's
 * pruning weighs what a sweep compiles. */
double model_samples_compile_ms(const model_samples *s, int t);

void model_samples_free(model_samples *s);

#endif

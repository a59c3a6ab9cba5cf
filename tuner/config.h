/* The sweep config: which (op, dtype, M, N) shapes to tune, read from YAML.
 *
 *   # configs/softmax.yaml
 *   warmup: 5                 # optional, untimed launches first (default 5)
 *   repetitions: 100          # optional, the most timed launches per variant (default 100)
 *   min_repetitions: 10       # optional, the fewest (default 10; = repetitions: a fixed count)
 *   tolerance: 0.01           # optional, stop once the median's 95% confidence interval
 *                             # is this narrow relative to it (default 0.01; 0: never early)
 *   time_budget_ms: 5         # optional, stop once a variant's timing took this long
 *                             # (after min_repetitions; default 5; 0: no budget)
 *   sweeps:
 *     - op: softmax
 *       dtypes: [f32, f16, bf16]
 *       M: [4096]             # a list, a single integer,
 *       N: {from: 256, to: 12672, step: 128}   # or an inclusive range
 *       templates: [softmax_block]             # optional filter
 *
 * Every error names the file, line and column and what was expected, e.g.
 *   configs/x.yaml:4:10: expected a positive integer for M, got "-3"
 */
#ifndef AT_TUNER_CONFIG_H
#define AT_TUNER_CONFIG_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"

typedef struct sweep_spec {
	char *op;
	at_dtype *dtypes;
	size_t ndtypes;
	long long *Ms;
	size_t nM;
	long long *Ns;
	size_t nN;
	char **templates; /* NULL when not given: every template of the op */
	size_t ntemplates;
	int line;         /* where the entry starts, for messages */
} sweep_spec;

typedef struct sweep_config {
	char *path;
	char *text; /* the whole file, stored with each sweep */
	int warmup;
	int repetitions;     /* the most */
	int min_repetitions; /* the fewest */
	double tolerance;
	double time_budget_ms;
	sweep_spec *specs;
	size_t nspecs;
} sweep_config;

/* One (op, dtype, M, N) to tune. op and templates point into the config. */
typedef struct sweep_shape {
	const char *op;
	at_dtype dtype;
	long long M, N;
	const sweep_spec *spec;
} sweep_shape;

/* Reads and validates path. Returns 0, or -1 with err set; *out zeroed. */
int config_load(const char *path, sweep_config *out, at_error *err);

/* The same from a string; name is used in messages as the file name. */
int config_parse(const char *text, size_t len, const char *name,
		 sweep_config *out, at_error *err);

void config_free(sweep_config *cfg);

/* Expands specs into shapes in config order (spec, then dtype, then M, then
 * N), dropping exact duplicates. *out is malloc'd; the caller frees it. */
int config_shapes(const sweep_config *cfg, sweep_shape **out, size_t *n,
		  at_error *err);

#endif

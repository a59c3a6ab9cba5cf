/* A template's rules and the one engine that evaluates them: its params,
 * the constraints a variant must meet at a shape, the launch geometry its
 * expressions give, and what the dispatch library searches to re-derive a
 * winner for a shape nobody tuned (gen/manifest.h documents the manifest
 * keys they come from).
 *
 * The generator, the tuner and the library all evaluate rules here, so
 * that the variants the tuner enumerates, times and stores are exactly the
 * ones the library holds valid and launches the same way. The tuner reads
 * a template's rules from its manifest (gen/manifest.h's manifest_rules, a
 * view of the loaded YAML); the library carries them as C tables that
 * build/emit-rules (gen/emit_rules.c) writes from that same view at build
 * time, so that it links nothing of the generator.
 *
 * Pure functions of their arguments, no global state: thread-safe. */
#ifndef AT_COMMON_TEMPLATE_RULES_H
#define AT_COMMON_TEMPLATE_RULES_H

#include <stddef.h>

#include "common/error.h"
#include "common/expr.h"

/* The most params a template may have (the manifest loader enforces it). */
#define TR_MAX_PARAMS 16

/* The order of tr_template.launch, and of tr_launch_names. */
enum {
	TR_THREADS,
	TR_ROWS_PER_CTA,
	TR_SMEM_BYTES,
	TR_PERSISTENT,
	TR_MAX_N,
	TR_CTAS_PER_ROW,
	TR_COOPERATIVE,
	TR_LAUNCH_KEYS
};

/* The manifest's keys under launch:, in the order above; NULL-terminated. */
extern const char *const tr_launch_names[TR_LAUNCH_KEYS + 1];

typedef struct tr_param {
	const char *name;
	const long long *values;
	int nvalues;
	long long def; /* the manifest's default: fills a param an older database lacks */
} tr_param;

typedef struct tr_template {
	const char *name;        /* "softmax_block" */
	const char *source_file; /* "softmax_block.cu", for the source's header */
	const char *body;        /* the template, its includes expanded (NULL in a manifest's view) */
	unsigned dtype_mask;     /* bit (1u << at_dtype) per dtype served */
	const tr_param *params;
	int nparams;
	const char *const *constraints; /* all must hold */
	int nconstraints;
	const char *launch[TR_LAUNCH_KEYS];
	const int *derive; /* indices of the params searched for a new shape */
	int nderive;
	const int *widen; /* searched too when derive alone finds nothing */
	int nwiden;
	const char *const *prefer; /* in order of weight */
	int nprefer;
	/* The op the template's code is written for (its manifest's `op:`),
	 * and the others it computes when the source defines OP_<NAME>
	 * (`also_ops:`; kernel_source.h). */
	const char *op;
	const char *const *also_ops;
	int nalso_ops;
} tr_template;

/* The shape and device variables an expression may use besides the params,
 * in tr_env's order. */
#define TR_SHAPE_VARS 8
extern const char *const tr_shape_var_names[TR_SHAPE_VARS];

/* Their values: the one environment the rules are evaluated in, for the
 * tuner (tuner/device.h fills it for a GPU) and the library alike. M or N
 * negative means not known (`autotune gen` without -M or -N): a rule that
 * names it is skipped, as are rules naming any shape variable when no
 * environment is given at all (env NULL). */
typedef struct tr_env {
	long long M, N, elem_bytes, sm_count, cc, max_threads, max_smem, regs_per_sm;
} tr_env;

/* How a variant is launched at a shape: what the launch expressions give.
 * The tuner stores it with each result; the tuner and the library both
 * launch through dispatch/runtime/launch_geometry.h. */
typedef struct launch_geometry {
	int threads;      /* per CTA */
	int rows_per_cta; /* rows one CTA handles per step */
	int dyn_smem;     /* dynamic shared memory per CTA, bytes */
	int persistent;   /* grid from occupancy; CTAs loop over rows */
	long long max_n;  /* longest row served; 0 = any */
	/* CTAs that share one row step; above 1 they are one thread-block
	 * cluster (the kernel's compile-time __cluster_dims__), launched one
	 * cluster per step. 0 means 1. */
	int ctas_per_row;
	/* Every CTA that fits on the GPU at once (occupancy x SMs, whatever M
	 * is), launched with cuLaunchCooperativeKernel so that all are
	 * resident: the kernel may wait for other CTAs. */
	int cooperative;
} launch_geometry;

/* 0 for a geometry some launch can honour, or -1 with a message for one
 * that none can (a persistent or cooperative cluster, a negative field,
 * no threads). For the rules below and the database readers. */
int launch_geometry_check(const launch_geometry *g, at_error *err);

/* ---- ops ---------------------------------------------------------------- */

/* Whether t computes op (its own or one of also_ops). */
int tr_serves(const tr_template *t, const char *op);

/* What kernel_source takes for a variant of t computing op: NULL for t's
 * own op (the source as written), else op (the source defines OP_<OP>). */
const char *tr_source_op(const tr_template *t, const char *op);

/* ---- params ------------------------------------------------------------- */

/* The template named name among the n of ts, or NULL. */
const tr_template *tr_find(const tr_template *ts, int n, const char *name);

/* Index of the param whose name is the len bytes at name, or -1. */
int tr_param_index(const tr_template *t, const char *name, size_t len);

/* Parses "threads=256 vec=4 ..." into values in t's param order; a param
 * the text leaves out (a database older than the template) gets its
 * default. Returns 0, or -1 if the text names a param t lacks, or none, or
 * t has more than TR_MAX_PARAMS params. */
int tr_params_parse(const tr_template *t, const char *text, long long *values);

/* "threads=256 vec=4 ..." of values, in t's param order, into buf (cap
 * bytes, NUL-terminated, truncated if need be). Returns the length of the
 * whole text, as snprintf does: parsing it back gives values. */
size_t tr_params_text(const tr_template *t, const long long *values, char *buf, size_t cap);

/* ---- one variant at one shape -------------------------------------------- */

/* The variables an expression of t sees for values at env, as expr_eval
 * takes them: the params in order, then the shape variables env knows.
 * vars must have room for nparams + TR_SHAPE_VARS; returns how many. */
size_t tr_vars(const tr_template *t, const long long *values, const tr_env *env,
	       expr_var *vars);

/* Evaluates expr over tr_vars: expr_eval's results and errors. */
int tr_eval(const tr_template *t, const char *expr, const long long *values, const tr_env *env,
	    long long *out, at_error *err);

/* Checks t's constraints in order for values at env. Returns 1 if all hold
 * (skipping those that name a variable env does not know); 0 at the first
 * that does not, its index in *failed (failed may be NULL); -1 at the first
 * that cannot be evaluated (division by zero, ...), with the error in err.
 * Also -1 when t has more than TR_MAX_PARAMS params. */
int tr_check(const tr_template *t, const long long *values, const tr_env *env, int *failed,
	     at_error *err);

/* The launch geometry of values at env: each launch expression evaluated,
 * every field but max_n an int from 0 up, persistent and cooperative made
 * 0 or 1, then launch_geometry_check. Returns 0, or -1 with a message
 * naming the template (g is then unspecified). */
int tr_geometry(const tr_template *t, const long long *values, const tr_env *env,
		launch_geometry *g, at_error *err);

/* ---- many variants at one shape ------------------------------------------ */

/* A template's constraints and preferences lexed for one environment, to
 * walk many variants (opaque; only read once made: thread-safe). */
typedef struct tr_rules tr_rules;

/* Lexes t's constraints and prefer expressions against its params and the
 * variables env knows (env is copied). Returns 0 and a new *out, or -1 with
 * a message (an expression that does not lex, more than TR_MAX_PARAMS
 * params, no memory). */
int tr_rules_new(const tr_template *t, const tr_env *env, tr_rules **out, at_error *err);

/* Frees r; NULL is a no-op. */
void tr_rules_free(tr_rules *r);

/* Called with each variant a walk finds: the params in t's order. */
typedef void (*tr_visit)(void *ctx, const long long *values);

/* Walks the params idx[0..n) (distinct indices into t's params), each over
 * its values, idx[0] changing fastest, the other params kept as in values:
 * visits each assignment at which every constraint holds (as tr_check
 * decides). With idx the params in reverse order this is the odometer of
 * the manifest's order, the last param fastest. A constraint is evaluated as soon as the walked params it
 * names are set, so that one failing prunes every assignment below it. A
 * constraint that cannot be evaluated does not hold and the walk goes on;
 * it then returns -1 with the first such error in err. Else 0. */
int tr_walk(const tr_rules *r, const long long *values, const int *idx, int n,
	    tr_visit visit, void *ctx, at_error *err);

/* 1 if t's prefer expression i holds for values (a variant tr_walk gave),
 * else 0 (also when it cannot be evaluated). */
int tr_prefer_holds(const tr_rules *r, int i, const long long *values);

#endif

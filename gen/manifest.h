/* A template's manifest: the YAML file beside the CUDA template that declares
 * its parameter space, its constraints and its launch geometry.
 *
 * Format (templates/softmax_block.yaml is a full example):
 *
 *   template: softmax_block          # name; must match the file's stem
 *   op: softmax
 *   source: softmax_block.cu         # relative to the manifest's folder
 *   summary: One CTA per row, row held in registers; medium N.
 *   dtypes: [f32, f16, bf16]
 *   params:
 *     - name: threads                # lower case; the template sees THREADS
 *       values: [128, 256, 512, 1024]
 *       default: 256                 # must be one of values
 *       doc: threads per CTA
 *   constraints:                     # all must be non-zero for a variant
 *     - expr: "elems_per_thread % vec == 0"
 *       why: whole vectors per thread
 *   launch:                          # expressions over params + shape vars
 *     threads: "threads"             # threads per CTA
 *     rows_per_cta: "1"              # rows one CTA handles per step
 *     smem_bytes: "0"                # dynamic shared memory per CTA
 *     persistent: "persistent"       # non-zero: grid from occupancy, loop rows
 *     max_n: "threads * elems_per_thread"   # longest row served; 0 = any
 *     ctas_per_row: "cluster"        # optional, default 1: CTAs per row step,
 *                                    # above 1 a cluster of that many
 *     cooperative: "1"               # optional, default 0: every resident
 *                                    # CTA, launched cooperatively
 *   derive:                          # optional: re-deriving a winner tuned at
 *     params: [vec, elems_per_thread]  # another shape for this one: these
 *     widen: [threads]               # params are searched (the rest kept), then
 *     prefer:                        # these too if that finds nothing; among
 *       - expr: "N % vec == 0"       # the valid ones, the most preferences met
 *         why: rows stay aligned     # (in order), then the nearest values
 *
 * Variables an expression may use besides the params (common/template_rules.h's
 * tr_env): M, N, elem_bytes, sm_count, cc (e.g. 90), max_threads, max_smem,
 * regs_per_sm. At most TR_MAX_PARAMS (16) params.
 *
 * The rules are evaluated by common/template_rules.h, through the view that
 * manifest_rules_view gives: the engine the dispatch library evaluates its
 * tables with, and those tables are that view written out as C
 * (build/emit-rules).
 */
#ifndef AT_GEN_MANIFEST_H
#define AT_GEN_MANIFEST_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/error.h"
#include "common/expr.h"
#include "common/template_rules.h"

typedef struct tmpl_param {
	char *name;
	long long *values;
	size_t nvalues;
	long long def;
	char *doc;
} tmpl_param;

typedef struct tmpl_constraint {
	char *expr;
	char *why; /* may be NULL */
} tmpl_constraint;

/* How the dispatch library re-derives a winner for an untuned shape (the
 * choice itself is dispatch/policy/derive.c's): indices into params. */
typedef struct tmpl_derive {
	int *params;
	size_t nparams;
	int *widen;
	size_t nwiden;
	tmpl_constraint *prefer;
	size_t nprefer;
} tmpl_derive;

typedef struct tmpl_launch {
	char *threads;
	char *rows_per_cta;
	char *smem_bytes;
	char *persistent;
	char *max_n;
	char *ctas_per_row; /* "1" when the manifest leaves it out */
	char *cooperative;  /* "0" when the manifest leaves it out */
} tmpl_launch;

typedef struct tmpl_manifest {
	char *name;
	char *op;        /* the op the template's code is written for */
	char **also_ops; /* others it computes with OP_<NAME> defined */
	size_t nalso_ops;
	char *summary;
	char *manifest_path; /* as given to manifest_load */
	char *source_path;   /* manifest's folder joined with `source` */
	unsigned dtype_mask; /* bit (1u << at_dtype) for each dtype served */
	tmpl_param *params;
	size_t nparams;
	tmpl_constraint *constraints;
	size_t nconstraints;
	tmpl_launch launch;
	tmpl_derive derive;
} tmpl_manifest;

/* Loads and validates one manifest: required keys present, no unknown keys,
 * values integers, default among values, every expression valid over the
 * params plus the shape variables, source file readable. On error returns -1
 * with "path:line:column: what was expected" in err; *out is left zeroed. */
int manifest_load(const char *path, tmpl_manifest *out, at_error *err);

void manifest_free(tmpl_manifest *m);

/* Loads every *.yaml in dir, sorted by file name. Fails on the first bad one. */
int manifest_load_dir(const char *dir, tmpl_manifest **out, size_t *n,
		      at_error *err);
void manifest_free_all(tmpl_manifest *ms, size_t n);

/* 0 when m does not compute op; 1 for its own op, 2... for also_ops. */
int manifest_serves(const tmpl_manifest *m, const char *op);

/* The op a variant of m computing op names in its source (variant.op,
 * kernel_source.h): NULL for m's own op, else m's copy of op. */
const char *manifest_source_op(const tmpl_manifest *m, const char *op);

/* Index of the param with that name, or -1. */
int manifest_param_index(const tmpl_manifest *m, const char *name);

/* m's rules as common/template_rules.h reads them: a view whose pointers
 * are m's (made when asked for, so that a copy of a manifest with a field
 * changed is evaluated as changed); t.body is NULL. */
typedef struct manifest_rules {
	tr_template t;
	tr_param *params;   /* t.params */
	const char **exprs; /* t.constraints, then t.prefer */
} manifest_rules;

/* Makes r's view of m (out of memory aborts); manifest_rules_free frees
 * what it allocated. */
void manifest_rules_view(const tmpl_manifest *m, manifest_rules *r);
void manifest_rules_free(manifest_rules *r);

/* Fills vars with the params' values (values[i] for params[i]) followed by
 * the shape variables env knows (tr_vars). vars must have room for
 * nparams + TR_SHAPE_VARS; names point into m and static strings. */
size_t manifest_vars(const tmpl_manifest *m, const long long *values,
		     const tr_env *env, expr_var *vars);

/* Evaluates every constraint (tr_check). Returns 1 if all hold, 0 if one
 * fails (its `why`, or its expression, goes to err as "constraint `expr`
 * fails: why"), -1 on an evaluation error. A constraint naming a variable
 * env does not know (M or N negative; with env NULL, every shape
 * variable) is skipped. */
int manifest_check(const tmpl_manifest *m, const long long *values,
		   const tr_env *env, at_error *err);

/* Evaluates one expression over m's params and env (tr_eval), e.g. a
 * launch expression such as m->launch.threads. */
int manifest_eval(const tmpl_manifest *m, const char *expr,
		  const long long *values, const tr_env *env,
		  long long *out, at_error *err);

#endif

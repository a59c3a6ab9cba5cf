/* Specialises a template for one parameter set and dtype: the exact CUDA
 * source that NVRTC compiles and that `autotune gen` prints. */
#ifndef AT_GEN_SPECIALIZE_H
#define AT_GEN_SPECIALIZE_H

#include "common/dtype.h"
#include "common/error.h"
#include "gen/manifest.h"

#define VARIANT_MAX_PARAMS TR_MAX_PARAMS

/* A template, a dtype and a value for each of the template's params (in the
 * manifest's order). */
typedef struct variant {
	const tmpl_manifest *tmpl;
	at_dtype dtype;
	/* NULL: the template's own op; else one of its also_ops (the source
	 * defines OP_<OP>) */
	const char *op;
	long long values[VARIANT_MAX_PARAMS];
} variant;

/* Sets every param to its default. */
void variant_defaults(variant *v, const tmpl_manifest *t, at_dtype dt);

/* Applies "name=value" to v. Returns 0, or -1 naming the unknown param or
 * the value that is not among the param's allowed values. */
int variant_set(variant *v, const char *assignment, at_error *err);

/* "threads=256 vec=4 ..." in manifest order (tr_params_text); malloc'd.
 * Parsing it back with variant_set (split on spaces) or tr_params_parse
 * gives the same variant. */
char *variant_params_str(const variant *v);

/* The template's source with its quoted #includes of files beside it
 * expanded in place, malloc'd: what follows the #defines in every variant's
 * source. NULL on error. */
char *template_body(const tmpl_manifest *t, at_error *err);

/* The specialised source, malloc'd: a header naming template and params,
 * one #define per param (upper case) and DTYPE_<DT>, then the template with
 * its quoted #includes of files beside it expanded in place. NULL on error. */
char *specialize(const variant *v, at_error *err);

#endif

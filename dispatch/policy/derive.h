/* Re-deriving a tuned winner for a shape nobody tuned, by the rules of its
 * template's manifest (common/template_rules.h, the engine the tuner
 * enumerates with): the params the manifest's `derive` names are searched
 * over their values, the others kept, until every constraint holds at the
 * new shape; among the valid variants, the one meeting the most `prefer`
 * expressions (earlier ones weigh more), then the one nearest the winner's
 * values. Pure functions, tested without a GPU. */
#ifndef AT_DISPATCH_DERIVE_H
#define AT_DISPATCH_DERIVE_H

#include <stddef.h>

#include "common/template_rules.h"
#include "common/template_rules.h" /* launch_geometry */

#define ATDI_MAX_PARAMS TR_MAX_PARAMS

/* The library's name for the rules' environment. */
typedef tr_env atdi_env;

/* The template named name among the n of ts, or NULL (tr_find). */
const tr_template *atdi_rules_find(const tr_template *ts, int n, const char *name);

/* Parses "threads=256 vec=4 ..." into values in t's param order; a param
 * the text leaves out (a database older than the template) gets its
 * default. Returns 0, or -1 if the text names a param t lacks, or none
 * (tr_params_parse). */
int atdi_params_parse(const tr_template *t, const char *text, long long *values);

/* "threads=256 vec=4 ..." of values, into buf (tr_params_text). */
void atdi_params_text(const tr_template *t, const long long *values, char *buf, size_t cap);

/* 1 if every constraint of t holds for values at env, else 0 (also for a
 * constraint that cannot be evaluated): tr_check's answer. */
int atdi_rules_valid(const tr_template *t, const long long *values, const atdi_env *env);

/* The variant for env derived from the winner's values, into out: 1 when
 * the derive params alone reach it, 2 (with widen non-zero) when the widen
 * params changed too, because the derive params alone reach no valid
 * variant or only one meeting fewer preferences; else 0: none within
 * reach. */
int atdi_derive(const tr_template *t, const long long *winner, const atdi_env *env, int widen,
		long long *out);

/* The launch geometry of values at env (tr_geometry). Returns 0, or -1 if
 * an expression does not evaluate or the geometry is invalid. */
int atdi_rules_geometry(const tr_template *t, const long long *values, const atdi_env *env,
			launch_geometry *g);

#endif

/* The variant space of a template at one shape: every combination of its
 * params' values that its constraints allow, and each variant's launch,
 * as the rules engine (common/template_rules.h) gives them: the dispatch
 * library holds valid and launches exactly these (tests/test_rules_agree.c). */
#ifndef AT_TUNER_ENUMERATE_H
#define AT_TUNER_ENUMERATE_H

#include <stddef.h>

#include "dispatch/runtime/launch_geometry.h"
#include "gen/manifest.h"
#include "gen/specialize.h"

/* *out is malloc'd (NULL when n is 0), in odometer order with the last
 * param varying fastest. Returns -1 if a constraint cannot be evaluated. */
int enumerate_variants(const tmpl_manifest *t, at_dtype dt, const tr_env *env,
		       variant **out, size_t *n, at_error *err);

/* Evaluates the manifest's launch expressions for v at env (tr_geometry). */
int variant_geometry(const variant *v, const tr_env *env, launch_geometry *g,
		     at_error *err);

#endif

/* What a sweep will do, worked out before anything runs: the config's
 * shapes and, for each, the templates that may serve it. Every mistake in
 * the config that the YAML reader cannot see (an op no template serves, an
 * unknown template name) is found here, before the database is touched. */
#ifndef AT_TUNER_PLAN_H
#define AT_TUNER_PLAN_H

#include <stddef.h>

#include "gen/manifest.h"
#include "gen/specialize.h"
#include "tuner/config.h"

typedef struct sweep_plan {
	sweep_config cfg;
	tmpl_manifest *templates;
	size_t ntemplates;
	sweep_shape *shapes;
	size_t nshapes;
} sweep_plan;

/* The templates folder: dir if not NULL, else $AUTOTUNE_TEMPLATES, else
 * templates/ beside the executable's folder, else the source tree's. */
const char *plan_templates_dir(const char *dir);

int plan_load(sweep_plan *p, const char *config_path, const char *templates_dir,
	      at_error *err);
void plan_free(sweep_plan *p);

/* Whether template t may serve shape s (op, dtype and the config's filter). */
int plan_template_serves(const tmpl_manifest *t, const sweep_shape *s);

/* Every variant of every template serving s at env, template by template.
 * *out is malloc'd (NULL when none). */
int plan_shape_variants(const sweep_plan *p, const sweep_shape *s, const tr_env *env,
			variant **out, size_t *n, at_error *err);

/* "softmax f32 M=4096 N=1024" */
void sweep_shape_label(const sweep_shape *s, char *buf, size_t cap);

/* The specialised source of each variant, malloc'd (free with
 * plan_free_sources). NULL on error. */
char **plan_sources(const variant *vs, size_t n, at_error *err);
void plan_free_sources(char **sources, size_t n);

/* The default config NAME (e.g. "softmax.yaml"): configs/NAME here, else
 * beside the program's build folder, else in the installed share folder;
 * "configs/NAME" when none exists (loading it then says so). The string is
 * static: one call at a time. */
const char *plan_default_config(const char *name);

#endif

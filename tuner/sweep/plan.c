/* Sweep planning: see plan.h. */
#include "tuner/sweep/plan.h"


#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/enumerate.h"

#ifndef AT_SOURCE_TEMPLATES_DIR
#define AT_SOURCE_TEMPLATES_DIR "templates"
#endif

static int is_dir(const char *path)
{
	return access(path, R_OK | X_OK) == 0;
}

const char *plan_templates_dir(const char *dir)
{
	if (dir && *dir)
		return dir;
	const char *env = getenv("AUTOTUNE_TEMPLATES");
	if (env && *env)
		return env;
	/* build/autotune -> templates/ beside build/ */
	static char beside[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *bin_dir = dirname(exe);
		char candidate[PATH_MAX];
		snprintf(candidate, sizeof candidate, "%.*s/../templates", PATH_MAX - 20, bin_dir);
		if (is_dir(candidate) && realpath(candidate, beside))
			return beside;
		snprintf(candidate, sizeof candidate, "%.*s/../share/autotune/templates",
			 PATH_MAX - 40, bin_dir);
		if (is_dir(candidate) && realpath(candidate, beside))
			return beside;
	}
	return AT_SOURCE_TEMPLATES_DIR;
}

const char *plan_default_config(const char *name)
{
	static char found[PATH_MAX];
	snprintf(found, sizeof found, "configs/%s", name);
	if (access(found, R_OK) == 0)
		return found;
	/* build/autotune -> configs/ beside build/; bin/autotune ->
	 * share/autotune/configs/ (make install) */
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *bin_dir = dirname(exe);
		static const char *const rel[] = { "../configs", "../share/autotune/configs" };
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			char candidate[PATH_MAX];
			snprintf(candidate, sizeof candidate, "%.*s/%s/%s", PATH_MAX / 2, bin_dir, rel[i],
				 name);
			if (access(candidate, R_OK) == 0 && realpath(candidate, found))
				return found;
		}
	}
	snprintf(found, sizeof found, "configs/%s", name);
	return found;
}

static int template_named(const sweep_plan *p, const char *name)
{
	for (size_t i = 0; i < p->ntemplates; i++)
		if (strcmp(p->templates[i].name, name) == 0)
			return (int)i;
	return -1;
}

static char *known_templates(const sweep_plan *p)
{
	strbuf s = { 0 };
	for (size_t i = 0; i < p->ntemplates; i++)
		strbuf_printf(&s, "%s%s", i ? ", " : "", p->templates[i].name);
	return strbuf_take(&s);
}

/* Each spec's op is described (tuner/ops) and has a template, and each
 * named template exists for it. */
static int check_specs(const sweep_plan *p, at_error *err)
{
	for (size_t i = 0; i < p->cfg.nspecs; i++) {
		const sweep_spec *s = &p->cfg.specs[i];
		if (!op_find(s->op)) {
			char *known = op_names();
			at_error_set(err, "%s:%d: unknown op \"%s\" (known: %s)", p->cfg.path,
				     s->line, s->op, known);
			free(known);
			return -1;
		}
		int served = 0;
		for (size_t t = 0; t < p->ntemplates; t++)
			served |= manifest_serves(&p->templates[t], s->op) != 0;
		if (!served)
			return at_error_set(err, "%s:%d: no template implements op \"%s\"",
					    p->cfg.path, s->line, s->op);
		for (size_t k = 0; k < s->ntemplates; k++) {
			int t = template_named(p, s->templates[k]);
			if (t < 0) {
				char *known = known_templates(p);
				at_error_set(err, "%s:%d: unknown template \"%s\" (known: %s)",
					     p->cfg.path, s->line, s->templates[k], known);
				free(known);
				return -1;
			}
			if (!manifest_serves(&p->templates[t], s->op))
				return at_error_set(err, "%s:%d: template \"%s\" implements op \"%s\", not \"%s\"",
						    p->cfg.path, s->line, s->templates[k],
						    p->templates[t].op, s->op);
		}
	}
	return 0;
}

int plan_load(sweep_plan *p, const char *config_path, const char *templates_dir,
	      at_error *err)
{
	memset(p, 0, sizeof *p);
	const char *dir = plan_templates_dir(templates_dir);
	if (config_load(config_path, &p->cfg, err))
		return -1;
	if (manifest_load_dir(dir, &p->templates, &p->ntemplates, err) ||
	    check_specs(p, err) ||
	    config_shapes(&p->cfg, &p->shapes, &p->nshapes, err)) {
		plan_free(p);
		return -1;
	}
	if (p->ntemplates == 0) {
		at_error_set(err, "%s: no templates found", dir);
		plan_free(p);
		return -1;
	}
	return 0;
}

void plan_free(sweep_plan *p)
{
	config_free(&p->cfg);
	manifest_free_all(p->templates, p->ntemplates);
	free(p->shapes);
	memset(p, 0, sizeof *p);
}

int plan_template_serves(const tmpl_manifest *t, const sweep_shape *s)
{
	if (!manifest_serves(t, s->op) || !(t->dtype_mask & (1u << s->dtype)))
		return 0;
	if (!s->spec || !s->spec->templates)
		return 1;
	for (size_t i = 0; i < s->spec->ntemplates; i++)
		if (strcmp(s->spec->templates[i], t->name) == 0)
			return 1;
	return 0;
}

int plan_shape_variants(const sweep_plan *p, const sweep_shape *s, const tr_env *env,
			variant **out, size_t *n, at_error *err)
{
	*out = NULL;
	*n = 0;
	for (size_t t = 0; t < p->ntemplates; t++) {
		if (!plan_template_serves(&p->templates[t], s))
			continue;
		variant *vs;
		size_t nv;
		if (enumerate_variants(&p->templates[t], s->dtype, env, &vs, &nv, err)) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
		const char *op = manifest_source_op(&p->templates[t], s->op);
		for (size_t i = 0; i < nv; i++)
			vs[i].op = op;
		*out = xrealloc(*out, (*n + nv) * sizeof **out);
		if (nv)
			memcpy(*out + *n, vs, nv * sizeof *vs);
		*n += nv;
		free(vs);
	}
	return 0;
}

char **plan_sources(const variant *vs, size_t n, at_error *err)
{
	char **sources = xcalloc(n ? n : 1, sizeof *sources);
	for (size_t i = 0; i < n; i++) {
		sources[i] = specialize(&vs[i], err);
		if (!sources[i]) {
			plan_free_sources(sources, i);
			return NULL;
		}
	}
	return sources;
}

void plan_free_sources(char **sources, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(sources[i]);
	free(sources);
}

void sweep_shape_label(const sweep_shape *s, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s %s M=%lld N=%lld", s->op, at_dtype_name(s->dtype), s->M, s->N);
}

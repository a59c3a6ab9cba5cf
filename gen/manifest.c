/* Template manifests: loads and validates the YAML beside each CUDA template
 * (format in gen/manifest.h), and gives the rules engine
 * (common/template_rules.h) its view of a manifest's rules, through which
 * the constraints and launch expressions of a variant are evaluated. Load
 * errors point at the offending node so that a template author can fix the
 * file without reading this code. */
#include "gen/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "common/yaml_doc.h"

static const char *const top_keys[] = {
	"template", "op", "also_ops", "source", "summary", "dtypes",
	"params", "constraints", "launch", "derive", NULL,
};
static const char *const derive_keys[] = { "params", "widen", "prefer", NULL };
static const char *const param_keys[] = { "name", "values", "default", "doc",
					   NULL };
static const char *const constraint_keys[] = { "expr", "why", NULL };
/* The launch keys (tr_launch_names) are the required ones, then the
 * optional ones (with their defaults). */
#define LAUNCH_REQUIRED 5
static const char *const launch_defaults[] = { "1", "0" };
_Static_assert(LAUNCH_REQUIRED + sizeof launch_defaults / sizeof *launch_defaults ==
		       TR_LAUNCH_KEYS,
	       "a default for every optional launch key");

struct loader {
	const char *path;
	ydoc *y; /* the manifest's YAML (common/yaml_doc.h) */
	tmpl_manifest *m;
	const char **names; /* params then shape variables, for expr_validate */
	size_t nnames;
};

static int expect_type(const struct loader *L, const yaml_node_t *n,
		       yaml_node_type_t type, const char *what)
{
	return n->type == type ? 0 : ydoc_fail_got(L->y, n, what);
}

/* Every key a string, known and given once: catches typos such as
 * "default:" misspelt, which would otherwise be silently ignored. */
static int check_keys(const struct loader *L, const yaml_node_t *map,
		      const char *const *allowed, const char *where)
{
	size_t n = 0;
	while (allowed[n])
		n++;
	yaml_node_t *vals[n];
	char in[200];
	snprintf(in, sizeof in, "in %s", where);
	return ydoc_lookup_keys(L->y, map, allowed, n, in, vals);
}

static yaml_node_t *map_find(const struct loader *L, const yaml_node_t *map,
			     const char *key)
{
	return ydoc_find(L->y, map, key);
}

static yaml_node_t *map_require(const struct loader *L, const yaml_node_t *map,
				const char *key, const char *where)
{
	yaml_node_t *n = ydoc_find(L->y, map, key);
	if (!n)
		ydoc_fail(L->y, map, "missing key \"%s\" in %s", key, where);
	return n;
}

static int take_string(const struct loader *L, const yaml_node_t *n,
		       const char *what, int nonempty, char **out)
{
	char buf[128];
	if (n->type != YAML_SCALAR_NODE)
		return ydoc_fail(L->y, n, "expected a string for %s, got %s", what,
				ydoc_describe(n, buf, sizeof buf));
	const char *s = (const char *)n->data.scalar.value;
	if (strlen(s) != n->data.scalar.length)
		return ydoc_fail(L->y, n, "expected a string for %s, got one with a NUL byte",
				what);
	if (nonempty && !*s)
		return ydoc_fail(L->y, n, "expected a non-empty string for %s", what);
	*out = strdup(s);
	return *out ? 0 : ydoc_oom(L->y);
}

static int take_int(const struct loader *L, const yaml_node_t *n,
		    const char *what, long long *out)
{
	char buf[128];
	if (n->type != YAML_SCALAR_NODE ||
	    strlen((const char *)n->data.scalar.value) != n->data.scalar.length ||
	    ydoc_parse_ll((const char *)n->data.scalar.value, out))
		return ydoc_fail(L->y, n, "expected an integer in %s, got %s", what,
				ydoc_describe(n, buf, sizeof buf));
	return 0;
}

static int take_expr(const struct loader *L, const yaml_node_t *n,
		     const char *what, char **out)
{
	if (take_string(L, n, what, 0, out))
		return -1;
	at_error e;
	if (expr_validate(*out, L->names, L->nnames, &e) != EXPR_OK)
		return ydoc_fail(L->y, n, "expected a valid expression in %s: %s",
				what, e.msg);
	return 0;
}

/* "templates/softmax_block.yaml" -> "softmax_block". */
static void file_stem(const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, size, "%.*s", (int)len, base);
}

static int load_template(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *n = map_require(L, root, "template", "the manifest");
	if (!n || take_string(L, n, "template", 1, &L->m->name))
		return -1;
	char stem[256];
	file_stem(L->path, stem, sizeof stem);
	if (strcmp(stem, L->m->name) != 0)
		return ydoc_fail(L->y, n,
				"expected template \"%s\" (the file's name), got \"%s\"",
				stem, L->m->name);
	return 0;
}

/* The source is resolved against the manifest's folder, not the working
 * directory, so that manifests load the same from anywhere. */
static int load_source(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *n = map_require(L, root, "source", "the manifest");
	char *src = NULL;
	if (!n || take_string(L, n, "source", 1, &src))
		return -1;
	if (src[0] == '/') {
		free(src);
		return ydoc_fail(L->y, n, "expected a source path relative to the manifest's folder");
	}
	const char *slash = strrchr(L->path, '/');
	int dlen = slash ? (int)(slash - L->path) + 1 : 2;
	const char *dir = slash ? L->path : "./";
	size_t len = (size_t)dlen + strlen(src) + 1;
	L->m->source_path = malloc(len);
	if (L->m->source_path)
		snprintf(L->m->source_path, len, "%.*s%s", dlen, dir, src);
	free(src);
	return L->m->source_path ? 0 : ydoc_oom(L->y);
}

static int check_source(const struct loader *L, const yaml_node_t *root)
{
	FILE *f = fopen(L->m->source_path, "r");
	if (f) {
		fclose(f);
		return 0;
	}
	return ydoc_fail(L->y, map_find(L, root, "source"),
			"expected a readable source file, cannot open \"%s\": %s",
			L->m->source_path, strerror(errno));
}

static int load_dtypes(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *seq = map_require(L, root, "dtypes", "the manifest");
	if (!seq || expect_type(L, seq, YAML_SEQUENCE_NODE,
				"a sequence of dtypes (f32, f16, bf16)"))
		return -1;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	if (it == seq->data.sequence.items.top)
		return ydoc_fail(L->y, seq, "expected at least one dtype in dtypes");
	for (; it < seq->data.sequence.items.top; it++) {
		const yaml_node_t *n = ydoc_node(L->y, *it);
		char buf[128];
		at_dtype dt;
		if (n->type != YAML_SCALAR_NODE ||
		    at_dtype_parse((const char *)n->data.scalar.value, &dt))
			return ydoc_fail(L->y, n,
					"expected a dtype (f32, f16, bf16) in dtypes, got %s",
					ydoc_describe(n, buf, sizeof buf));
		if (L->m->dtype_mask & (1u << dt))
			return ydoc_fail(L->y, n, "duplicate dtype \"%s\" in dtypes",
					at_dtype_name(dt));
		L->m->dtype_mask |= 1u << dt;
	}
	return 0;
}

static int valid_param_name(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return 0;
	return 1;
}

static int load_param_name(const struct loader *L, const yaml_node_t *map,
			   size_t i, const char *where)
{
	const yaml_node_t *n = map_require(L, map, "name", where);
	tmpl_param *p = &L->m->params[i];
	if (!n || take_string(L, n, "the param's name", 1, &p->name))
		return -1;
	if (!valid_param_name(p->name))
		return ydoc_fail(L->y, n,
				"expected a param name matching [a-z][a-z0-9_]*, got \"%s\"",
				p->name);
	for (size_t j = 0; j < i; j++)
		if (strcmp(L->m->params[j].name, p->name) == 0)
			return ydoc_fail(L->y, n, "duplicate param name \"%s\"",
					p->name);
	for (size_t j = 0; j < TR_SHAPE_VARS; j++)
		if (strcmp(tr_shape_var_names[j], p->name) == 0)
			return ydoc_fail(L->y, n,
					"param name \"%s\" clashes with the shape variable of that name",
					p->name);
	return 0;
}

static int load_values(const struct loader *L, const yaml_node_t *map,
		       tmpl_param *p, const char *where)
{
	char what[192];
	snprintf(what, sizeof what, "values of %s", where);
	const yaml_node_t *seq = map_require(L, map, "values", where);
	if (!seq || expect_type(L, seq, YAML_SEQUENCE_NODE,
				"a sequence of integers for values"))
		return -1;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	size_t n = (size_t)(seq->data.sequence.items.top - it);
	if (n == 0)
		return ydoc_fail(L->y, seq, "expected at least one integer in %s", what);
	p->values = calloc(n, sizeof *p->values);
	if (!p->values)
		return ydoc_oom(L->y);
	for (size_t k = 0; k < n; k++) {
		const yaml_node_t *v = ydoc_node(L->y, it[k]);
		if (take_int(L, v, what, &p->values[k]))
			return -1;
		for (size_t j = 0; j < k; j++)
			if (p->values[j] == p->values[k])
				return ydoc_fail(L->y, v, "expected distinct %s, got %lld twice",
						what, p->values[k]);
		p->nvalues = k + 1;
	}
	return 0;
}

static int load_default(const struct loader *L, const yaml_node_t *map,
			tmpl_param *p, const char *where)
{
	char what[192];
	snprintf(what, sizeof what, "default of %s", where);
	const yaml_node_t *n = map_require(L, map, "default", where);
	if (!n || take_int(L, n, what, &p->def))
		return -1;
	for (size_t k = 0; k < p->nvalues; k++)
		if (p->values[k] == p->def)
			return 0;
	return ydoc_fail(L->y, n, "expected the default of %s to be one of its values, got %lld",
			where, p->def);
}

static int load_param(const struct loader *L, const yaml_node_t *map, size_t i)
{
	char where[160];
	snprintf(where, sizeof where, "params[%zu]", i);
	if (expect_type(L, map, YAML_MAPPING_NODE, "a mapping for each param") ||
	    check_keys(L, map, param_keys, where) ||
	    load_param_name(L, map, i, where))
		return -1;
	tmpl_param *p = &L->m->params[i];
	/* From here on the name says more than the index. */
	snprintf(where, sizeof where, "param \"%.100s\"", p->name);
	if (load_values(L, map, p, where) || load_default(L, map, p, where))
		return -1;
	const yaml_node_t *doc = map_find(L, map, "doc");
	char what[192];
	snprintf(what, sizeof what, "doc of %s", where);
	if (doc)
		return take_string(L, doc, what, 0, &p->doc);
	p->doc = strdup("");
	return p->doc ? 0 : ydoc_oom(L->y);
}

static int load_params(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *seq = map_require(L, root, "params", "the manifest");
	if (!seq || expect_type(L, seq, YAML_SEQUENCE_NODE,
				"a sequence of params"))
		return -1;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	size_t n = (size_t)(seq->data.sequence.items.top - it);
	if (n == 0)
		return ydoc_fail(L->y, seq, "expected at least one param in params");
	if (n > TR_MAX_PARAMS)
		return ydoc_fail(L->y, seq, "expected at most %d params, got %zu", TR_MAX_PARAMS, n);
	L->m->params = calloc(n, sizeof *L->m->params);
	if (!L->m->params)
		return ydoc_oom(L->y);
	L->m->nparams = n;
	for (size_t i = 0; i < n; i++)
		if (load_param(L, ydoc_node(L->y, it[i]), i))
			return -1;
	return 0;
}

static int build_names(struct loader *L)
{
	const tmpl_manifest *m = L->m;
	L->nnames = m->nparams + TR_SHAPE_VARS;
	L->names = malloc(L->nnames * sizeof *L->names);
	if (!L->names)
		return ydoc_oom(L->y);
	for (size_t i = 0; i < m->nparams; i++)
		L->names[i] = m->params[i].name;
	for (size_t i = 0; i < TR_SHAPE_VARS; i++)
		L->names[m->nparams + i] = tr_shape_var_names[i];
	return 0;
}

static int load_constraint(const struct loader *L, const yaml_node_t *map,
			   const char *list, size_t i, tmpl_constraint *c)
{
	char where[64], what[96];
	snprintf(where, sizeof where, "%s[%zu]", list, i);
	if (expect_type(L, map, YAML_MAPPING_NODE,
			"a mapping with expr (and why) for each constraint") ||
	    check_keys(L, map, constraint_keys, where))
		return -1;
	const yaml_node_t *n = map_require(L, map, "expr", where);
	snprintf(what, sizeof what, "expr of %s", where);
	if (!n || take_expr(L, n, what, &c->expr))
		return -1;
	n = map_find(L, map, "why");
	snprintf(what, sizeof what, "why of %s", where);
	return n ? take_string(L, n, what, 0, &c->why) : 0;
}

/* The optional sequence of {expr, why} under key of map, named list in
 * messages, into *out. */
static int load_constraint_list(const struct loader *L, const yaml_node_t *map,
				const char *key, const char *list, tmpl_constraint **out,
				size_t *count)
{
	const yaml_node_t *seq = map_find(L, map, key);
	if (!seq)
		return 0;
	if (expect_type(L, seq, YAML_SEQUENCE_NODE, "a sequence of constraints"))
		return -1;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	size_t n = (size_t)(seq->data.sequence.items.top - it);
	if (n == 0)
		return 0;
	*out = calloc(n, sizeof **out);
	if (!*out)
		return ydoc_oom(L->y);
	*count = n;
	for (size_t i = 0; i < n; i++)
		if (load_constraint(L, ydoc_node(L->y, it[i]), list, i, &(*out)[i]))
			return -1;
	return 0;
}

static int load_constraints(const struct loader *L, const yaml_node_t *root)
{
	return load_constraint_list(L, root, "constraints", "constraints", &L->m->constraints,
				    &L->m->nconstraints);
}

/* A sequence of param names (derive.params, derive.widen) as indices. */
static int load_param_names(const struct loader *L, const yaml_node_t *map, const char *key,
			    int **out, size_t *count)
{
	const yaml_node_t *seq = map_find(L, map, key);
	if (!seq)
		return 0;
	char what[64];
	snprintf(what, sizeof what, "a sequence of param names for derive.%s", key);
	if (expect_type(L, seq, YAML_SEQUENCE_NODE, what))
		return -1;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	size_t n = (size_t)(seq->data.sequence.items.top - it);
	if (n == 0)
		return 0;
	*out = calloc(n, sizeof **out);
	if (!*out)
		return ydoc_oom(L->y);
	*count = n;
	for (size_t i = 0; i < n; i++) {
		const yaml_node_t *v = ydoc_node(L->y, it[i]);
		char buf[128];
		int idx = v->type == YAML_SCALAR_NODE
				  ? manifest_param_index(L->m, (const char *)v->data.scalar.value)
				  : -1;
		if (idx < 0)
			return ydoc_fail(L->y, v, "expected the name of a param in derive.%s, got %s", key,
					ydoc_describe(v, buf, sizeof buf));
		(*out)[i] = idx;
	}
	return 0;
}

/* derive: how a winner tuned at one row length is re-derived for another
 * (see manifest.h). Optional: a template without it is reused as tuned. */
static int load_derive(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *map = map_find(L, root, "derive");
	if (!map)
		return 0;
	tmpl_derive *d = &L->m->derive;
	if (expect_type(L, map, YAML_MAPPING_NODE, "a mapping with params, widen and prefer") ||
	    check_keys(L, map, derive_keys, "derive") ||
	    !map_require(L, map, "params", "derive") ||
	    load_param_names(L, map, "params", &d->params, &d->nparams) ||
	    load_param_names(L, map, "widen", &d->widen, &d->nwiden))
		return -1;
	return load_constraint_list(L, map, "prefer", "derive.prefer", &d->prefer, &d->nprefer);
}

static int load_launch(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *map = map_require(L, root, "launch", "the manifest");
	if (!map || expect_type(L, map, YAML_MAPPING_NODE,
				"a mapping of launch expressions") ||
	    check_keys(L, map, tr_launch_names, "launch"))
		return -1;
	tmpl_launch *l = &L->m->launch;
	char **slots[TR_LAUNCH_KEYS] = {
		[TR_THREADS] = &l->threads,	  [TR_ROWS_PER_CTA] = &l->rows_per_cta,
		[TR_SMEM_BYTES] = &l->smem_bytes, [TR_PERSISTENT] = &l->persistent,
		[TR_MAX_N] = &l->max_n,		  [TR_CTAS_PER_ROW] = &l->ctas_per_row,
		[TR_COOPERATIVE] = &l->cooperative,
	};
	for (size_t i = 0; i < TR_LAUNCH_KEYS; i++) {
		const yaml_node_t *n = i < LAUNCH_REQUIRED
					       ? map_require(L, map, tr_launch_names[i], "launch")
					       : map_find(L, map, tr_launch_names[i]);
		if (!n && i >= LAUNCH_REQUIRED) {
			*slots[i] = strdup(launch_defaults[i - LAUNCH_REQUIRED]);
			if (!*slots[i])
				return ydoc_oom(L->y);
			continue;
		}
		char what[64];
		snprintf(what, sizeof what, "launch.%s", tr_launch_names[i]);
		if (!n || take_expr(L, n, what, slots[i]))
			return -1;
	}
	return 0;
}

/* An op's name becomes a macro (OP_<NAME>): letters, digits and '_'. */
static int check_op_name(const struct loader *L, const yaml_node_t *n, const char *op)
{
	for (const char *c = op; *c; c++)
		if (!(*c >= 'a' && *c <= 'z') && !(*c >= '0' && *c <= '9') && *c != '_')
			return ydoc_fail(L->y, n,
					 "expected an op name of lower-case letters, digits and '_', "
					 "got \"%s\"",
					 op);
	return 0;
}

/* also_ops: the other ops the template's code computes when its source
 * defines OP_<NAME> (optional). */
static int load_also_ops(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *seq = map_find(L, root, "also_ops");
	if (!seq)
		return 0;
	if (expect_type(L, seq, YAML_SEQUENCE_NODE, "a sequence of op names for also_ops"))
		return -1;
	tmpl_manifest *m = L->m;
	const yaml_node_item_t *it = seq->data.sequence.items.start;
	m->also_ops = xcalloc((size_t)(seq->data.sequence.items.top - it) + 1, sizeof *m->also_ops);
	for (; it < seq->data.sequence.items.top; it++) {
		const yaml_node_t *n = ydoc_node(L->y, *it);
		char *op;
		if (take_string(L, n, "an op in also_ops", 1, &op))
			return -1;
		m->also_ops[m->nalso_ops++] = op;
		if (check_op_name(L, n, op))
			return -1;
		if (manifest_serves(m, op) != (int)m->nalso_ops + 1)
			return ydoc_fail(L->y, n, "op \"%s\" is named twice (op, also_ops)", op);
	}
	return 0;
}

static int load_header(const struct loader *L, const yaml_node_t *root)
{
	const yaml_node_t *n;
	if (load_template(L, root))
		return -1;
	n = map_require(L, root, "op", "the manifest");
	if (!n || take_string(L, n, "op", 1, &L->m->op) || check_op_name(L, n, L->m->op) ||
	    load_also_ops(L, root))
		return -1;
	if (load_source(L, root))
		return -1;
	n = map_find(L, root, "summary");
	if (n)
		return take_string(L, n, "summary", 0, &L->m->summary);
	L->m->summary = strdup("");
	return L->m->summary ? 0 : ydoc_oom(L->y);
}

static int load_document(struct loader *L)
{
	const yaml_node_t *root = ydoc_root(L->y);
	if (!root)
		return at_error_set(L->y->err,
				    "%s:1:1: expected a mapping of manifest keys, got an empty document",
				    L->path);
	if (expect_type(L, root, YAML_MAPPING_NODE,
			"a mapping of manifest keys") ||
	    check_keys(L, root, top_keys, "the manifest") ||
	    load_header(L, root) || load_dtypes(L, root) ||
	    load_params(L, root) || build_names(L) ||
	    load_constraints(L, root) || load_launch(L, root) || load_derive(L, root))
		return -1;
	/* Last, so that mistakes in the file itself are reported first. */
	return check_source(L, root);
}

static int parse_text(const char *path, const char *text, size_t len, tmpl_manifest *out,
		      at_error *err)
{
	ydoc y;
	int rc = ydoc_load(&y, path, text, len, err);
	if (rc == 0) {
		struct loader L = { .path = path, .y = &y, .m = out };
		rc = load_document(&L);
		free(L.names);
	}
	ydoc_free(&y);
	return rc;
}

int manifest_load(const char *path, tmpl_manifest *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	size_t len = 0;
	char *text = ydoc_read_file(path, &len, err);
	if (!text)
		return -1;
	int rc = parse_text(path, text, len, out, err);
	free(text);
	if (rc == 0) {
		out->manifest_path = strdup(path);
		if (!out->manifest_path)
			rc = at_error_set(err, "%s: out of memory", path);
	}
	if (rc)
		manifest_free(out);
	return rc ? -1 : 0;
}

void manifest_free(tmpl_manifest *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nparams; i++) {
		free(m->params[i].name);
		free(m->params[i].values);
		free(m->params[i].doc);
	}
	free(m->params);
	for (size_t i = 0; i < m->nconstraints; i++) {
		free(m->constraints[i].expr);
		free(m->constraints[i].why);
	}
	free(m->constraints);
	free(m->derive.params);
	free(m->derive.widen);
	for (size_t i = 0; i < m->derive.nprefer; i++) {
		free(m->derive.prefer[i].expr);
		free(m->derive.prefer[i].why);
	}
	free(m->derive.prefer);
	free(m->launch.threads);
	free(m->launch.rows_per_cta);
	free(m->launch.smem_bytes);
	free(m->launch.persistent);
	free(m->launch.max_n);
	free(m->launch.ctas_per_row);
	free(m->launch.cooperative);
	free(m->name);
	free(m->op);
	for (size_t i = 0; i < m->nalso_ops; i++)
		free(m->also_ops[i]);
	free(m->also_ops);
	free(m->summary);
	free(m->manifest_path);
	free(m->source_path);
	memset(m, 0, sizeof *m);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_manifest_name(const char *name)
{
	size_t n = strlen(name);
	/* Like the shell's *.yaml: hidden files (editor backups) are skipped. */
	return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".yaml") == 0;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int list_manifests(const char *dir, char ***names, size_t *n,
			  at_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return at_error_set(err, "%s: cannot open folder: %s", dir,
				    strerror(errno));
	size_t cap = 0;
	const struct dirent *e;
	*names = NULL;
	*n = 0;
	while ((e = readdir(d))) {
		if (!is_manifest_name(e->d_name))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			char **grown = realloc(*names, cap * sizeof *grown);
			if (!grown)
				goto nomem;
			*names = grown;
		}
		if (!((*names)[*n] = strdup(e->d_name)))
			goto nomem;
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof **names, cmp_str);
	return 0;
nomem:
	closedir(d);
	free_names(*names, *n);
	*names = NULL;
	*n = 0;
	return at_error_set(err, "%s: out of memory", dir);
}

static char *join_path(const char *dir, const char *name)
{
	size_t dlen = strlen(dir);
	int slash = dlen > 0 && dir[dlen - 1] == '/';
	size_t len = dlen + strlen(name) + 2;
	char *p = malloc(len);
	if (p)
		snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", name);
	return p;
}

int manifest_load_dir(const char *dir, tmpl_manifest **out, size_t *n,
		      at_error *err)
{
	char **names = NULL;
	size_t count = 0, i;
	*out = NULL;
	*n = 0;
	if (list_manifests(dir, &names, &count, err))
		return -1;
	tmpl_manifest *ms = count ? calloc(count, sizeof *ms) : NULL;
	if (count && !ms) {
		free_names(names, count);
		return at_error_set(err, "%s: out of memory", dir);
	}
	for (i = 0; i < count; i++) {
		char *path = join_path(dir, names[i]);
		int rc = path ? manifest_load(path, &ms[i], err) :
				at_error_set(err, "%s: out of memory", dir);
		free(path);
		if (rc)
			break;
	}
	free_names(names, count);
	if (i < count) {
		manifest_free_all(ms, i);
		return -1;
	}
	*out = ms;
	*n = count;
	return 0;
}

void manifest_free_all(tmpl_manifest *ms, size_t n)
{
	for (size_t i = 0; ms && i < n; i++)
		manifest_free(&ms[i]);
	free(ms);
}

int manifest_serves(const tmpl_manifest *m, const char *op)
{
	if (m->op && strcmp(m->op, op) == 0)
		return 1;
	for (size_t i = 0; i < m->nalso_ops; i++)
		if (strcmp(m->also_ops[i], op) == 0)
			return (int)i + 2;
	return 0;
}

const char *manifest_source_op(const tmpl_manifest *m, const char *op)
{
	int k = manifest_serves(m, op);
	return k >= 2 ? m->also_ops[k - 2] : NULL;
}

int manifest_param_index(const tmpl_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->nparams; i++)
		if (strcmp(m->params[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The launch expressions in tr_template.launch's order. */
static void launch_exprs(const tmpl_launch *l, const char **out)
{
	const char *in[TR_LAUNCH_KEYS] = {
		[TR_THREADS] = l->threads,	 [TR_ROWS_PER_CTA] = l->rows_per_cta,
		[TR_SMEM_BYTES] = l->smem_bytes, [TR_PERSISTENT] = l->persistent,
		[TR_MAX_N] = l->max_n,		 [TR_CTAS_PER_ROW] = l->ctas_per_row,
		[TR_COOPERATIVE] = l->cooperative,
	};
	memcpy(out, in, sizeof in);
}

void manifest_rules_view(const tmpl_manifest *m, manifest_rules *r)
{
	const char *base = m->source_path ? strrchr(m->source_path, '/') : NULL;
	size_t nexprs = m->nconstraints + m->derive.nprefer;
	r->params = xcalloc(m->nparams ? m->nparams : 1, sizeof *r->params);
	r->exprs = xcalloc(nexprs ? nexprs : 1, sizeof *r->exprs);
	for (size_t i = 0; i < m->nparams; i++)
		r->params[i] = (tr_param){ m->params[i].name, m->params[i].values,
					   (int)m->params[i].nvalues, m->params[i].def };
	for (size_t i = 0; i < m->nconstraints; i++)
		r->exprs[i] = m->constraints[i].expr;
	for (size_t i = 0; i < m->derive.nprefer; i++)
		r->exprs[m->nconstraints + i] = m->derive.prefer[i].expr;
	r->t = (tr_template){
		.name = m->name,
		.source_file = base ? base + 1 : m->source_path,
		.dtype_mask = m->dtype_mask,
		.params = r->params,
		.nparams = (int)m->nparams,
		.constraints = r->exprs,
		.nconstraints = (int)m->nconstraints,
		.derive = m->derive.params,
		.nderive = (int)m->derive.nparams,
		.widen = m->derive.widen,
		.nwiden = (int)m->derive.nwiden,
		.prefer = r->exprs + m->nconstraints,
		.nprefer = (int)m->derive.nprefer,
		.op = m->op,
		.also_ops = (const char *const *)m->also_ops,
		.nalso_ops = (int)m->nalso_ops,
	};
	launch_exprs(&m->launch, r->t.launch);
}

void manifest_rules_free(manifest_rules *r)
{
	free(r->params);
	free(r->exprs);
	memset(r, 0, sizeof *r);
}

size_t manifest_vars(const tmpl_manifest *m, const long long *values,
		     const tr_env *env, expr_var *vars)
{
	manifest_rules r;
	manifest_rules_view(m, &r);
	size_t n = tr_vars(&r.t, values, env, vars);
	manifest_rules_free(&r);
	return n;
}

int manifest_check(const tmpl_manifest *m, const long long *values,
		   const tr_env *env, at_error *err)
{
	manifest_rules r;
	manifest_rules_view(m, &r);
	int failed = 0;
	int rc = tr_check(&r.t, values, env, &failed, err);
	manifest_rules_free(&r);
	if (rc == 0) {
		const tmpl_constraint *c = &m->constraints[failed];
		at_error_set(err, "constraint `%s` fails%s%s", c->expr, c->why ? ": " : "",
			     c->why ? c->why : "");
	}
	return rc;
}

int manifest_eval(const tmpl_manifest *m, const char *expr,
		  const long long *values, const tr_env *env,
		  long long *out, at_error *err)
{
	manifest_rules r;
	manifest_rules_view(m, &r);
	int rc = tr_eval(&r.t, expr, values, env, out, err);
	manifest_rules_free(&r);
	return rc;
}

/* Reads the sweep config (YAML, see config.h) into a sweep_config, checking
 * every node so that a mistake is reported with its file:line:column, and
 * expands it into the list of (op, dtype, M, N) shapes to tune. */
#include "tuner/config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shape_bound.h"
#include "common/yaml_doc.h"

#define DEFAULT_WARMUP 5
/* Timing stops once the median is known within DEFAULT_TOLERANCE (rep_rule.h),
 * after at least DEFAULT_MIN_REPETITIONS and at most DEFAULT_REPETITIONS
 * repetitions or DEFAULT_TIME_BUDGET_MS per variant. A repetition costs an
 * L2 flush (~0.15 ms) and the kernel, so 5 ms is about the 5 + 25 launches
 * of the fixed count before: a noisy variant costs what it did, a steady
 * one stops at 10. */
#define DEFAULT_REPETITIONS 100
#define DEFAULT_MIN_REPETITIONS 10
#define DEFAULT_TOLERANCE 0.01
#define DEFAULT_TIME_BUDGET_MS 5.0
#define MAX_TIME_BUDGET_MS 60000.0
/* An accidental {from: 1, to: 1000000000, step: 1} must fail fast rather
 * than allocate gigabytes or queue a sweep that never ends. */
#define MAX_SHAPES 1000000
/* Long scalars are cut in messages to this many bytes (common/yaml_doc.c). */
#define MAX_SHOWN 80

/* The document being read (common/yaml_doc.h: its messages point at the
 * node as file:line:column). */
typedef ydoc parse_ctx;

/* The keys a mapping may have, and how to name the mapping in messages. */
typedef struct key_spec {
	const char *const *keys;
	size_t nkeys;
	const char *where; /* "in sweep entry", "at the top level", ... */
} key_spec;

static size_t seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_item(const parse_ctx *ctx, const yaml_node_t *n,
			     size_t i)
{
	return ydoc_node(ctx, n->data.sequence.items.start[i]);
}

static int parse_posint(const parse_ctx *ctx, const yaml_node_t *n,
			const char *what, long long *v)
{
	char expected[128];
	long long x;
	const char *s = ydoc_string(n);
	snprintf(expected, sizeof expected, "a positive integer for %s", what);
	if (!s || ydoc_parse_ll(s, &x) < 0 || x < 1) {
		/* A huge value that overflowed is still a number: say so. */
		if (s && s[0] >= '1' && s[0] <= '9' &&
		    strspn(s, "0123456789") == strlen(s))
			goto too_big;
		return ydoc_fail_got(ctx, n, expected);
	}
	if (x > AT_SHAPE_MAX_DIM)
		goto too_big;
	*v = x;
	return 0;
too_big:
	snprintf(expected, sizeof expected,
		 "a positive integer of at most %lld for %s", AT_SHAPE_MAX_DIM, what);
	return ydoc_fail_got(ctx, n, expected);
}

static int parse_bounded_int(const parse_ctx *ctx, const yaml_node_t *n,
			     const char *what, int lo, int hi, int *v)
{
	long long x;
	const char *s = ydoc_string(n);
	if (!s || ydoc_parse_ll(s, &x) < 0 || x < lo || x > hi) {
		char expected[128];
		snprintf(expected, sizeof expected,
			 "an integer from %d to %d for %s", lo, hi, what);
		return ydoc_fail_got(ctx, n, expected);
	}
	*v = (int)x;
	return 0;
}

/* A plain decimal number ("0.01", "2", "1e-3"): strtod alone would also
 * take "inf", "nan", hex floats and leading blanks. */
static int parse_number(const parse_ctx *ctx, const yaml_node_t *n,
			const char *what, double lo, double hi, double *v)
{
	const char *s = ydoc_string(n);
	int ok = s && s[0] && strspn(s, "0123456789.eE+-") == strlen(s);
	char *end = NULL;
	double x = 0;
	if (ok) {
		errno = 0;
		x = strtod(s, &end);
		ok = errno == 0 && end && *end == '\0' && x >= lo && x <= hi;
	}
	if (!ok) {
		char expected[128];
		snprintf(expected, sizeof expected, "a number from %g to %g for %s",
			 lo, hi, what);
		return ydoc_fail_got(ctx, n, expected);
	}
	*v = x;
	return 0;
}

static int is_name(const char *s)
{
	if (s[0] < 'a' || s[0] > 'z')
		return 0;
	for (const char *p = s + 1; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_'))
			return 0;
	return 1;
}

static int parse_name(const parse_ctx *ctx, const yaml_node_t *n,
		      const char *expected, char **out)
{
	const char *s = ydoc_string(n);
	if (!s || !is_name(s))
		return ydoc_fail_got(ctx, n, expected);
	*out = strdup(s);
	return *out ? 0 : ydoc_oom(ctx);
}

/* Finds the value of each allowed key; refuses unknown, duplicate and
 * non-string keys. vals[i] is NULL for a key that is absent. */
static int lookup_keys(const parse_ctx *ctx, const yaml_node_t *map,
		       const key_spec *ks, yaml_node_t **vals)
{
	return ydoc_lookup_keys(ctx, map, ks->keys, ks->nkeys, ks->where, vals);
}

static int require_key(const parse_ctx *ctx, const yaml_node_t *map,
		       const key_spec *ks, yaml_node_t *const *vals, size_t i)
{
	return ydoc_require(ctx, map, ks->keys[i], ks->where, vals[i]);
}

static int parse_range(const parse_ctx *ctx, const yaml_node_t *n,
		       const char *what, long long **vals, size_t *count)
{
	static const char *const keys[] = { "from", "to", "step" };
	char where[64], name[3][64];
	snprintf(where, sizeof where, "in the range for %s", what);
	key_spec ks = { keys, 3, where };
	yaml_node_t *v[3];
	long long x[3];
	if (lookup_keys(ctx, n, &ks, v) < 0)
		return -1;
	for (size_t i = 0; i < 3; i++) {
		snprintf(name[i], sizeof name[i], "%s.%s", what, keys[i]);
		if (v[i] && parse_posint(ctx, v[i], name[i], &x[i]) < 0)
			return -1;
	}
	for (size_t i = 0; i < 3; i++)
		if (require_key(ctx, n, &ks, v, i) < 0)
			return -1;
	if (x[1] < x[0]) {
		char expected[160];
		snprintf(expected, sizeof expected, "%s at least %s (%lld)",
			 name[1], name[0], x[0]);
		return ydoc_fail_got(ctx, v[1], expected);
	}
	long long m = (x[1] - x[0]) / x[2] + 1;
	if (m > MAX_SHAPES)
		return ydoc_fail_at(ctx, n->start_mark,
			       "the range for %s has %lld values, more than the "
			       "%d shapes allowed in total", what, m, MAX_SHAPES);
	*vals = malloc((size_t)m * sizeof **vals);
	if (!*vals)
		return ydoc_oom(ctx);
	for (long long i = 0; i < m; i++)
		(*vals)[i] = x[0] + i * x[2];
	*count = (size_t)m;
	return 0;
}

static int parse_dim_list(const parse_ctx *ctx, const yaml_node_t *n,
			  const char *what, long long **vals, size_t *count)
{
	size_t m = n->type == YAML_SEQUENCE_NODE ? seq_len(n) : 1;
	if (m == 0) {
		char expected[96];
		snprintf(expected, sizeof expected, "at least one value for %s",
			 what);
		return ydoc_fail_got(ctx, n, expected);
	}
	*vals = malloc(m * sizeof **vals);
	if (!*vals)
		return ydoc_oom(ctx);
	*count = m;
	for (size_t i = 0; i < m; i++) {
		const yaml_node_t *item =
			n->type == YAML_SEQUENCE_NODE ? seq_item(ctx, n, i) : n;
		if (parse_posint(ctx, item, what, &(*vals)[i]) < 0)
			return -1;
	}
	return 0;
}

/* M or N: a positive integer, a sequence of them, or {from, to, step}. */
static int parse_dims(const parse_ctx *ctx, const yaml_node_t *n,
		      const char *what, long long **vals, size_t *count)
{
	if (n->type == YAML_MAPPING_NODE)
		return parse_range(ctx, n, what, vals, count);
	return parse_dim_list(ctx, n, what, vals, count);
}

static int parse_dtype(const parse_ctx *ctx, const yaml_node_t *n,
		       sweep_spec *spec)
{
	at_dtype dt;
	if (n->type != YAML_SCALAR_NODE)
		return ydoc_fail_got(ctx, n, "a dtype (f32, f16 or bf16)");
	const char *s = ydoc_string(n);
	if (!s || at_dtype_parse(s, &dt) < 0) {
		char shown[MAX_SHOWN + 16];
		ydoc_describe(n, shown, sizeof shown);
		return ydoc_fail_at(ctx, n->start_mark,
			       "unknown dtype %s (expected f32, f16 or bf16)",
			       shown);
	}
	for (size_t i = 0; i < spec->ndtypes; i++)
		if (spec->dtypes[i] == dt)
			return ydoc_fail_at(ctx, n->start_mark,
				       "duplicate dtype \"%s\" in dtypes",
				       at_dtype_name(dt));
	spec->dtypes[spec->ndtypes++] = dt;
	return 0;
}

static int parse_dtypes(const parse_ctx *ctx, const yaml_node_t *n,
			sweep_spec *spec)
{
	if (n->type == YAML_MAPPING_NODE)
		return ydoc_fail_got(ctx, n, "a dtype or a sequence of dtypes for dtypes");
	size_t m = n->type == YAML_SEQUENCE_NODE ? seq_len(n) : 1;
	if (m == 0)
		return ydoc_fail_got(ctx, n, "at least one dtype in dtypes");
	spec->dtypes = malloc(m * sizeof *spec->dtypes);
	if (!spec->dtypes)
		return ydoc_oom(ctx);
	for (size_t i = 0; i < m; i++) {
		const yaml_node_t *item =
			n->type == YAML_SEQUENCE_NODE ? seq_item(ctx, n, i) : n;
		if (parse_dtype(ctx, item, spec) < 0)
			return -1;
	}
	return 0;
}

static int parse_templates(const parse_ctx *ctx, const yaml_node_t *n,
			   sweep_spec *spec)
{
	if (n->type != YAML_SEQUENCE_NODE || seq_len(n) == 0)
		return ydoc_fail_got(ctx, n, "a non-empty sequence of template names "
				"for templates");
	size_t m = seq_len(n);
	spec->templates = calloc(m, sizeof *spec->templates);
	if (!spec->templates)
		return ydoc_oom(ctx);
	for (size_t i = 0; i < m; i++) {
		const yaml_node_t *item = seq_item(ctx, n, i);
		char *t;
		if (parse_name(ctx, item, "a template name matching "
			       "[a-z][a-z0-9_]* in templates", &t) < 0)
			return -1;
		for (size_t k = 0; k < spec->ntemplates; k++) {
			if (strcmp(spec->templates[k], t) == 0) {
				free(t);
				return ydoc_fail_at(ctx, item->start_mark,
					       "duplicate template \"%s\" in "
					       "templates", spec->templates[k]);
			}
		}
		spec->templates[spec->ntemplates++] = t;
	}
	return 0;
}

static long long max_of(const long long *v, size_t n)
{
	long long m = 0;
	for (size_t i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* The entry's largest shape in its widest dtype must be within the bound
 * that every command taking a shape has (common/shape_bound.h). */
static int check_shape_bytes(const parse_ctx *ctx, const yaml_node_t *at, const sweep_spec *spec)
{
	at_dtype widest = spec->dtypes[0];
	for (size_t i = 1; i < spec->ndtypes; i++)
		if (at_dtype_size(spec->dtypes[i]) > at_dtype_size(widest))
			widest = spec->dtypes[i];
	char why[256];
	if (at_shape_check(widest, max_of(spec->Ms, spec->nM), max_of(spec->Ns, spec->nN), why,
			   sizeof why) == 0)
		return 0;
	return ydoc_fail_at(ctx, at->start_mark, "%s", why);
}

enum { K_OP, K_DTYPES, K_M, K_N, K_TEMPLATES, K_SPEC_COUNT };

static int parse_spec(const parse_ctx *ctx, const yaml_node_t *n,
		      sweep_spec *spec)
{
	static const char *const keys[] = { "op", "dtypes", "M", "N", "templates" };
	key_spec ks = { keys, K_SPEC_COUNT, "in sweep entry" };
	yaml_node_t *v[K_SPEC_COUNT];
	if (n->type != YAML_MAPPING_NODE)
		return ydoc_fail_got(ctx, n, "a sweep entry (a mapping with op, "
				"dtypes, M and N)");
	spec->line = (int)n->start_mark.line + 1;
	if (lookup_keys(ctx, n, &ks, v) < 0)
		return -1;
	/* Values before missing keys: a half-written entry should first show
	 * what is wrong in what was written. */
	if ((v[K_OP] && parse_name(ctx, v[K_OP], "an op name matching "
				   "[a-z][a-z0-9_]* for op", &spec->op) < 0) ||
	    (v[K_DTYPES] && parse_dtypes(ctx, v[K_DTYPES], spec) < 0) ||
	    (v[K_M] && parse_dims(ctx, v[K_M], "M", &spec->Ms, &spec->nM) < 0) ||
	    (v[K_N] && parse_dims(ctx, v[K_N], "N", &spec->Ns, &spec->nN) < 0) ||
	    (v[K_TEMPLATES] && parse_templates(ctx, v[K_TEMPLATES], spec) < 0))
		return -1;
	for (size_t i = K_OP; i <= K_N; i++)
		if (require_key(ctx, n, &ks, v, i) < 0)
			return -1;
	return check_shape_bytes(ctx, v[K_N], spec);
}

/* Saturates instead of overflowing: counts past MAX_SHAPES are all "too
 * many", whatever their exact value. */
static size_t spec_shapes(const sweep_spec *s)
{
	if (s->ndtypes > MAX_SHAPES || s->nM > MAX_SHAPES || s->nN > MAX_SHAPES)
		return (size_t)MAX_SHAPES + 1;
	size_t m = s->ndtypes * s->nM * s->nN;
	return m > MAX_SHAPES ? (size_t)MAX_SHAPES + 1 : m;
}

static void free_spec(sweep_spec *s)
{
	free(s->op);
	free(s->dtypes);
	free(s->Ms);
	free(s->Ns);
	for (size_t i = 0; i < s->ntemplates; i++)
		free(s->templates[i]);
	free(s->templates);
}

static int parse_sweeps(const parse_ctx *ctx, const yaml_node_t *n,
			sweep_config *cfg)
{
	if (n->type != YAML_SEQUENCE_NODE || seq_len(n) == 0)
		return ydoc_fail_got(ctx, n, "a non-empty sequence of sweep entries "
				"for sweeps");
	size_t m = seq_len(n);
	cfg->specs = calloc(m, sizeof *cfg->specs);
	if (!cfg->specs)
		return ydoc_oom(ctx);
	size_t total = 0;
	for (size_t i = 0; i < m; i++) {
		const yaml_node_t *item = seq_item(ctx, n, i);
		/* Counted before parsing so that free_spec sees every entry
		 * that may own memory. */
		cfg->nspecs = i + 1;
		if (parse_spec(ctx, item, &cfg->specs[i]) < 0)
			return -1;
		total += spec_shapes(&cfg->specs[i]);
		if (total > MAX_SHAPES)
			return ydoc_fail_at(ctx, item->start_mark,
				       "too many shapes: the sweeps up to this "
				       "entry expand to more than %d (is a range "
				       "too wide?)", MAX_SHAPES);
	}
	return 0;
}

enum { K_SWEEPS, K_WARMUP, K_REPETITIONS, K_MIN_REPETITIONS, K_TOLERANCE,
       K_TIME_BUDGET, K_TOP_COUNT };

/* warmup, repetitions, min_repetitions, tolerance and time_budget_ms. */
static int parse_timing(const parse_ctx *ctx, yaml_node_t *const *v,
			sweep_config *cfg)
{
	cfg->warmup = DEFAULT_WARMUP;
	cfg->repetitions = DEFAULT_REPETITIONS;
	cfg->tolerance = DEFAULT_TOLERANCE;
	cfg->time_budget_ms = DEFAULT_TIME_BUDGET_MS;
	if (v[K_WARMUP] && parse_bounded_int(ctx, v[K_WARMUP], "warmup", 0,
					     1000, &cfg->warmup) < 0)
		return -1;
	if (v[K_REPETITIONS] &&
	    parse_bounded_int(ctx, v[K_REPETITIONS], "repetitions", 1, 10000,
			      &cfg->repetitions) < 0)
		return -1;
	cfg->min_repetitions = cfg->repetitions < DEFAULT_MIN_REPETITIONS
				       ? cfg->repetitions : DEFAULT_MIN_REPETITIONS;
	if (v[K_MIN_REPETITIONS]) {
		char what[96];
		snprintf(what, sizeof what, "min_repetitions (at most repetitions, %d)",
			 cfg->repetitions);
		if (parse_bounded_int(ctx, v[K_MIN_REPETITIONS], what, 1,
				      cfg->repetitions, &cfg->min_repetitions) < 0)
			return -1;
	}
	if (v[K_TOLERANCE] && parse_number(ctx, v[K_TOLERANCE], "tolerance", 0, 1,
					   &cfg->tolerance) < 0)
		return -1;
	if (v[K_TIME_BUDGET] &&
	    parse_number(ctx, v[K_TIME_BUDGET], "time_budget_ms", 0,
			 MAX_TIME_BUDGET_MS, &cfg->time_budget_ms) < 0)
		return -1;
	return 0;
}

static int parse_root(const parse_ctx *ctx, const yaml_node_t *root,
		      sweep_config *cfg)
{
	static const char *const keys[] = { "sweeps", "warmup", "repetitions",
					    "min_repetitions", "tolerance",
					    "time_budget_ms" };
	key_spec ks = { keys, K_TOP_COUNT, "at the top level" };
	yaml_node_t *v[K_TOP_COUNT];
	if (root->type != YAML_MAPPING_NODE)
		return ydoc_fail_got(ctx, root, "a mapping with sweeps at the top level");
	if (lookup_keys(ctx, root, &ks, v) < 0 ||
	    require_key(ctx, root, &ks, v, K_SWEEPS) < 0)
		return -1;
	if (parse_timing(ctx, v, cfg) < 0)
		return -1;
	return parse_sweeps(ctx, v[K_SWEEPS], cfg);
}

/* No document, or one that is only "---": nothing a sweep could be. */
static int is_empty(const yaml_node_t *root)
{
	return !root || (root->type == YAML_SCALAR_NODE &&
			 root->data.scalar.length == 0 &&
			 root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
}

static int parse_yaml(const char *name, const char *text, size_t len, sweep_config *cfg,
		      at_error *err)
{
	ydoc d;
	int rc = ydoc_load(&d, name, text, len, err);
	if (rc == 0) {
		yaml_node_t *root = ydoc_root(&d);
		if (is_empty(root)) {
			yaml_mark_t start = { 0, 0, 0 };
			rc = ydoc_fail_at(&d, start, "the file is empty (expected a mapping "
					  "with sweeps)");
		} else {
			rc = parse_root(&d, root, cfg);
		}
	}
	ydoc_free(&d);
	return rc;
}

/* Takes ownership of text (NUL-terminated, len bytes before the NUL). */
static int parse_owned(char *text, size_t len, const char *name,
		       sweep_config *out, at_error *err)
{
	sweep_config cfg = { 0 };
	cfg.text = text;
	cfg.path = strdup(name);
	if (!cfg.path) {
		config_free(&cfg);
		return at_error_set(err, "%s: out of memory", name);
	}
	if (parse_yaml(name, text, len, &cfg, err) < 0) {
		config_free(&cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

int config_parse(const char *text, size_t len, const char *name,
		 sweep_config *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	char *copy = malloc(len + 1);
	if (!copy)
		return at_error_set(err, "%s: out of memory", name);
	memcpy(copy, text, len);
	copy[len] = '\0';
	return parse_owned(copy, len, name, out, err);
}

int config_load(const char *path, sweep_config *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	size_t len = 0;
	char *text = ydoc_read_file(path, &len, err);
	return text ? parse_owned(text, len, path, out, err) : -1;
}

void config_free(sweep_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < cfg->nspecs; i++)
		free_spec(&cfg->specs[i]);
	free(cfg->specs);
	free(cfg->path);
	free(cfg->text);
	memset(cfg, 0, sizeof *cfg);
}

static uint64_t mix64(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

static uint64_t shape_hash(const sweep_shape *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a over the op name */
	for (const char *p = s->op; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = mix64(h, (uint64_t)s->dtype);
	h = mix64(h, (uint64_t)s->M);
	return mix64(h, (uint64_t)s->N);
}

static int same_shape(const sweep_shape *a, const sweep_shape *b)
{
	return a->dtype == b->dtype && a->M == b->M && a->N == b->N &&
	       strcmp(a->op, b->op) == 0;
}

/* Keeps shapes[i] unless an equal one is already in the open-addressing
 * table (slots hold index + 1; 0 is empty). A table rather than a pairwise
 * scan because a million shapes squared is too slow. */
static int is_new_shape(const sweep_shape *shapes, size_t i, size_t *slots,
			size_t mask)
{
	size_t h = (size_t)shape_hash(&shapes[i]) & mask;
	while (slots[h]) {
		if (same_shape(&shapes[slots[h] - 1], &shapes[i]))
			return 0;
		h = (h + 1) & mask;
	}
	slots[h] = i + 1;
	return 1;
}

static size_t config_total_shapes(const sweep_config *cfg)
{
	size_t total = 0;
	for (size_t i = 0; i < cfg->nspecs && total <= MAX_SHAPES; i++)
		total += spec_shapes(&cfg->specs[i]);
	return total;
}

static size_t expand_spec(const sweep_spec *s, sweep_shape *shapes, size_t n,
			  size_t *slots, size_t mask)
{
	for (size_t d = 0; d < s->ndtypes; d++) {
		for (size_t i = 0; i < s->nM; i++) {
			for (size_t j = 0; j < s->nN; j++) {
				shapes[n] = (sweep_shape){ s->op, s->dtypes[d],
							   s->Ms[i], s->Ns[j], s };
				n += (size_t)is_new_shape(shapes, n, slots, mask);
			}
		}
	}
	return n;
}

int config_shapes(const sweep_config *cfg, sweep_shape **out, size_t *n,
		  at_error *err)
{
	*out = NULL;
	*n = 0;
	size_t total = config_total_shapes(cfg);
	if (total > MAX_SHAPES)
		return at_error_set(err, "%s: too many shapes: the sweeps expand "
				    "to more than %d", cfg->path ? cfg->path : "config",
				    MAX_SHAPES);
	size_t cap = 1;
	while (cap < 2 * total)
		cap *= 2;
	sweep_shape *shapes = malloc((total ? total : 1) * sizeof *shapes);
	size_t *slots = calloc(cap, sizeof *slots);
	if (!shapes || !slots) {
		free(shapes);
		free(slots);
		return at_error_set(err, "out of memory expanding %zu shapes",
				    total);
	}
	size_t kept = 0;
	for (size_t i = 0; i < cfg->nspecs; i++)
		kept = expand_spec(&cfg->specs[i], shapes, kept, slots, cap - 1);
	free(slots);
	*out = shapes;
	*n = kept;
	return 0;
}

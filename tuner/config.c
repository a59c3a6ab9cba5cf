/* Reads the sweep config (YAML, see config.h) into a sweep_config, checking
 * every node so that a mistake is reported with its file:line:column, and
 * expands it into the list of (op, dtype, M, N) shapes to tune. */
#include "tuner/config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "common/bytes_moved.h"

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
#define MAX_DIM (1LL << 40)
/* An accidental {from: 1, to: 1000000000, step: 1} must fail fast rather
 * than allocate gigabytes or queue a sweep that never ends. */
#define MAX_SHAPES 1000000
/* Long scalars are cut in messages so that the message stays readable. */
#define MAX_SHOWN 80

typedef struct parse_ctx {
	const char *name;
	yaml_document_t *doc;
	at_error *err;
} parse_ctx;

/* The keys a mapping may have, and how to name the mapping in messages. */
typedef struct key_spec {
	const char *const *keys;
	size_t nkeys;
	const char *where; /* "in sweep entry", "at the top level", ... */
} key_spec;

static int fail_at(const parse_ctx *ctx, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(const parse_ctx *ctx, yaml_mark_t mark, const char *fmt, ...)
{
	char what[1536];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return at_error_set(ctx->err, "%s:%zu:%zu: %s", ctx->name,
			    mark.line + 1, mark.column + 1, what);
}

static yaml_node_t *node_at(const parse_ctx *ctx, int id)
{
	return yaml_document_get_node(ctx->doc, id);
}

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* The scalar's text, or NULL for a non-scalar or for a quoted scalar with
 * an inner NUL ("12\0ab"), which C string functions would cut short. */
static const char *string_of(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE ||
	    strlen(scalar_text(n)) != n->data.scalar.length)
		return NULL;
	return scalar_text(n);
}

/* How many bytes of s to show: at most MAX_SHOWN, not splitting a UTF-8
 * character. */
static int shown_len(const char *s, size_t len)
{
	if (len <= MAX_SHOWN)
		return (int)len;
	size_t cut = MAX_SHOWN;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return (int)cut;
}

/* What a node is, for the "got ..." part of a message. */
static void describe(const yaml_node_t *n, char *buf, size_t size)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (n->data.scalar.length == 0 &&
		    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			snprintf(buf, size, "an empty value");
		else if (n->data.scalar.length > MAX_SHOWN)
			snprintf(buf, size, "\"%.*s...\"",
				 shown_len(scalar_text(n), n->data.scalar.length),
				 scalar_text(n));
		else
			snprintf(buf, size, "\"%s\"", scalar_text(n));
		break;
	case YAML_SEQUENCE_NODE:
		snprintf(buf, size, "%s",
			 n->data.sequence.items.top == n->data.sequence.items.start
				 ? "an empty sequence" : "a sequence");
		break;
	case YAML_MAPPING_NODE:
		snprintf(buf, size, "%s",
			 n->data.mapping.pairs.top == n->data.mapping.pairs.start
				 ? "an empty mapping" : "a mapping");
		break;
	default:
		snprintf(buf, size, "nothing");
		break;
	}
}

static int fail_got(const parse_ctx *ctx, const yaml_node_t *n,
		    const char *expected)
{
	char got[MAX_SHOWN + 16];
	describe(n, got, sizeof got);
	return fail_at(ctx, n->start_mark, "expected %s, got %s", expected, got);
}

static size_t seq_len(const yaml_node_t *n)
{
	return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_item(const parse_ctx *ctx, const yaml_node_t *n,
			     size_t i)
{
	return node_at(ctx, n->data.sequence.items.start[i]);
}

static int oom(const parse_ctx *ctx)
{
	return at_error_set(ctx->err, "%s: out of memory", ctx->name);
}

/* Only plain decimal digits with an optional minus: strtoll alone would
 * accept " 12", "+12" and stop silently at "12abc". Leading zeros are
 * refused because YAML 1.1 reads "010" as octal. */
static int parse_ll(const char *s, long long *v)
{
	const char *digits = s[0] == '-' ? s + 1 : s;
	if (digits[0] == '\0' || (digits[0] == '0' && digits[1] != '\0'))
		return -1;
	for (const char *p = digits; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*v = x;
	return 0;
}

static int parse_posint(const parse_ctx *ctx, const yaml_node_t *n,
			const char *what, long long *v)
{
	char expected[128];
	long long x;
	const char *s = string_of(n);
	snprintf(expected, sizeof expected, "a positive integer for %s", what);
	if (!s || parse_ll(s, &x) < 0 || x < 1) {
		/* A huge value that overflowed is still a number: say so. */
		if (s && s[0] >= '1' && s[0] <= '9' &&
		    strspn(s, "0123456789") == strlen(s))
			goto too_big;
		return fail_got(ctx, n, expected);
	}
	if (x > MAX_DIM)
		goto too_big;
	*v = x;
	return 0;
too_big:
	snprintf(expected, sizeof expected,
		 "a positive integer of at most %lld for %s", MAX_DIM, what);
	return fail_got(ctx, n, expected);
}

static int parse_bounded_int(const parse_ctx *ctx, const yaml_node_t *n,
			     const char *what, int lo, int hi, int *v)
{
	long long x;
	const char *s = string_of(n);
	if (!s || parse_ll(s, &x) < 0 || x < lo || x > hi) {
		char expected[128];
		snprintf(expected, sizeof expected,
			 "an integer from %d to %d for %s", lo, hi, what);
		return fail_got(ctx, n, expected);
	}
	*v = (int)x;
	return 0;
}

/* A plain decimal number ("0.01", "2", "1e-3"): strtod alone would also
 * take "inf", "nan", hex floats and leading blanks. */
static int parse_number(const parse_ctx *ctx, const yaml_node_t *n,
			const char *what, double lo, double hi, double *v)
{
	const char *s = string_of(n);
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
		return fail_got(ctx, n, expected);
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
	const char *s = string_of(n);
	if (!s || !is_name(s))
		return fail_got(ctx, n, expected);
	*out = strdup(s);
	return *out ? 0 : oom(ctx);
}

/* Finds the value of each allowed key; refuses unknown, duplicate and
 * non-string keys. vals[i] is NULL for a key that is absent. */
static int lookup_keys(const parse_ctx *ctx, const yaml_node_t *map,
		       const key_spec *ks, yaml_node_t **vals)
{
	for (size_t i = 0; i < ks->nkeys; i++)
		vals[i] = NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *key = node_at(ctx, p->key);
		if (key->type != YAML_SCALAR_NODE)
			return fail_got(ctx, key, "a key (a string)");
		size_t i = 0;
		while (i < ks->nkeys && strcmp(scalar_text(key), ks->keys[i]) != 0)
			i++;
		if (i == ks->nkeys) {
			char list[256] = "";
			for (size_t k = 0; k < ks->nkeys; k++) {
				strcat(list, k ? ", " : "");
				strcat(list, ks->keys[k]);
			}
			char shown[MAX_SHOWN + 16];
			describe(key, shown, sizeof shown);
			return fail_at(ctx, key->start_mark,
				       "unknown key %s %s (expected %s)", shown,
				       ks->where, list);
		}
		if (vals[i])
			return fail_at(ctx, key->start_mark,
				       "duplicate key \"%s\" %s", ks->keys[i],
				       ks->where);
		vals[i] = node_at(ctx, p->value);
	}
	return 0;
}

static int require_key(const parse_ctx *ctx, const yaml_node_t *map,
		       const key_spec *ks, yaml_node_t *const *vals, size_t i)
{
	if (vals[i])
		return 0;
	return fail_at(ctx, map->start_mark, "missing key \"%s\" %s",
		       ks->keys[i], ks->where);
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
		return fail_got(ctx, v[1], expected);
	}
	long long m = (x[1] - x[0]) / x[2] + 1;
	if (m > MAX_SHAPES)
		return fail_at(ctx, n->start_mark,
			       "the range for %s has %lld values, more than the "
			       "%d shapes allowed in total", what, m, MAX_SHAPES);
	*vals = malloc((size_t)m * sizeof **vals);
	if (!*vals)
		return oom(ctx);
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
		return fail_got(ctx, n, expected);
	}
	*vals = malloc(m * sizeof **vals);
	if (!*vals)
		return oom(ctx);
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
		return fail_got(ctx, n, "a dtype (f32, f16 or bf16)");
	const char *s = string_of(n);
	if (!s || at_dtype_parse(s, &dt) < 0) {
		char shown[MAX_SHOWN + 16];
		describe(n, shown, sizeof shown);
		return fail_at(ctx, n->start_mark,
			       "unknown dtype %s (expected f32, f16 or bf16)",
			       shown);
	}
	for (size_t i = 0; i < spec->ndtypes; i++)
		if (spec->dtypes[i] == dt)
			return fail_at(ctx, n->start_mark,
				       "duplicate dtype \"%s\" in dtypes",
				       at_dtype_name(dt));
	spec->dtypes[spec->ndtypes++] = dt;
	return 0;
}

static int parse_dtypes(const parse_ctx *ctx, const yaml_node_t *n,
			sweep_spec *spec)
{
	if (n->type == YAML_MAPPING_NODE)
		return fail_got(ctx, n, "a dtype or a sequence of dtypes for dtypes");
	size_t m = n->type == YAML_SEQUENCE_NODE ? seq_len(n) : 1;
	if (m == 0)
		return fail_got(ctx, n, "at least one dtype in dtypes");
	spec->dtypes = malloc(m * sizeof *spec->dtypes);
	if (!spec->dtypes)
		return oom(ctx);
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
		return fail_got(ctx, n, "a non-empty sequence of template names "
				"for templates");
	size_t m = seq_len(n);
	spec->templates = calloc(m, sizeof *spec->templates);
	if (!spec->templates)
		return oom(ctx);
	for (size_t i = 0; i < m; i++) {
		const yaml_node_t *item = seq_item(ctx, n, i);
		char *t;
		if (parse_name(ctx, item, "a template name matching "
			       "[a-z][a-z0-9_]* in templates", &t) < 0)
			return -1;
		for (size_t k = 0; k < spec->ntemplates; k++) {
			if (strcmp(spec->templates[k], t) == 0) {
				free(t);
				return fail_at(ctx, item->start_mark,
					       "duplicate template \"%s\" in "
					       "templates", spec->templates[k]);
			}
		}
		spec->templates[spec->ntemplates++] = t;
	}
	return 0;
}

/* What one shape's input and output may take: beyond any GPU's memory, a
 * shape would only fail after minutes of compiling (M = 4096, N = 10^12). */
#define MAX_SHAPE_BYTES (1LL << 40)

static long long max_of(const long long *v, size_t n)
{
	long long m = 0;
	for (size_t i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* The entry's largest shape in its widest dtype must fit MAX_SHAPE_BYTES. */
static int check_shape_bytes(const parse_ctx *ctx, const yaml_node_t *at, const sweep_spec *spec)
{
	at_dtype widest = spec->dtypes[0];
	for (size_t i = 1; i < spec->ndtypes; i++)
		if (at_dtype_size(spec->dtypes[i]) > at_dtype_size(widest))
			widest = spec->dtypes[i];
	size_t elem = at_dtype_size(widest);
	long long M = max_of(spec->Ms, spec->nM), N = max_of(spec->Ns, spec->nN), bytes;
	if (!__builtin_mul_overflow(M, N, &bytes) &&
	    !__builtin_mul_overflow(bytes, (long long)(2 * elem), &bytes) && bytes <= MAX_SHAPE_BYTES)
		return 0;
	return fail_at(ctx, at->start_mark,
		       "shape M=%lld x N=%lld needs %.3g GB for its input and output; no GPU "
		       "holds that (at most %lld GB a shape)",
		       M, N, softmax_bytes_moved(widest, M, N) / 1e9,
		       MAX_SHAPE_BYTES / 1000000000LL);
}

enum { K_OP, K_DTYPES, K_M, K_N, K_TEMPLATES, K_SPEC_COUNT };

static int parse_spec(const parse_ctx *ctx, const yaml_node_t *n,
		      sweep_spec *spec)
{
	static const char *const keys[] = { "op", "dtypes", "M", "N", "templates" };
	key_spec ks = { keys, K_SPEC_COUNT, "in sweep entry" };
	yaml_node_t *v[K_SPEC_COUNT];
	if (n->type != YAML_MAPPING_NODE)
		return fail_got(ctx, n, "a sweep entry (a mapping with op, "
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
		return fail_got(ctx, n, "a non-empty sequence of sweep entries "
				"for sweeps");
	size_t m = seq_len(n);
	cfg->specs = calloc(m, sizeof *cfg->specs);
	if (!cfg->specs)
		return oom(ctx);
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
			return fail_at(ctx, item->start_mark,
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
		return fail_got(ctx, root, "a mapping with sweeps at the top level");
	if (lookup_keys(ctx, root, &ks, v) < 0 ||
	    require_key(ctx, root, &ks, v, K_SWEEPS) < 0)
		return -1;
	if (parse_timing(ctx, v, cfg) < 0)
		return -1;
	return parse_sweeps(ctx, v[K_SWEEPS], cfg);
}

/* Reader errors (bad UTF-8, control characters) carry only a byte offset,
 * so the line and column are counted here. */
static yaml_mark_t mark_of_offset(const char *text, size_t len, size_t off)
{
	yaml_mark_t m = { 0, 0, 0 };
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			m.column++;
		}
	}
	m.index = off;
	return m;
}

static int syntax_error(const parse_ctx *ctx, const yaml_parser_t *p,
			const char *text, size_t len)
{
	if (p->error == YAML_MEMORY_ERROR)
		return oom(ctx);
	const char *problem = p->problem ? p->problem : "invalid YAML";
	if (p->error == YAML_READER_ERROR)
		return fail_at(ctx, mark_of_offset(text, len, p->problem_offset),
			       "%s", problem);
	if (p->context)
		return fail_at(ctx, p->problem_mark, "%s (%s at %zu:%zu)",
			       problem, p->context, p->context_mark.line + 1,
			       p->context_mark.column + 1);
	return fail_at(ctx, p->problem_mark, "%s", problem);
}

/* A second document would be silently ignored otherwise. */
static int check_single_document(const parse_ctx *ctx, yaml_parser_t *p,
				 const char *text, size_t len)
{
	yaml_document_t next;
	if (!yaml_parser_load(p, &next))
		return syntax_error(ctx, p, text, len);
	yaml_node_t *root = yaml_document_get_root_node(&next);
	int rc = 0;
	if (root)
		rc = fail_at(ctx, next.start_mark,
			     "expected a single YAML document, found another");
	yaml_document_delete(&next);
	return rc;
}

/* No document, or one that is only "---": nothing a sweep could be. */
static int is_empty(const yaml_node_t *root)
{
	return !root || (root->type == YAML_SCALAR_NODE &&
			 root->data.scalar.length == 0 &&
			 root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE);
}

static int parse_yaml(const parse_ctx *ctx, const char *text, size_t len,
		      sweep_config *cfg)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	int rc = -1;
	if (!yaml_parser_initialize(&parser))
		return oom(ctx);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = syntax_error(ctx, &parser, text, len);
		goto out;
	}
	parse_ctx c = *ctx;
	c.doc = &doc;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (is_empty(root)) {
		yaml_mark_t start = { 0, 0, 0 };
		rc = fail_at(&c, start, "the file is empty (expected a mapping "
			     "with sweeps)");
	} else if (check_single_document(&c, &parser, text, len) == 0) {
		rc = parse_root(&c, root, cfg);
	}
	yaml_document_delete(&doc);
out:
	yaml_parser_delete(&parser);
	return rc;
}

/* Takes ownership of text (NUL-terminated, len bytes before the NUL). */
static int parse_owned(char *text, size_t len, const char *name,
		       sweep_config *out, at_error *err)
{
	sweep_config cfg = { 0 };
	parse_ctx ctx = { name, NULL, err };
	cfg.text = text;
	cfg.path = strdup(name);
	if (!cfg.path) {
		config_free(&cfg);
		return oom(&ctx);
	}
	if (parse_yaml(&ctx, text, len, &cfg) < 0) {
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

/* Reads in chunks rather than trusting ftell, so that pipes and
 * /dev/stdin work too. */
static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (ferror(f)) {
			free(buf);
			return NULL;
		}
		if (n < cap - 1)
			break;
		char *bigger = realloc(buf, cap * 2);
		if (!bigger)
			free(buf);
		buf = bigger;
		cap *= 2;
	}
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

int config_load(const char *path, sweep_config *out, at_error *err)
{
	memset(out, 0, sizeof *out);
	FILE *f = fopen(path, "rb");
	if (!f)
		return at_error_set(err, "%s: cannot open: %s", path,
				    strerror(errno));
	size_t len = 0;
	errno = 0;
	char *text = read_all(f, &len);
	int saved = errno ? errno : ENOMEM;
	fclose(f);
	if (!text)
		return at_error_set(err, "%s: cannot read: %s", path,
				    strerror(saved));
	return parse_owned(text, len, path, out, err);
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

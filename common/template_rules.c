/* The rules engine: see template_rules.h. One variant at a time goes
 * through expr_eval with the variables by name; a walk over many lexes the
 * expressions once (expr_lex) and evaluates them against an array of
 * values, the params first and then the shape variables (a "slot" each):
 * lexing and looking names up by string was most of a search's time. A
 * variable the environment does not know is not named to either, so that
 * an expression meeting it is EXPR_UNKNOWN the same way in both. */
#include "common/template_rules.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tr_shape_var_names[TR_SHAPE_VARS] = {
	"M", "N", "elem_bytes", "sm_count", "cc", "max_threads", "max_smem", "regs_per_sm",
};

const char *const tr_launch_names[TR_LAUNCH_KEYS + 1] = {
	"threads", "rows_per_cta", "smem_bytes", "persistent", "max_n",
	"ctas_per_row", "cooperative", NULL,
};

#define MAX_SLOTS (TR_MAX_PARAMS + TR_SHAPE_VARS)

int launch_geometry_check(const launch_geometry *g, at_error *err)
{
	if (g->threads < 1 || g->rows_per_cta < 1)
		return at_error_set(err, "a launch needs threads and rows_per_cta >= 1 (got %d and %d)",
				    g->threads, g->rows_per_cta);
	if (g->dyn_smem < 0 || g->max_n < 0 || g->ctas_per_row < 0 || g->persistent < 0 ||
	    g->cooperative < 0)
		return at_error_set(err, "a launch's dyn_smem, max_n, ctas_per_row, persistent and "
				    "cooperative cannot be negative");
	if (g->ctas_per_row > 1 && (g->persistent || g->cooperative))
		return at_error_set(err, "a cluster launch (ctas_per_row = %d) is one cluster per row "
				    "step: it cannot also be persistent or cooperative", g->ctas_per_row);
	return 0;
}

/* ---- params ------------------------------------------------------------- */

const tr_template *tr_find(const tr_template *ts, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ts[i].name, name) == 0)
			return &ts[i];
	return NULL;
}

int tr_param_index(const tr_template *t, const char *name, size_t len)
{
	for (int i = 0; i < t->nparams; i++)
		if (strlen(t->params[i].name) == len && strncmp(t->params[i].name, name, len) == 0)
			return i;
	return -1;
}

int tr_params_parse(const tr_template *t, const char *text, long long *values)
{
	if (t->nparams > TR_MAX_PARAMS)
		return -1;
	for (int i = 0; i < t->nparams; i++)
		values[i] = t->params[i].def;
	int named = 0;
	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		const char *eq = strchr(p, '=');
		if (!eq)
			return -1;
		int i = tr_param_index(t, p, (size_t)(eq - p));
		char *end;
		long long v = strtoll(eq + 1, &end, 10);
		if (i < 0 || end == eq + 1 || (*end && *end != ' '))
			return -1;
		values[i] = v;
		named++;
		p = end;
	}
	return named > 0 ? 0 : -1;
}

size_t tr_params_text(const tr_template *t, const long long *values, char *buf, size_t cap)
{
	size_t len = 0;
	if (cap)
		buf[0] = '\0';
	for (int i = 0; i < t->nparams; i++) {
		int n = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%s=%lld",
				 i ? " " : "", t->params[i].name, values[i]);
		if (n > 0)
			len += (size_t)n;
	}
	return len;
}

/* ---- one variant at one shape -------------------------------------------- */

_Static_assert(sizeof(tr_env) == TR_SHAPE_VARS * sizeof(long long),
	       "a name in tr_shape_var_names for each field of tr_env");

/* Whether env knows shape variable i (0 is M, 1 is N). */
static int known(const tr_env *env, int i)
{
	return env && !(i == 0 && env->M < 0) && !(i == 1 && env->N < 0);
}

static long long shape_value(const tr_env *env, int i)
{
	const long long v[TR_SHAPE_VARS] = { env->M, env->N, env->elem_bytes, env->sm_count,
					     env->cc, env->max_threads, env->max_smem,
					     env->regs_per_sm };
	return v[i];
}

size_t tr_vars(const tr_template *t, const long long *values, const tr_env *env,
	       expr_var *vars)
{
	size_t k = 0;
	for (int i = 0; i < t->nparams; i++)
		vars[k++] = (expr_var){ t->params[i].name, values[i] };
	for (int i = 0; i < TR_SHAPE_VARS; i++)
		if (known(env, i))
			vars[k++] = (expr_var){ tr_shape_var_names[i], shape_value(env, i) };
	return k;
}

static int too_many_params(const tr_template *t, at_error *err)
{
	return at_error_set(err, "template %s has more than %d params", t->name, TR_MAX_PARAMS);
}

int tr_eval(const tr_template *t, const char *expr, const long long *values, const tr_env *env,
	    long long *out, at_error *err)
{
	expr_var vars[MAX_SLOTS];
	if (t->nparams > TR_MAX_PARAMS) {
		too_many_params(t, err);
		return EXPR_ERROR;
	}
	return expr_eval(expr, vars, tr_vars(t, values, env, vars), out, err);
}

int tr_check(const tr_template *t, const long long *values, const tr_env *env, int *failed,
	     at_error *err)
{
	expr_var vars[MAX_SLOTS];
	if (t->nparams > TR_MAX_PARAMS)
		return too_many_params(t, err);
	size_t n = tr_vars(t, values, env, vars);
	for (int i = 0; i < t->nconstraints; i++) {
		long long v;
		int rc = expr_eval(t->constraints[i], vars, n, &v, err);
		if (rc == EXPR_UNKNOWN)
			continue; /* names a shape variable not known yet */
		if (rc != EXPR_OK)
			return -1;
		if (v == 0) {
			if (failed)
				*failed = i;
			return 0;
		}
	}
	return 1;
}

int tr_geometry(const tr_template *t, const long long *values, const tr_env *env,
		launch_geometry *g, at_error *err)
{
	expr_var vars[MAX_SLOTS];
	if (t->nparams > TR_MAX_PARAMS)
		return too_many_params(t, err);
	size_t n = tr_vars(t, values, env, vars);
	long long f[TR_LAUNCH_KEYS];
	for (int i = 0; i < TR_LAUNCH_KEYS; i++) {
		if (expr_eval(t->launch[i], vars, n, &f[i], err) != EXPR_OK)
			return -1;
		if (i != TR_MAX_N && (f[i] < 0 || f[i] > INT_MAX))
			return at_error_set(err, "template %s: launch value `%s` = %lld is out of range",
					    t->name, t->launch[i], f[i]);
	}
	*g = (launch_geometry){
		.threads = (int)f[TR_THREADS],
		.rows_per_cta = (int)f[TR_ROWS_PER_CTA],
		.dyn_smem = (int)f[TR_SMEM_BYTES],
		.persistent = f[TR_PERSISTENT] != 0,
		.max_n = f[TR_MAX_N],
		.ctas_per_row = (int)f[TR_CTAS_PER_ROW],
		.cooperative = f[TR_COOPERATIVE] != 0,
	};
	at_error why;
	if (launch_geometry_check(g, &why))
		return at_error_set(err, "template %s: %s", t->name, why.msg);
	return 0;
}

/* ---- many variants at one shape ------------------------------------------ */

struct tr_rules {
	const tr_template *t;
	long long shape[TR_SHAPE_VARS]; /* the environment's slots */
	expr_lexed **constraints;       /* t->nconstraints, then t->nprefer */
	expr_lexed **prefer;
};

void tr_rules_free(tr_rules *r)
{
	if (!r)
		return;
	for (int i = 0; r->constraints && i < r->t->nconstraints + r->t->nprefer; i++)
		expr_lexed_free(r->constraints[i]);
	free(r->constraints);
	free(r);
}

int tr_rules_new(const tr_template *t, const tr_env *env, tr_rules **out, at_error *err)
{
	*out = NULL;
	if (t->nparams > TR_MAX_PARAMS)
		return too_many_params(t, err);
	const char *names[MAX_SLOTS];
	for (int i = 0; i < t->nparams; i++)
		names[i] = t->params[i].name;
	tr_rules *r = calloc(1, sizeof *r);
	size_t nexpr = (size_t)t->nconstraints + (size_t)t->nprefer;
	if (r)
		r->constraints = calloc(nexpr + 1, sizeof *r->constraints);
	if (!r || !r->constraints) {
		free(r);
		return at_error_set(err, "template %s: out of memory", t->name);
	}
	r->t = t;
	r->prefer = r->constraints + t->nconstraints;
	for (int i = 0; i < TR_SHAPE_VARS; i++) {
		names[t->nparams + i] = known(env, i) ? tr_shape_var_names[i] : NULL;
		r->shape[i] = known(env, i) ? shape_value(env, i) : 0;
	}
	size_t nnames = (size_t)t->nparams + TR_SHAPE_VARS;
	for (size_t i = 0; i < nexpr; i++) {
		const char *src = (int)i < t->nconstraints ? t->constraints[i]
							    : t->prefer[i - (size_t)t->nconstraints];
		if (expr_lex(src, names, nnames, &r->constraints[i], err) != EXPR_OK) {
			tr_rules_free(r);
			return -1;
		}
	}
	*out = r;
	return 0;
}

/* values (the params) then the environment, as the lexed expressions take
 * them. */
static void fill_slots(const tr_rules *r, const long long *values, long long *slots)
{
	memcpy(slots, values, (size_t)r->t->nparams * sizeof *slots);
	memcpy(slots + r->t->nparams, r->shape, sizeof r->shape);
}

/* 1 when e holds (or names a variable not known: skipped), 0 when not, -1
 * when it cannot be evaluated. */
static int lexed_holds(const expr_lexed *e, const long long *slots, at_error *err)
{
	long long v;
	int rc = expr_eval_lexed(e, slots, &v, err);
	if (rc == EXPR_UNKNOWN)
		return 1;
	return rc == EXPR_OK ? v != 0 : -1;
}

typedef struct walk {
	const tr_rules *r;
	const int *idx;
	int *level; /* per constraint: the lowest k of an idx[k] it names; n if none */
	long long slots[MAX_SLOTS];
	tr_visit visit;
	void *ctx;
	at_error *err;
	int failed; /* a constraint could not be evaluated */
} walk;

/* Whether every constraint checked at level holds; the first one that
 * cannot be evaluated is reported in w->err. */
static int level_holds(walk *w, int level)
{
	for (int c = 0; c < w->r->t->nconstraints; c++) {
		if (w->level[c] != level)
			continue;
		at_error e;
		int h = lexed_holds(w->r->constraints[c], w->slots, &e);
		if (h < 0 && !w->failed) {
			w->failed = 1;
			if (w->err)
				*w->err = e;
		}
		if (h != 1)
			return 0;
	}
	return 1;
}

/* Sets levels level..0 in every way, idx[level] the slowest. */
static void walk_level(walk *w, int level)
{
	if (level < 0) {
		w->visit(w->ctx, w->slots);
		return;
	}
	const tr_param *p = &w->r->t->params[w->idx[level]];
	for (int d = 0; d < p->nvalues; d++) {
		w->slots[w->idx[level]] = p->values[d];
		if (level_holds(w, level))
			walk_level(w, level - 1);
	}
}

int tr_walk(const tr_rules *r, const long long *values, const int *idx, int n,
	    tr_visit visit, void *ctx, at_error *err)
{
	const tr_template *t = r->t;
	walk w = { .r = r, .idx = idx, .visit = visit, .ctx = ctx, .err = err };
	w.level = malloc(((size_t)t->nconstraints + 1) * sizeof *w.level);
	if (!w.level)
		return at_error_set(err, "template %s: out of memory", t->name);
	fill_slots(r, values, w.slots);
	for (int c = 0; c < t->nconstraints; c++) {
		w.level[c] = n;
		for (int k = n - 1; k >= 0; k--)
			if (expr_lexed_uses(r->constraints[c], (size_t)idx[k]))
				w.level[c] = k;
	}
	if (level_holds(&w, n))
		walk_level(&w, n - 1);
	free(w.level);
	return w.failed ? -1 : 0;
}

int tr_prefer_holds(const tr_rules *r, int i, const long long *values)
{
	long long slots[MAX_SLOTS];
	at_error ignored;
	if (i < 0 || i >= r->t->nprefer)
		return 0;
	fill_slots(r, values, slots);
	long long v;
	return expr_eval_lexed(r->prefer[i], slots, &v, &ignored) == EXPR_OK && v != 0;
}

int tr_serves(const tr_template *t, const char *op)
{
	return tr_source_op(t, op) != NULL || (t->op && strcmp(t->op, op) == 0);
}

const char *tr_source_op(const tr_template *t, const char *op)
{
	for (int i = 0; i < t->nalso_ops; i++)
		if (strcmp(t->also_ops[i], op) == 0)
			return t->also_ops[i];
	return NULL;
}

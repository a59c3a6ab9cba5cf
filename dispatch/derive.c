/* Re-deriving a winner's params for a new shape: see derive.h. The search
 * enumerates the searched params' values as a mixed-radix counter; a few
 * thousand variants at most (softmax_warp widened), each stopped at its
 * first failing constraint. The template's expressions are lexed once a
 * search (expr_lex), not once a variant: lexing and looking names up by
 * string was most of a derivation's time. */
#include "dispatch/derive.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/expr.h"

const tr_template *atdi_rules_find(const tr_template *ts, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ts[i].name, name) == 0)
			return &ts[i];
	return NULL;
}

static int param_index(const tr_template *t, const char *name, size_t len)
{
	for (int i = 0; i < t->nparams; i++)
		if (strlen(t->params[i].name) == len && strncmp(t->params[i].name, name, len) == 0)
			return i;
	return -1;
}

int atdi_params_parse(const tr_template *t, const char *text, long long *values)
{
	if (t->nparams > ATDI_MAX_PARAMS)
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
		int i = param_index(t, p, (size_t)(eq - p));
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

void atdi_params_text(const tr_template *t, const long long *values, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < t->nparams && used < cap; i++) {
		int n = snprintf(buf + used, cap - used, "%s%s=%lld", i ? " " : "", t->params[i].name,
				 values[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* The params then the shape variables, as expr_eval takes them. */
static size_t make_vars(const tr_template *t, const long long *values, const atdi_env *env,
			expr_var *vars)
{
	size_t k = 0;
	for (int i = 0; i < t->nparams; i++, k++)
		vars[k] = (expr_var){ t->params[i].name, values[i] };
	const long long shape[TR_SHAPE_VARS] = { env->M,  env->N,	    env->elem_bytes,
						 env->sm_count, env->cc, env->max_threads,
						 env->max_smem, env->regs_per_sm };
	for (int i = 0; i < TR_SHAPE_VARS; i++, k++)
		vars[k] = (expr_var){ tr_shape_var_names[i], shape[i] };
	return k;
}

static int holds(const char *expr, const expr_var *vars, size_t nvars)
{
	long long v;
	at_error err;
	return expr_eval(expr, vars, nvars, &v, &err) == EXPR_OK && v != 0;
}

int atdi_rules_valid(const tr_template *t, const long long *values, const atdi_env *env)
{
	expr_var vars[ATDI_MAX_PARAMS + TR_SHAPE_VARS];
	if (t->nparams > ATDI_MAX_PARAMS)
		return 0;
	size_t n = make_vars(t, values, env, vars);
	for (int i = 0; i < t->nconstraints; i++)
		if (!holds(t->constraints[i], vars, n))
			return 0;
	return 1;
}

#define MAX_PREFER 16

/* A template's constraints and prefer expressions, lexed against its
 * params and the shape variables (make_vars' order); NULL where one did
 * not lex (it never holds, as with expr_eval). */
typedef struct lexed_rules {
	expr_lexed **constraints;
	expr_lexed *prefer[MAX_PREFER];
	int nprefer;
} lexed_rules;

static void rules_unlex(lexed_rules *r, int nconstraints)
{
	for (int i = 0; r->constraints && i < nconstraints; i++)
		expr_lexed_free(r->constraints[i]);
	free(r->constraints);
	for (int i = 0; i < r->nprefer; i++)
		expr_lexed_free(r->prefer[i]);
}

/* 0, or -1 when out of memory. */
static int rules_lex(const tr_template *t, lexed_rules *r)
{
	const char *names[ATDI_MAX_PARAMS + TR_SHAPE_VARS];
	size_t n = 0;
	for (int i = 0; i < t->nparams; i++)
		names[n++] = t->params[i].name;
	for (int i = 0; i < TR_SHAPE_VARS; i++)
		names[n++] = tr_shape_var_names[i];
	memset(r, 0, sizeof *r);
	r->constraints = calloc((size_t)t->nconstraints + 1, sizeof *r->constraints);
	if (!r->constraints)
		return -1;
	at_error err;
	for (int i = 0; i < t->nconstraints; i++)
		expr_lex(t->constraints[i], names, n, &r->constraints[i], &err);
	r->nprefer = t->nprefer < MAX_PREFER ? t->nprefer : MAX_PREFER;
	for (int i = 0; i < r->nprefer; i++)
		expr_lex(t->prefer[i], names, n, &r->prefer[i], &err);
	return 0;
}

static int lexed_holds(const expr_lexed *e, const long long *values)
{
	long long v;
	at_error err;
	return e && expr_eval_lexed(e, values, &v, &err) == EXPR_OK && v != 0;
}

/* The params then the shape variables, as the lexed rules take them. */
static void make_values(const tr_template *t, const long long *params, const atdi_env *env,
			long long *values)
{
	expr_var vars[ATDI_MAX_PARAMS + TR_SHAPE_VARS];
	size_t n = make_vars(t, params, env, vars);
	for (size_t i = 0; i < n; i++)
		values[i] = vars[i].value;
}

/* Bit i (from the top) set when prefer[i] holds: a larger score is better. */
static unsigned prefer_score(const lexed_rules *r, const long long *values)
{
	unsigned score = 0;
	for (int i = 0; i < r->nprefer; i++)
		score = score << 1 | (unsigned)lexed_holds(r->prefer[i], values);
	return score;
}

/* How far values are from the winner's: |log2| of each ratio (1 for a
 * change to or from zero or a sign), summed over the params. */
static double distance(const tr_template *t, const long long *values, const long long *winner)
{
	double d = 0;
	for (int i = 0; i < t->nparams; i++) {
		if (values[i] == winner[i])
			continue;
		if (values[i] > 0 && winner[i] > 0)
			d += fabs(log2((double)values[i] / (double)winner[i]));
		else
			d += 1;
	}
	return d;
}

/* One search: the params idx[0..n) (idx[0] changing fastest) over all
 * their values, the best kept in out. idx[nderive..n) are widen params:
 * a variant that changes one of them ranks after every variant of the same
 * prefer score that does not. */
typedef struct search_state {
	const tr_template *t;
	const lexed_rules *r;
	const long long *winner;
	const int *idx;
	int n, nderive;
	/* constraints checked once digit level is set: those whose searched
	 * params all sit at level or above (level n: none of them searched) */
	int *first_level;
	long long values[ATDI_MAX_PARAMS + TR_SHAPE_VARS]; /* params, then shape */
	int found;
	unsigned best_score;
	int best_widened;
	double best_dist;
	long long *out;
} search_state;

/* Whether values change one of the searched widen params. */
static int widened(const search_state *s)
{
	for (int k = s->nderive; k < s->n; k++)
		if (s->values[s->idx[k]] != s->winner[s->idx[k]])
			return 1;
	return 0;
}

static int level_holds(const search_state *s, int level)
{
	for (int c = 0; c < s->t->nconstraints; c++)
		if (s->first_level[c] == level && !lexed_holds(s->r->constraints[c], s->values))
			return 0;
	return 1;
}

/* Sets levels level..0 in every way, in the order of a counter whose
 * lowest digit is idx[0]; a constraint is checked as soon as the params it
 * names are set, so that a failing one cuts every variant below it. */
static void search_level(search_state *s, int level)
{
	if (level < 0) {
		const tr_template *t = s->t;
		unsigned score = prefer_score(s->r, s->values);
		int wide = widened(s);
		double dist = distance(t, s->values, s->winner);
		if (!s->found || score > s->best_score ||
		    (score == s->best_score && wide < s->best_widened) ||
		    (score == s->best_score && wide == s->best_widened &&
		     dist < s->best_dist - 1e-9)) {
			s->found = 1;
			s->best_score = score;
			s->best_widened = wide;
			s->best_dist = dist;
			memcpy(s->out, s->values, (size_t)t->nparams * sizeof *s->out);
		}
		return;
	}
	const tr_param *p = &s->t->params[s->idx[level]];
	for (int d = 0; d < p->nvalues; d++) {
		s->values[s->idx[level]] = p->values[d];
		if (level_holds(s, level))
			search_level(s, level - 1);
	}
}

/* The params idx[0..n) searched, of which idx[nderive..n) widen: 0 when
 * no variant is valid, else 1 with the best in out, 2 if it widened. */
static int search(const tr_template *t, const lexed_rules *r, const long long *winner,
		  const atdi_env *env, const int *idx, int n, int nderive, long long *out)
{
	search_state s = { .t = t, .r = r, .winner = winner, .idx = idx, .n = n,
			   .nderive = nderive, .out = out };
	s.first_level = malloc(((size_t)t->nconstraints + 1) * sizeof *s.first_level);
	if (!s.first_level)
		return 0;
	make_values(t, winner, env, s.values);
	for (int c = 0; c < t->nconstraints; c++) {
		s.first_level[c] = n;
		for (int k = 0; k < n && r->constraints[c]; k++)
			if (expr_lexed_uses(r->constraints[c], (size_t)idx[k]) &&
			    k < s.first_level[c])
				s.first_level[c] = k;
	}
	if (level_holds(&s, n))
		search_level(&s, n - 1);
	free(s.first_level);
	return s.found ? 1 + s.best_widened : 0;
}

int atdi_derive(const tr_template *t, const long long *winner, const atdi_env *env, int widen,
		long long *out)
{
	if (t->nparams > ATDI_MAX_PARAMS || t->nderive + t->nwiden > ATDI_MAX_PARAMS)
		return 0;
	lexed_rules r;
	if (rules_lex(t, &r))
		return 0;
	/* One search over the derive and widen params together: the widen
	 * params change only where that meets more preferences, or where the
	 * derive params alone reach no valid variant (f32 rows of 32 derived
	 * at 32 lanes can only take 4-byte vectors, at 8 lanes 16-byte ones). */
	int idx[ATDI_MAX_PARAMS], n = t->nderive;
	if (n)
		memcpy(idx, t->derive, (size_t)n * sizeof *idx);
	if (widen && t->nwiden) { /* a manifest without widen params has none */
		memcpy(idx + n, t->widen, (size_t)t->nwiden * sizeof *idx);
		n += t->nwiden;
	}
	int found = search(t, &r, winner, env, idx, n, t->nderive, out);
	rules_unlex(&r, t->nconstraints);
	return found;
}

int atdi_rules_geometry(const tr_template *t, const long long *values, const atdi_env *env,
			launch_geometry *g)
{
	expr_var vars[ATDI_MAX_PARAMS + TR_SHAPE_VARS];
	if (t->nparams > ATDI_MAX_PARAMS)
		return -1;
	size_t n = make_vars(t, values, env, vars);
	long long f[TR_LAUNCH_KEYS];
	at_error err;
	for (int i = 0; i < TR_LAUNCH_KEYS; i++)
		if (expr_eval(t->launch[i], vars, n, &f[i], &err) != EXPR_OK || f[i] < 0 ||
		    (i != TR_MAX_N && f[i] > (1LL << 30)))
			return -1;
	*g = (launch_geometry){
		.threads = (int)f[TR_THREADS],
		.rows_per_cta = (int)f[TR_ROWS_PER_CTA],
		.dyn_smem = (int)f[TR_SMEM_BYTES],
		.persistent = f[TR_PERSISTENT] != 0,
		.max_n = f[TR_MAX_N],
		.ctas_per_row = (int)f[TR_CTAS_PER_ROW],
		.cooperative = f[TR_COOPERATIVE] != 0,
	};
	return launch_geometry_check(g, &err) == 0 ? 0 : -1;
}

/* Re-deriving a winner's params for a new shape: see derive.h. The search
 * enumerates the searched params' values as a mixed-radix counter; a few
 * thousand variants at most (softmax_warp widened), each stopped at its
 * first failing constraint. */
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

/* Bit i (from the top) set when prefer[i] holds: a larger score is better. */
static unsigned prefer_score(const tr_template *t, const long long *values, const atdi_env *env)
{
	expr_var vars[ATDI_MAX_PARAMS + TR_SHAPE_VARS];
	size_t n = make_vars(t, values, env, vars);
	unsigned score = 0;
	for (int i = 0; i < t->nprefer && i < 16; i++)
		score = score << 1 | (unsigned)holds(t->prefer[i], vars, n);
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

/* Searches the params in idx[0..n) over all their values; keeps the best. */
static int search(const tr_template *t, const long long *winner, const atdi_env *env,
		  const int *idx, int n, long long *out)
{
	long long v[ATDI_MAX_PARAMS];
	int digit[ATDI_MAX_PARAMS] = { 0 };
	memcpy(v, winner, (size_t)t->nparams * sizeof *v);
	int found = 0;
	unsigned best_score = 0;
	double best_dist = 0;
	for (;;) {
		for (int k = 0; k < n; k++)
			v[idx[k]] = t->params[idx[k]].values[digit[k]];
		if (atdi_rules_valid(t, v, env)) {
			unsigned score = prefer_score(t, v, env);
			double dist = distance(t, v, winner);
			if (!found || score > best_score ||
			    (score == best_score && dist < best_dist - 1e-9)) {
				found = 1;
				best_score = score;
				best_dist = dist;
				memcpy(out, v, (size_t)t->nparams * sizeof *v);
			}
		}
		int k = 0;
		while (k < n && ++digit[k] == t->params[idx[k]].nvalues)
			digit[k++] = 0;
		if (k == n)
			return found;
	}
}

int atdi_derive(const tr_template *t, const long long *winner, const atdi_env *env, int widen,
		long long *out)
{
	if (t->nparams > ATDI_MAX_PARAMS || t->nderive + t->nwiden > ATDI_MAX_PARAMS)
		return 0;
	if (search(t, winner, env, t->derive, t->nderive, out))
		return 1;
	if (!widen || !t->nwiden)
		return 0;
	int idx[ATDI_MAX_PARAMS];
	memcpy(idx, t->derive, (size_t)t->nderive * sizeof *idx);
	memcpy(idx + t->nderive, t->widen, (size_t)t->nwiden * sizeof *idx);
	return search(t, winner, env, idx, t->nderive + t->nwiden, out) ? 2 : 0;
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

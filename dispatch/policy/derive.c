/* Re-deriving a winner's params for a new shape: see derive.h. The search
 * is a walk of the rules engine (tr_walk) over the derive and widen params,
 * each variant stopped at its first failing constraint: a few thousand
 * variants at most (softmax_warp widened), its expressions lexed once. What
 * is the library's own here is the choice among the valid variants. */
#include "dispatch/policy/derive.h"

#include <math.h>
#include <string.h>

const tr_template *atdi_rules_find(const tr_template *ts, int n, const char *name)
{
	return tr_find(ts, n, name);
}

int atdi_params_parse(const tr_template *t, const char *text, long long *values)
{
	return tr_params_parse(t, text, values);
}

void atdi_params_text(const tr_template *t, const long long *values, char *buf, size_t cap)
{
	tr_params_text(t, values, buf, cap);
}

int atdi_rules_valid(const tr_template *t, const long long *values, const atdi_env *env)
{
	at_error err;
	return tr_check(t, values, env, NULL, &err) == 1;
}

int atdi_rules_geometry(const tr_template *t, const long long *values, const atdi_env *env,
			launch_geometry *g)
{
	at_error err;
	return tr_geometry(t, values, env, g, &err) == 0 ? 0 : -1;
}

/* The best variant a walk has visited so far. A variant that changes one
 * of the widen params ranks after every variant of the same prefer score
 * that does not. */
typedef struct search_state {
	const tr_template *t;
	const tr_rules *r;
	const long long *winner;
	const int *widen; /* the walked widen params */
	int nwiden;
	int found;
	unsigned best_score;
	int best_widened;
	double best_dist;
	long long *out;
} search_state;

/* The preferences that weigh: one bit each of the score. */
#define MAX_PREFER 16

/* Bit i (from the top) set when prefer[i] holds: a larger score is better. */
static unsigned prefer_score(const search_state *s, const long long *values)
{
	unsigned score = 0;
	for (int i = 0; i < s->t->nprefer && i < MAX_PREFER; i++)
		score = score << 1 | (unsigned)tr_prefer_holds(s->r, i, values);
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

/* Whether values change one of the walked widen params. */
static int widened(const search_state *s, const long long *values)
{
	for (int k = 0; k < s->nwiden; k++)
		if (values[s->widen[k]] != s->winner[s->widen[k]])
			return 1;
	return 0;
}

static void consider(void *ctx, const long long *values)
{
	search_state *s = ctx;
	unsigned score = prefer_score(s, values);
	int wide = widened(s, values);
	double dist = distance(s->t, values, s->winner);
	if (!s->found || score > s->best_score ||
	    (score == s->best_score && wide < s->best_widened) ||
	    (score == s->best_score && wide == s->best_widened && dist < s->best_dist - 1e-9)) {
		s->found = 1;
		s->best_score = score;
		s->best_widened = wide;
		s->best_dist = dist;
		memcpy(s->out, values, (size_t)s->t->nparams * sizeof *s->out);
	}
}

int atdi_derive(const tr_template *t, const long long *winner, const atdi_env *env, int widen,
		long long *out)
{
	if (t->nparams > ATDI_MAX_PARAMS || t->nderive + t->nwiden > ATDI_MAX_PARAMS)
		return 0;
	tr_rules *r;
	at_error err;
	if (tr_rules_new(t, env, &r, &err))
		return 0;
	/* One walk over the derive and widen params together: the widen
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
	search_state s = { .t = t, .r = r, .winner = winner, .widen = idx + t->nderive,
			   .nwiden = n - t->nderive, .out = out };
	/* a constraint that cannot be evaluated holds no variant: not an error here */
	tr_walk(r, winner, idx, n, consider, &s, &err);
	tr_rules_free(r);
	return s.found ? 1 + s.best_widened : 0;
}

/* The stopping rule of timing: see rep_rule.h. */
#include "tuner/timing/rep_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

rep_policy rep_policy_fixed(int warmup, int reps)
{
	return (rep_policy){ .warmup = warmup, .min_reps = reps, .max_reps = reps };
}

const char *rep_verdict_name(rep_verdict v)
{
	switch (v) {
	case REP_MORE: return "more";
	case REP_CONVERGED: return "converged";
	case REP_MAX: return "max";
	case REP_BUDGET: return "budget";
	}
	return "?";
}

int rep_policy_check(const rep_policy *p, at_error *err)
{
	if (p->max_reps < 1)
		return at_error_set(err, "the most repetitions must be at least 1, got %d", p->max_reps);
	if (p->min_reps < 1 || p->min_reps > p->max_reps)
		return at_error_set(err, "the fewest repetitions must be 1..%d, got %d", p->max_reps,
				    p->min_reps);
	if (!(p->tolerance >= 0) || !(p->budget_ms >= 0) || p->warmup < 0)
		return at_error_set(err, "tolerance, time budget and warm-up must not be negative");
	return 0;
}

/* P(Binomial(n, 1/2) = i), from logs: 2^-n underflows past n = 1074. */
static double binom_half_pmf(size_t n, size_t i)
{
	return exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) -
		   (double)n * M_LN2);
}

size_t rep_median_rank(size_t n, double confidence)
{
	double tail = (1 - confidence) / 2, cdf = 0;
	/* the largest j with P(B <= j - 1) <= tail: the interval
	 * [x_(j), x_(n+1-j)] misses the median with probability 2 P(B <= j-1) */
	size_t j = 0;
	while (j + 1 <= (n + 1) / 2) {
		cdf += binom_half_pmf(n, j); /* now P(B <= j) */
		if (cdf > tail)
			break;
		j++;
	}
	return j;
}

double rep_median_interval(const double *sorted, size_t n, double confidence)
{
	size_t j = rep_median_rank(n, confidence);
	if (j == 0)
		return INFINITY;
	double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	if (!(median > 0))
		return INFINITY;
	return (sorted[n - j] - sorted[j - 1]) / median;
}

rep_verdict rep_decide(const rep_policy *p, double *const *sorted, int k, size_t n,
		       double elapsed_ms)
{
	if (n < (size_t)p->min_reps)
		return REP_MORE;
	if (p->tolerance > 0) {
		int all = 1;
		for (int j = 0; j < k && all; j++)
			all = rep_median_interval(sorted[j], n, REP_CONFIDENCE) <= p->tolerance;
		if (all)
			return REP_CONVERGED;
	}
	if (n >= (size_t)p->max_reps)
		return REP_MAX;
	if (p->budget_ms > 0 && elapsed_ms >= p->budget_ms * k)
		return REP_BUDGET;
	return REP_MORE;
}

int rep_next_batch(const rep_policy *p, size_t n)
{
	size_t want = n < (size_t)p->min_reps ? (size_t)p->min_reps - n : n / 4;
	if (n >= (size_t)p->min_reps && want < REP_MIN_BATCH)
		want = REP_MIN_BATCH;
	size_t left = (size_t)p->max_reps > n ? (size_t)p->max_reps - n : 0;
	return (int)(want < left ? want : left);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void summarise(const double *sorted, size_t n, rep_result *r)
{
	r->median_us = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
	r->min_us = sorted[0];
	r->max_us = sorted[n - 1];
	r->q1_us = sorted[n / 4];
	r->q3_us = sorted[(3 * n) / 4];
	r->interval = rep_median_interval(sorted, n, REP_CONFIDENCE);
	r->reps = (int)n;
}

int rep_run(const rep_policy *p, int k, rep_batch_fn batch, void *arg, rep_result *out,
	    rep_verdict *why, at_error *err)
{
	if (k < 1 || k > REP_MAX_SERIES)
		return at_error_set(err, "can time 1 to %d series together", REP_MAX_SERIES);
	if (rep_policy_check(p, err))
		return -1;
	size_t cap = (size_t)p->max_reps;
	double *raw[REP_MAX_SERIES], *sorted[REP_MAX_SERIES], *next[REP_MAX_SERIES];
	for (int j = 0; j < k; j++) {
		raw[j] = xmalloc(cap * sizeof *raw[j]);
		sorted[j] = xmalloc(cap * sizeof *sorted[j]);
	}
	size_t n = 0;
	double elapsed = 0;
	rep_verdict v = REP_MORE;
	int rc = 0;
	while (rc == 0 && (v = rep_decide(p, sorted, k, n, elapsed)) == REP_MORE) {
		int reps = rep_next_batch(p, n);
		double ms = 0;
		for (int j = 0; j < k; j++)
			next[j] = raw[j] + n;
		rc = batch(arg, reps, next, &ms, err);
		if (rc)
			break;
		n += (size_t)reps;
		elapsed += ms;
		for (int j = 0; j < k; j++) {
			memcpy(sorted[j], raw[j], n * sizeof *raw[j]);
			qsort(sorted[j], n, sizeof *sorted[j], cmp_double);
		}
	}
	if (rc == 0)
		for (int j = 0; j < k; j++)
			summarise(sorted[j], n, &out[j]);
	if (why)
		*why = v;
	for (int j = 0; j < k; j++) {
		free(raw[j]);
		free(sorted[j]);
	}
	return rc;
}

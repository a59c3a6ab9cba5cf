/* How many repetitions a timing takes: launches are timed in batches, and
 * after each batch the rule decides whether the median is known well
 * enough. It is known when the distribution-free 95% confidence interval
 * of the median (two order statistics of the sorted samples, chosen from
 * the binomial distribution, whatever the distribution of the times) is at
 * most `tolerance` wide relative to the median; timing also stops at the
 * most repetitions or once the time budget is spent, never before the
 * fewest. No GPU here: the samples come from a callback, so tests can feed
 * it a fake timing source. */
#ifndef AT_TUNER_REP_RULE_H
#define AT_TUNER_REP_RULE_H

#include <stddef.h>

#include "common/error.h"

#define REP_CONFIDENCE 0.95
#define REP_MIN_BATCH 5    /* repetitions per batch after the first */
#define REP_MAX_SERIES 16  /* launches timed interleaved: refine's full round at most */

typedef struct rep_policy {
	int warmup;        /* launches before timing (not counted) */
	int min_reps;      /* never fewer */
	int max_reps;      /* never more */
	double tolerance;  /* relative width of the median's interval; 0: never converged */
	double budget_ms;  /* per launch timed: stop after min_reps once spent; 0: none */
} rep_policy;

/* A policy of exactly reps repetitions. */
rep_policy rep_policy_fixed(int warmup, int reps);

typedef enum rep_verdict {
	REP_MORE,      /* time another batch */
	REP_CONVERGED, /* the median's interval is narrow enough */
	REP_MAX,       /* max_reps reached */
	REP_BUDGET,    /* the time budget is spent */
} rep_verdict;

const char *rep_verdict_name(rep_verdict v);

/* The 1-based rank j of the lower bound of the median's interval over n
 * samples, [x_(j), x_(n+1-j)], with coverage of at least `confidence`; 0
 * when no interval of n samples has that coverage (n < 6 at 95%). */
size_t rep_median_rank(size_t n, double confidence);

/* (x_(n+1-j) - x_(j)) / median over sorted[0..n); INFINITY when there is no
 * interval (rep_median_rank is 0) or the median is not positive. */
double rep_median_interval(const double *sorted, size_t n, double confidence);

/* What to do after n repetitions (each of the k series sorted; k >= 1)
 * that took elapsed_ms: every series must have converged to stop early. */
rep_verdict rep_decide(const rep_policy *p, double *const *sorted, int k, size_t n,
		       double elapsed_ms);

/* Repetitions in the next batch after n: min_reps first, then a quarter of
 * n (at least REP_MIN_BATCH), never past max_reps. */
int rep_next_batch(const rep_policy *p, size_t n);

/* Times `reps` repetitions of each of k series into samples[j][0..reps)
 * (microseconds) and sets *elapsed_ms to the wall time the batch took. */
typedef int (*rep_batch_fn)(void *arg, int reps, double *const *samples, double *elapsed_ms,
			    at_error *err);

/* The outcome of one series. */
typedef struct rep_result {
	double median_us, min_us, max_us, q1_us, q3_us;
	double interval;   /* the median's relative interval width (INFINITY: none) */
	int reps;
} rep_result;

/* Runs batches until rep_decide stops (warm-up is the batch function's
 * business), then summarises each series into out[0..k). *why (may be
 * NULL) says why it stopped. k is 1..REP_MAX_SERIES. */
int rep_run(const rep_policy *p, int k, rep_batch_fn batch, void *arg, rep_result *out,
	    rep_verdict *why, at_error *err);

/* Checks a policy: min_reps 1..max_reps, tolerance and budget >= 0. */
int rep_policy_check(const rep_policy *p, at_error *err);

#endif

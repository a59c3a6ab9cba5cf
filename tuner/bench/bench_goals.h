/* The goals `autotune bench` marks per shape (issue 5), as pure functions of
 * one row of results so that they are tested without a GPU:
 *   bandwidth  a shape moving at least 256 MiB (2*M*N*element size) reaches
 *              95% of the sweep's copy bandwidth for N <= 262144, and 85%
 *              for longer rows; f32 M=8 N=1048576 reaches 900 GB/s;
 *   baselines  the winner is not slower than the naive softmax nor cuDNN
 *              (those of them that were timed). */
#ifndef AT_TUNER_BENCH_GOALS_H
#define AT_TUNER_BENCH_GOALS_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/op.h"

#define BENCH_BIG_BYTES (256.0 * 1024 * 1024) /* the bandwidth goal's threshold */
#define BENCH_LONG_ROW 262144                 /* longer rows: the 85% goal */
#define BENCH_PCT_GOAL 95.0
#define BENCH_PCT_GOAL_LONG 85.0
#define BENCH_SMALL_M_GBPS_GOAL 900.0         /* f32 8 x 1048576 */

/* One benchmarked shape as read from the database. Values <= 0 were not
 * measured (a baseline not timed, no winner). */
typedef struct bench_row {
	const at_op *op;             /* its op's description; NULL: softmax's */
	at_dtype dtype;
	long long M, N;
	int tuned;                   /* the database has a winners row for the shape */
	char *template_name, *params; /* NULL when no variant passed */
	double gbps, pct_copy;       /* the winner's; pct_copy of its sweep's copy */
	double same_copy_gbps;       /* the same-size copy baseline */
	double naive_gbps, cudnn_gbps;
} bench_row;

typedef enum goal_verdict { GOAL_NA, GOAL_MET, GOAL_MISSED } goal_verdict;

/* "n/a", "met", "missed". */
const char *goal_verdict_name(goal_verdict v);

/* Bytes a softmax of the row's shape reads and writes. */
double bench_row_bytes(const bench_row *r);

/* The bandwidth goal; target gets what was asked (">= 95% of copy",
 * ">= 900 GB/s", both joined by " and "; "" when n/a). */
goal_verdict bench_bandwidth_goal(const bench_row *r, char *target, size_t cap);

/* The baselines goal; detail says which baseline was faster ("" if none). */
goal_verdict bench_baseline_goal(const bench_row *r, char *detail, size_t cap);

/* Counts of verdicts over a table. */
typedef struct bench_tally {
	int bandwidth_met, bandwidth_total; /* total: rows where it applies */
	int baseline_met, baseline_total;
} bench_tally;

void bench_tally_add(bench_tally *t, goal_verdict bandwidth, goal_verdict baseline);

#endif

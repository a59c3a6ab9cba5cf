/* The benchmark's goals: see bench_goals.h. */
#include "tuner/bench/bench_goals.h"

#include "tuner/ops/ops.h"

#include <stdio.h>
#include <string.h>

const char *goal_verdict_name(goal_verdict v)
{
	switch (v) {
	case GOAL_MET: return "met";
	case GOAL_MISSED: return "missed";
	case GOAL_NA: break;
	}
	return "n/a";
}

double bench_row_bytes(const bench_row *r)
{
	return at_op_bytes_moved(r->op ? r->op : &softmax_op, r->dtype, r->M, r->N);
}

static void append(char *buf, size_t cap, const char *text)
{
	size_t len = strlen(buf);
	snprintf(buf + len, cap - len, "%s%s", len ? " and " : "", text);
}

goal_verdict bench_bandwidth_goal(const bench_row *r, char *target, size_t cap)
{
	target[0] = '\0';
	int applies = 0, met = 1;
	int winner = r->template_name != NULL;
	if (bench_row_bytes(r) >= BENCH_BIG_BYTES) {
		double want = r->N <= BENCH_LONG_ROW ? BENCH_PCT_GOAL : BENCH_PCT_GOAL_LONG;
		char text[48];
		snprintf(text, sizeof text, ">= %.0f%% of copy", want);
		append(target, cap, text);
		applies = 1;
		met &= winner && r->pct_copy >= want;
	}
	if (r->dtype == AT_F32 && r->M == 8 && r->N == 1048576) {
		char text[48];
		snprintf(text, sizeof text, ">= %.0f GB/s", BENCH_SMALL_M_GBPS_GOAL);
		append(target, cap, text);
		applies = 1;
		met &= winner && r->gbps >= BENCH_SMALL_M_GBPS_GOAL;
	}
	if (!applies)
		return GOAL_NA;
	return met ? GOAL_MET : GOAL_MISSED;
}

goal_verdict bench_baseline_goal(const bench_row *r, char *detail, size_t cap)
{
	detail[0] = '\0';
	if (r->naive_gbps <= 0 && r->cudnn_gbps <= 0)
		return GOAL_NA;
	if (!r->template_name) {
		snprintf(detail, cap, "no variant passed");
		return GOAL_MISSED;
	}
	/* name the fastest baseline that beat the winner */
	const char *name = NULL;
	double best = r->gbps;
	if (r->naive_gbps > best) {
		name = "naive";
		best = r->naive_gbps;
	}
	if (r->cudnn_gbps > best) {
		name = "cuDNN";
		best = r->cudnn_gbps;
	}
	if (!name)
		return GOAL_MET;
	snprintf(detail, cap, "%s faster: %.0f GB/s", name, best);
	return GOAL_MISSED;
}

void bench_tally_add(bench_tally *t, goal_verdict bandwidth, goal_verdict baseline)
{
	if (bandwidth != GOAL_NA) {
		t->bandwidth_total++;
		t->bandwidth_met += bandwidth == GOAL_MET;
	}
	if (baseline != GOAL_NA) {
		t->baseline_total++;
		t->baseline_met += baseline == GOAL_MET;
	}
}

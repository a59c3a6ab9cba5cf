/* The progress lines of `make test`: see runner_progress.h. */
#include "tests/runner_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rp_init(rp_run *r, double now_s)
{
	memset(r, 0, sizeof *r);
	r->start_s = now_s;
}

void rp_free(rp_run *r)
{
	free(r->suites);
	memset(r, 0, sizeof *r);
}

void rp_add_suite(rp_run *r, const char *name, size_t n)
{
	if (!n)
		return;
	rp_suite *grown = realloc(r->suites, (r->nsuites + 1) * sizeof *grown);
	if (!grown)
		return; /* only the progress lines suffer */
	r->suites = grown;
	rp_suite *s = &r->suites[r->nsuites++];
	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	s->total = n;
	s->start_s = -1;
	r->ntests += n;
}

static rp_suite *find(rp_run *r, const char *name)
{
	for (size_t i = 0; i < r->nsuites; i++)
		if (strcmp(r->suites[i].name, name) == 0)
			return &r->suites[i];
	return NULL;
}

/* The width of the suite count, so that the lines' brackets align. */
static int count_width(const rp_run *r)
{
	int w = 1;
	for (size_t n = r->nsuites; n >= 10; n /= 10)
		w++;
	return w;
}

void rp_start_line(const rp_run *r, char *out, size_t cap)
{
	snprintf(out, cap, "[%*d/%zu] %zu test%s in %zu suite%s\n", count_width(r), 0, r->nsuites,
		 r->ntests, r->ntests == 1 ? "" : "s", r->nsuites, r->nsuites == 1 ? "" : "s");
}

void rp_test_started(rp_run *r, const char *suite, double now_s)
{
	rp_suite *s = find(r, suite);
	if (s && s->start_s < 0)
		s->start_s = now_s;
}

static const char *outcome_name(rp_outcome o)
{
	return o == RP_FAILED ? "FAILED" : o == RP_SKIPPED ? "skipped" : "passed";
}

static void duration(double s, char *buf, size_t cap)
{
	long t = (long)(s + 0.5);
	if (t < 60)
		snprintf(buf, cap, "%lds", t);
	else
		snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
}

void rp_test_ended(rp_run *r, const char *suite, const char *test, rp_outcome outcome,
		   double elapsed_s, double now_s, char *out, size_t cap)
{
	out[0] = '\0';
	rp_suite *s = find(r, suite);
	if (s && s->ended < s->total) {
		s->ended++;
		s->failed += outcome == RP_FAILED;
		s->skipped += outcome == RP_SKIPPED;
	} else {
		s = NULL; /* not counted (twice ended, or unknown) */
	}
	int width = count_width(r);
	if (elapsed_s >= RP_SLOW_S) {
		char of[64] = "";
		if (s)
			snprintf(of, sizeof of, " (%zu of %zu in its suite)", s->ended, s->total);
		snprintf(out, cap, "[%*s] %s::%s: %s in %.1f s%s\n", width * 2 + 1, "slow", suite, test,
			 outcome_name(outcome), elapsed_s, of);
	}
	size_t len = strlen(out);
	if (!s || s->ended < s->total || len >= cap)
		return;
	r->done++;
	char counts[128], so_far[32];
	size_t passed = s->total - s->failed - s->skipped;
	snprintf(counts, sizeof counts, "%zu passed", passed);
	if (s->failed)
		snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu FAILED",
			 s->failed);
	if (s->skipped)
		snprintf(counts + strlen(counts), sizeof counts - strlen(counts), ", %zu skipped",
			 s->skipped);
	duration(now_s - r->start_s, so_far, sizeof so_far);
	snprintf(out + len, cap - len, "[%*zu/%zu] %s: %s in %.1f s (%s so far)\n", width, r->done,
		 r->nsuites, s->name, counts, now_s - (s->start_s < 0 ? now_s : s->start_s), so_far);
}

/* The selftest's table: one row per dtype x case x template with the
 * distinct variants run, the runs (a variant at a shape), how many passed,
 * failed and could not run; then the failures with their params, shape and
 * reason; then the verdict. Knows nothing of GPUs, so its logic is tested
 * with made-up outcomes. */
#ifndef AT_TUNER_SELFTEST_REPORT_H
#define AT_TUNER_SELFTEST_REPORT_H

#include <stdio.h>

#include "common/dtype.h"
#include "tuner/selftest/selftest_cases.h"

typedef enum st_status { ST_PASSED, ST_FAILED, ST_NOT_RUN } st_status;

/* One run's outcome, as the runner reports it. */
typedef struct st_outcome {
	st_status status;
	char reason[1024]; /* why it failed or did not run */
} st_outcome;

typedef struct st_report st_report;

st_report *st_report_new(void);
void st_report_free(st_report *r);

/* Makes the row exist (a template that serves the dtype but no shape of
 * the case shows with 0 runs). Rows print in the order first seen. */
void st_report_row(st_report *r, at_dtype dt, st_case c, const char *template_name);

/* Counts one run of a variant (params) at a shape (its label); tuned_n is
 * the row length the variant was enumerated at when not the shape's. */
void st_report_add(st_report *r, at_dtype dt, st_case c, const char *template_name,
		   const char *params, const char *shape, long long tuned_n,
		   const st_outcome *o);

/* Failures listed per row before "... and K more". */
#define ST_REPORT_MAX_LISTED 10

/* Prints the table, the failures, what did not run and the verdict line
 * ("selftest: PASSED ..." or "selftest: FAILED ..."). */
void st_report_print(const st_report *r, FILE *out);

/* 0 when every run passed, nothing was left unrun, and every template of
 * every dtype ran at least once; 1 otherwise. */
int st_report_exit_status(const st_report *r);

/* Totals, for the verdict and for tests. */
typedef struct st_totals {
	long long runs, passed, failed, not_run;
	int untested; /* (dtype, template) pairs with no run in any case */
} st_totals;

st_totals st_report_totals(const st_report *r);

#endif

/* `autotune selftest`: every variant of the default space (every template
 * serving the ops of the config, in every dtype) run at the edge cases of
 * selftest_cases.h and checked against the CPU reference, with a pass/fail
 * table (selftest_report.h). Variants come from the manifests through the
 * plan and enumeration code at each shape's environment, so a new template
 * is picked up without a change here.
 *
 * Where a template has no variant at a shape (its constraints prune that
 * row length), it is still run there as the dispatch library would run it:
 * a winner tuned at a longer row serves any N up to its max_n with the
 * launch geometry stored at its tuned N. So the variants enumerated at the
 * next longer row length of the case that has some (and whose max_n covers
 * N) run with that geometry; the table says "as tuned at N=...".
 *
 * The GPU is behind a runner interface, so that the driver and the table
 * are tested with a fake one; selftest_gpu.c is the real runner. */
#ifndef AT_TUNER_SELFTEST_H
#define AT_TUNER_SELFTEST_H

#include "common/op.h"

#include <stdio.h>

#include "common/error.h"
#include "dispatch/runtime/launch_geometry.h"
#include "gen/specialize.h"
#include "tuner/selftest/selftest_cases.h"
#include "tuner/selftest/selftest_report.h"

/* One variant to run at a shape. */
typedef struct st_job {
	const at_op *op; /* what v computes: its reference */
	variant v;
	launch_geometry geom; /* evaluated at tuned_n (the shape's N when native) */
	long long tuned_n;
} st_job;

typedef struct st_runner {
	void *ctx;
	/* The manifest environment of a shape on the runner's device. */
	tr_env (*env)(void *ctx, long long M, long long N, at_dtype dt);
	/* Runs jobs[0..n) at shape s and fills out[0..n). A variant that fails
	 * is ST_FAILED with the reason; once the device is unusable (a dead
	 * context), every later job, of this call and of later ones, is
	 * ST_NOT_RUN with the reason. Returns -1 (err set) only on an error
	 * that is nobody's variant's (out of memory, a manifest bug). */
	int (*run)(void *ctx, const st_shape *s, at_dtype dt, const st_job *jobs, size_t n,
		   st_outcome *out, at_error *err);
} st_runner;

typedef struct selftest_options {
	const char *config_path;   /* its templates' folder (default configs/softmax.yaml's) */
	const char *templates_dir; /* NULL: see plan_templates_dir */
	unsigned dtype_mask;       /* bit 1 << dtype; 0: every dtype */
	st_mode mode;
	FILE *progress;            /* a line per shape, or NULL */
	unsigned case_mask;        /* bit 1 << st_case; 0: every case */
	const char *op;            /* the op whose variants run (NULL: softmax) */
} selftest_options;

/* Runs every case through the runner and prints the table to out. Returns
 * the exit status (0 all passed, 1 not), or -1 with err when the selftest
 * could not be set up (config, templates) or the runner failed. */
int selftest_run(const selftest_options *o, const st_runner *runner, FILE *out,
		 at_error *err);

/* The number of runs each case would make (no runner needed: nominal
 * sm_90 limits); for --dry-run and the sanitizer's launch count. Fills
 * runs[ST_CASE_COUNT]; returns 0 or -1 with err. */
int selftest_count(const selftest_options *o, long long runs[ST_CASE_COUNT], FILE *list,
		   at_error *err);

#endif

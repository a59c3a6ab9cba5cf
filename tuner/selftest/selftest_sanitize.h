/* `autotune selftest --sanitize`: the selftest's small shapes (st_mode
 * ST_MODE_SANITIZE: no 2^31 case, a few rows per shape, buffers exactly the
 * rows) run by this program re-executed as a child under compute-sanitizer,
 * once with --tool memcheck (out-of-bounds and misaligned accesses, device
 * faults) and once with --tool racecheck (shared-memory hazards), each with
 * --error-exitcode. Each tool is reported clean or not clean with the
 * sanitizer's first error lines. The children share one compile cache, so
 * the second compiles nothing.
 *
 * compute-sanitizer is found as $AUTOTUNE_SANITIZER, on PATH, in
 * $CUDA_HOME/bin, or in /usr/local/cuda/bin. */
#ifndef AT_TUNER_SELFTEST_SANITIZE_H
#define AT_TUNER_SELFTEST_SANITIZE_H

#include <stddef.h>

#include "tuner/selftest/selftest.h"

typedef struct sanitize_options {
	const selftest_options *st; /* config, templates and dtypes to pass on */
	int device;
	const char *db_path;        /* compile cache; NULL: a temporary one */
	int threads;
} sanitize_options;

/* Runs both tools; returns the exit status (0 both clean). */
int selftest_sanitize(const sanitize_options *o);

/* The exit code asked of the sanitizer when it finds errors. */
#define SANITIZER_ERROR_EXITCODE 86

/* compute-sanitizer's path into buf, or NULL when it is nowhere. */
const char *sanitizer_find(char *buf, size_t cap);

/* What one tool's run came to, from its log and the child's exit status
 * and output. */
typedef struct sanitizer_verdict {
	int clean;
	char summary[200];  /* "0 errors", "3 hazards (3 errors, 0 warnings)", ... */
	char details[2048]; /* the first error lines, or why it is not clean */
} sanitizer_verdict;

sanitizer_verdict sanitizer_judge(const char *tool, const char *log, int exit_status,
				  const char *child_out, const char *child_err);

#endif

/* Timing on the GPU with CUDA events: warm-up launches, then repetitions
 * each preceded by an L2 flush (tuner/timing/l2_flush.h), so that every repetition
 * starts from a cold, clean L2. Launches are queued back to back and timed
 * by events between flush and kernel, so host launch overhead stays out of
 * the numbers. They are timed in batches until the median is known within
 * the config's tolerance (tuner/timing/rep_rule.h), between its min_repetitions
 * and repetitions and within its time_budget_ms. */
#ifndef AT_TUNER_TIMING_TIMER_H
#define AT_TUNER_TIMING_TIMER_H

#include <stddef.h>

#include "common/error.h"
#include "tuner/config.h"
#include "tuner/device.h"
#include "tuner/timing/code_flush.h"
#include "tuner/timing/l2_flush.h"
#include "tuner/timing/rep_rule.h"

#define TIMER_MAX_REPS 10000
#define TIMER_MAX_INTERLEAVED REP_MAX_SERIES
#define TIMER_MIN_EVENT_REPS 16 /* events for at least this many repetitions */

typedef struct gpu_timer {
	CUstream stream;
	CUevent *start, *stop; /* one pair per repetition and interleaved launch */
	int nevents;
	l2_flush flush; /* before every timed launch; name what they touch there */
	code_flush code_flush; /* after it, when $AUTOTUNE_CODE_FLUSH=1 */
	rep_policy policy;     /* the config's */
	size_t stops[REP_BUDGET + 1]; /* timings ended per rep_verdict */
} gpu_timer;

typedef struct timing {
	double median_us, min_us, max_us;
	double q1_us, q3_us; /* quartiles */
	double interval;     /* the median's 95% interval, relative (rep_rule.h) */
	int reps;            /* repetitions timed */
} timing;

/* One launch of the thing being timed, on stream. */
typedef int (*timed_launch_fn)(void *arg, CUstream stream, at_error *err);

/* The config's warmup, repetitions (the most), min_repetitions, tolerance
 * and time_budget_ms. */
rep_policy gpu_timer_policy(const sweep_config *cfg);

int gpu_timer_open(gpu_timer *b, const gpu_device *gpu, const sweep_config *cfg, at_error *err);
void gpu_timer_close(gpu_timer *b);

/* The config's warm-up, then repetitions until the median is known. */
int gpu_time(gpu_timer *b, timed_launch_fn launch, void *arg, timing *out, at_error *err);

/* As gpu_time, under policy p (max_reps <= the config's most, or
 * TIMER_MIN_EVENT_REPS). */
int gpu_time_policy(gpu_timer *b, const rep_policy *p, timed_launch_fn launch, void *arg,
		      timing *out, at_error *err);

/* Exactly the given warm-up and repetitions (reps <= the config's most, or
 * TIMER_MIN_EVENT_REPS). */
int gpu_time_n(gpu_timer *b, timed_launch_fn launch, void *arg, int warmup, int reps,
		 timing *out, at_error *err);

/* Times k <= TIMER_MAX_INTERLEAVED launches as gpu_time does, one
 * repetition of each in turn, so that drift in clocks or temperature
 * affects all alike; until every median is known (the budget is per
 * launch). out[i] also gets the interquartile spread. */
int gpu_time_interleaved(gpu_timer *b, const timed_launch_fn *launch, void *const *arg, int k,
			   timing *out, at_error *err);

/* Device-to-device copy bandwidth (bytes read + written per second / 1e9)
 * over buffers of `bytes`, the ceiling results are compared with. */
int gpu_copy_gbps(gpu_timer *b, size_t bytes, double *gbps, at_error *err);

/* The median of v[0..n) (sorts v). */
double median_of(double *v, size_t n);

#endif

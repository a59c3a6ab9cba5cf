/* tuner/timing/timer.c's timing loop on a fake CUDA driver (the cudrv table filled
 * with stand-ins): warm-up, flush before every repetition, interleaving,
 * batches until the stopping rule of tuner/timing/rep_rule.c is met, and the
 * repetitions reported. The fake GPU's times are scripted per launch. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/tuning_db.h"
#include "tuner/timing/timer.h"
#include "tuner/timing/refine.h"

#define MAX_EVENTS 4096

static int events[MAX_EVENTS];  /* CUevent handles point here */
static int nevents_made;
static int series_of[MAX_EVENTS]; /* the launch recorded after start event i */
static int pending_start = -1;
static int syncs, flushes, discards, warmups, timed[REP_MAX_SERIES];
static double spread[REP_MAX_SERIES] = { 0, 0.5 }; /* relative noise per series */
static double base_us[REP_MAX_SERIES]; /* 0: series j takes 10 (j + 1) us */
/* the GPU's clock: launches from the drift_from[i]-th timed one on take
 * drift[i] times as long (a later round on another clock) */
static int drift_from[2] = { 1 << 30, 1 << 30 };
static double drift[2] = { 1, 1 };
static int launch_no[MAX_EVENTS], ntimed;
static uint64_t rng = 1;
static char dummy_module, dummy_fn;

static int event_index(CUevent e)
{
	return (int)((int *)(void *)e - events);
}

static CUresult f_stream_create(CUstream *s, unsigned flags)
{
	*s = (CUstream)(void *)&dummy_module;
	return CUDA_SUCCESS;
}
static CUresult f_stream_destroy(CUstream s) { return CUDA_SUCCESS; }
static CUresult f_event_create(CUevent *e, unsigned flags)
{
	cr_assert_lt(nevents_made, MAX_EVENTS);
	*e = (CUevent)(void *)&events[nevents_made++];
	return CUDA_SUCCESS;
}
static CUresult f_event_destroy(CUevent e) { return CUDA_SUCCESS; }
static CUresult f_mem_alloc(CUdeviceptr *p, size_t bytes)
{
	*p = 0x1000;
	return CUDA_SUCCESS;
}
static CUresult f_mem_free(CUdeviceptr p) { return CUDA_SUCCESS; }
static size_t flush_bytes;
static CUresult f_memset32(CUdeviceptr p, unsigned v, size_t n, CUstream s)
{
	flushes++;
	flush_bytes = 4 * n;
	return CUDA_SUCCESS;
}
static CUresult f_module_load(CUmodule *m, const void *image)
{
	*m = (CUmodule)(void *)&dummy_module;
	return CUDA_SUCCESS;
}
static CUresult f_module_unload(CUmodule m) { return CUDA_SUCCESS; }
static CUresult f_get_function(CUfunction *f, CUmodule m, const char *name)
{
	*f = (CUfunction)(void *)&dummy_fn;
	return CUDA_SUCCESS;
}
static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			 unsigned by, unsigned bz, unsigned smem, CUstream s, void **args,
			 void **extra)
{
	discards++; /* the discard kernel after each flush */
	return CUDA_SUCCESS;
}
static CUresult f_event_record(CUevent e, CUstream s)
{
	int i = event_index(e);
	if (i % 2 == 0) /* start events are created first of each pair */
		pending_start = i;
	return CUDA_SUCCESS;
}
static CUresult f_sync(CUstream s)
{
	syncs++;
	return CUDA_SUCCESS;
}
static double uniform(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}
static CUresult f_elapsed(float *ms, CUevent start, CUevent stop)
{
	int j = series_of[event_index(start)];
	double us = (base_us[j] > 0 ? base_us[j] : 10.0 * (j + 1)) *
		    (1 + spread[j] * (2 * uniform() - 1));
	for (int i = 0; i < 2; i++)
		if (launch_no[event_index(start)] >= drift_from[i])
			us *= drift[i];
	*ms = (float)(us / 1e3);
	return CUDA_SUCCESS;
}

static void install_fake_driver(void)
{
	memset(&cudrv, 0, sizeof cudrv);
	cudrv.cuStreamCreate = f_stream_create;
	cudrv.cuStreamDestroy = f_stream_destroy;
	cudrv.cuEventCreate = f_event_create;
	cudrv.cuEventDestroy = f_event_destroy;
	cudrv.cuMemAlloc = f_mem_alloc;
	cudrv.cuMemFree = f_mem_free;
	cudrv.cuMemsetD32Async = f_memset32;
	cudrv.cuModuleLoadData = f_module_load;
	cudrv.cuModuleUnload = f_module_unload;
	cudrv.cuModuleGetFunction = f_get_function;
	cudrv.cuLaunchKernel = f_launch;
	cudrv.cuEventRecord = f_event_record;
	cudrv.cuStreamSynchronize = f_sync;
	cudrv.cuEventElapsedTime = f_elapsed;
}

/* The thing being timed: series j. Outside the events it is a warm-up. */
static int launch_series(void *arg, CUstream s, at_error *err)
{
	int j = (int)(intptr_t)arg;
	if (pending_start < 0) {
		warmups++;
	} else {
		series_of[pending_start] = j;
		launch_no[pending_start] = ntimed++;
		timed[j]++;
		pending_start = -1;
	}
	return 0;
}

static gpu_timer b;

static void open_bench(const char *timing_yaml)
{
	install_fake_driver();
	char yaml[512];
	snprintf(yaml, sizeof yaml, "%ssweeps:\n- {op: softmax, dtypes: [f32], M: 1, N: 1}\n",
		 timing_yaml);
	sweep_config cfg;
	at_error err = { { 0 } };
	cr_assert_eq(config_parse(yaml, strlen(yaml), "t.yaml", &cfg, &err), 0, "%s", err.msg);
	gpu_device gpu = { .cc = 90, .l2_bytes = 50 << 20, .info = { .sm_count = 132 } };
	cr_assert_eq(gpu_timer_open(&b, &gpu, &cfg, &err), 0, "%s", err.msg);
	config_free(&cfg);
	flushes = discards = syncs = 0;
}

static void close_bench(void)
{
	gpu_timer_close(&b);
}

TestSuite(timer, .fini = close_bench);

Test(timer, steady_times_take_the_fewest_repetitions_in_one_batch)
{
	open_bench("warmup: 3\nmin_repetitions: 10\nrepetitions: 50\ntolerance: 0.01\n"
		   "time_budget_ms: 0\n");
	timing t;
	at_error err = { { 0 } };
	cr_assert_eq(gpu_time(&b, launch_series, (void *)0, &t, &err), 0, "%s", err.msg);
	cr_assert_eq(t.reps, 10);
	cr_assert_eq(timed[0], 10);
	cr_assert_eq(warmups, 3);
	cr_assert_eq(syncs, 1);
	cr_assert_eq(flushes, 10, "one L2 flush before every repetition");
	cr_assert_eq(discards, 10, "its dirty lines dropped each time");
	cr_assert_float_eq(t.median_us, 10.0, 1e-3);
	cr_assert_eq(b.stops[REP_CONVERGED], 1);
}

Test(timer, noisy_times_take_batches_up_to_the_most)
{
	open_bench("warmup: 2\nmin_repetitions: 10\nrepetitions: 50\ntolerance: 0.01\n"
		   "time_budget_ms: 0\n");
	timing t;
	at_error err = { { 0 } };
	cr_assert_eq(gpu_time(&b, launch_series, (void *)1, &t, &err), 0, "%s", err.msg);
	cr_assert_eq(t.reps, 50, "+-50%% noise never narrows to 1%% in 50");
	cr_assert_eq(timed[1], 50);
	cr_assert_eq(warmups, 2, "warm-up only before the first batch");
	cr_assert_gt(syncs, 1, "timed in several batches");
	cr_assert_eq(b.stops[REP_MAX], 1);
	cr_assert_gt(t.interval, 0.01);
}

Test(timer, interleaved_launches_alternate_and_wait_for_each_other)
{
	open_bench("warmup: 1\nmin_repetitions: 10\nrepetitions: 30\ntolerance: 0.01\n"
		   "time_budget_ms: 0\n");
	timed_launch_fn launch[2] = { launch_series, launch_series };
	void *arg[2] = { (void *)0, (void *)1 };
	timing t[2];
	at_error err = { { 0 } };
	cr_assert_eq(gpu_time_interleaved(&b, launch, arg, 2, t, &err), 0, "%s", err.msg);
	cr_assert_eq(t[0].reps, 30, "the steady launch is timed as long as the noisy one");
	cr_assert_eq(t[1].reps, 30);
	cr_assert_eq(timed[0], 30);
	cr_assert_eq(timed[1], 30);
	/* one warm-up each, then an untimed launch of its own before each timed one */
	cr_assert_eq(warmups, 2 + 60);
	/* in turn: start events 0, 2, 4, ... alternate between the two */
	for (int e = 0; e < 20; e += 2)
		cr_assert_eq(series_of[e], (e / 2) % 2, "event %d", e);
	cr_assert_float_eq(t[0].median_us, 10.0, 1e-3);
	cr_assert(fabs(t[1].median_us - 20.0) < 5.0, "%f", t[1].median_us);
}

Test(timer, each_flush_mode_writes_discards_and_sizes_as_documented)
{
	/* the fake GPU's L2 is 50 MB: clean writes twice that, write do_bench's 256 */
	static const struct { const char *mode; int flushes, discards; size_t bytes; } cases[] = {
		{ "write", 4, 0, 256u << 20 }, { "none", 0, 0, 0 }, { "clean", 4, 4, 100u << 20 } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		setenv("AUTOTUNE_FLUSH", cases[i].mode, 1);
		open_bench("repetitions: 40\n");
		unsetenv("AUTOTUNE_FLUSH");
		timing t;
		at_error err = { { 0 } };
		cr_assert_eq(gpu_time_n(&b, launch_series, (void *)0, 0, 4, &t, &err), 0, "%s",
			     err.msg);
		cr_assert_eq(flushes, cases[i].flushes, "%s", cases[i].mode);
		if (flushes)
			cr_assert_eq(flush_bytes, cases[i].bytes, "%s: %zu bytes", cases[i].mode,
				     flush_bytes);
		cr_assert_eq(discards, cases[i].discards, "%s", cases[i].mode);
		gpu_timer_close(&b);
	}
}

Test(timer, an_unknown_flush_mode_is_refused)
{
	install_fake_driver();
	setenv("AUTOTUNE_FLUSH", "sometimes", 1);
	sweep_config cfg = { .warmup = 1, .repetitions = 10, .min_repetitions = 5 };
	gpu_device gpu = { .cc = 90 };
	at_error err = { { 0 } };
	cr_assert_eq(gpu_timer_open(&b, &gpu, &cfg, &err), -1);
	unsetenv("AUTOTUNE_FLUSH");
	cr_assert_str_eq(err.msg, "AUTOTUNE_FLUSH must be clean, write, read or none, got \"sometimes\"");
}

Test(timer, a_fixed_count_ignores_the_rule)
{
	open_bench("repetitions: 40\ntolerance: 0.01\n");
	timing t;
	at_error err = { { 0 } };
	cr_assert_eq(gpu_time_n(&b, launch_series, (void *)0, 1, 3, &t, &err), 0, "%s", err.msg);
	cr_assert_eq(t.reps, 3, "the quick round's 3, steady or not");
	cr_assert_eq(syncs, 1);
}

Test(timer, bad_timing_settings_are_refused)
{
	install_fake_driver();
	sweep_config cfg = { .warmup = 1, .repetitions = 10, .min_repetitions = 20,
			     .tolerance = 0.01 };
	gpu_device gpu = { .cc = 90 };
	at_error err = { { 0 } };
	cr_assert_eq(gpu_timer_open(&b, &gpu, &cfg, &err), -1);
	cr_assert_str_eq(err.msg, "the fewest repetitions must be 1..10, got 20");
}

/* ---- the rounds of tuner/timing/refine.c on the fake GPU --------------------------- */

static result_row rows[REP_MAX_SERIES];

static refine_candidate candidate(int series)
{
	return (refine_candidate){ &rows[series], launch_series, (void *)(intptr_t)series, 0 };
}

Test(timer, the_first_round_stops_early_only_when_its_median_is_known)
{
	open_bench("repetitions: 40\ntolerance: 0.01\n");
	refine_candidate c[2] = { candidate(0), candidate(1) };
	at_error err = { { 0 } };
	cr_assert_eq(refine_quick(&b, c, 2, 1e6, 3000, &err), 0, "%s", err.msg);
	cr_assert_eq(rows[0].reps, REFINE_QUICK_MIN_REPS, "a steady kernel: the fewest");
	cr_assert_eq(rows[1].reps, REFINE_QUICK_MAX_REPS, "+-50%% noise: the most");
	cr_assert_float_eq(rows[0].time_us, 10.0, 1e-3);
	cr_assert_float_eq(rows[0].gbps, 1e6 / (10.0 * 1e3), 1e-3);
}

Test(timer, the_noise_band_is_kept_between_its_bounds)
{
	open_bench("repetitions: 40\ntolerance: 0.01\n");
	at_error err = { { 0 } };
	double band = -1;
	size_t nfull = 0;
	refine_candidate steady[2] = { candidate(0), candidate(2) };
	cr_assert_eq(refine_finish(&b, steady, 2, 1e6, 3000, &band, &nfull, &err), 0, "%s", err.msg);
	cr_assert_float_eq(band, REFINE_BAND_MIN, 1e-12, "no noise: the floor");
	cr_assert_eq(nfull, 2, "fewer than REFINE_FULL_MIN: all in full");
	refine_candidate noisy[2] = { candidate(0), candidate(1) };
	cr_assert_eq(refine_finish(&b, noisy, 2, 1e6, 3000, &band, &nfull, &err), 0, "%s", err.msg);
	cr_assert_float_eq(band, REFINE_BAND_MAX, 1e-12,
			   "+-50%% noise: a tie-break still gives up at most 1%%");
	/* ranked fastest first, both timed interleaved */
	cr_assert_eq(noisy[0].row, &rows[0]);
	cr_assert_gt(rows[1].reps, REFINE_QUICK_MAX_REPS);
}

/* A later round on a slower clock (the H100's interleaved rounds measured
 * 5-12% above the first round): the variant the full round left out must
 * not win on its first-round time, nor those the finalists' round left out
 * on the full round's. Eight steady variants; the first round takes 6
 * repetitions each (48 launches), the full round 10 of the 7 it picks. */
Test(timer, rows_left_out_of_a_round_are_put_on_its_clock)
{
	open_bench("min_repetitions: 10\nrepetitions: 40\ntolerance: 0.01\ntime_budget_ms: 0\n");
	enum { N = 8 };
	static const double us[N] = { 10.0, 10.1, 10.2, 10.3, 10.4, 10.45, 10.48, 10.8 };
	refine_candidate c[N];
	for (int j = 0; j < N; j++) {
		base_us[j] = us[j];
		spread[j] = 0;
		rows[j] = (result_row){ .status = RESULT_OK };
		c[j] = candidate(j);
	}
	drift_from[0] = N * REFINE_QUICK_MIN_REPS;
	drift[0] = 1.10;
	drift_from[1] = drift_from[0] + 7 * 10;
	drift[1] = 1.05;
	at_error err = { { 0 } };
	double band;
	size_t nfull;
	cr_assert_eq(refine_quick(&b, c, N, 1e6, 3000, &err), 0, "%s", err.msg);
	cr_assert_eq(ntimed, drift_from[0], "the first round as the test assumes");
	cr_assert_eq(refine_finish(&b, c, N, 1e6, 3000, &band, &nfull, &err), 0, "%s", err.msg);
	cr_assert_eq(nfull, 7, "10.8 is more than 5%% behind");
	cr_assert_eq(timed[7], REFINE_QUICK_MIN_REPS, "left out of both later rounds");
	cr_assert_eq(timed[4], REFINE_QUICK_MIN_REPS + 10, "in the full round, not a finalist");
	cr_assert_float_eq(rows[0].time_us, 10.0 * 1.10 * 1.05, 1e-3, "a finalist: measured");
	cr_assert_float_eq(rows[4].time_us, 10.4 * 1.10 * 1.05, 1e-3, "rescaled once");
	cr_assert_float_eq(rows[7].time_us, 10.8 * 1.10 * 1.05, 1e-3, "rescaled twice");
	cr_assert_float_eq(rows[7].time_min_us, rows[7].time_us, 1e-3);
	cr_assert_float_eq(rows[7].gbps, 1e6 / (rows[7].time_us * 1e3), 1e-6);
	cr_assert_eq(tdb_pick_winner(rows, N, band), 0, "the fastest, not the one left out");
}

/* Baselines are timed beside the winner and stored on the winner's time
 * base: cuDNN measured a minute later, on another clock, is no comparison. */
Test(timer, baselines_are_timed_with_the_winner_on_its_clock)
{
	open_bench("min_repetitions: 10\nrepetitions: 40\ntolerance: 0.01\ntime_budget_ms: 0\n");
	at_error err = { { 0 } };
	rows[0] = (result_row){ .status = RESULT_OK, .time_us = 11.0 }; /* its rounds' median */
	refine_candidate winner = candidate(0);
	result_row cudnn = { .baseline = 1 }, copy = { .baseline = 1 };
	result_row *out[2] = { &cudnn, &copy };
	timed_launch_fn launch[2] = { launch_series, launch_series };
	void *arg[2] = { (void *)2, (void *)3 };
	cr_assert_eq(refine_beside(&b, &winner, launch, arg, 2, 1e6, 3000, out, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(timed[0], 10, "the winner timed alongside");
	cr_assert_eq(timed[2], 10);
	cr_assert_eq(timed[3], 10);
	static const int order[3] = { 0, 2, 3 };
	for (int e = 0; e < 18; e += 2)
		cr_assert_eq(series_of[e], order[(e / 2) % 3], "interleaved, event %d", e);
	cr_assert_float_eq(cudnn.time_us, 30.0 * 11.0 / 10.0, 1e-3, "30 us where the winner took 10");
	cr_assert_float_eq(copy.time_us, 40.0 * 11.0 / 10.0, 1e-3);
	cr_assert_float_eq(cudnn.gbps, 1e6 / (33.0 * 1e3), 1e-6);
	cr_assert_float_eq(rows[0].time_us, 11.0, 1e-12, "the winner's row is left alone");
	result_row alone = { .baseline = 1 };
	result_row *one[1] = { &alone };
	cr_assert_eq(refine_beside(&b, NULL, launch, arg, 1, 1e6, 3000, one, &err), 0, "%s",
		     err.msg);
	cr_assert_float_eq(alone.time_us, 30.0, 1e-3, "no winner: timed by itself");
	cr_assert_eq(timed[0], 10);
	cr_assert_eq(refine_beside(&b, &winner, launch, arg, REP_MAX_SERIES, 1e6, 3000, one, &err),
		     -1);
}

/* The full round's set: the REFINE_FULL_MIN fastest by first-round median,
 * then, up to REFINE_FULL_MAX, those whose fastest repetition came within
 * REFINE_FULL_WITHIN of the best median, in median order at the front. */
Test(timer, full_timing_goes_to_the_fastest_and_to_those_noise_may_hide)
{
	enum { N = 24 };
	result_row r[N];
	refine_candidate c[N];
	for (int i = 0; i < N; i++) {
		/* medians 10, 10.1, ...; minima 0.25 below, every third one's its median */
		r[i] = (result_row){ .time_us = 10.0 + 0.1 * i, .time_min_us = 9.75 + 0.1 * i };
		if (i % 3 == 2)
			r[i].time_min_us = r[i].time_us;
		c[i] = (refine_candidate){ &r[i], NULL, NULL, 0 };
	}
	/* a noisy straggler: median 20% off, fastest repetition 1% off */
	r[N - 1].time_us = 12.0;
	r[N - 1].time_min_us = 10.1;
	size_t full = refine_pick_full(c, N);
	cr_assert_leq(full, REFINE_FULL_MAX);
	/* 0-5 (the fastest), 6 and 7 (minima 10.35, 10.45), not 8 (10.8), the straggler */
	cr_assert_eq(full, 9);
	for (size_t i = 0; i < REFINE_FULL_MIN; i++)
		cr_assert_eq(c[i].row, &r[i], "the fastest %d come first, in order", REFINE_FULL_MIN);
	int straggler = 0;
	for (size_t i = 0; i < full; i++) {
		cr_assert(i < REFINE_FULL_MIN ||
				  c[i].row->time_min_us <= 10.0 * (1 + REFINE_FULL_WITHIN),
			  "picked although it never came within %.0f%%", 100 * REFINE_FULL_WITHIN);
		if (i > 0 && c[i].row != &r[N - 1])
			cr_assert_gt(c[i].row->time_us, c[i - 1].row->time_us, "median order");
		straggler += c[i].row == &r[N - 1];
	}
	cr_assert_eq(straggler, 1, "a noisy variant whose best repetition was close is timed");
	for (size_t i = full; i < N; i++)
		cr_assert(c[i].row->time_min_us > 10.0 * (1 + REFINE_FULL_WITHIN) ||
				  full == REFINE_FULL_MAX,
			  "left out although it came within %.0f%%", 100 * REFINE_FULL_WITHIN);
}

Test(timer, screening_keeps_what_came_within_the_ratio_of_the_fastest_check)
{
	enum { N = 6 };
	result_row r[N];
	refine_candidate c[N];
	/* check runs of a long kernel: 100 us the fastest */
	const double us[N] = { 180, 100, 150, 151, 400, 120 };
	for (int i = 0; i < N; i++) {
		r[i] = (result_row){ .status = RESULT_OK };
		c[i] = (refine_candidate){ &r[i], NULL, NULL, us[i] };
	}
	size_t kept = refine_screen(c, N, 1e6, 3000);
	cr_assert_eq(kept, 3, "100, 120 and 150 us (1.5 x 100 exactly) are timed");
	double seen = 0;
	for (size_t i = 0; i < kept; i++) {
		cr_assert_leq(c[i].check_us, REFINE_SCREEN_RATIO * 100);
		cr_assert_eq(c[i].row->reps, 0, "a kept variant is timed later, not now");
		seen += c[i].check_us;
	}
	cr_assert_float_eq(seen, 370, 1e-9);
	for (size_t i = kept; i < N; i++) {
		cr_assert_gt(c[i].check_us, REFINE_SCREEN_RATIO * 100);
		cr_assert_eq(c[i].row->reps, 1, "its check run is its timing");
		cr_assert_float_eq(c[i].row->time_us, c[i].check_us, 1e-9);
		cr_assert_float_eq(c[i].row->gbps, 1e6 / (c[i].check_us * 1e3), 1e-9);
	}
}

Test(timer, screening_leaves_short_kernels_and_untimed_checks_alone)
{
	enum { N = 3 };
	result_row r[N];
	refine_candidate c[N];
	/* below REFINE_SCREEN_MIN_US a first launch's fixed costs could decide */
	const double short_us[N] = { 10, 30, 35 };
	for (int i = 0; i < N; i++) {
		r[i] = (result_row){ .status = RESULT_OK };
		c[i] = (refine_candidate){ &r[i], NULL, NULL, short_us[i] };
	}
	cr_assert_eq(refine_screen(c, N, 1e6, 3000), N);
	/* one check run not timed: nothing to compare with */
	const double some_us[N] = { 100, 0, 400 };
	for (int i = 0; i < N; i++)
		c[i] = (refine_candidate){ &r[i], NULL, NULL, some_us[i] };
	cr_assert_eq(refine_screen(c, N, 1e6, 3000), N);
	for (int i = 0; i < N; i++)
		cr_assert_eq(r[i].reps, 0);
}

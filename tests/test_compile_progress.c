/* `sweep --compile-only` tells its progress (tuner/progress.h): on a
 * terminal (a pseudo-terminal here) a bar redrawn in place with the shapes
 * done, the kernels compiled of those to compile and the time left; in a
 * log one line per shape. The tiny template of tr_write_tiny_sweep keeps
 * the compiles short. */
#include <criterion/criterion.h>

#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda/nvrtc_compile.h"
#include "tuner/sweep/kernel_cache.h"
#include "tuner/sweep/progress.h"

#include "tests/test_run_fixture.h"

TestSuite(compile_progress, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

static double monotonic_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

Test(compile_progress, a_terminal_sees_shapes_kernels_and_the_time_left)
{
	tr_write_tiny_sweep();
	char templates[512], config[512], db[512];
	snprintf(templates, sizeof templates, "%s", tmp_path("templates"));
	snprintf(config, sizeof config, "%s", tmp_path("c.yaml"));
	snprintf(db, sizeof db, "%s", tmp_path("t.db"));
	char *const argv[] = { "build/autotune", "sweep", "--compile-only", "--threads", "2",
			       "--templates", templates, "-c", config, "--db", db, NULL };
	cr_assert_eq(access(argv[0], X_OK), 0, "build/autotune is missing");
	int master;
	fflush(NULL);
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	cr_assert_geq(pid, 0, "forkpty: %s", strerror(errno));
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	/* everything it writes to the terminal, until it closes */
	size_t len = 0, cap = 1 << 16;
	char *seen = malloc(cap);
	cr_assert_not_null(seen);
	for (;;) {
		if (len + 4096 > cap)
			seen = realloc(seen, cap *= 2);
		ssize_t n = read(master, seen + len, 4096);
		if (n <= 0)
			break; /* EIO once the child has gone */
		len += (size_t)n;
	}
	seen[len] = '\0';
	close(master);
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d:\n%s", ws, seen);
	cr_assert_not_null(strstr(seen, "\r\033[K["), "no bar redrawn in place:\n%s", seen);
	cr_assert_not_null(strstr(seen, "/13 kernels compiled, ETA "), "%s", seen);
	cr_assert_not_null(strstr(seen, "[10/10] softmax f32 M=64 N=640: 4 variants; 13/13 kernels "
					"compiled, ETA 0s"),
			   "%s", seen);
	cr_assert_not_null(strstr(seen, "compile-only for sm_90: 10 shapes, 40 variants, 13 distinct"),
			   "%s", seen);
	free(seen);
}

Test(compile_progress, a_log_gets_one_line_per_shape)
{
	tr_write_tiny_sweep();
	tr_result r = RUN("sweep", "--compile-only", "--templates", tmp_path("templates"), "-c",
			  tmp_path("c.yaml"), "--db", tmp_path("t.db"));
	tr_expect_status(&r, 0);
	cr_assert_null(strstr(r.err, "\033["), "terminal codes in a log:\n%s", r.err);
	tr_expect_in(r.err, "[1/10] softmax f32 M=64 N=64: 4 variants; ");
	tr_expect_in(r.err, "[10/10] softmax f32 M=64 N=640: 4 variants; 13/13 kernels compiled");
	tr_free(&r);
	/* again: nothing to compile */
	r = RUN("sweep", "--compile-only", "--templates", tmp_path("templates"), "-c",
		tmp_path("c.yaml"), "--db", tmp_path("t.db"));
	tr_expect_status(&r, 0);
	tr_expect_in(r.err, "[10/10] softmax f32 M=64 N=640: 4 variants; every kernel from the "
			    "compile cache\n");
	tr_free(&r);
}

/* The kernels left at the rate of kernels compiled so far, over the time
 * they have been compiling. */
Test(compile_progress, the_time_left_is_the_rate_so_far)
{
	char b[128];
	progress_kernels_text(0, 2, 100, 5, b, sizeof b);
	cr_assert_str_eq(b, "0/100 kernels compiled, ETA ?");
	progress_kernels_text(25, 2, 100, 30, b, sizeof b); /* 75 more at 1.2 s each */
	cr_assert_str_eq(b, "25/100 kernels compiled, ETA 1m30s");
	progress_kernels_text(100, 0, 100, 300, b, sizeof b);
	cr_assert_str_eq(b, "100/100 kernels compiled, ETA 0s");
	cr_assert_float_eq(progress_compile_eta_s(4000, 16, 10000, 900), 1350, 1e-9);
	cr_assert_float_eq(progress_compile_eta_s(10000, 0, 10000, 2400), 0, 1e-9);
	progress_duration(44.6, b, sizeof b);
	cr_assert_str_eq(b, "45s");
	progress_duration(3725, b, sizeof b);
	cr_assert_str_eq(b, "1h02m");
	progress_duration(-3, b, sizeof b);
	cr_assert_str_eq(b, "0s");
}

/* The first kernels done tell little while the other threads' first ones
 * are still compiling: 16 threads of 0.2 s kernels, 10774 to compile (the
 * default sweep's count), the first one done after 0.25 s once said
 * 0.25 s x 10773 = 45 minutes for a job of 2m15s. No ETA until a round of
 * the threads is done; then the rate is the threads'. */
Test(compile_progress, no_time_left_from_the_first_kernels_of_a_round)
{
	cr_assert_lt(progress_compile_eta_s(1, 15, 10774, 0.25), 0);
	cr_assert_lt(progress_compile_eta_s(15, 16, 10774, 0.25), 0);
	double eta = progress_compile_eta_s(16, 16, 10774, 0.25);
	cr_assert(eta > 150 && eta < 180, "%.0f s", eta); /* 10758 x 0.25 / 16 = 168 s */
	char b[128];
	progress_kernels_text(1, 15, 10774, 0.25, b, sizeof b);
	cr_assert_str_eq(b, "1/10774 kernels compiled, ETA ?");
}

/* The rate's clock starts when the first kernel starts compiling, not
 * when the cache (or the program) does: a sweep first loads its plan and
 * queues every shape's kernels, which took 3 s of the default sweep's
 * first ETA. */
Test(compile_progress, the_rate_is_timed_from_the_first_compile)
{
	cr_assert_eq(nvrtc_load(&(at_error){ { 0 } }), 0);
	kernel_cache c;
	kernel_cache_init(&c, 90, 2, NULL);
	compile_counts n;
	kernel_cache_counts(&c, &n);
	cr_assert_float_eq(n.compiling_s, 0, 1e-12);
	usleep(600000); /* as if loading and queueing */
	double start = monotonic_s();
	char *src = "extern \"C\" __global__ void softmax_kernel(float *y) { y[0] = 1; }\n";
	kernel_entry *e;
	cr_assert_eq(kernel_cache_get(&c, &src, 1, &e, &(at_error){ { 0 } }), 0);
	kernel_cache_counts(&c, &n);
	cr_assert_eq(n.compiled, 1);
	cr_assert_eq(n.running, 0);
	cr_assert_eq(n.pending, 0);
	cr_assert_gt(n.compiling_s, 0);
	cr_assert_leq(n.compiling_s, monotonic_s() - start, "the clock started before the compile");
	kernel_cache_free(&c);
}

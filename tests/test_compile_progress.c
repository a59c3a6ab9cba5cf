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
#include <unistd.h>

#include "tuner/sweep/progress.h"

#include "tests/test_run_fixture.h"

TestSuite(compile_progress, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

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

Test(compile_progress, the_time_left_is_the_rate_so_far)
{
	char b[128];
	progress_kernels_text(0, 100, 5, b, sizeof b);
	cr_assert_str_eq(b, "0/100 kernels compiled, ETA ?");
	progress_kernels_text(25, 100, 30, b, sizeof b); /* 75 more at 1.2 s each */
	cr_assert_str_eq(b, "25/100 kernels compiled, ETA 1m30s");
	progress_kernels_text(100, 100, 300, b, sizeof b);
	cr_assert_str_eq(b, "100/100 kernels compiled, ETA 0s");
	progress_duration(44.6, b, sizeof b);
	cr_assert_str_eq(b, "45s");
	progress_duration(3725, b, sizeof b);
	cr_assert_str_eq(b, "1h02m");
	progress_duration(-3, b, sizeof b);
	cr_assert_str_eq(b, "0s");
}

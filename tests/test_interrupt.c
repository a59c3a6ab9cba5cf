/* Ctrl-C during `sweep --compile-only` (tuner/sweep/interrupt.h): the
 * sweep says how far it got, keeps every kernel compiled so far in the
 * database's compile cache (those of the shape in progress too) and exits
 * 130; a second run starts from them. A template of sixty kernels slow
 * enough to compile (a fifth of a second each here) is interrupted once its
 * first shape is done; the GPU sweep's side is tests/test_supervisor.c's. */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/sql_probe.h"
#include "tests/tmp_folder.h"

TestSuite(interrupt, .init = tmp_setup, .fini = tmp_teardown, .timeout = 120);

/* Six shapes of ten kernels each, none shared. */
static void write_slow_sweep(void)
{
	char values[512] = "";
	for (int k = 1; k <= 60; k++)
		snprintf(values + strlen(values), sizeof values - strlen(values), "%s%d",
			 k > 1 ? ", " : "", k);
	char yaml[1024];
	snprintf(yaml, sizeof yaml,
		 "template: slow\nop: softmax\nsource: slow.cu\nsummary: test\ndtypes: [f32]\n"
		 "params:\n  - name: k\n    values: [%s]\n    default: 1\n    doc: test\n"
		 "constraints:\n  - expr: \"(k - 1) / 10 == N / 64 - 1\"\n    why: test\n"
		 "launch:\n  threads: \"32\"\n  rows_per_cta: \"1\"\n  smem_bytes: \"0\"\n"
		 "  persistent: \"0\"\n  max_n: \"0\"\n",
		 values);
	cr_assert_eq(mkdir(tmp_path("templates"), 0700), 0);
	tmp_write("templates/slow.yaml", yaml);
	tmp_write("templates/slow.cu",
		  "extern \"C\" __global__ void softmax_kernel(float *y)\n{\n"
		  "\tfloat a = y[threadIdx.x];\n#pragma unroll\n\tfor (int i = 0; i < 400; i++)\n"
		  "\t\ta = a * 1.0001f + K * __sinf(a + i);\n\ty[threadIdx.x] = a;\n}\n");
	tmp_write("c.yaml", "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: 64\n"
			    "    N: {from: 64, to: 384, step: 64}\n");
}

/* Runs the compile-only sweep with its stderr on a pipe; with interrupt,
 * sends SIGINT once the first shape's line is out. Returns the wait status;
 * *err gets everything it wrote there. */
static int run_sweep(int interrupt, char **err)
{
	const char *const argv[] = { "build/autotune", "sweep", "--compile-only", "--threads", "2",
				     "--templates", tmp_path("templates"), "-c", tmp_path("c.yaml"),
				     "--db", tmp_path("t.db"), NULL };
	cr_assert_eq(access(argv[0], X_OK), 0, "build/autotune is missing");
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (!freopen("/dev/null", "w", stdout))
			_exit(126);
		signal(SIGINT, SIG_DFL); /* whatever the test runner left: as at a terminal */
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap);
	int sent = 0;
	for (;;) {
		if (len + 4096 >= cap)
			text = realloc(text, cap *= 2);
		ssize_t n = read(fds[0], text + len, 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
		text[len] = '\0';
		if (interrupt && !sent && strstr(text, "[1/6] ")) {
			kill(pid, SIGINT);
			sent = 1;
		}
	}
	text[len] = '\0';
	close(fds[0]);
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	*err = text;
	return ws;
}

Test(interrupt, ctrl_c_keeps_the_kernels_compiled_and_exits_130)
{
	write_slow_sweep();
	char *err;
	int ws = run_sweep(1, &err);
	cr_assert(WIFEXITED(ws), "killed by signal %d, said:\n%s", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0,
		  err);
	cr_assert_eq(WEXITSTATUS(ws), 130, "exit %d:\n%s", WEXITSTATUS(ws), err);
	cr_assert_not_null(strstr(err, "autotune: interrupted: finishing the kernels being "
				       "compiled, to keep them (Ctrl-C again to stop at once)\n"),
			   "%s", err);
	const char *line = strstr(err, "autotune: interrupted: ");
	line = line ? strstr(line + 1, "autotune: interrupted: ") : NULL;
	cr_assert_not_null(line, "no closing line:\n%s", err);
	size_t done = 0, kept = 0;
	char db[512] = "";
	cr_assert_eq(sscanf(line, "autotune: interrupted: %zu of 6 shapes done; the %zu kernels "
				  "compiled so far are kept in %511[^']'s compile cache; run the "
				  "same command to resume\n",
			    &done, &kept, db),
		     3, "%s", line);
	cr_assert_str_eq(db, tmp_path("t.db"));
	/* interrupted after the first shape, well before the sixth */
	cr_assert_geq(done, 1);
	cr_assert_lt(done, 6, "not interrupted:\n%s", err);
	cr_assert_geq(kept, 10 * done);
	cr_assert_lt(kept, 60);
	cr_assert_null(strstr(err, "compile-only for sm_90"), "%s", err);
	/* what it said is what the compile cache holds */
	cr_assert_eq(sql_int(tmp_path("t.db"), "SELECT count(*) FROM compile_cache"), (long long)kept);
	free(err);
	/* the same command again: those kernels come from the cache */
	ws = run_sweep(0, &err);
	cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d:\n%s", ws, err);
	char want[64];
	snprintf(want, sizeof want, "[6/6] softmax f32 M=64 N=384: 10 variants; %zu/%zu kernels",
		 60 - kept, 60 - kept);
	cr_assert_not_null(strstr(err, want), "no \"%s\" in:\n%s", want, err);
	cr_assert_eq(sql_int(tmp_path("t.db"), "SELECT count(*) FROM compile_cache"), 60);
	free(err);
}

/* Helpers for tests that run build/autotune as a user does (no tests here;
 * see tests/test_run_fixture.h): a subprocess with chosen arguments and
 * environment, its exit status, stdout and stderr captured. The tests run
 * from the repository root, after `make test` built the binary. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_run_fixture.h"

#define AUTOTUNE "build/autotune"
#define EXEC_FAILED "tr_run: exec failed"

tr_result tr_run(const char *const *args, const char *const *env)
{
	return tr_run_as(args, env, NULL);
}

tr_result tr_run_as(const char *const *args, const char *const *env, void (*before_exec)(void))
{
	cr_assert_eq(access(AUTOTUNE, X_OK), 0, AUTOTUNE " is missing: run `make build/autotune`");
	char *argv[64];
	size_t argc = 0;
	argv[argc++] = (char *)AUTOTUNE;
	for (; *args; args++) {
		cr_assert_lt(argc, 63);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	tr_result r = { -1, NULL, NULL };
	const char *out_path = tmp_path("stdout"), *err_path = tmp_path("stderr");
	const char *env_db = tmp_path("env.db");
	/* another build may be relinking the binary: retry a failed exec a little */
	for (int attempt = 0; attempt < 10; attempt++) {
		fflush(NULL);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int in = open("/dev/null", O_RDONLY);
			if (o < 0 || e < 0 || in < 0)
				_exit(126);
			dup2(in, 0);
			dup2(o, 1);
			dup2(e, 2);
			setenv("AUTOTUNE_DB", env_db, 1);
			unsetenv("AUTOTUNE_TEMPLATES");
			for (; env && *env; env++) {
				const char *eq = strchr(*env, '=');
				if (!eq) {
					unsetenv(*env);
					continue;
				}
				char name[256];
				snprintf(name, sizeof name, "%.*s", (int)(eq - *env), *env);
				setenv(name, eq + 1, 1);
			}
			/* by a descriptor opened before before_exec, which may take
			 * away the rights to reach the binary by its path */
			int exe = open(AUTOTUNE, O_RDONLY | O_CLOEXEC);
			if (exe >= 0 && before_exec)
				before_exec();
			if (exe >= 0) {
				extern char **environ;
				fexecve(exe, argv, environ);
			}
			dprintf(2, EXEC_FAILED ": %s\n", strerror(errno));
			_exit(127);
		}
		int ws;
		cr_assert_eq(waitpid(pid, &ws, 0), pid);
		cr_assert(WIFEXITED(ws), "autotune %s died with signal %d", argc > 1 ? argv[1] : "",
			  WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
		r.status = WEXITSTATUS(ws);
		r.out = tmp_read(out_path);
		r.err = tmp_read(err_path);
		if (!(r.status == 127 && strstr(r.err, EXEC_FAILED)))
			break;
		tr_free(&r);
		sleep(1);
	}
	cr_assert_not_null(r.out, "could not run " AUTOTUNE);
	return r;
}

void tr_free(tr_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

void tr_expect_status(const tr_result *r, int status)
{
	cr_assert_eq(r->status, status, "exit status %d, want %d\n--- stdout:\n%s--- stderr:\n%s",
		     r->status, status, r->out, r->err);
}

void tr_expect_in(const char *text, const char *want)
{
	cr_assert_not_null(strstr(text, want), "\"%s\" not in:\n%s", want, text);
}

void tr_expect_usage_errors(const char *command, const char *const cases[][3], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tr_result r = cases[i][1] ? RUN(command, cases[i][0], cases[i][1])
					  : RUN(command, cases[i][0]);
		tr_expect_status(&r, 2);
		tr_expect_in(r.err, cases[i][2]);
		cr_assert_str_eq(r.out, "", "%s %s: stdout", command, cases[i][0]);
		tr_free(&r);
	}
}

void tr_write_tiny_sweep(void)
{
	cr_assert_eq(mkdir(tmp_path("templates"), 0700), 0);
	tmp_write("templates/tiny.yaml",
		  "template: tiny\nop: softmax\nsource: tiny.cu\nsummary: test\n"
		  "dtypes: [f32]\nparams:\n  - name: k\n"
		  "    values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]\n"
		  "    default: 1\n    doc: test\nconstraints:\n"
		  "  - expr: \"k * 64 >= N && (k - 4) * 64 < N\"\n    why: test\n"
		  "launch:\n  threads: \"32\"\n  rows_per_cta: \"1\"\n  smem_bytes: \"0\"\n"
		  "  persistent: \"0\"\n  max_n: \"k * 64\"\n");
	tmp_write("templates/tiny.cu",
		  "extern \"C\" __global__ void softmax_kernel(float *y) { y[0] = K; }\n");
	tmp_write("c.yaml", "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: 64\n"
			    "    N: {from: 64, to: 640, step: 64}\n");
}

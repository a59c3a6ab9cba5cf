/* Helpers for tests that run build/autotune as a user does (no tests here):
 * a temporary folder per test and a subprocess with chosen arguments and
 * environment, its exit status, stdout and stderr captured. The tests run
 * from the repository root, after `make test` built the binary. Each user
 * file repeats the prototypes below. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- prototypes, repeated in each file that uses them ---- */
typedef struct tr_result {
	int status; /* exit status */
	char *out, *err;
} tr_result;
void tr_setup(void);
void tr_teardown(void);
const char *tr_path(const char *name);
char *tr_read(const char *path);
void tr_write(const char *name, const char *text);
tr_result tr_run(const char *const *args, const char *const *env);
void tr_free(tr_result *r);
/* ---- */

#define AUTOTUNE "build/autotune"
#define EXEC_FAILED "tr_run: exec failed"

static char dir[256];

void tr_setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_run.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

void tr_teardown(void)
{
	if (dir[0])
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name; a few results stay valid at once. */
const char *tr_path(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
	return b;
}

char *tr_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot read %s", path);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

void tr_write(const char *name, const char *text)
{
	FILE *f = fopen(tr_path(name), "w");
	cr_assert_not_null(f, "cannot write %s", tr_path(name));
	fputs(text, f);
	fclose(f);
}

/* Runs build/autotune ARGS... (NULL-terminated); env holds "NAME=value"
 * to set and "NAME" to unset (NULL-terminated, or NULL). $AUTOTUNE_DB points
 * into the folder unless env sets it. */
tr_result tr_run(const char *const *args, const char *const *env)
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
	/* another build may be relinking the binary: retry a failed exec a little */
	for (int attempt = 0; attempt < 10; attempt++) {
		const char *out_path = tr_path("stdout"), *err_path = tr_path("stderr");
		const char *env_db = tr_path("env.db");
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
			execv(AUTOTUNE, argv);
			dprintf(2, EXEC_FAILED ": %s\n", strerror(errno));
			_exit(127);
		}
		int ws;
		cr_assert_eq(waitpid(pid, &ws, 0), pid);
		cr_assert(WIFEXITED(ws), "autotune %s died with signal %d", argc > 1 ? argv[1] : "",
			  WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
		r.status = WEXITSTATUS(ws);
		r.out = tr_read(out_path);
		r.err = tr_read(err_path);
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

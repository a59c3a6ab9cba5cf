/* The selftest under compute-sanitizer: see selftest_sanitize.h. */
#include "tuner/selftest/selftest_sanitize.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"

#define LOG_PREFIX "========= "
#define MAX_ERROR_LINES 12
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static int executable(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

const char *sanitizer_find(char *buf, size_t cap)
{
	const char *env = getenv("AUTOTUNE_SANITIZER");
	if (env && *env) {
		snprintf(buf, cap, "%s", env);
		return executable(buf) ? buf : NULL;
	}
	const char *path = getenv("PATH");
	if (path) {
		char *copy = xstrdup(path), *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			snprintf(buf, cap, "%s/compute-sanitizer", dir);
			if (executable(buf)) {
				free(copy);
				return buf;
			}
		}
		free(copy);
	}
	const char *cuda = getenv("CUDA_HOME");
	if (cuda && *cuda) {
		snprintf(buf, cap, "%s/bin/compute-sanitizer", cuda);
		if (executable(buf))
			return buf;
	}
	snprintf(buf, cap, "/usr/local/cuda/bin/compute-sanitizer");
	return executable(buf) ? buf : NULL;
}

/* ---- judging a run ---- */

/* The line of text holding needle, copied into buf (without its newline). */
static const char *line_with(const char *text, const char *needle, char *buf, size_t cap)
{
	const char *at = text ? strstr(text, needle) : NULL;
	if (!at)
		return NULL;
	const char *start = at;
	while (start > text && start[-1] != '\n')
		start--;
	size_t len = strcspn(start, "\n");
	snprintf(buf, cap, "%.*s", (int)len, start);
	return buf;
}

/* The last n lines of text, appended to s with an indent. */
static void tail_lines(strbuf *s, const char *text, int n)
{
	if (!text || !*text)
		return;
	const char *end = text + strlen(text);
	while (end > text && end[-1] == '\n')
		end--;
	const char *p = end;
	for (int k = 0; k < n && p > text; k++) {
		p--;
		while (p > text && p[-1] != '\n')
			p--;
	}
	strbuf_printf(s, "%.*s\n", (int)(end - p), p);
}

/* The sanitizer's own lines that are not banner, blank or summary: its
 * report of the errors. */
static void error_lines(strbuf *s, const char *log)
{
	int shown = 0;
	for (const char *p = log; p && *p && shown < MAX_ERROR_LINES;) {
		size_t len = strcspn(p, "\n");
		int ours = strncmp(p, LOG_PREFIX, strlen(LOG_PREFIX)) == 0;
		const char *body = p + strlen(LOG_PREFIX);
		if (ours && len > strlen(LOG_PREFIX) && strncmp(body, "COMPUTE-SANITIZER", 17) != 0 &&
		    strncmp(body, "ERROR SUMMARY", 13) != 0 && strncmp(body, "RACECHECK SUMMARY", 17) != 0) {
			strbuf_printf(s, "%.*s\n", (int)len, p);
			shown++;
		}
		p += len + (p[len] == '\n');
	}
}

/* "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)" */
static int parse_racecheck(const char *line, int *hazards, int *errors, int *warnings)
{
	const char *p = line ? strstr(line, "RACECHECK SUMMARY:") : NULL;
	if (!p)
		return 0;
	char *end;
	*hazards = (int)strtol(p + strlen("RACECHECK SUMMARY:"), &end, 10);
	const char *open = strchr(end, '('), *comma = open ? strchr(open, ',') : NULL;
	if (end == p + strlen("RACECHECK SUMMARY:") || !open || !comma)
		return 0;
	*errors = (int)strtol(open + 1, NULL, 10);
	*warnings = (int)strtol(comma + 1, NULL, 10);
	return 1;
}

sanitizer_verdict sanitizer_judge(const char *tool, const char *log, int exit_status,
				  const char *child_out, const char *child_err)
{
	sanitizer_verdict v = { 0, "", "" };
	strbuf details = { 0 };
	char line[512];
	int errors = -1, hazards = 0, hazard_errors = 0, warnings = 0;
	if (strcmp(tool, "racecheck") == 0 &&
	    parse_racecheck(line_with(log, "RACECHECK SUMMARY:", line, sizeof line), &hazards,
			    &hazard_errors, &warnings)) {
		errors = hazards + hazard_errors + warnings;
		snprintf(v.summary, sizeof v.summary, "%d hazard%s (%d error%s, %d warning%s)", hazards,
			 hazards == 1 ? "" : "s", hazard_errors, hazard_errors == 1 ? "" : "s", warnings,
			 warnings == 1 ? "" : "s");
	} else if (line_with(log, "ERROR SUMMARY:", line, sizeof line) &&
		   sscanf(strstr(line, "ERROR SUMMARY:"), "ERROR SUMMARY: %d", &errors) == 1) {
		snprintf(v.summary, sizeof v.summary, "%d error%s", errors, errors == 1 ? "" : "s");
	}
	if (errors < 0) {
		snprintf(v.summary, sizeof v.summary, "no summary from compute-sanitizer (exit %d)",
			 exit_status);
		tail_lines(&details, log, 6);
		tail_lines(&details, child_err, 6);
	} else if (errors > 0 || exit_status == SANITIZER_ERROR_EXITCODE) {
		error_lines(&details, log);
	} else if (exit_status != 0) {
		snprintf(v.summary + strlen(v.summary), sizeof v.summary - strlen(v.summary),
			 ", but the selftest failed under it (exit %d)", exit_status);
		if (line_with(child_out, "selftest: ", line, sizeof line))
			strbuf_printf(&details, "%s\n", line);
		tail_lines(&details, child_err, 4);
	} else {
		v.clean = 1;
	}
	char *text = strbuf_take(&details);
	snprintf(v.details, sizeof v.details, "%s", text);
	free(text);
	return v;
}

/* ---- running the children ---- */

static char *read_all(const char *path)
{
	char *text = strbuf_read_file(path);
	return text ? text : xstrdup("");
}

typedef struct child_args {
	const char *argv[48];
	int argc;
	char device[16], threads[16], dtypes[32];
} child_args;

static void push(child_args *a, const char *arg)
{
	if (a->argc < (int)(sizeof a->argv / sizeof a->argv[0]) - 1)
		a->argv[a->argc++] = arg;
	a->argv[a->argc] = NULL;
}

/* sanitizer --tool T ... <this program> selftest --small <the options> */
static void build_args(child_args *a, const sanitize_options *o, const char *sanitizer,
		       const char *tool, const char *log, const char *self, const char *db)
{
	memset(a, 0, sizeof *a);
	push(a, sanitizer);
	push(a, "--tool");
	push(a, tool);
	push(a, "--error-exitcode");
	push(a, STRINGIFY(SANITIZER_ERROR_EXITCODE));
	push(a, "--log-file");
	push(a, log);
	push(a, "--print-limit");
	push(a, "20");
	/* the program checks its own CUDA calls; only the kernels are on trial */
	push(a, "--report-api-errors");
	push(a, "no");
	push(a, self);
	push(a, "selftest");
	push(a, "--small");
	push(a, "-c");
	push(a, o->st->config_path);
	if (o->st->templates_dir) {
		push(a, "--templates");
		push(a, o->st->templates_dir);
	}
	if (o->st->dtype_mask) {
		a->dtypes[0] = '\0';
		for (int d = 0; d < AT_DTYPE_COUNT; d++)
			if ((o->st->dtype_mask >> d) & 1)
				snprintf(a->dtypes + strlen(a->dtypes), sizeof a->dtypes - strlen(a->dtypes),
					 "%s%s", a->dtypes[0] ? "," : "", at_dtype_name((at_dtype)d));
		push(a, "--dtype");
		push(a, a->dtypes);
	}
	snprintf(a->device, sizeof a->device, "%d", o->device);
	push(a, "--device");
	push(a, a->device);
	push(a, "--db");
	push(a, db);
	if (o->threads > 0) {
		snprintf(a->threads, sizeof a->threads, "%d", o->threads);
		push(a, "--threads");
		push(a, a->threads);
	}
}

/* Runs argv with stdout and stderr to files; returns its exit status (128 +
 * signal when killed), or -1 when it could not start. */
static int run_child(const char *const *argv, const char *out_path, const char *err_path)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(127);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], (char *const *)argv);
		dprintf(2, "autotune: cannot run %s\n", argv[0]);
		_exit(127);
	}
	int ws;
	if (waitpid(pid, &ws, 0) != pid)
		return -1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

/* Runs one tool; returns 1 clean, 0 not clean, -1 when the child did not
 * get as far as running the selftest (no point trying the next tool). */
static int run_tool(const sanitize_options *o, const char *sanitizer, const char *self,
		    const char *dir, const char *db, const char *tool)
{
	char log[PATH_MAX], out[PATH_MAX], errp[PATH_MAX];
	snprintf(log, sizeof log, "%s/%s.log", dir, tool);
	snprintf(out, sizeof out, "%s/%s.out", dir, tool);
	snprintf(errp, sizeof errp, "%s/%s.err", dir, tool);
	child_args a;
	build_args(&a, o, sanitizer, tool, log, self, db);
	fprintf(stderr, "selftest --sanitize: running %s (the small shapes under compute-sanitizer; "
			"output in %s) ...\n", tool, out);
	double start = now_s();
	int status = run_child(a.argv, out, errp);
	double took = now_s() - start;
	char *log_text = read_all(log), *out_text = read_all(out), *err_text = read_all(errp);
	sanitizer_verdict v = sanitizer_judge(tool, log_text, status, out_text, err_text);
	char launches[160] = "";
	const char *l = strstr(out_text, " launches; ");
	if (l) {
		const char *b = l;
		while (b > out_text && b[-1] != '\n')
			b--;
		snprintf(launches, sizeof launches, "%.*s launches, ", (int)(l - b), b);
	}
	printf("%-9s %s: %s (%s%.1f s)\n", tool, v.clean ? "clean" : "NOT CLEAN", v.summary,
	       launches, took);
	if (!v.clean) {
		for (const char *p = v.details; *p;) {
			size_t len = strcspn(p, "\n");
			printf("    %.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
		printf("    log: %s; the selftest's output: %s\n", log, out);
	}
	int ran = strstr(out_text, "selftest: ") != NULL;
	free(log_text);
	free(out_text);
	free(err_text);
	return v.clean ? 1 : ran ? 0 : -1;
}

int selftest_sanitize(const sanitize_options *o)
{
	char sanitizer[PATH_MAX];
	if (!sanitizer_find(sanitizer, sizeof sanitizer)) {
		fprintf(stderr, "autotune: compute-sanitizer not found ($AUTOTUNE_SANITIZER, PATH, "
				"$CUDA_HOME/bin, /usr/local/cuda/bin): it comes with the CUDA toolkit\n");
		return 1;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0) {
		fprintf(stderr, "autotune: cannot find this program's path (/proc/self/exe)\n");
		return 1;
	}
	self[n] = '\0';
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX - 64];
	snprintf(dir, sizeof dir, "%s/autotune-sanitize-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "autotune: cannot create a folder for the sanitizer's logs in %s\n",
			tmp && *tmp ? tmp : "/tmp");
		return 1;
	}
	char db[PATH_MAX];
	snprintf(db, sizeof db, "%s/compile-cache.db", dir);
	static const char *const tools[] = { "memcheck", "racecheck" };
	printf("compute-sanitizer: %s\n", sanitizer);
	int clean = 0, ntools = (int)(sizeof tools / sizeof tools[0]);
	for (int t = 0; t < ntools; t++) {
		int rc = run_tool(o, sanitizer, self, dir, o->db_path ? o->db_path : db, tools[t]);
		clean += rc == 1;
		if (rc < 0) {
			printf("the selftest did not run under %s: not trying the other tool\n", tools[t]);
			break;
		}
	}
	int ok = clean == ntools;
	printf("selftest --sanitize: %s (%d of %d tools clean)\n", ok ? "CLEAN" : "NOT CLEAN", clean,
	       ntools);
	if (ok)
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return ok ? 0 : 1;
}

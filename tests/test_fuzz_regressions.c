/* Replays what the fuzzers (fuzz/) found: every file under
 * tests/fuzz_corpus/TARGET/ goes through the same calls as fuzz/TARGET.c,
 * and each must end in a clean result or a clean error (a message, a
 * zeroed output), never a crash, a leak or undefined behaviour (the
 * sanitizer build, fuzz/sanitize.sh, checks the last two). Inputs too big
 * to keep as files are built here. Run from the repository root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/expr.h"
#include "gen/manifest.h"
#include "include/autotune/dispatch.h"
#include "tuner/config.h"

#include "tests/tmp_folder.h"

#define CORPUS "tests/fuzz_corpus"

/* ---- reading the corpus ------------------------------------------------- */

typedef struct input {
	char name[512];
	char *data; /* NUL-terminated copy */
	size_t size;
} input;

static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	cr_assert_not_null(buf);
	for (;;) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (n < cap - 1)
			break;
		cap *= 2;
		buf = realloc(buf, cap);
		cr_assert_not_null(buf);
	}
	cr_assert(!ferror(f), "cannot read %s", path);
	fclose(f);
	buf[n] = '\0';
	*size = n;
	return buf;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const input *)a)->name, ((const input *)b)->name);
}

/* Every file of tests/fuzz_corpus/target but README*, sorted by name. */
static input *load_corpus(const char *target, size_t *n)
{
	cr_assert_eq(access(CORPUS, R_OK), 0,
		     "%s is missing: run the tests from the repository root", CORPUS);
	char dir[256];
	snprintf(dir, sizeof dir, "%s/%s", CORPUS, target);
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	input *in = NULL;
	size_t cap = 0;
	const struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			in = realloc(in, cap * sizeof *in);
			cr_assert_not_null(in);
		}
		input *i = &in[*n];
		snprintf(i->name, sizeof i->name, "%s/%s", dir, e->d_name);
		struct stat sb;
		if (stat(i->name, &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;
		i->data = slurp(i->name, &i->size);
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(in, *n, sizeof *in, cmp_name);
	return in;
}

static void free_corpus(input *in, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(in[i].data);
	free(in);
}

/* ---- a temporary folder per test: tests/tmp_folder.h ----------------------- */

static void write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	cr_assert_not_null(f, "cannot create %s", path);
	cr_assert_eq(fwrite(data, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
}

/* ---- config (fuzz/fuzz_config.c) ---------------------------------------- */

static void replay_config(const char *name, const char *text, size_t len)
{
	sweep_config cfg;
	at_error err = { { 0 } };
	if (config_parse(text, len, "fuzz.yaml", &cfg, &err) != 0) {
		static const sweep_config zero;
		cr_expect(memcmp(&cfg, &zero, sizeof cfg) == 0, "%s: a failed parse left data",
			  name);
		cr_expect(strncmp(err.msg, "fuzz.yaml:", 10) == 0,
			  "%s: error without file:line:column: \"%s\"", name, err.msg);
		return;
	}
	sweep_shape *shapes;
	size_t n;
	if (config_shapes(&cfg, &shapes, &n, &err) == 0)
		free(shapes);
	config_free(&cfg);
}

Test(fuzz_regressions, config_corpus, .timeout = 120)
{
	size_t n;
	input *in = load_corpus("fuzz_config", &n);
	for (size_t i = 0; i < n; i++)
		replay_config(in[i].name, in[i].data, in[i].size);
	free_corpus(in, n);
}

/* ---- manifest (fuzz/fuzz_manifest.c) ------------------------------------ */

static void replay_manifest(const char *name, const char *data, size_t size)
{
	const char *path = tmp_path("fuzz.yaml");
	write_file(path, data, size);
	tmpl_manifest m;
	at_error err = { { 0 } };
	if (manifest_load(path, &m, &err) != 0) {
		static const tmpl_manifest zero;
		cr_expect(memcmp(&m, &zero, sizeof m) == 0, "%s: a failed load left data", name);
		cr_expect(strncmp(err.msg, path, strlen(path)) == 0,
			  "%s: error without the file's name: \"%s\"", name, err.msg);
		return;
	}
	long long *values = calloc(m.nparams, sizeof *values);
	cr_assert_not_null(values);
	for (size_t i = 0; i < m.nparams; i++)
		values[i] = m.params[i].def;
	tr_env env = { 4096, 1000, 4, 132, 90, 1024, 232448, 65536 };
	long long out;
	manifest_check(&m, values, &env, &err);
	manifest_check(&m, values, NULL, &err);
	manifest_eval(&m, m.launch.threads, values, &env, &out, &err);
	manifest_eval(&m, m.launch.max_n, values, &env, &out, &err);
	free(values);
	manifest_free(&m);
}

Test(fuzz_regressions, manifest_corpus, .init = tmp_setup, .fini = tmp_teardown,
     .timeout = 120)
{
	write_file(tmp_path("fuzz.cu"), "// dummy\n", 9);
	size_t n;
	input *in = load_corpus("fuzz_manifest", &n);
	for (size_t i = 0; i < n; i++)
		replay_manifest(in[i].name, in[i].data, in[i].size);
	free_corpus(in, n);
}

/* ---- expressions (fuzz/fuzz_expr.c) ------------------------------------- */

static const expr_var vars[] = {
	{ "threads", 256 }, { "vec", 4 },   { "N", 1000 },	   { "M", 4096 },
	{ "zero", 0 },	    { "neg", -1 },  { "big", LLONG_MAX }, { "small", LLONG_MIN },
};
#define NVARS (sizeof vars / sizeof vars[0])

static void expect_clean(const char *name, int rc, const at_error *err)
{
	cr_expect(rc == EXPR_OK || rc == EXPR_ERROR || rc == EXPR_UNKNOWN, "%s: returned %d",
		  name, rc);
	if (rc != EXPR_OK)
		cr_expect(strncmp(err->msg, "in \"", 4) == 0, "%s: message \"%s\"", name,
			  err->msg);
}

static void replay_expr(const char *name, const char *src)
{
	const char *names[NVARS];
	for (size_t i = 0; i < NVARS; i++)
		names[i] = vars[i].name;
	at_error err = { { 0 } };
	long long v;
	expect_clean(name, expr_eval(src, vars, NVARS, &v, &err), &err);
	expect_clean(name, expr_validate(src, names, NVARS, &err), &err);
	expect_clean(name, expr_validate(src, NULL, 0, &err), &err);
}

Test(fuzz_regressions, expr_corpus, .timeout = 120)
{
	size_t n;
	input *in = load_corpus("fuzz_expr", &n);
	for (size_t i = 0; i < n; i++)
		replay_expr(in[i].name, in[i].data);
	free_corpus(in, n);
}

/* "1?1:1?1:...1" and "1?1?...1:1:..." recursed once per ?: with no depth
 * limit (only parentheses and unary operators counted), so a long enough
 * chain overflowed the stack. Too big to keep as a file. */
static char *repeat(const char *head, const char *unit, size_t times, const char *mid,
		    const char *tail_unit)
{
	size_t len = strlen(head) + times * (strlen(unit) + strlen(tail_unit)) + strlen(mid) + 1;
	char *s = malloc(len);
	cr_assert_not_null(s);
	char *p = stpcpy(s, head);
	for (size_t i = 0; i < times; i++)
		p = stpcpy(p, unit);
	p = stpcpy(p, mid);
	for (size_t i = 0; i < times; i++)
		p = stpcpy(p, tail_unit);
	return s;
}

Test(fuzz_regressions, deep_conditional_chains_fail_cleanly, .timeout = 60)
{
	const char *names[] = { "x" };
	char *chains[] = {
		repeat("", "1?1:", 1000000, "1", ""),
		repeat("", "1?", 1000000, "1", ":1"),
		repeat("", "(1?", 1000000, "1", ":1)"),
	};
	for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++) {
		at_error err = { { 0 } };
		long long v;
		/* (the message quotes the whole expression, cut to its size) */
		cr_expect_eq(expr_eval(chains[i], NULL, 0, &v, &err), EXPR_ERROR);
		cr_expect(strncmp(err.msg, "in \"", 4) == 0, "%.200s", err.msg);
		cr_expect_eq(expr_validate(chains[i], names, 1, &err), EXPR_ERROR);
		cr_expect(strncmp(err.msg, "in \"", 4) == 0, "%.200s", err.msg);
		free(chains[i]);
	}
	/* Short enough for the message to say why: the operand inside the 200th
	 * ?: is one level too deep. */
	char *deep = repeat("", "1?1:", 300, "1", "");
	at_error err = { { 0 } };
	long long v = 0;
	cr_expect_eq(expr_eval(deep, NULL, 0, &v, &err), EXPR_ERROR);
	cr_expect(strstr(err.msg, "\": expression nested too deeply at column 799") != NULL,
		  "%s", err.msg);
	free(deep);
	/* Chains of ordinary length still evaluate. */
	char *ok = repeat("", "0?1:", 150, "7", "");
	cr_expect_eq(expr_eval(ok, NULL, 0, &v, &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(v, 7);
	free(ok);
	ok = repeat("", "1?", 150, "5", ":0");
	cr_expect_eq(expr_eval(ok, NULL, 0, &v, &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(v, 5);
	free(ok);
}

/* The same through a manifest: a launch expression is validated at load. */
Test(fuzz_regressions, manifest_with_a_deep_conditional_fails_cleanly, .init = tmp_setup,
     .fini = tmp_teardown, .timeout = 60)
{
	write_file(tmp_path("fuzz.cu"), "// dummy\n", 9);
	char *chain = repeat("", "1?1:", 300000, "1", "");
	size_t len = strlen(chain) + 1024;
	char *yaml = malloc(len);
	cr_assert_not_null(yaml);
	snprintf(yaml, len,
		 "template: fuzz\nop: softmax\nsource: fuzz.cu\ndtypes: [f32]\n"
		 "params:\n  - {name: threads, values: [32], default: 32}\n"
		 "launch:\n  threads: \"%s\"\n  rows_per_cta: \"1\"\n  smem_bytes: \"0\"\n"
		 "  persistent: \"0\"\n  max_n: \"0\"\n",
		 chain);
	free(chain);
	const char *path = tmp_path("fuzz.yaml");
	write_file(path, yaml, strlen(yaml));
	free(yaml);
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_expect_eq(manifest_load(path, &m, &err), -1);
	cr_expect(strncmp(err.msg, path, strlen(path)) == 0, "%.300s", err.msg);
	cr_expect(strstr(err.msg, "launch.threads") != NULL, "%.300s", err.msg);
}

/* ---- the dispatch library's reader (fuzz/fuzz_dispatch_db.c) ------------ */

static void replay_db(const char *name, const char *data, size_t size)
{
	const char *path = tmp_path("input.db");
	write_file(path, data, size);
	atd_handle *h = NULL;
	atd_status s = atd_open(path, 0, &h);
	if (s != ATD_OK) {
		cr_expect_null(h, "%s", name);
		cr_expect(s == ATD_ERR_DB_CORRUPT || s == ATD_ERR_DB_NEWER ||
				  s == ATD_ERR_DB_MISSING,
			  "%s: status %s", name, atd_status_string(s));
		cr_expect(atd_errmsg(NULL)[0] != '\0', "%s: no message", name);
		cr_assert_eq(atd_open(path, ATD_OPEN_FALLBACK, &h), ATD_OK, "%s", name);
	}
	cr_assert_not_null(h, "%s", name);
	static const atd_gpu gpus[] = {
		{ "NVIDIA H100 80GB HBM3", 9, 0, 132, 85045395456LL },
		{ "NVIDIA A100-SXM4-40GB", 8, 0, 108, 42505273344LL },
	};
	static const int64_t shapes[][2] = { { 1, 1 }, { 4096, 1000 }, { 4096, 1024 },
					     { 4096, 4096 }, { INT64_MAX, INT64_MAX } };
	for (size_t g = 0; g < 2; g++)
		for (int dt = 0; dt < 3; dt++)
			for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
				atd_choice c;
				cr_expect_eq(atd_query_gpu(h, &gpus[g], (atd_dtype)dt, shapes[k][0],
							   shapes[k][1], &c),
					     ATD_OK, "%s: %s", name, atd_errmsg(h));
			}
	atd_close(h);
	char side[600];
	static const char *const ext[] = { "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(side, sizeof side, "%s%s", path, ext[i]);
		unlink(side);
	}
}

Test(fuzz_regressions, dispatch_db_corpus, .init = tmp_setup, .fini = tmp_teardown,
     .timeout = 120)
{
	size_t n;
	input *in = load_corpus("fuzz_dispatch_db", &n);
	for (size_t i = 0; i < n; i++)
		replay_db(in[i].name, in[i].data, in[i].size);
	free_corpus(in, n);
}

/* A damaged sqlite_schema record makes SQLite answer SQLITE_NOMEM with no
 * allocation failing; atd_open took that for a shortage of host memory, so
 * that even ATD_OPEN_FALLBACK gave no handle. It is a corrupt database. */
Test(fuzz_regressions, damaged_schema_is_corrupt_not_out_of_memory, .init = tmp_setup,
     .fini = tmp_teardown)
{
	size_t size;
	char *data = slurp(CORPUS "/fuzz_dispatch_db/schema-record-reads-as-out-of-memory", &size);
	const char *path = tmp_path("damaged.db");
	write_file(path, data, size);
	free(data);
	atd_handle *h = NULL;
	cr_expect_eq(atd_open(path, 0, &h), ATD_ERR_DB_CORRUPT, "%s", atd_errmsg(NULL));
	cr_expect_null(h);
	cr_assert_eq(atd_open(path, ATD_OPEN_FALLBACK | ATD_OPEN_NO_JIT, &h), ATD_OK, "%s",
		     atd_errmsg(NULL));
	cr_assert_not_null(h);
	cr_expect(strstr(atd_errmsg(h), "using the built-in kernel only") != NULL, "%s",
		  atd_errmsg(h));
	atd_choice c;
	atd_gpu gpu = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85045395456LL };
	cr_expect_eq(atd_query_gpu(h, &gpu, ATD_F32, 4096, 1024, &c), ATD_OK);
	cr_expect_eq(c.level, ATD_LEVEL_BUILTIN);
	atd_close(h);
}

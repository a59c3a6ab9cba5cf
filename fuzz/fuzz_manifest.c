/* libFuzzer target: gen/manifest.c. Each input is written to fuzz.yaml in
 * one temporary folder per process (in $FUZZ_TMPDIR, else /dev/shm, else /tmp) (beside a dummy fuzz.cu, so that a
 * manifest with "template: fuzz" and "source: fuzz.cu" can load) and read
 * with manifest_load. A manifest that loads then has its constraints and
 * launch expressions evaluated for a few variants and shapes, and its
 * variants walked by the rules engine (common/template_rules.h). Besides the
 * sanitizers, checks that a failure leaves a zeroed manifest and a message
 * naming the file. */
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/manifest.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[512];
static char path[600];

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (dir[0])
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *p, const void *data, size_t size)
{
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		perror(p);
		abort();
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* tmpfs when there is one: a file is written per input. */
	const char *base = getenv("FUZZ_TMPDIR");
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof dir, "%s/fuzz_manifest.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	char cu[600];
	snprintf(cu, sizeof cu, "%s/fuzz.cu", dir);
	write_file(cu, "// dummy\n", 9);
	snprintf(path, sizeof path, "%s/fuzz.yaml", dir);
	return 0;
}

static void bad(const char *what, const at_error *err)
{
	fprintf(stderr, "manifest: %s (message: \"%s\")\n", what, err ? err->msg : "");
	abort();
}

static void count_variant(void *ctx, const long long *values)
{
	(void)values;
	(*(size_t *)ctx)++;
}

/* The rules engine on the manifest's view: launch geometry, and a walk of
 * every param where the space is small enough to walk in a fuzz run. */
static void exercise_rules(const tmpl_manifest *m, const long long *values, const tr_env *env)
{
	manifest_rules r;
	manifest_rules_view(m, &r);
	at_error err;
	launch_geometry g;
	tr_geometry(&r.t, values, env, &g, &err);
	size_t space = 1;
	for (size_t i = 0; i < m->nparams && space <= 4096; i++)
		space *= m->params[i].nvalues;
	tr_rules *lexed;
	if (space <= 4096 && tr_rules_new(&r.t, env, &lexed, &err) == 0) {
		int idx[TR_MAX_PARAMS];
		for (size_t k = 0; k < m->nparams; k++)
			idx[k] = (int)(m->nparams - 1 - k);
		size_t n = 0;
		tr_walk(lexed, values, idx, (int)m->nparams, count_variant, &n, &err);
		if (n > space)
			bad("a walk visited more variants than the space holds", NULL);
		tr_rules_free(lexed);
	} else if (space <= 4096) {
		bad("a loaded manifest's rules do not lex", &err);
	}
	manifest_rules_free(&r);
}

static void exercise(const tmpl_manifest *m)
{
	long long *values = calloc(m->nparams + 1, sizeof *values);
	if (!values)
		return;
	static const tr_env envs[] = {
		{ 4096, 1000, 4, 132, 90, 1024, 232448, 65536 },
		{ 1, 1, 2, 1, 75, 1, 0, 1 },
		{ 0, 0, 0, 0, 0, 0, 0, 0 },
		{ LLONG_MAX, LLONG_MIN, -1, -1, -1, LLONG_MAX, LLONG_MIN, -1 },
	};
	for (int pick = 0; pick < 3; pick++) {
		for (size_t i = 0; i < m->nparams; i++) {
			const tmpl_param *p = &m->params[i];
			if (!p->name || !p->nvalues || !p->values)
				bad("a loaded param lacks a name or values", NULL);
			values[i] = pick == 0 ? p->def : pick == 1 ? p->values[0]
								  : p->values[p->nvalues - 1];
		}
		for (size_t e = 0; e <= sizeof envs / sizeof envs[0]; e++) {
			const tr_env *env = e < sizeof envs / sizeof envs[0] ? &envs[e] : NULL;
			at_error err;
			long long out;
			int rc = manifest_check(m, values, env, &err);
			if (rc < -1 || rc > 1)
				bad("manifest_check returned an unexpected value", &err);
			const char *exprs[] = { m->launch.threads, m->launch.rows_per_cta,
						m->launch.smem_bytes, m->launch.persistent,
						m->launch.max_n };
			for (size_t k = 0; k < sizeof exprs / sizeof exprs[0]; k++) {
				if (!exprs[k])
					bad("a loaded manifest lacks a launch expression", &err);
				manifest_eval(m, exprs[k], values, env, &out, &err);
			}
			exercise_rules(m, values, env);
		}
	}
	if (manifest_param_index(m, m->params[0].name) != 0)
		bad("manifest_param_index does not find the first param", NULL);
	free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_file(path, data, size);
	tmpl_manifest m;
	at_error err;
	err.msg[0] = '\0';
	if (manifest_load(path, &m, &err) != 0) {
		static const tmpl_manifest zero;
		if (memcmp(&m, &zero, sizeof m) != 0)
			bad("a failed load left the manifest non-zero", &err);
		if (strncmp(err.msg, path, strlen(path)) != 0)
			bad("a failed load without a message naming the file", &err);
		return 0;
	}
	if (!m.name || !m.op || !m.summary || !m.source_path || !m.manifest_path ||
	    !m.dtype_mask || !m.nparams)
		bad("a loaded manifest lacks a required part", &err);
	exercise(&m);
	manifest_free(&m);
	return 0;
}

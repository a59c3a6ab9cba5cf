/* libFuzzer target: gen/manifest.c. Each input is written to fuzz.yaml in
 * one temporary folder per process (in $FUZZ_TMPDIR, else /dev/shm, else /tmp) (beside a dummy fuzz.cu, so that a
 * manifest with "template: fuzz" and "source: fuzz.cu" can load) and read
 * with manifest_load. A manifest that loads then has its constraints and
 * launch expressions evaluated for a few variants and shapes. Besides the
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

static void exercise(const tmpl_manifest *m)
{
	long long *values = calloc(m->nparams + 1, sizeof *values);
	if (!values)
		return;
	static const shape_env envs[] = {
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
			const shape_env *env = e < sizeof envs / sizeof envs[0] ? &envs[e] : NULL;
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

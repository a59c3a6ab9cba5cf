/* `autotune bench`: tunes the benchmark config through the normal sweep
 * (shapes already in the database are skipped), then reads the results back
 * and prints (and writes as CSV) the winner of each shape against the copy
 * bandwidth and the baselines, with the goals of tuner/bench/bench_goals.h. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/bench/bench_report.h"
#include "tuner/cli/cli.h"
#include "tuner/sweep/plan.h"
#include "tuner/cli/config_subset.h"
#include "tuner/device.h"
#include "tuner/sweep/sweep.h"

typedef struct bench_options {
	sweep_options sweep;
	const char *csv_path;  /* NULL: results/bench-<gpu>.csv */
	unsigned dtype_mask;   /* 0: every dtype of the config */
	int report_only;
} bench_options;

/* The config's shapes of the chosen dtypes. */
static int load_shapes(const bench_options *o, sweep_config *cfg, sweep_shape **shapes,
		       size_t *n, at_error *err)
{
	if (config_load(o->sweep.config_path, cfg, err))
		return -1;
	if (config_shapes(cfg, shapes, n, err))
		return -1;
	size_t kept = 0;
	for (size_t i = 0; i < *n; i++)
		if (!o->dtype_mask || (o->dtype_mask >> (*shapes)[i].dtype) & 1)
			(*shapes)[kept++] = (*shapes)[i];
	*n = kept;
	if (kept == 0)
		return at_error_set(err, "%s has no shape of the dtypes given with --dtype",
				    o->sweep.config_path);
	return 0;
}

/* Writes the dtype subset of cfg to a temporary file for the sweep. */
static int write_subset(const sweep_config *cfg, unsigned mask, char *path, size_t cap,
			at_error *err)
{
	char *text = config_dtype_subset(cfg, mask);
	const char *tmp = getenv("TMPDIR");
	snprintf(path, cap, "%s/autotune-bench-XXXXXX.yaml", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemps(path, 5);
	if (fd < 0) {
		free(text);
		return at_error_set(err, "cannot create a temporary config in %s", path);
	}
	size_t len = strlen(text);
	int ok = write(fd, text, len) == (ssize_t)len;
	ok &= close(fd) == 0;
	free(text);
	if (!ok) {
		unlink(path);
		return at_error_set(err, "cannot write the temporary config %s", path);
	}
	return 0;
}

static int tune(const bench_options *o, const sweep_config *cfg, at_error *err)
{
	if (!o->dtype_mask)
		return sweep_run(&o->sweep, err);
	char path[512];
	if (write_subset(cfg, o->dtype_mask, path, sizeof path, err))
		return -1;
	sweep_options so = o->sweep;
	so.config_path = path;
	int rc = sweep_run(&so, err);
	unlink(path);
	return rc;
}

static int device_identity(int ordinal, gpu_info *info, at_error *err)
{
	gpu_device gpu;
	int rc = gpu_open(ordinal, &gpu, err);
	if (rc == 0)
		*info = gpu.info;
	gpu_close(&gpu);
	return rc;
}

static int report(const bench_options *o, const sweep_shape *shapes, size_t n,
		  const gpu_info *device, at_error *err)
{
	const char *db_path = tdb_default_path(o->sweep.db_path);
	tdb *db;
	if (tdb_open_readonly(db_path, &db, err))
		return -1;
	gpu_info gpu;
	long long gpu_id = 0;
	int rc = 0;
	if (device) {
		gpu = *device;
		int found = bench_find_gpu(db, &gpu, &gpu_id, err);
		if (found == 0)
			at_error_set(err, "%s has no results for %s", db_path, gpu.name);
		rc = found == 1 ? 0 : -1;
	} else {
		rc = bench_only_gpu(db, &gpu, &gpu_id, err);
		if (rc)
			at_error_prefix(err, "%s", db_path);
	}
	bench_row *rows = NULL;
	if (rc == 0)
		rc = bench_collect(db, gpu_id, shapes, n, &rows, err);
	tdb_close(db);
	if (rc)
		return -1;
	table t;
	bench_tally tally;
	bench_table(rows, n, &t, &tally);
	bench_rows_free(rows, n);
	char csv[512], slug[128], summary[256];
	bench_gpu_slug(gpu.name, slug, sizeof slug);
	if (o->csv_path)
		snprintf(csv, sizeof csv, "%s", o->csv_path);
	else
		snprintf(csv, sizeof csv, "results/bench-%s.csv", slug);
	printf("\nBenchmark on %s (sm_%d%d), %s, database %s:\n", gpu.name, gpu.cc_major,
	       gpu.cc_minor, o->sweep.config_path, db_path);
	table_print(&t, stdout, TABLE_TEXT, NULL);
	bench_summary(&tally, summary, sizeof summary);
	printf("pct_copy: of the copy bandwidth measured by the sweep that tuned the shape; "
	       "pct_same_size_copy: of a copy of the same bytes.\n%s\n", summary);
	rc = bench_write_csv(&t, csv, err);
	if (rc == 0)
		printf("CSV: %s\n", csv);
	table_free(&t);
	return rc;
}

static int run(const bench_options *o)
{
	at_error err = { { 0 } };
	sweep_config cfg;
	sweep_shape *shapes = NULL;
	size_t n = 0;
	int rc = load_shapes(o, &cfg, &shapes, &n, &err);
	gpu_info device;
	int tuned = rc == 0 && !o->report_only ? tune(o, &cfg, &err) : 0;
	if (tuned > 0) { /* interrupted (Ctrl-C): the sweep said so */
		free(shapes);
		config_free(&cfg);
		return tuned;
	}
	if (rc == 0 && !o->report_only)
		rc = tuned || device_identity(o->sweep.device, &device, &err);
	if (rc == 0)
		rc = report(o, shapes, n, o->report_only ? NULL : &device, &err);
	free(shapes);
	config_free(&cfg);
	return rc ? cli_fail(err.msg) : 0;
}

static int parse_dtypes(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (dtype_list_parse(text, &((bench_options *)base)->dtype_mask))
		return cli_usage_error(cmd, "--dtype expects f32, f16 or bf16 (comma-separated), "
				       "got \"%s\"", text);
	return 0;
}

#define O(field) offsetof(bench_options, field)
const cli_option cli_bench_options[] = {
	CLI_STRING('c', "config", "FILE", O(sweep.config_path), "the benchmark config (YAML)"),
	CLI_STRING(0, "db", "FILE", O(sweep.db_path),
		   "the tuning database (default autotune.db, or $AUTOTUNE_DB)"),
	CLI_FILE(0, "csv", "FILE", O(csv_path), "the CSV to write (default results/bench-<gpu>.csv)"),
	CLI_CALLBACK(0, "dtype", "LIST", parse_dtypes,
		     "only these dtypes of the config (comma-separated or repeated)"),
	CLI_INT(0, "device", "N", O(sweep.device), 0, 1023, "which GPU (default 0)"),
	CLI_STRING(0, "templates", "DIR", O(sweep.templates_dir), "templates folder"),
	CLI_INT(0, "threads", "N", O(sweep.threads), 1, 256, "NVRTC compile threads"),
	CLI_FLAG(0, "report-only", O(report_only),
		 "tune nothing and need no GPU: report the database's only GPU"),
	CLI_END,
};
#undef O

int cmd_bench(int argc, char **argv)
{
	/* the sweep's own defaults, as `autotune sweep` has them (without its
	 * pruning's, every shape kept only each template's best) */
	bench_options o = { .csv_path = NULL };
	sweep_options_defaults(&o.sweep);
	int nargs;
	if (cli_parse_options("bench", argc, argv, &o, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("bench", "unexpected argument \"%s\"", argv[1]);
	if (cli_db_path("bench", o.sweep.db_path, 1, &o.sweep.db_path))
		return 2;
	if (!o.sweep.config_path)
		o.sweep.config_path = plan_default_config("bench.yaml");
	return run(&o);
}

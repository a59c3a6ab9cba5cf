/* Tests of `autotune show` (tuner/cli/cmd_show.c), called as a function: what
 * it prints for a described GPU at each level, the database GPU's SM count
 * and memory filled in when omitted, and its exit codes: 2 for usage
 * errors, 1 for an unknown op, a missing database or no GPU. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/dtype.h"
#include "db/tuning_db.h"
#include "include/autotune/dispatch.h"

#include "tests/test_dispatch_fixture.h"

int cmd_show(int argc, char **argv);

TestSuite(dispatch_show, .init = tmp_setup, .fini = tmp_teardown);

#define H100 "NVIDIA H100 80GB HBM3"

static char db_path[512];

static void make_db(void)
{
	tdb *db = td_db_new("show.db");
	long long gpu = td_gpu(db, H100, 9, 0, 132, 85520809984LL);
	long long sweep = td_sweep(db, gpu);
	td_shape(db, sweep, gpu, "softmax", AT_F32, 4096, 1024, "softmax_block",
		 "threads=256 vec=4 unroll=1", 12.5, 0);
	tdb_close(db);
	snprintf(db_path, sizeof db_path, "%s", tmp_path("show.db"));
}

static char out[1 << 14], err[1 << 14];

/* Points fd at a new file; returns a copy of what it pointed at. */
static int capture(int fd, const char *name)
{
	int saved = dup(fd);
	int f = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(f, 0);
	dup2(f, fd);
	close(f);
	return saved;
}

static void restore(int fd, int saved, const char *name, char *buf, size_t cap)
{
	dup2(saved, fd);
	close(saved);
	FILE *f = fopen(tmp_path(name), "r");
	buf[fread(buf, 1, cap - 1, f)] = '\0';
	fclose(f);
}

/* Runs `show ARGS...` (NULL-terminated), its stdout and stderr captured
 * into out and err. */
static int show(const char *first, ...)
{
	char *argv[32] = { "show" };
	int argc = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	int saved_out = capture(1, "stdout"), saved_err = capture(2, "stderr");
	int rc = cmd_show(argc, argv);
	fflush(stdout);
	fflush(stderr);
	restore(1, saved_out, "stdout", out, sizeof out);
	restore(2, saved_err, "stderr", err, sizeof err);
	return rc;
}

static void assert_has(const char *line)
{
	cr_assert(strstr(out, line) != NULL, "no \"%s\" in:\n%s", line, out);
}

Test(dispatch_show, prints_the_variant_level_and_where_it_was_tuned)
{
	make_db();
	int rc = show("--op", "softmax", "--dtype", "f32", "-M", "4096", "-N", "1000", "--db",
		      db_path, "--gpu", H100, "--cc", "9.0", "--sm-count", "132", "--mem-bytes",
		      "85520809984", NULL);
	cr_assert_eq(rc, 0, "%s", out);
	assert_has("shape       softmax f32 M=4096 N=1000\n");
	assert_has("level       nearest\n");
	assert_has("template    softmax_block\n");
	assert_has("params      threads=256 vec=4 unroll=1\n");
	assert_has("tuned on    " H100 " at M=4096 N=1024\n");
	assert_has("tuned time  12.500 us\n");
}

Test(dispatch_show, the_sm_count_and_memory_of_a_tuned_gpu_can_be_left_out)
{
	make_db();
	cr_assert_eq(show("-M", "4096", "-N", "1024", "--db", db_path, "--gpu", H100, "--cc",
			  "sm_90", NULL),
		     0, "%s", out);
	assert_has("level       exact\n");
	assert_has("132 SMs, 85520809984 bytes");
}

/* The library asked directly (atd_query_gpu, Python's atd.query) and
 * `autotune show` answer alike for a GPU given by name and compute
 * capability alone: both take its SM count from the database (the library
 * once compared the SM count 0 and answered same-arch where show said
 * exact). */
Test(dispatch_show, query_and_show_agree_on_a_gpu_named_without_its_sm_count)
{
	make_db();
	atd_handle *h;
	cr_assert_eq(atd_open(db_path, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	static const struct { const char *dtype; long long M, N; } shapes[] = {
		{ "f32", 4096, 1024 }, /* tuned: exact */
		{ "f32", 4096, 1000 }, /* nearest */
		{ "bf16", 4096, 1024 }, /* built-in */
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		at_dtype dt;
		cr_assert_eq(at_dtype_parse(shapes[i].dtype, &dt), 0);
		atd_choice c;
		cr_assert_eq(atd_query_gpu(h, &(atd_gpu){ .name = H100, .cc_major = 9 }, (atd_dtype)dt,
					   shapes[i].M, shapes[i].N, &c),
			     ATD_OK, "%s", atd_errmsg(h));
		char M[32], N[32], level[64];
		snprintf(M, sizeof M, "%lld", shapes[i].M);
		snprintf(N, sizeof N, "%lld", shapes[i].N);
		cr_assert_eq(show("--dtype", shapes[i].dtype, "-M", M, "-N", N, "--db", db_path,
				  "--gpu", H100, "--cc", "9.0", NULL),
			     0, "%s", err);
		snprintf(level, sizeof level, "level       %s\n", atd_level_name(c.level));
		assert_has(level);
	}
	atd_choice c;
	atd_query_gpu(h, &(atd_gpu){ .name = H100, .cc_major = 9 }, ATD_F32, 4096, 1024, &c);
	cr_assert_eq(c.level, ATD_LEVEL_EXACT, "%s", atd_level_name(c.level));
	atd_close(h);
}

Test(dispatch_show, other_gpus_get_same_arch_or_the_builtin)
{
	make_db();
	cr_assert_eq(show("-M", "4096", "-N", "1024", "--db", db_path, "--gpu", "NVIDIA H100 PCIe",
			  "--cc", "9.0", "--sm-count", "114", "--mem-bytes", "85029158912", NULL),
		     0);
	assert_has("level       same-arch\n");
	cr_assert_eq(show("--dtype", "bf16", "-M", "4096", "-N", "1024", "--db", db_path, "--gpu",
			  "NVIDIA A100-SXM4-80GB", "--cc", "8.0", NULL),
		     0);
	assert_has("level       built-in\n");
	assert_has("template    softmax_online\n");
	assert_has("tuned on    - (the built-in kernel serves every shape)\n");
}

Test(dispatch_show, usage_errors_exit_2)
{
	make_db();
	cr_assert_eq(show("-N", "1000", "--db", db_path, "--gpu", H100, "--cc", "9.0", NULL), 2);
	cr_assert(strstr(err, "autotune show: -M and -N are required") != NULL, "%s", err);
	cr_assert_eq(show("-M", "0", "-N", "1000", NULL), 2);
	cr_assert_eq(show("-M", "x", "-N", "1000", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--dtype", "f64", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--gpu", H100, NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--cc", "9.0", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--sm-count", "132", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--gpu", H100, "--cc", "nine", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "--frobnicate", NULL), 2);
	cr_assert_eq(show("-M", "1", "-N", "1000", "extra", NULL), 2);
	cr_assert_eq(show("-M", NULL), 2);
}

/* The sweep's bound on a shape (common/shape_bound.h), not a looser one of
 * show's own: 2^40 x 2^40 once got an answer. */
Test(dispatch_show, a_shape_beyond_the_sweeps_bound_is_refused_saying_which_and_why)
{
	make_db();
	cr_assert_eq(show("-M", "1099511627776", "-N", "1099511627776", "--db", db_path, "--gpu",
			  H100, "--cc", "9.0", NULL),
		     2);
	cr_assert_str_eq(err, "autotune show: shape M=1099511627776 x N=1099511627776 needs "
			      "9.67e+15 GB for its input and output; no GPU holds that (at most "
			      "1099 GB a shape)\nsee 'autotune help show'\n");
	cr_assert_str_eq(out, "");
	/* by the dtype's bytes: 2^37 elements are 2^40 bytes in and out in f32,
	 * half that in bf16 */
	cr_assert_eq(show("--dtype", "f32", "-M", "65536", "-N", "2097152", "--db", db_path, "--gpu",
			  H100, "--cc", "9.0", NULL),
		     0, "%s", err);
	cr_assert_eq(show("--dtype", "f32", "-M", "65536", "-N", "4194304", "--db", db_path, "--gpu",
			  H100, "--cc", "9.0", NULL),
		     2);
	cr_assert(strstr(err, "no GPU holds that (at most 1099 GB a shape)") != NULL, "%s", err);
	cr_assert_eq(show("--dtype", "bf16", "-M", "65536", "-N", "4194304", "--db", db_path,
			  "--gpu", H100, "--cc", "9.0", NULL),
		     0, "%s", err);
	/* one dimension past its own bound */
	cr_assert_eq(show("-M", "1", "-N", "1099511627777", NULL), 2);
	cr_assert(strstr(err, "-N needs an integer from 1 to 1099511627776") != NULL, "%s", err);
}

Test(dispatch_show, an_unknown_op_is_a_usage_error_naming_it)
{
	make_db();
	cr_assert_eq(show("--op", "layernorm", "-M", "1", "-N", "1", "--db", db_path, "--gpu", H100,
			  "--cc", "9.0", NULL),
		     2);
	cr_assert_str_eq(err, "autotune show: no op \"layernorm\": the dispatch library serves "
			      "softmax, log_softmax, softmax_backward, log_softmax_backward, "
			      "cross_entropy\nsee 'autotune help show'\n");
}

Test(dispatch_show, log_softmax_is_derived_from_softmax_winners_when_it_has_none)
{
	/* a softmax winner whose params its template's rules re-derive */
	tdb *db = td_db_new("show.db");
	long long gpu = td_gpu(db, H100, 9, 0, 132, 85520809984LL);
	td_shape(db, td_sweep(db, gpu), gpu, "softmax", AT_F32, 4096, 1024, "softmax_block",
		 "threads=256 vec=4 elems_per_thread=4 stages=1 persistent=0 cache_hint=0 packed=0 "
		 "peel=0",
		 12.5, 0);
	tdb_close(db);
	snprintf(db_path, sizeof db_path, "%s", tmp_path("show.db"));
	cr_assert_eq(show("--op", "log_softmax", "-M", "4096", "-N", "1000", "--db", db_path, "--gpu",
			  H100, "--cc", "9.0", NULL),
		     0, "%s", err);
	cr_assert(strstr(out, "shape       log_softmax f32 M=4096 N=1000\n") != NULL, "%s", out);
	cr_assert(strstr(out, "level       derived\n") != NULL,
		  "another op's winner is never run as stored: %s", out);
	cr_assert(strstr(out, "template    softmax_block\n") != NULL, "%s", out);
	cr_assert(strstr(out, "params      threads=256 vec=4 elems_per_thread=4 stages=1 "
			      "persistent=0 cache_hint=0 packed=0 peel=0\n") != NULL,
		  "at softmax's very shape, its winner's params as they won: %s", out);
	cr_assert_eq(show("-M", "4096", "-N", "1000", "--db", db_path, "--gpu", H100, "--cc", "9.0",
			  NULL),
		     0, "%s", err);
	cr_assert(strstr(out, "level       derived\n") == NULL, "softmax's own is not derived");
}

Test(dispatch_show, a_missing_database_fails)
{
	cr_assert_eq(show("-M", "1", "-N", "1", "--db", tmp_path("absent.db"), "--gpu", H100,
			  "--cc", "9.0", NULL),
		     1);
	cr_assert(strstr(err, "absent.db: no such tuning database") != NULL, "%s", err);
}

/* --no-db: what a process without a database runs, the seed models'
 * choice on an sm_90 GPU, whatever $AUTOTUNE_DB says. */
Test(dispatch_show, no_db_shows_the_seed_models_choice)
{
	setenv("AUTOTUNE_DB", tmp_path("absent.db"), 1);
	int rc = show("--no-db", "--dtype", "f32", "-M", "1000000", "-N", "7", "--gpu", H100,
		      "--cc", "9.0", "--sm-count", "132", NULL);
	unsetenv("AUTOTUNE_DB");
	cr_assert_eq(rc, 0, "%s%s", out, err);
	assert_has("level       predicted\n");
	assert_has("template    softmax_tile\n");
	assert_has("(the library's seed model)");
	cr_assert_eq(show("--no-db", "--db", tmp_path("x.db"), "-M", "1", "-N", "7", NULL), 2);
	cr_assert(strstr(err, "--db and --no-db exclude each other") != NULL, "%s", err);
	cr_assert_eq(show("--no-db", "-M", "1", "-N", "7", "--gpu", H100, "--cc", "9.0", NULL), 2);
	cr_assert(strstr(err, "--no-db with --gpu needs --sm-count") != NULL, "%s", err);
}

Test(dispatch_show, without_a_gpu_or_a_description_it_fails)
{
	if (access("/dev/nvidiactl", F_OK) == 0)
		cr_skip_test("this machine has an NVIDIA GPU");
	make_db();
	cr_assert_eq(show("-M", "4096", "-N", "1000", "--db", db_path, NULL), 1);
	cr_assert(strstr(err, "no NVIDIA driver") != NULL, "%s", err);
	cr_assert(strstr(err, "--gpu NAME --cc X.Y") != NULL, "%s", err);
	cr_assert_str_eq(out, "");
}

Test(dispatch_show, a_backward_op_is_shown_from_its_own_winners)
{
	tdb *db = td_db_new("show.db");
	long long gpu = td_gpu(db, H100, 9, 0, 132, 85520809984LL);
	td_shape(db, td_sweep(db, gpu), gpu, "softmax_backward", AT_F16, 4096, 1024,
		 "softmax_backward_block", "threads=128 vec=8 elems_per_thread=8 persistent=0", 9.5,
		 1024);
	tdb_close(db);
	snprintf(db_path, sizeof db_path, "%s", tmp_path("show.db"));
	cr_assert_eq(show("--op", "softmax_backward", "--dtype", "f16", "-M", "4096", "-N", "1024",
			  "--db", db_path, "--gpu", H100, "--cc", "9.0", NULL),
		     0, "%s", err);
	cr_assert(strstr(out, "shape       softmax_backward f16 M=4096 N=1024\n") != NULL, "%s", out);
	cr_assert(strstr(out, "level       exact\n") != NULL, "%s", out);
	cr_assert(strstr(out, "template    softmax_backward_block\n") != NULL, "%s", out);
	/* softmax at that shape: never the backward kernel */
	cr_assert_eq(show("--dtype", "f16", "-M", "4096", "-N", "1024", "--db", db_path, "--gpu",
			  H100, "--cc", "9.0", NULL),
		     0, "%s", err);
	cr_assert(strstr(out, "softmax_backward") == NULL, "%s", out);
}

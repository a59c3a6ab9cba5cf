/* An op added by following "Adding an op" in docs/ARCHITECTURE.md alone:
 * the page's op description (scale2, y = 2x) is compiled here as written
 * (the test checks that its block is in this file word for word) and
 * registered with op_register, for this process only; the page's template
 * files are written from the page into a temporary folder; the sweep's
 * plan accepts a config of `op: scale2`, enumerates and specialises the
 * template, and NVRTC compiles it (no GPU); its check data, reference,
 * tolerance and bytes moved come through the code the sweep uses. And the
 * softmax op's description gives what softmax had before it. Runs from
 * the repository root. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes_moved.h"
#include "cuda/nvrtc_compile.h"
#include "gen/specialize.h"
#include "tests/tmp_folder.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/device.h"
#include "tuner/sweep/plan.h"

/* ---- the page's description, as written ---------------------------------- */

#include "tuner/check/reference.h"
#include "tuner/ops/ops.h"

/* out[j] = 2 x[j]: the reference of one row, in double */
static void scale2_row(const void *x, at_dtype dt, size_t offset, long long N, double *out)
{
	for (long long j = 0; j < N; j++)
		out[j] = 2.0 * ref_load(x, dt, offset + (size_t)j);
}

const at_op scale2_op = {
	.name = "scale2",
	.summary = "y = 2x, element by element",
	.kernel_name = "scale2_kernel",
	.kernel_signature = "(float *y, const float *x, long long M, long long N, "
			    "long long ldy, long long ldx, unsigned flags)",
	.reads_per_elem = 1,
	.writes_per_elem = 1,
	.tolerance = { [AT_F32] = 1e-7, [AT_F16] = 1e-3, [AT_BF16] = 1e-2 },
	.ref_row = scale2_row,
	.make_input = ref_input_random,
};

/* ---- the page ------------------------------------------------------------ */

#define SECTION "## Adding an op"

static void setup(void)
{
	tmp_setup();
	/* the table's entry for tests: once a process (criterion may run
	 * several tests in one) */
	if (!op_find("scale2"))
		cr_assert_eq(op_register(&scale2_op), 0);
	cr_assert_eq(op_find("scale2"), &scale2_op);
}

TestSuite(new_op, .init = setup, .fini = tmp_teardown);

/* The section of the page (malloc'd, NUL-terminated at its end). */
static char *section(void)
{
	char *doc = tmp_read("docs/ARCHITECTURE.md");
	char *at = strstr(doc, "\n" SECTION "\n");
	cr_assert_not_null(at, "docs/ARCHITECTURE.md has no \"" SECTION "\" section");
	char *end = strstr(at + 1, "\n## ");
	char *sec = strndup(at, end ? (size_t)(end - at) : strlen(at));
	free(doc);
	return sec;
}

/* The body of the fenced block under the "`path`:" line of sec (malloc'd). */
static char *block(const char *sec, const char *path)
{
	char head[256];
	snprintf(head, sizeof head, "\n`%s`:\n\n```", path);
	const char *at = strstr(sec, head);
	cr_assert_not_null(at, "no block for %s in " SECTION, path);
	const char *body = strchr(at + strlen(head), '\n');
	cr_assert_not_null(body);
	body++;
	const char *close = strstr(body, "\n```\n");
	cr_assert_not_null(close, "an unclosed block for %s", path);
	return strndup(body, (size_t)(close - body) + 1);
}

/* Writes the page's two template files under the temporary folder. */
static void write_templates(const char *sec)
{
	static const char *const files[] = { "scale2_rows.yaml", "scale2_rows.cu" };
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", tmp_path("scale2-templates"));
	cr_assert_eq(system(cmd), 0);
	for (size_t i = 0; i < 2; i++) {
		char path[128];
		snprintf(path, sizeof path, "scale2-templates/%s", files[i]);
		char *text = block(sec, path);
		tmp_write(path, text);
		free(text);
	}
}

Test(new_op, the_page_describes_the_op_compiled_here)
{
	char *sec = section();
	char *desc = block(sec, "tuner/ops/scale2_op.c");
	char *self = tmp_read("tests/test_new_op.c");
	cr_assert_not_null(strstr(self, desc),
			   "the description of " SECTION " is not in tests/test_new_op.c as "
			   "written:\n%s", desc);
	free(self);
	free(desc);
	free(sec);
}

Test(new_op, the_table_holds_softmax_and_the_registered_op)
{
	cr_assert_eq(op_find("softmax"), &softmax_op);
	cr_assert_null(op_find("no_such_op"));
	cr_assert_null(op_find(NULL));
	cr_assert_eq(op_register(&scale2_op), -1, "a name registered twice");
	cr_assert_eq(op_register(&softmax_op), -1);
	int seen = 0;
	for (size_t i = 0; i < op_count(); i++)
		seen |= (op_at(i) == &softmax_op) | (op_at(i) == &scale2_op) << 1;
	cr_assert_eq(seen, 3);
	cr_assert_null(op_at(op_count()));
	char *names = op_names();
	cr_assert_str_eq(names, "softmax, log_softmax, softmax_backward, log_softmax_backward, cross_entropy, scale2");
	free(names);
}

/* The softmax op gives what the sweep had before ops were described. */
Test(new_op, softmax_is_what_it_was)
{
	for (int d = 0; d < AT_DTYPE_COUNT; d++) {
		at_dtype dt = (at_dtype)d;
		cr_assert_eq(at_op_tolerance(&softmax_op, dt), ref_tolerance(dt));
		cr_assert_eq(at_op_bytes_moved(&softmax_op, dt, 4096, 1000),
			     softmax_bytes_moved(dt, 4096, 1000));
		long long M = 37, N = 300;
		size_t count = (size_t)(M * N);
		void *x = malloc(count * 4), *want_x = malloc(count * 4);
		double *ref = malloc(count * sizeof *ref), *want = malloc(count * sizeof *want);
		ref_op_check_data(&softmax_op, dt, M, N, 11, x, ref);
		ref_fill_random(want_x, dt, count, 11);
		cr_assert_eq(extreme_plant_rows(want_x, dt, M, N), EXTREME_FINITE_COUNT);
		ref_softmax(want_x, dt, M, N, N, want);
		cr_assert_eq(memcmp(x, want_x, count * at_dtype_size(dt)), 0);
		cr_assert_eq(memcmp(ref, want, count * sizeof *ref), 0);
		free(x);
		free(want_x);
		free(ref);
		free(want);
	}
	cr_assert_str_eq(softmax_op.kernel_name, "softmax_kernel");
	cr_assert(softmax_op.softmax_baselines);
	cr_assert_not(scale2_op.softmax_baselines);
}

Test(new_op, scale2_is_enumerated_specialised_compiled_and_checked, .timeout = 300)
{
	char *sec = section();
	write_templates(sec);
	free(sec);
	tmp_write("scale2.yaml", "sweeps:\n"
				 "  - op: scale2\n"
				 "    dtypes: [f32]\n"
				 "    M: [3]\n"
				 "    N: [1000]\n");

	/* the sweep's plan: the op is described, the template implements it */
	sweep_plan p;
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&p, tmp_path("scale2.yaml"), tmp_path("scale2-templates"), &err), 0,
		     "%s", err.msg);
	cr_assert_eq(p.ntemplates, 1);
	cr_assert_str_eq(p.templates[0].op, "scale2");
	cr_assert_eq(p.nshapes, 1);
	const sweep_shape *s = &p.shapes[0];
	const at_op *op = op_find(s->op);
	cr_assert_eq(op, &scale2_op);

	tr_env env = nominal_shape_env(90, s->M, s->N, at_dtype_size(s->dtype));
	variant *vs;
	size_t n;
	cr_assert_eq(plan_shape_variants(&p, s, &env, &vs, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 2, "threads 128 and 256");
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++) {
		char *src = specialize(&vs[i], &err);
		cr_assert_not_null(src, "%s", err.msg);
		cr_assert_not_null(strstr(src, "#define THREADS "), "%s", src);
		compiled_kernel k;
		int rc = nvrtc_compile(src, "variant.cu", 90, &k, &err);
		cr_assert_eq(rc, COMPILE_OK, "rc %d, %s\n%s", rc, err.msg, k.log ? k.log : "");
		char entry[128];
		snprintf(entry, sizeof entry, ".entry %s", op->kernel_name);
		cr_assert_not_null(strstr(k.ptx, entry), "no %s in the PTX", entry);
		/* the row-wise launch's signature: flags the seventh and last */
		snprintf(entry, sizeof entry, "%s_param_6", op->kernel_name);
		cr_assert_not_null(strstr(k.ptx, entry), "no flags argument");
		snprintf(entry, sizeof entry, "%s_param_7", op->kernel_name);
		cr_assert_null(strstr(k.ptx, entry), "an eighth argument");
		compiled_kernel_free(&k);
		free(src);
	}
	free(vs);

	/* the check data, tolerance and bytes moved the sweep would use */
	size_t count = (size_t)(s->M * s->N);
	float *x = malloc(count * sizeof *x);
	double *ref = malloc(count * sizeof *ref);
	ref_op_check_data(op, s->dtype, s->M, s->N, 7, x, ref);
	for (size_t i = 0; i < count; i++) {
		cr_assert(x[i] >= -8.0f && x[i] < 8.0f, "x[%zu] = %g", i, x[i]);
		cr_assert_eq(ref[i], 2.0 * x[i], "ref[%zu]", i);
	}
	check_result c = ref_compare(x, s->dtype, s->M, s->N, s->N, ref);
	cr_assert_eq(c.mismatches, 0);
	cr_assert_gt(c.rel_l2, at_op_tolerance(op, s->dtype), "y = x is not 2x");
	for (size_t i = 0; i < count; i++)
		x[i] *= 2.0f;
	c = ref_compare(x, s->dtype, s->M, s->N, s->N, ref);
	cr_assert_leq(c.rel_l2, at_op_tolerance(op, s->dtype));
	cr_assert_eq(at_op_tolerance(op, AT_F32), 1e-7);
	cr_assert_eq(at_op_bytes_moved(op, AT_F32, 3, 1000), 3 * 1000 * 8.0);
	free(x);
	free(ref);
	plan_free(&p);
}

Test(new_op, the_sweep_refuses_an_op_nobody_described)
{
	char *sec = section();
	write_templates(sec);
	free(sec);
	tmp_write("other.yaml", "sweeps:\n"
				"  - op: scale3\n"
				"    dtypes: [f32]\n"
				"    M: 1\n"
				"    N: 8\n");
	sweep_plan p;
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&p, tmp_path("other.yaml"), tmp_path("scale2-templates"), &err), -1);
	cr_assert(strstr(err.msg, ":2: unknown op \"scale3\" (known: softmax, log_softmax, softmax_backward, log_softmax_backward, cross_entropy, scale2") != NULL, "%s",
		  err.msg);
}

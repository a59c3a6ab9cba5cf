/* Tests for the log_softmax op on the tuner's side: its CPU reference
 * (values worked out here, PyTorch's NaN rules, the difference taken
 * first), what a dtype holds of a reference (saturation to +-inf), the
 * comparison's infinities, the op's description, the manifests' also_ops,
 * and the variant source that computes it (OP_LOG_SOFTMAX). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kernel_source.h"
#include "common/template_rules.h"
#include "gen/manifest.h"
#include "gen/specialize.h"
#include "tests/tmp_folder.h"
#include "tuner/check/reference.h"
#include "tuner/ops/ops.h"

TestSuite(log_softmax_op);

Test(log_softmax_op, reference_is_x_minus_max_minus_log_sum)
{
	const float x[2][4] = { { 1.0f, 2.0f, 3.0f, 4.0f }, { -1.5f, 0.0f, 0.25f, -8.0f } };
	double ref[8];
	ref_rows(ref_log_softmax_row, x, AT_F32, 2, 4, 4, ref);
	for (int i = 0; i < 2; i++) {
		double sum = 0;
		for (int j = 0; j < 4; j++)
			sum += exp((double)x[i][j]);
		for (int j = 0; j < 4; j++)
			cr_assert_float_eq(ref[i * 4 + j], (double)x[i][j] - log(sum), 1e-14,
					   "ref[%d][%d] = %.17g", i, j, ref[i * 4 + j]);
	}
	/* worked out apart: log(e^4 / (e + e^2 + e^3 + e^4)) */
	cr_assert_float_eq(ref[3], -log(1.0 + exp(-1) + exp(-2) + exp(-3)), 1e-15);
}

Test(log_softmax_op, reference_is_exact_near_a_huge_max)
{
	/* 1e4 + small offsets in f32: x - (max + lse) would lose the offsets
	 * to max's rounding; the difference first keeps them */
	const float x[3] = { 10000.0f, 10000.0f - 0.5f, 10000.0f - 1.0f };
	double ref[3];
	ref_rows(ref_log_softmax_row, x, AT_F32, 1, 3, 3, ref);
	double lse = log(1.0 + exp(-0.5) + exp(-1.0));
	cr_assert_float_eq(ref[0], -lse, 1e-15);
	cr_assert_float_eq(ref[1], -0.5 - lse, 1e-15);
	cr_assert_float_eq(ref[2], -1.0 - lse, 1e-15);
}

Test(log_softmax_op, special_values_follow_pytorch)
{
	const float x[4][3] = {
		{ 0.0f, -INFINITY, 1.0f },          /* -inf element: -inf, the rest finite */
		{ -INFINITY, -INFINITY, -INFINITY }, /* all -inf: NaN */
		{ 1.0f, NAN, 2.0f },                /* a NaN: NaN */
		{ 1.0f, INFINITY, 2.0f },           /* +inf: inf - inf, NaN */
	};
	double ref[12];
	ref_rows(ref_log_softmax_row, x, AT_F32, 4, 3, 3, ref);
	cr_assert(isinf(ref[1]) && ref[1] < 0);
	cr_assert(isfinite(ref[0]) && isfinite(ref[2]));
	for (int i = 3; i < 12; i++)
		cr_assert(isnan(ref[i]), "ref[%d] = %g, want NaN", i, ref[i]);
	ref_mask_rows(x, AT_F32, 4, 3, 3, log_softmax_op.masked_value, ref);
	for (int j = 3; j < 6; j++)
		cr_assert(isinf(ref[j]) && ref[j] < 0, "a masked row is -inf (ln 0)");
	cr_assert(isnan(ref[6]), "only rows of all -inf are masked");
}

Test(log_softmax_op, a_dtype_saturates_past_its_largest_value)
{
	cr_assert_eq(ref_saturate(-65519.0, AT_F16), -65519.0);
	cr_assert(isinf(ref_saturate(-65520.0, AT_F16)));
	cr_assert(isinf(ref_saturate(6.8e38, AT_F32)) && ref_saturate(6.8e38, AT_F32) > 0);
	cr_assert_eq(ref_saturate(3.4e38, AT_F32), 3.4e38);
	cr_assert_eq(ref_saturate(3.38e38, AT_BF16), 3.38e38);
	cr_assert(isinf(ref_saturate(3.4e38, AT_BF16)));
	/* the reference as the dtype holds it: -max - max is -inf in f32 */
	const float x[2] = { 3.4e38f, -3.4e38f };
	double ref[2];
	ref_rows(ref_log_softmax_row, x, AT_F32, 1, 2, 2, ref);
	cr_assert_eq(ref[0], 0.0);
	cr_assert(isinf(ref[1]) && ref[1] < 0);
}

Test(log_softmax_op, the_comparison_takes_infinities_as_values)
{
	const double want[3] = { -INFINITY, -1.0, -2.0 };
	float got[3] = { -INFINITY, -1.0f, -2.0f };
	check_result c = ref_compare(got, AT_F32, 1, 3, 3, want);
	cr_assert_eq(c.mismatches, 0);
	cr_assert_eq(c.rel_l2, 0.0, "equal infinities add no error (got %g)", c.rel_l2);
	got[0] = -1e30f; /* finite where -inf is wanted */
	c = ref_compare(got, AT_F32, 1, 3, 3, want);
	cr_assert_eq(c.mismatches, 1);
	cr_assert_eq(c.first_bad, 0);
	got[0] = -INFINITY;
	got[2] = INFINITY; /* inf where a finite value is wanted */
	c = ref_compare(got, AT_F32, 1, 3, 3, want);
	cr_assert_eq(c.mismatches, 1);
	cr_assert_eq(c.first_bad, 2);
}

Test(log_softmax_op, is_described_beside_softmax)
{
	const at_op *op = op_find("log_softmax");
	cr_assert_not_null(op);
	cr_assert_eq(op, &log_softmax_op);
	cr_assert_str_eq(op->kernel_name, softmax_op.kernel_name,
			 "computed by the softmax templates, it has their entry point");
	cr_assert_eq(at_op_bytes_moved(op, AT_BF16, 4, 1000), 2.0 * 4 * 1000 * 2);
	cr_assert(isinf(op->masked_value) && op->masked_value < 0);
	cr_assert_eq(softmax_op.masked_value, 0.0);
}

static const char manifest_yaml[] = "template: twice\n"
				    "op: softmax\n"
				    "also_ops: [log_softmax]\n"
				    "source: twice.cu\n"
				    "dtypes: [f32]\n"
				    "params:\n"
				    "  - name: threads\n"
				    "    values: [128]\n"
				    "    default: 128\n"
				    "launch:\n"
				    "  threads: threads\n"
				    "  rows_per_cta: 1\n"
				    "  smem_bytes: 0\n"
				    "  persistent: 0\n"
				    "  max_n: 0\n";

TestSuite(log_softmax_manifest, .init = tmp_setup, .fini = tmp_teardown);

Test(log_softmax_manifest, also_ops_name_the_other_ops_and_their_define)
{
	tmp_write("twice.cu", "// body\n");
	tmp_write("twice.yaml", manifest_yaml);
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(tmp_path("twice.yaml"), &m, &err), 0, "%s", err.msg);
	cr_assert_eq(manifest_serves(&m, "softmax"), 1);
	cr_assert_eq(manifest_serves(&m, "log_softmax"), 2);
	cr_assert_eq(manifest_serves(&m, "cross_entropy"), 0);
	cr_assert_null(manifest_source_op(&m, "softmax"), "the template's own op: as written");
	cr_assert_str_eq(manifest_source_op(&m, "log_softmax"), "log_softmax");

	manifest_rules r;
	manifest_rules_view(&m, &r);
	cr_assert(tr_serves(&r.t, "softmax") && tr_serves(&r.t, "log_softmax"));
	cr_assert(!tr_serves(&r.t, "softmax_backward"));
	cr_assert_null(tr_source_op(&r.t, "softmax"));
	cr_assert_str_eq(tr_source_op(&r.t, "log_softmax"), "log_softmax");
	manifest_rules_free(&r);

	variant v;
	variant_defaults(&v, &m, AT_F32);
	char *own = specialize(&v, &err);
	v.op = manifest_source_op(&m, "log_softmax");
	char *log = specialize(&v, &err);
	cr_assert(own && log, "%s", err.msg);
	cr_assert_null(strstr(own, "#define OP_"), "softmax's source is the template's as written");
	cr_assert_not_null(strstr(log, "#define OP_LOG_SOFTMAX 1\n"));
	cr_assert_eq(strlen(log), strlen(own) + strlen("#define OP_LOG_SOFTMAX 1\n"));
	free(own);
	free(log);
	manifest_free(&m);
}

Test(log_softmax_manifest, bad_also_ops_are_refused_with_where)
{
	static const struct {
		const char *line, *want;
	} bad[] = {
		{ "also_ops: [softmax]\n", "twice.yaml:3:12: op \"softmax\" is named twice (op, also_ops)" },
		{ "also_ops: [log_softmax, log_softmax]\n",
		  "twice.yaml:3:25: op \"log_softmax\" is named twice (op, also_ops)" },
		{ "also_ops: [Log-Softmax]\n",
		  "twice.yaml:3:12: expected an op name of lower-case letters, digits and '_', got "
		  "\"Log-Softmax\"" },
		{ "also_ops: log_softmax\n",
		  "twice.yaml:3:11: expected a sequence of op names for also_ops" },
	};
	tmp_write("twice.cu", "// body\n");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char yaml[1024];
		const char *at = strstr(manifest_yaml, "also_ops:");
		const char *end = strchr(at, '\n') + 1;
		snprintf(yaml, sizeof yaml, "%.*s%s%s", (int)(at - manifest_yaml), manifest_yaml,
			 bad[i].line, end);
		tmp_write("twice.yaml", yaml);
		tmpl_manifest m;
		at_error err = { { 0 } };
		cr_assert_eq(manifest_load(tmp_path("twice.yaml"), &m, &err), -1, "%s", bad[i].line);
		cr_assert_not_null(strstr(err.msg, bad[i].want), "got \"%s\", want \"%s\"", err.msg,
				   bad[i].want);
	}
}

Test(log_softmax_manifest, every_softmax_template_computes_log_softmax)
{
	tmpl_manifest *ms;
	size_t n;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load_dir("templates", &ms, &n, &err), 0, "%s", err.msg);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(ms[i].op, "softmax") == 0)
			cr_assert_eq(manifest_serves(&ms[i], "log_softmax"), 2, "%s", ms[i].name);
	manifest_free_all(ms, n);
}

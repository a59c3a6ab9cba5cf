/* Tests for the cross_entropy op on the tuner's side (docs/cross-entropy.md):
 * its reference against values worked out by hand for every option
 * (ignore_index, out-of-range targets, label smoothing, z-loss, soft-capping,
 * the scale), the gradient as the loss's derivative, the contract's extreme
 * rows; its check input and check data; its description; the row results'
 * comparison; the probe's edge-case rows; its templates (manifests, every
 * variant compiling for sm_90, clean); the command line and the configs. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "dispatch/policy/row_ops.h"
#include "gen/specialize.h"
#include "tests/template_fixture.h"
#include "tests/test_run_fixture.h"
#include "tuner/check/cross_entropy_rows.h"
#include "tuner/check/reference.h"
#include "tuner/ops/cross_entropy_gpu.h"
#include "tuner/ops/cross_entropy_shape.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/plan.h"

TestSuite(cross_entropy_ref);

/* The reference of one f32 row of N <= 8 logits, target t, options o. */
static void ref_of(const float *x, long long N, long long t, const ce_options *o, double *grad,
		   double *loss, double *lse)
{
	ce_ref_row(x, AT_F32, 0, N, t, o, grad, loss, lse);
}

static const float row3[3] = { 1.0f, 2.0f, 3.0f };

/* ln(e + e^2 + e^3) and the probabilities of row3. */
static double lse3(void)
{
	return 3.0 + log(1.0 + exp(-1.0) + exp(-2.0));
}

static double p3(int j)
{
	return exp(row3[j] - lse3());
}

Test(cross_entropy_ref, plain_loss_is_lse_minus_the_target_logit)
{
	ce_options o = CE_OPTIONS_TUNING;
	double g[3], loss, lse;
	ref_of(row3, 3, 1, &o, g, &loss, &lse);
	cr_assert_float_eq(lse, lse3(), 1e-12);
	cr_assert_float_eq(loss, lse3() - 2.0, 1e-12);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(g[j], p3(j) - (j == 1), 1e-12, "dx[%d] = %g", j, g[j]);
}

Test(cross_entropy_ref, ignored_row_has_zero_loss_and_gradient_but_its_lse)
{
	ce_options o = CE_OPTIONS_TUNING;
	double g[3] = { 7, 7, 7 }, loss = 7, lse;
	ref_of(row3, 3, -100, &o, g, &loss, &lse);
	cr_assert_eq(loss, 0.0);
	cr_assert_float_eq(lse, lse3(), 1e-12);
	for (int j = 0; j < 3; j++)
		cr_assert_eq(g[j], 0.0);
	/* an ignore_index inside [0, V) is ignored too, as torch's */
	o.ignore_index = 2;
	ref_of(row3, 3, 2, &o, g, &loss, &lse);
	cr_assert_eq(loss, 0.0);
	cr_assert_eq(g[2], 0.0);
	/* a row of NaN is still ignored: loss and gradient 0, lse NaN */
	const float nan_row[3] = { NAN, 1.0f, 2.0f };
	o.ignore_index = -100;
	ref_of(nan_row, 3, -100, &o, g, &loss, &lse);
	cr_assert_eq(loss, 0.0);
	cr_assert(isnan(lse));
	cr_assert_eq(g[0], 0.0);
}

Test(cross_entropy_ref, out_of_range_target_is_nan_and_never_read)
{
	ce_options o = CE_OPTIONS_TUNING;
	const long long targets[] = { 3, -1, -101, 1000000 };
	for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
		double g[3], loss, lse;
		ref_of(row3, 3, targets[k], &o, g, &loss, &lse);
		cr_assert(isnan(loss), "target %lld: loss %g", targets[k], loss);
		cr_assert_float_eq(lse, lse3(), 1e-12, "its lse is still written");
		for (int j = 0; j < 3; j++)
			cr_assert(isnan(g[j]), "target %lld: dx[%d] = %g", targets[k], j, g[j]);
	}
}

Test(cross_entropy_ref, label_smoothing_mixes_in_the_mean_logit)
{
	ce_options o = CE_OPTIONS_TUNING;
	o.label_smoothing = 0.1;
	double g[3], loss, lse;
	ref_of(row3, 3, 0, &o, g, &loss, &lse);
	/* torch: (1 - ls) nll + ls mean_j(-log p_j) = lse - 0.9 z_t - 0.1 / 3 sum z */
	cr_assert_float_eq(loss, lse3() - 0.9 * 1.0 - 0.1 / 3 * 6.0, 1e-12);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(g[j], p3(j) - 0.9 * (j == 0) - 0.1 / 3, 1e-12, "dx[%d]", j);
}

Test(cross_entropy_ref, z_loss_adds_the_squared_lse)
{
	ce_options o = CE_OPTIONS_TUNING;
	o.z_loss = 1e-2;
	double g[3], loss, lse;
	ref_of(row3, 3, 2, &o, g, &loss, &lse);
	cr_assert_float_eq(loss, lse3() - 3.0 + 1e-2 * lse3() * lse3(), 1e-12);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(g[j], p3(j) * (1 + 2e-2 * lse3()) - (j == 2), 1e-12, "dx[%d]", j);
}

Test(cross_entropy_ref, softcap_caps_the_logits_and_scales_the_gradient)
{
	ce_options o = CE_OPTIONS_TUNING;
	o.softcap = 2.0;
	double g[3], loss, lse;
	ref_of(row3, 3, 1, &o, g, &loss, &lse);
	double z[3], s = 0;
	for (int j = 0; j < 3; j++) {
		z[j] = 2.0 * tanh(row3[j] / 2.0);
		s += exp(z[j]);
	}
	cr_assert_float_eq(lse, log(s), 1e-12);
	cr_assert_float_eq(loss, log(s) - z[1], 1e-12);
	for (int j = 0; j < 3; j++) {
		double th = tanh(row3[j] / 2.0);
		cr_assert_float_eq(g[j], (exp(z[j]) / s - (j == 1)) * (1 - th * th), 1e-12, "dx[%d]",
				   j);
	}
}

Test(cross_entropy_ref, the_scale_multiplies_the_gradient_only)
{
	ce_options o = CE_OPTIONS_TUNING;
	o.scale = 0.25;
	double g[3], loss, lse;
	ref_of(row3, 3, 1, &o, g, &loss, &lse);
	cr_assert_float_eq(loss, lse3() - 2.0, 1e-12);
	for (int j = 0; j < 3; j++)
		cr_assert_float_eq(g[j], 0.25 * (p3(j) - (j == 1)), 1e-12);
}

/* The loss of row x (doubles, as f64 has no dtype here: through f32 at
 * values f32 holds exactly) at target t under o. */
static double loss_at(const float *x, long long N, long long t, const ce_options *o)
{
	double loss, lse;
	ce_ref_row(x, AT_F32, 0, N, t, o, NULL, &loss, &lse);
	return loss;
}

Test(cross_entropy_ref, the_gradient_is_the_derivative_of_the_loss_with_every_option)
{
	ce_options o = { -100, 0.2, 1e-3, 3.0, 1.0 };
	float x[5] = { 0.5f, -1.25f, 2.0f, 0.75f, -3.0f };
	double g[5], loss, lse;
	ce_ref_row(x, AT_F32, 0, 5, 3, &o, g, &loss, &lse);
	for (int j = 0; j < 5; j++) {
		float up[5], down[5];
		memcpy(up, x, sizeof x);
		memcpy(down, x, sizeof x);
		up[j] += 1.0f / 1024;
		down[j] -= 1.0f / 1024;
		double d = (loss_at(up, 5, 3, &o) - loss_at(down, 5, 3, &o)) / ((double)up[j] - down[j]);
		cr_assert_float_eq(g[j], d, 1e-6, "dx[%d] = %.9g, the loss's slope %.9g", j, g[j], d);
	}
}

/* At V = 1 the gradient p (1 + 2 lambda lse) - 1 cancels to z-loss's term:
 * an f32 kernel's rounding of its terms of 1 (an ulp, 6e-8) is ~1e-3 of
 * what is left, while the same rounding of an ordinary row is ~1e-7 of it.
 * Measured against the terms' sizes, the two read the same (H200: no
 * variant passed f32 64 x 1 under the probe's options before). */
Test(cross_entropy_ref, the_gradients_error_is_measured_against_its_terms)
{
	ce_options o = CE_PROBE_OPTIONS;
	float one[4] = { 3.0f, -2.0f, 0.5f, 7.0f }; /* four rows of one logit, target 0 */
	double want[4], size[4], loss, lse;
	float got[4];
	for (int i = 0; i < 4; i++) {
		ce_ref_row_sized(one, AT_F32, (size_t)i, 1, 0, &o, &want[i], &size[i], &loss, &lse);
		cr_assert(size[i] > 100 * fabs(want[i]), "row %d: terms %g, gradient %g", i, size[i],
			  want[i]);
		got[i] = (float)want[i] + 6e-8f * (float)size[i]; /* an ulp of the terms off */
	}
	check_result plain = ref_compare(got, AT_F32, 4, 1, 1, want);
	check_result sized = ref_compare_sized(got, AT_F32, 4, 1, 1, want, size);
	cr_assert_gt(plain.rel_l2, 1e-5, "relative to the cancelled gradient: %g", plain.rel_l2);
	cr_assert_lt(sized.rel_l2, 1e-6, "relative to its terms: %g", sized.rel_l2);
	/* an error of the gradient's own size still fails */
	for (int i = 0; i < 4; i++)
		got[i] = (float)(2 * want[i]);
	cr_assert_gt(ref_compare_sized(got, AT_F32, 4, 1, 1, want, size).rel_l2, 1e-5);
}

Test(cross_entropy_ref, huge_finite_rows_keep_a_finite_loss)
{
	ce_options o = CE_OPTIONS_TUNING;
	const float x[3] = { 1e30f, 1e30f, -1e30f };
	double g[3], loss, lse;
	ref_of(x, 3, 0, &o, g, &loss, &lse);
	cr_assert_float_eq(loss, log(2.0), 1e-12, "the difference first: ln 2, not 0");
	cr_assert(isfinite(lse));
	cr_assert_float_eq(g[0], -0.5, 1e-12);
	cr_assert_float_eq(g[1], 0.5, 1e-12);
	cr_assert_eq(g[2], 0.0);
	ref_of(x, 3, 2, &o, g, &loss, &lse);
	cr_assert_float_eq(loss / (2.0 * (double)1e30f + log(2.0)), 1.0, 1e-12);
}

Test(cross_entropy_ref, minus_inf_logits_have_no_probability_and_bad_rows_are_nan)
{
	ce_options o = CE_OPTIONS_TUNING;
	const float masked[3] = { 0.0f, -INFINITY, 0.0f };
	double g[3], loss, lse;
	ref_of(masked, 3, 0, &o, g, &loss, &lse);
	cr_assert_float_eq(loss, log(2.0), 1e-12);
	cr_assert_float_eq(g[0], -0.5, 1e-12);
	cr_assert_eq(g[1], 0.0);
	/* the target at a -inf logit: an infinite loss, as torch's nll */
	ref_of(masked, 3, 1, &o, g, &loss, &lse);
	cr_assert(isinf(loss) && loss > 0);
	cr_assert_eq(g[1], -1.0);
	const float all_minus_inf[3] = { -INFINITY, -INFINITY, -INFINITY };
	const float plus_inf[3] = { 0.0f, INFINITY, 1.0f };
	const float nan_row[3] = { 0.0f, NAN, 1.0f };
	const float *bad[3] = { all_minus_inf, plus_inf, nan_row };
	for (int k = 0; k < 3; k++) {
		ref_of(bad[k], 3, 0, &o, g, &loss, &lse);
		cr_assert(isnan(loss) && isnan(lse), "row %d: loss %g lse %g", k, loss, lse);
		for (int j = 0; j < 3; j++)
			cr_assert(isnan(g[j]), "row %d dx[%d] = %g", k, j, g[j]);
	}
}

/* ---- the check input and data ---- */

Test(cross_entropy_ref, check_targets_are_seeded_in_range_and_a_tenth_ignored)
{
	const long long M = 10000, N = 50257;
	long long *a = malloc((size_t)M * sizeof *a), *b = malloc((size_t)M * sizeof *b);
	ce_check_targets(a, M, N, 7);
	ce_check_targets(b, M, N, 7);
	cr_assert_eq(memcmp(a, b, (size_t)M * sizeof *a), 0, "same seed, same targets");
	long long ignored = 0, top = 0;
	for (long long i = 0; i < M; i++) {
		cr_assert(a[i] == CE_CHECK_IGNORE_INDEX || (a[i] >= 0 && a[i] < N), "t[%lld] = %lld", i,
			  a[i]);
		ignored += a[i] == CE_CHECK_IGNORE_INDEX;
		top = a[i] > top ? a[i] : top;
	}
	cr_assert(ignored > M / 20 && ignored < M / 5, "%lld of %lld ignored", ignored, M);
	cr_assert_gt(top, N - N / 10, "targets spread over the vocabulary");
	ce_check_targets(b, M, N, 8);
	cr_assert_neq(memcmp(a, b, (size_t)M * sizeof *a), 0);
	free(a);
	free(b);
}

Test(cross_entropy_ref, check_data_holds_targets_aligned_and_the_rows_results)
{
	const at_op *op = &cross_entropy_op;
	const long long M = 13, N = 7; /* f16: 182 bytes of logits, targets from 192 */
	cr_assert_eq(at_op_side_offset(op, AT_F16, M, N), 192);
	cr_assert_eq(at_op_input_bytes(op, AT_F16, M, N), 192 + 13 * 8);
	cr_assert_eq(at_op_ref_count(op, M, N), (size_t)(M * N + 2 * M));
	void *x = malloc(at_op_input_bytes(op, AT_F16, M, N));
	double *ref = malloc(at_op_ref_count(op, M, N) * sizeof *ref);
	ref_op_check_data(op, AT_F16, M, N, 11, x, ref);
	const long long *t = (const long long *)((const char *)x + 192);
	long long want[13];
	ce_check_targets(want, M, N, 11);
	static const ce_options tuning = CE_OPTIONS_TUNING;
	for (long long i = 0; i < M; i++) {
		cr_assert_eq(t[i], want[i]);
		double g[7], loss, lse;
		ce_ref_row(x, AT_F16, (size_t)(i * N), N, t[i], &tuning, g, &loss, &lse);
		for (long long j = 0; j < N; j++)
			cr_assert_eq(ref[i * N + j], ref_saturate(g[j], AT_F16), "row %lld col %lld", i, j);
		cr_assert_eq(ref[M * N + 2 * i], ref_saturate(loss, AT_F32), "row %lld's loss", i);
		cr_assert_eq(ref[M * N + 2 * i + 1], ref_saturate(lse, AT_F32), "row %lld's lse", i);
	}
	free(x);
	free(ref);
}

Test(cross_entropy_ref, special_rows_are_the_contracts_edge_cases)
{
	const long long R = 8, N = 5, ld = 6;
	float x[8 * 6];
	long long t[8];
	for (int i = 0; i < 8 * 6; i++)
		x[i] = (float)(i % 7) - 3.0f;
	for (int i = 0; i < 8; i++)
		t[i] = i % N;
	ce_special_rows(x, AT_F32, R, N, ld, t);
	static const ce_options o = CE_OPTIONS_TUNING;
	double want_loss[8], want_lse[8];
	int nan_grad[8], zero_grad[8];
	for (long long i = 0; i < R; i++) {
		double g[5];
		ce_ref_row(x, AT_F32, (size_t)(i * ld), N, t[i], &o, g, &want_loss[i], &want_lse[i]);
		nan_grad[i] = zero_grad[i] = 1;
		for (int j = 0; j < N; j++) {
			nan_grad[i] &= isnan(g[j]) != 0;
			zero_grad[i] &= g[j] == 0.0;
		}
	}
	/* -inf row, +inf, NaN, target N, target -7: NaN loss and gradient */
	for (int i = 0; i < 5; i++)
		cr_assert(isnan(want_loss[i]) && nan_grad[i], "row %d: loss %g", i, want_loss[i]);
	cr_assert(isnan(want_lse[0]) && isnan(want_lse[1]) && isnan(want_lse[2]));
	cr_assert(isfinite(want_lse[3]) && isfinite(want_lse[4]), "a bad target keeps its lse");
	cr_assert_eq(t[3], N);
	cr_assert_eq(t[4], -7);
	/* ignored NaN row: loss 0, gradient 0, lse NaN */
	cr_assert_eq(want_loss[5], 0.0);
	cr_assert(zero_grad[5] && isnan(want_lse[5]));
	/* the last column, and a row as it was */
	cr_assert_eq(t[6], N - 1);
	cr_assert(isfinite(want_loss[6]) && isfinite(want_loss[7]));
	cr_assert_eq(t[7], 7 % N);
	/* the padding between rows is not touched */
	for (int i = 0; i < 8; i++)
		cr_assert_eq(x[i * 6 + 5], (float)((i * 6 + 5) % 7) - 3.0f);
	/* fewer rows: only those */
	float y[2 * 5] = { 0 };
	long long u[2] = { 0, 0 };
	ce_special_rows(y, AT_F32, 2, 5, 5, u);
	cr_assert(isinf(y[0]) && y[0] < 0 && isinf(y[7]) && y[7] > 0);
}

Test(cross_entropy_ref, is_described_with_its_kernel_and_one_read_one_write)
{
	const at_op *op = op_find("cross_entropy");
	cr_assert_eq(op, &cross_entropy_op);
	cr_assert_str_eq(op->kernel_name, "cross_entropy_kernel");
	cr_assert_not_null(strstr(op->kernel_signature, "const void *target, float *loss"));
	cr_assert_eq(op->gpu, &cross_entropy_gpu, "its own launch, through its hooks");
	cr_assert(cross_entropy_gpu.make && cross_entropy_gpu.free_state &&
		  cross_entropy_gpu.prepare && cross_entropy_gpu.launch &&
		  cross_entropy_gpu.poison && cross_entropy_gpu.compare && cross_entropy_gpu.probe,
		  "every step its own");
	cr_assert_eq(at_op_inputs(op), 1);
	cr_assert_eq(op->side_bytes, 8);
	cr_assert_eq(op->row_results, 2);
	cr_assert_eq(at_op_bytes_moved(op, AT_BF16, 4096, 128256), 2.0 * 4096 * 128256 * 2);
	cr_assert_null(softmax_op.gpu, "the other ops launch as before");
	cr_assert_eq(at_op_side_offset(&softmax_op, AT_F16, 3, 3), 18, "no side input: no padding");
}

Test(cross_entropy_ref, row_results_compare_nan_and_infinities_as_values)
{
	const double want[8] = { 1.0, 2.0, NAN, 3.0, INFINITY, 4.0, 0.0, 5.0 };
	const float loss_ok[4] = { 1.0f, NAN, INFINITY, 0.0f };
	long long bad, first;
	cr_assert_eq(ce_rows_error(loss_ok, want, 4, 0, &bad, &first), 0.0);
	cr_assert_eq(bad, 0);
	cr_assert_eq(first, -1);
	const float lse_off[4] = { 2.0f, 3.0f, 4.0f, 5.0f * (1 + 1e-3f) };
	double e = ce_rows_error(lse_off, want, 4, 1, &bad, &first);
	cr_assert_float_eq(e, 5e-3 / sqrt(54.0), 1e-7);
	const float loss_bad[4] = { 1.0f, 2.0f, -INFINITY, NAN };
	ce_rows_error(loss_bad, want, 4, 0, &bad, &first);
	cr_assert_eq(bad, 3);
	cr_assert_eq(first, 1);
}

/* ---- the templates ---- */

static const char *const ce_templates[] = { "cross_entropy_block", "cross_entropy_smem",
					    "cross_entropy_loop", "cross_entropy_cluster",
					    "cross_entropy_regs" };
#define NCE (sizeof ce_templates / sizeof *ce_templates)

TestSuite(cross_entropy_templates, .init = tf_load_templates, .fini = tf_free_templates);

Test(cross_entropy_templates, serve_cross_entropy_only_and_define_the_three_kernels)
{
	for (size_t t = 0; t < NCE; t++) {
		const tmpl_manifest *m = tf_template(ce_templates[t]);
		cr_assert_str_eq(m->op, "cross_entropy");
		cr_assert_eq(manifest_serves(m, "cross_entropy"), 1);
		cr_assert_eq(manifest_serves(m, "softmax"), 0);
		variant v;
		variant_defaults(&v, m, AT_BF16);
		char *src = tf_specialize(&v);
		cr_assert_not_null(strstr(src, "cross_entropy_kernel("), "%s", ce_templates[t]);
		cr_assert_not_null(strstr(src, "cross_entropy_prepare_kernel("));
		cr_assert_not_null(strstr(src, "cross_entropy_reduce_kernel("));
		cr_assert_not_null(strstr(src, CE_REDUCE_POLLED "("));
		free(src);
	}
	size_t n;
	const tmpl_manifest *all = tf_templates(&n);
	for (size_t i = 0; i < n; i++)
		if (strncmp(all[i].name, "cross_entropy", 13) != 0)
			cr_assert_eq(manifest_serves(&all[i], "cross_entropy"), 0, "%s", all[i].name);
}

Test(cross_entropy_templates, every_vocabulary_has_a_variant_and_smem_holds_its_row)
{
	const long long vocab[] = { 1, 7, 1000, 8192, 32000, 50257, 128256, 151936, 262144 };
	const at_dtype dts[] = { AT_F32, AT_F16, AT_BF16 };
	for (size_t k = 0; k < sizeof vocab / sizeof *vocab; k++)
		for (int d = 0; d < 3; d++) {
			variant *vs;
			size_t n = tf_enumerate(tf_template("cross_entropy_loop"), 90, dts[d], 64,
						vocab[k], &vs);
			cr_assert_gt(n, 0, "V = %lld %s: no looped variant", vocab[k],
				     at_dtype_name(dts[d]));
			free(vs);
		}
	/* bf16 32000 and f32 16384 still fit in registers */
	variant *vs;
	size_t n = tf_enumerate(tf_template("cross_entropy_block"), 90, AT_BF16, 4096, 32000, &vs);
	cr_assert_gt(n, 0);
	free(vs);
	/* the staged row: 50257 f32 (201 KB) fits whole; bf16 128256 (256 KB)
	 * as far as a CTA's shared memory holds; bf16 262144 (512 KB) not */
	n = tf_enumerate(tf_template("cross_entropy_smem"), 90, AT_F32, 64, 50257, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 64, 50257);
		cr_assert_eq(g.dyn_smem, 50260 * 4);
		cr_assert_eq(g.max_n, 50260);
	}
	free(vs);
	n = tf_enumerate(tf_template("cross_entropy_smem"), 90, AT_BF16, 64, 128256, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 64, 128256);
		cr_assert_lt(g.dyn_smem, 128256 * 2);
		cr_assert_gt(g.dyn_smem, 200 * 1024);
		cr_assert_eq(g.dyn_smem % 16, 0);
		cr_assert_eq(g.max_n, 128256);
	}
	free(vs);
	n = tf_enumerate(tf_template("cross_entropy_smem"), 90, AT_BF16, 64, 262144, &vs);
	cr_assert_eq(n, 0);
	free(vs);
	/* past that, a cluster holds the row: 2 CTAs of 256 KB for bf16 262144
	 * do not fit, 4 do */
	n = tf_enumerate(tf_template("cross_entropy_cluster"), 90, AT_BF16, 64, 262144, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 64, 262144);
		cr_assert_geq(tf_value(&vs[i], "cluster"), 4);
		cr_assert_eq(g.ctas_per_row, tf_value(&vs[i], "cluster"));
		cr_assert_eq(g.dyn_smem, 262144 * 2 / g.ctas_per_row);
	}
	free(vs);
	n = tf_enumerate(tf_template("cross_entropy_cluster"), 80, AT_BF16, 64, 262144, &vs);
	cr_assert_eq(n, 0, "clusters need sm_90");
	free(vs);
	/* or a cluster's registers: every slice fits its CTA, no shared memory */
	n = tf_enumerate(tf_template("cross_entropy_regs"), 90, AT_BF16, 4096, 262144, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 4096, 262144);
		const long long held = tf_value(&vs[i], "threads") * tf_value(&vs[i], "elems_per_thread");
		cr_assert_eq(g.ctas_per_row, tf_value(&vs[i], "cluster"));
		cr_assert_geq(held * g.ctas_per_row, 262144);
		cr_assert_eq(g.dyn_smem, 0);
	}
	free(vs);
	n = tf_enumerate(tf_template("cross_entropy_regs"), 80, AT_BF16, 4096, 32000, &vs);
	cr_assert_eq(n, 0, "clusters need sm_90");
	free(vs);
	n = tf_enumerate(tf_template("cross_entropy_regs"), 90, AT_BF16, 4096, 4096, &vs);
	cr_assert_eq(n, 0, "rows of 4096 fit one CTA");
	free(vs);
}

/* An odd vocabulary fits a cluster between the powers of two: GPT-2's
 * 50257 over 5 CTAs of 128 at 80 logits fills 98% of the held slots (4 x
 * 256 x 56, the best of 2, 4, 8 and 16 CTAs, 88%; the sweep's winner went
 * from 83% to 94% of a copy on the H200). */
Test(cross_entropy_templates, regs_fills_an_odd_vocabulary_with_a_cluster_between_powers_of_two)
{
	variant *vs;
	size_t n = tf_enumerate(tf_template("cross_entropy_regs"), 90, AT_BF16, 4096, 50257, &vs);
	double fullest = 0, fullest_pow2 = 0;
	for (size_t i = 0; i < n; i++) {
		const long long cluster = tf_value(&vs[i], "cluster");
		const double full = 50257.0 / (double)(cluster * tf_value(&vs[i], "threads") *
						    tf_value(&vs[i], "elems_per_thread"));
		cr_assert_leq(full, 1.0);
		if (full > fullest)
			fullest = full;
		if ((cluster & (cluster - 1)) == 0 && full > fullest_pow2)
			fullest_pow2 = full;
	}
	free(vs);
	cr_assert_gt(fullest, 0.98, "the fullest hold at 50257: %.3f", fullest);
	cr_assert_lt(fullest_pow2, 0.9, "the fullest power-of-two hold at 50257: %.3f", fullest_pow2);
}

/* Every variant of template name at (dt, M, N), compiled once a distinct
 * source; returns how many it compiled. */
static size_t compile_every_variant(tf_seen *seen, const char *name, at_dtype dt, long long M,
				    long long N)
{
	const tmpl_manifest *m = tf_template(name);
	variant *vs;
	size_t n = tf_enumerate(m, 90, dt, M, N, &vs), compiled = 0;
	cr_assert_gt(n, 0, "%s %s has no variant at %lld x %lld", name, at_dtype_name(dt), M, N);
	for (size_t i = 0; i < n; i++) {
		char *src = tf_specialize(&vs[i]);
		if (tf_seen_add(seen, src)) {
			free(src);
			continue;
		}
		compiled_kernel k;
		/* cross_entropy_regs' bound keeps 3-4 CTAs a multiprocessor where
		 * ptxas wants more registers: its half-precision variants of 48-64
		 * logits a thread spill 16-160 bytes, and win (bf16 4096 x 32000:
		 * 75.1% of a copy with 40 bytes spilled, 60.4% without) */
		tf_compile_within(&vs[i], src, 90,
				  strcmp(name, "cross_entropy_regs") == 0 ? 256 : 0, &k);
		compiled_kernel_free(&k);
		compiled++;
	}
	free(vs);
	return compiled;
}

/* The registers and spilled bytes ptxas' log gives kernel name. */
static void kernel_resources(const char *log, const char *name, int *regs, int *spills)
{
	char what[128];
	snprintf(what, sizeof what, "Function properties for %s\n", name);
	const char *p = strstr(log, what);
	cr_assert_not_null(p, "no %s in the log:\n%s", name, log);
	const char *spill = strstr(p, "bytes spill stores"), *used = strstr(p, "Used ");
	cr_assert(spill && used, "%s", p);
	while (spill > p && spill[-1] == ' ')
		spill--;
	while (spill > p && spill[-1] >= '0' && spill[-1] <= '9')
		spill--;
	*spills = atoi(spill);
	*regs = atoi(used + 5);
}

/* cross_entropy_regs in bf16, 4 CTAs a row of 256 threads, holding `ept`
 * logits a thread, compiled by NVRTC for sm_90 into k. */
static void compile_regs_bf16(const char *ept, compiled_kernel *k)
{
	variant v;
	at_error err;
	variant_defaults(&v, tf_template("cross_entropy_regs"), AT_BF16);
	const char *const set[] = { "cluster=4", "threads=256", "vec=8", ept };
	for (size_t i = 0; i < sizeof set / sizeof *set; i++)
		cr_assert_eq(variant_set(&v, set[i], &err), 0, "%s", err.msg);
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	tf_compile_ptx(&v, 90, k);
}

/* cross_entropy_regs' plain kernel (no soft-cap, no smoothing) takes the
 * every-option kernel's arguments and has registers of its own: bf16 at
 * 64 logits a thread fits 64 without a spill, 4 CTAs of 256 a
 * multiprocessor, where the soft-cap's and smoothing's code make the
 * other take 80 (82.3% of a copy against 78.6%: NOTES). */
Test(cross_entropy_templates, regs_plain_kernel_has_its_own_registers, .timeout = 120)
{
	compiled_kernel k;
	compile_regs_bf16("elems_per_thread=64", &k);
	cr_assert_not_null(strstr(k.ptx, ".entry " CE_PLAIN_KERNEL "("));
	cr_assert_not_null(strstr(k.ptx, CE_PLAIN_KERNEL "_param_14"), "fifteen arguments");
	cr_assert_null(strstr(k.ptx, CE_PLAIN_KERNEL "_param_15"), "fifteen arguments");
	int plain_regs, plain_spills, all_regs, all_spills;
	kernel_resources(k.log, CE_PLAIN_KERNEL, &plain_regs, &plain_spills);
	kernel_resources(k.log, "cross_entropy_kernel", &all_regs, &all_spills);
	cr_assert_eq(plain_spills, 0);
	cr_assert_leq(plain_regs, 64, "4 CTAs of 256 threads");
	cr_assert_gt(all_regs, plain_regs, "the options' code sets the other kernel's registers");
	compiled_kernel_free(&k);
}

/* At 32 bf16 logits a thread the plain kernel fits 40 registers without a
 * spill, 6 CTAs of 256 a multiprocessor: its columns are 32-bit (64-bit
 * ones kept it at 48 with a spill, 5 CTAs; 0.747 of a copy against 0.698
 * at 4096 x 32000 on the H200: NOTES). */
Test(cross_entropy_templates, regs_plain_kernel_at_32_logits_fits_six_ctas, .timeout = 120)
{
	compiled_kernel k;
	compile_regs_bf16("elems_per_thread=32", &k);
	int regs, spills;
	kernel_resources(k.log, CE_PLAIN_KERNEL, &regs, &spills);
	cr_assert_eq(spills, 0);
	cr_assert_leq(regs, 40, "6 CTAs of 256 threads");
	compiled_kernel_free(&k);
}

/* The kernel a cross_entropy call launches: the plain one only where it
 * exists and the options are plain (a soft-cap of 0 or below is none). */
Test(cross_entropy_templates, the_plain_kernel_serves_plain_options_only)
{
	ce_launch_args a = { .softcap = 0.0f, .label_smoothing = 0.0f, .z_loss = 1e-4f };
	cr_assert(ce_options_plain(&a), "z-loss and ignored rows are the plain kernel's");
	a.softcap = -1.0f;
	cr_assert(ce_options_plain(&a));
	a.softcap = 30.0f;
	cr_assert_not(ce_options_plain(&a));
	a.softcap = 0.0f;
	a.label_smoothing = 0.1f;
	cr_assert_not(ce_options_plain(&a));
	const atdi_op_desc *d = atdi_op_desc_of(ATDI_CROSS_ENTROPY);
	cr_assert_str_eq(d->aux[ATDI_CE_PLAIN], CE_PLAIN_KERNEL);
	cr_assert_str_eq(d->aux[ATDI_CE_DEPENDENT], CE_DEPENDENT_LAUNCH);
	cr_assert_str_eq(d->aux[ATDI_CE_SCALE_WAITS], CE_SCALE_WAITS);
	cr_assert_str_eq(d->aux[ATDI_CE_REDUCE_POLLED], CE_REDUCE_POLLED);
	cr_assert_str_eq(d->aux[ATDI_CE_LOSSES_POLLED], CE_LOSSES_POLLED);
	cr_assert_eq(d->aux_optional,
		     1u << ATDI_CE_PLAIN | 1u << ATDI_CE_DEPENDENT | 1u << ATDI_CE_SCALE_WAITS |
			     1u << ATDI_CE_REDUCE_POLLED | 1u << ATDI_CE_LOSSES_POLLED,
		     "the plain kernel, the polled reduce and the markers are optional");
	cr_assert_eq(d->aux_marker,
		     1u << ATDI_CE_DEPENDENT | 1u << ATDI_CE_SCALE_WAITS | 1u << ATDI_CE_LOSSES_POLLED,
		     "the markers are never launched");
	cr_assert_eq(d->main_waits, 1u << ATDI_CE_DEPENDENT);
	cr_assert_eq(d->marker_waits[ATDI_CE_DEPENDENT], 1u << ATDI_CE_REDUCE);
	cr_assert_eq(d->marker_waits[ATDI_CE_SCALE_WAITS], 1u << ATDI_CE_SCALE);
	cr_assert_eq(d->marker_waits[ATDI_CE_LOSSES_POLLED], 1u << ATDI_CE_REDUCE_POLLED);
	cr_assert_eq(d->aux_shared,
		     1u << ATDI_CE_PREPARE | 1u << ATDI_CE_REDUCE | 1u << ATDI_CE_SCALE |
			     1u << ATDI_CE_REDUCE_POLLED,
		     "the one-CTA kernels and the scale are the same for every variant");
	for (int op = 0; op < ATDI_NOPS; op++)
		if (op != ATDI_CROSS_ENTROPY)
			cr_assert_eq(atdi_op_desc_of(op)->aux_optional | atdi_op_desc_of(op)->aux_shared,
				     0u);
}

/* The PTX of entry in ptx, up to the next entry ("" if absent), into a
 * malloc'd string. */
static char *entry_ptx(const char *ptx, const char *entry)
{
	char head[128];
	snprintf(head, sizeof head, ".entry %s(", entry);
	const char *p = strstr(ptx, head);
	if (!p)
		return strdup("");
	const char *end = strstr(p + 1, ".entry ");
	size_t n = end ? (size_t)(end - p) : strlen(p);
	char *out = malloc(n + 1);
	cr_assert_not_null(out);
	memcpy(out, p, n);
	out[n] = '\0';
	return out;
}

/* Every template's code may be launched as programmatic dependent launches
 * (the library does so where the markers are): its row kernels, reduce and
 * scale wait for the kernel before them before reading what it wrote, and
 * prepare lets the row kernel start. A row kernel without the wait would
 * read the gradient's scale before prepare wrote it. */
Test(cross_entropy_templates, every_template_waits_for_prepare_and_says_so, .timeout = 240)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	for (size_t t = 0; t < NCE; t++) {
		variant v;
		variant_defaults(&v, tf_template(ce_templates[t]), AT_BF16);
		cr_assert_eq(variant_set(&v, "vec=8", &err), 0, "%s", err.msg); /* 16-byte vectors */
		compiled_kernel k;
		tf_compile_ptx(&v, 90, &k);
		cr_assert_not_null(strstr(k.ptx, ".entry " CE_DEPENDENT_LAUNCH "("), "%s",
				   ce_templates[t]);
		cr_assert_not_null(strstr(k.ptx, ".entry " CE_SCALE_WAITS "("), "%s",
				   ce_templates[t]);
		static const char *const waits[] = { "cross_entropy_kernel", CE_PLAIN_KERNEL,
						     "cross_entropy_reduce_kernel",
						     "cross_entropy_scale_kernel" };
		for (size_t i = 0; i < sizeof waits / sizeof *waits; i++) {
			char *body = entry_ptx(k.ptx, waits[i]);
			cr_assert(!*body || strstr(body, "griddepcontrol.wait"), "%s: %s does not wait",
				  ce_templates[t], waits[i]);
			cr_assert(i == 1 || *body, "%s: no %s", ce_templates[t], waits[i]);
			free(body);
		}
		char *prepare = entry_ptx(k.ptx, "cross_entropy_prepare_kernel");
		cr_assert_not_null(strstr(prepare, "griddepcontrol.launch_dependents"), "%s",
				   ce_templates[t]);
		free(prepare);
		compiled_kernel_free(&k);
	}
}

/* Every template's row kernels store each row's loss as the polled reduce
 * reads it (a strong store) and let reduce start only after waiting for
 * prepare (which marks the losses pending), and say so; the polled reduce
 * reads the losses strongly and waits for the row kernel at its end, so
 * that what follows it in the stream follows the row kernel. */
Test(cross_entropy_templates, every_template_stores_its_losses_for_the_polled_reduce,
     .timeout = 240)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	for (size_t t = 0; t < NCE; t++) {
		variant v;
		variant_defaults(&v, tf_template(ce_templates[t]), AT_BF16);
		cr_assert_eq(variant_set(&v, "vec=8", &err), 0, "%s", err.msg);
		compiled_kernel k;
		tf_compile_ptx(&v, 90, &k);
		cr_assert_not_null(strstr(k.ptx, ".entry " CE_LOSSES_POLLED "("), "%s",
				   ce_templates[t]);
		static const char *const rows[] = { "cross_entropy_kernel", CE_PLAIN_KERNEL };
		for (size_t i = 0; i < 2; i++) {
			char *body = entry_ptx(k.ptx, rows[i]);
			const char *wait = strstr(body, "griddepcontrol.wait");
			const char *start = strstr(body, "griddepcontrol.launch_dependents");
			cr_assert(!*body || strstr(body, "st.relaxed.gpu.global.f32"),
				  "%s: %s stores its losses weakly", ce_templates[t], rows[i]);
			cr_assert(!*body || (wait && (!start || start > wait)),
				  "%s: %s lets reduce start before it waited for prepare",
				  ce_templates[t], rows[i]);
			free(body);
		}
		char *reduce = entry_ptx(k.ptx, CE_REDUCE_POLLED);
		const char *load = strstr(reduce, "ld.relaxed.gpu.global");
		const char *wait = strstr(reduce, "griddepcontrol.wait");
		cr_assert(load && wait && wait > load, "%s: the polled reduce", ce_templates[t]);
		free(reduce);
		compiled_kernel_free(&k);
	}
}

/* The first of two strings in text, or NULL. */
static const char *first_of(const char *text, const char *a, const char *b)
{
	const char *p = strstr(text, a), *q = strstr(text, b);
	return !p ? q : !q ? p : p < q ? p : q;
}

/* The templates that cut a row over a cluster wait for prepare after their
 * CTA's sums and before the cluster's merge (a first wave that waited
 * before its max sat idle while prepare's reads queued behind its loads;
 * one that read the scale after the merge waited for it before every
 * write), and store the loss after the wait (prepare marks it pending);
 * prepare issues its first targets' reads before it lets the row kernel
 * start (session 70, H200: results/h200/ce-scale-under-merge-*). */
Test(cross_entropy_templates, cluster_rows_wait_for_prepare_between_their_sums_and_the_merge,
     .timeout = 240)
{
	static const char *const cluster_templates[] = { "cross_entropy_regs",
							  "cross_entropy_cluster" };
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	for (size_t t = 0; t < 2; t++) {
		variant v;
		variant_defaults(&v, tf_template(cluster_templates[t]), AT_BF16);
		cr_assert_eq(variant_set(&v, "vec=8", &err), 0, "%s", err.msg);
		compiled_kernel k;
		tf_compile_ptx(&v, 90, &k);
		char *body = entry_ptx(k.ptx, CE_PLAIN_KERNEL);
		const char *sums = first_of(body, "bar.sync", "barrier.sync ");
		const char *wait = strstr(body, "griddepcontrol.wait");
		const char *push = strstr(body, "st.async");
		const char *loss = strstr(body, "st.relaxed.gpu.global.f32");
		cr_assert(sums && wait && push && loss, "%s: the plain kernel's PTX",
			  cluster_templates[t]);
		cr_assert(sums < wait && wait < push, "%s: waits for prepare outside its sums and merge",
			  cluster_templates[t]);
		cr_assert(wait < loss, "%s: stores a loss before prepare marked it pending",
			  cluster_templates[t]);
		free(body);
		char *prepare = entry_ptx(k.ptx, "cross_entropy_prepare_kernel");
		const char *read = strstr(prepare, "ld.global");
		const char *start = strstr(prepare, "griddepcontrol.launch_dependents");
		cr_assert(read && start && read < start, "%s: prepare lets the row kernel start "
			  "before it reads a target", cluster_templates[t]);
		free(prepare);
		compiled_kernel_free(&k);
	}
}

/* PTX for an architecture before sm_90 has no griddepcontrol, so it
 * defines neither marker: the driver may compile it for a newer GPU (the
 * built-in's compute_75 PTX), where a marker would have the library launch
 * kernels dependent that do not wait. */
Test(cross_entropy_templates, code_without_the_waits_defines_no_marker, .timeout = 240)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	variant v;
	variant_defaults(&v, tf_template("cross_entropy_loop"), AT_F16);
	compiled_kernel k;
	tf_compile_ptx(&v, 80, &k);
	cr_assert_null(strstr(k.ptx, "griddepcontrol"));
	cr_assert_null(strstr(k.ptx, ".entry " CE_DEPENDENT_LAUNCH "("));
	cr_assert_null(strstr(k.ptx, ".entry " CE_SCALE_WAITS "("));
	cr_assert_not_null(strstr(k.ptx, ".entry cross_entropy_scale_kernel("));
	compiled_kernel_free(&k);
}

typedef struct ce_compile_case {
	char name[32];
} ce_compile_case;

ParameterizedTestParameters(cross_entropy_templates, every_variant_compiles_at_a_few_shapes)
{
	static ce_compile_case cases[] = { { "cross_entropy_block" }, { "cross_entropy_smem" },
					   { "cross_entropy_loop" }, { "cross_entropy_cluster" },
					   { "cross_entropy_regs" } };
	return cr_make_param_array(ce_compile_case, cases, sizeof cases / sizeof *cases);
}

/* A template at a time (each source holds two row kernels, the plain one
 * and the every-option one: the five took over 600 s in one test on CI's
 * two cores with no compile cache). */
ParameterizedTest(ce_compile_case *c, cross_entropy_templates, every_variant_compiles_at_a_few_shapes,
		  .timeout = 900)
{
	static const struct {
		const char *name;
		at_dtype dt;
		long long M, N;
	} shapes[] = {
		{ "cross_entropy_block", AT_F32, 4096, 1000 },
		{ "cross_entropy_block", AT_F16, 4096, 8192 },
		{ "cross_entropy_block", AT_BF16, 64, 32000 },
		{ "cross_entropy_block", AT_F32, 1, 16384 },
		{ "cross_entropy_smem", AT_F32, 64, 50257 },
		{ "cross_entropy_smem", AT_BF16, 4096, 100000 },
		{ "cross_entropy_smem", AT_F16, 1, 32000 },
		{ "cross_entropy_smem", AT_BF16, 64, 151936 },
		{ "cross_entropy_loop", AT_F32, 1, 1000 },
		{ "cross_entropy_loop", AT_BF16, 64, 262144 },
		{ "cross_entropy_loop", AT_F16, 4096, 151936 },
		{ "cross_entropy_cluster", AT_F32, 64, 262144 },
		{ "cross_entropy_cluster", AT_BF16, 1, 262144 },
		{ "cross_entropy_cluster", AT_F16, 4096, 151936 },
		{ "cross_entropy_regs", AT_BF16, 4096, 32000 },
		{ "cross_entropy_regs", AT_F32, 64, 131072 },
		{ "cross_entropy_regs", AT_F16, 4096, 8193 },
	};
	tf_seen seen = { 0 };
	size_t total = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		if (strcmp(shapes[i].name, c->name) == 0)
			total += compile_every_variant(&seen, shapes[i].name, shapes[i].dt,
						       shapes[i].M, shapes[i].N);
	cr_assert_gt(total, 0, "%s: no shape of its own", c->name);
	cr_log_info("%s: %zu kernels compiled", c->name, total);
	tf_seen_free(&seen);
}

/* ---- the command line and the configs ---- */

TestSuite(cross_entropy_cli, .init = tmp_setup, .fini = tmp_teardown);

Test(cross_entropy_cli, templates_lists_the_op_and_its_kernel)
{
	tr_result r = RUN("templates");
	tr_expect_status(&r, 0);
	for (size_t t = 0; t < NCE; t++)
		tr_expect_in(r.out, ce_templates[t]);
	tr_expect_in(r.out, "op: cross_entropy: cross-entropy loss");
	tr_expect_in(r.out, "kernel cross_entropy_kernel(elem *dx, const elem *x, const void *target");
	tr_free(&r);
}

Test(cross_entropy_cli, gen_prints_and_compiles_a_variant, .timeout = 60)
{
	tr_result r = RUN("gen", "--template", "cross_entropy_block", "--op", "cross_entropy",
			  "--dtype", "bf16", "--param", "elems_per_thread=32", "--param", "vec=8",
			  "-M", "4096", "-N", "8192", "--compile");
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "elem_t *dx, const elem_t *x, const void *target");
	tr_expect_in(r.out, "cross_entropy_kernel(CE_KERNEL_PARAMS)");
	tr_expect_in(r.out, "cross_entropy_plain_kernel(CE_KERNEL_PARAMS)");
	tr_expect_in(r.out, "0 bytes spilled, 0 bytes stack");
	tr_free(&r);
	r = RUN("gen", "--template", "cross_entropy_smem", "--op", "softmax");
	tr_expect_status(&r, 2);
	tr_free(&r);
}

Test(cross_entropy_cli, selftest_says_it_does_not_run_the_op_yet)
{
	tr_result r = RUN("selftest", "--op", "cross_entropy");
	cr_assert_neq(r.status, 0);
	tr_free(&r);
}

/* The shapes of config path: all cross_entropy, served by a template each,
 * none above max_bytes of f32 logits. */
static size_t check_config(const char *path, double max_bytes)
{
	sweep_plan p;
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&p, path, "templates", &err), 0, "%s: %s", path, err.msg);
	for (size_t i = 0; i < p.nshapes; i++) {
		const sweep_shape *s = &p.shapes[i];
		cr_assert_str_eq(s->op, "cross_entropy");
		cr_assert((double)s->M * (double)s->N * 4 <= max_bytes, "%lld x %lld", s->M, s->N);
		int served = 0;
		for (size_t t = 0; t < p.ntemplates; t++)
			served += plan_template_serves(&p.templates[t], s);
		cr_assert_eq(served, (int)NCE, "%lld x %lld: every cross_entropy template", s->M, s->N);
	}
	size_t n = p.nshapes;
	plan_free(&p);
	return n;
}

Test(cross_entropy_cli, the_configs_load_with_their_shapes)
{
	cr_assert_eq(check_config("configs/cross_entropy.yaml", 4.0 * (1 << 30)), 69);
	cr_assert_eq(check_config("configs/quick-cross-entropy.yaml", 1.0 * (1 << 30)), 14);
}

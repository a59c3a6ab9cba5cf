/* Tests for the softmax and log_softmax backward ops on the tuner's side:
 * their references (values worked out by hand, PyTorch's NaN and inf
 * rules), their check input, their descriptions (two inputs, bytes moved),
 * the check data of an op of two inputs, and their templates: the
 * manifests load and serve both ops, and every variant compiles for sm_90
 * at a few shapes, clean (no spills, no stack). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "gen/specialize.h"
#include "tests/template_fixture.h"
#include "tuner/check/backward_rows.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"
#include "tuner/model/store.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/plan.h"

TestSuite(backward_op);

/* The reference of one f32 row of N <= 8 (y, dy) under op. */
static void ref_of(const at_op *op, const float *y, const float *dy, long long N, double *out)
{
	const void *in[2] = { y, dy };
	ref_op_rows(op, in, AT_F32, 1, N, N, out);
}

Test(backward_op, softmax_backward_is_y_times_dy_minus_the_dot)
{
	/* dot = 0.5 + 0.5 + 1 = 2 */
	const float y[3] = { 0.5f, 0.25f, 0.25f }, dy[3] = { 1.0f, 2.0f, 4.0f };
	double dx[3];
	ref_of(&softmax_backward_op, y, dy, 3, dx);
	cr_assert_eq(dx[0], -0.5);
	cr_assert_eq(dx[1], 0.0);
	cr_assert_eq(dx[2], 0.5);
}

Test(backward_op, log_softmax_backward_is_dy_minus_e_to_the_y_times_the_sum)
{
	/* sum dy = 7; e^y = 0.5, 0.25, 0.25 */
	const float y[3] = { logf(0.5f), logf(0.25f), logf(0.25f) }, dy[3] = { 1.0f, 2.0f, 4.0f };
	double dx[3];
	ref_of(&log_softmax_backward_op, y, dy, 3, dx);
	cr_assert_float_eq(dx[0], 1.0 - 3.5, 1e-6);
	cr_assert_float_eq(dx[1], 2.0 - 1.75, 1e-6);
	cr_assert_float_eq(dx[2], 4.0 - 1.75, 1e-6);
}

Test(backward_op, nan_spreads_over_the_row_as_in_pytorch)
{
	const float y[3] = { 0.5f, 0.25f, 0.25f };
	const float dy_nan[3] = { 1.0f, NAN, 4.0f };
	double dx[3];
	ref_of(&softmax_backward_op, y, dy_nan, 3, dx);
	for (int j = 0; j < 3; j++)
		cr_assert(isnan(dx[j]), "softmax_backward dx[%d] = %g, want NaN", j, dx[j]);
	const float y_nan[3] = { 0.5f, NAN, 0.25f }, dy[3] = { 1.0f, 2.0f, 4.0f };
	ref_of(&softmax_backward_op, y_nan, dy, 3, dx);
	for (int j = 0; j < 3; j++)
		cr_assert(isnan(dx[j]), "a NaN in y: dx[%d] = %g, want NaN", j, dx[j]);
	const float ly[3] = { -1.0f, -2.0f, -3.0f };
	ref_of(&log_softmax_backward_op, ly, dy_nan, 3, dx);
	for (int j = 0; j < 3; j++)
		cr_assert(isnan(dx[j]), "log_softmax_backward dx[%d] = %g, want NaN", j, dx[j]);
}

Test(backward_op, minus_inf_in_log_softmax_output_gives_dy)
{
	/* e^-inf = 0: dx = dy there, the rest as usual */
	const float y[3] = { 0.0f, -INFINITY, -INFINITY }, dy[3] = { 1.0f, 2.0f, -3.0f };
	double dx[3];
	ref_of(&log_softmax_backward_op, y, dy, 3, dx);
	cr_assert_eq(dx[0], 1.0 - 1.0 * 0.0);
	cr_assert_eq(dx[1], 2.0);
	cr_assert_eq(dx[2], -3.0);
	/* an infinite sum: 0 * inf is NaN at the -inf elements, as in float64 */
	const float dy_inf[3] = { 1.0f, INFINITY, 0.0f };
	ref_of(&log_softmax_backward_op, y, dy_inf, 3, dx);
	cr_assert(isnan(dx[2]));
	/* softmax's zeros (a masked forward row) give dx = 0 */
	const float zeros[3] = { 0.0f, 0.0f, 0.0f };
	ref_of(&softmax_backward_op, zeros, dy, 3, dx);
	for (int j = 0; j < 3; j++)
		cr_assert_eq(dx[j], 0.0);
}

Test(backward_op, descriptions_read_two_inputs)
{
	const char *names[] = { "softmax_backward", "log_softmax_backward" };
	for (int i = 0; i < 2; i++) {
		const at_op *op = op_find(names[i]);
		cr_assert_not_null(op, "%s", names[i]);
		cr_assert_eq(at_op_inputs(op), 2);
		cr_assert_str_eq(op->kernel_name, "softmax_backward_kernel");
		cr_assert_eq(op->softmax_baselines, 0);
		cr_assert_not_null(op->ref_row_inputs);
		/* y and dy read, dx written */
		cr_assert_eq(at_op_bytes_moved(op, AT_F32, 4096, 1000), 3.0 * 4096 * 1000 * 4);
		cr_assert_eq(at_op_bytes_moved(op, AT_BF16, 64, 32000), 3.0 * 64 * 32000 * 2);
	}
	cr_assert_eq(at_op_inputs(&softmax_op), 1, "a description that says nothing has one input");
}

/* On the GPU the tuner starts dy 256-byte aligned, as tensors allocated
 * one by one are: packed after y, an f16 591129 x 2 y left dy 4 bytes past
 * a vector boundary, and every vector template took its element path
 * there. An op of one input keeps its side input where it was. */
Test(backward_op, the_tuners_second_input_starts_aligned_on_the_gpu)
{
	const at_op *op = op_find("softmax_backward");
	cr_assert_eq(at_op_device_input_stride(op, AT_F16, 591129, 2), 2364672);
	cr_assert_eq(at_op_device_input_stride(op, AT_F32, 1, 100001) % 256, 0);
	cr_assert_geq(at_op_device_input_stride(op, AT_F32, 1, 100001), 400004);
	cr_assert_eq(at_op_device_input_stride(op, AT_BF16, 4096, 1024), 4096 * 1024 * 2,
		     "no padding where the bytes are aligned");
	const at_op *ce = op_find("cross_entropy");
	cr_assert_eq(at_op_device_input_stride(ce, AT_F16, 13, 7), 13 * 7 * 2);
	cr_assert_eq(at_op_device_input_stride(&softmax_op, AT_F16, 3, 3), 18);
}

/* Row i of plane k of the check data (dense M x N planes). */
static double at_plane(const void *x, at_dtype dt, long long M, long long N, int k, long long i,
		       long long j)
{
	return ref_load(x, dt, (size_t)(k * M * N + i * N + j));
}

Test(backward_op, check_input_is_a_forward_output_and_a_gradient)
{
	const long long M = 40, N = 100;
	const at_dtype dts[] = { AT_F32, AT_BF16 };
	for (int d = 0; d < 2; d++) {
		at_dtype dt = dts[d];
		double tol = dt == AT_F32 ? 1e-5 : 2e-2;
		void *x = malloc((size_t)(2 * M * N) * at_dtype_size(dt));
		softmax_backward_check_input(x, dt, M, N, 3);
		for (long long i = 0; i < M; i++) {
			double sum = 0;
			for (long long j = 0; j < N; j++) {
				double y = at_plane(x, dt, M, N, 0, i, j), dy = at_plane(x, dt, M, N, 1, i, j);
				cr_assert(y >= 0 && y <= 1, "row %lld: y = %g", i, y);
				cr_assert(dy >= -8 && dy <= 8, "row %lld: dy = %g", i, dy);
				sum += y;
			}
			cr_assert_float_eq(sum, 1.0, tol, "%s row %lld sums to %g", at_dtype_name(dt), i,
					   sum);
		}
		/* the last row's gradient is constant */
		for (long long j = 0; j < N; j++)
			cr_assert_eq(at_plane(x, dt, M, N, 1, M - 1, j), 1.5);
		log_softmax_backward_check_input(x, dt, M, N, 3);
		long long minus_inf = 0;
		for (long long i = 0; i < M; i++) {
			double sum = 0;
			for (long long j = 0; j < N; j++) {
				double y = at_plane(x, dt, M, N, 0, i, j);
				cr_assert(y <= 0, "log_softmax output %g", y);
				minus_inf += isinf(y) != 0;
				sum += exp(y);
			}
			cr_assert_float_eq(sum, 1.0, tol, "%s row %lld: e^y sums to %g", at_dtype_name(dt),
					   i, sum);
		}
		cr_assert_gt(minus_inf, 0, "the masked and huge rows give -inf");
		free(x);
	}
}

/* y is computed on every core, a range of rows each: the same bits as
 * the forward of the softmax check input one row at a time. */
Test(backward_op, check_input_rows_are_the_forwards_one_row_at_a_time)
{
	const long long M = 37, N = 301;
	for (int log_output = 0; log_output < 2; log_output++) {
		for (int d = 0; d < 3; d++) {
			at_dtype dt = (at_dtype)d;
			size_t size = at_dtype_size(dt), count = (size_t)(M * N);
			void *got = malloc(2 * count * size), *want = malloc(2 * count * size);
			(log_output ? log_softmax_backward_check_input
				    : softmax_backward_check_input)(got, dt, M, N, 9);
			extreme_check_input(want, dt, M, N, 9);
			double row[301];
			for (long long i = 0; i < M; i++) {
				(log_output ? ref_log_softmax_row : ref_softmax_row)(want, dt,
										 (size_t)(i * N), N, row);
				for (long long j = 0; j < N; j++)
					ref_store(want, dt, (size_t)(i * N + j), ref_saturate(row[j], dt));
			}
			cr_assert(memcmp(got, want, count * size) == 0, "%s, log %d: y differs",
				  at_dtype_name(dt), log_output);
			free(got);
			free(want);
		}
	}
}

typedef struct visits {
	int *seen;
} visits;

static void visit_rows(void *ctx, long long begin, long long end)
{
	visits *v = ctx;
	for (long long i = begin; i < end; i++)
		__atomic_add_fetch(&v->seen[i], 1, __ATOMIC_RELAXED);
}

/* Every row exactly once, however few rows there are for the cores. */
Test(backward_op, parallel_rows_visit_each_row_once)
{
	static const long long counts[] = { 0, 1, 2, 3, 65, 1000 };
	for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
		int seen[1000] = { 0 };
		visits v = { seen };
		ref_parallel_rows(visit_rows, &v, counts[c]);
		for (long long i = 0; i < 1000; i++)
			cr_assert_eq(seen[i], i < counts[c] ? 1 : 0, "M = %lld: row %lld seen %d times",
				     counts[c], i, seen[i]);
	}
}

Test(backward_op, check_data_takes_both_inputs)
{
	const long long M = 9, N = 33;
	float *x = malloc((size_t)(2 * M * N) * sizeof *x);
	double *ref = malloc((size_t)(M * N) * sizeof *ref), row[33];
	ref_op_check_data(&softmax_backward_op, AT_F32, M, N, 5, x, ref);
	for (long long i = 0; i < M; i++) {
		const void *in[2] = { x, x + M * N };
		ref_softmax_backward_row(in, AT_F32, (size_t)(i * N), N, row);
		for (long long j = 0; j < N; j++)
			cr_assert_eq(ref[i * N + j], row[j], "row %lld col %lld", i, j);
	}
	free(x);
	free(ref);
}

/* ---- the templates ---- */

static const char *const backward_templates[] = { "softmax_backward_warp",
						  "softmax_backward_block",
						  "softmax_backward_smem",
						  "softmax_backward_cluster",
						  "softmax_backward_loop",
						  "softmax_backward_tiny",
						  "softmax_backward_split",
						  "softmax_backward_tile" };
#define NBT (sizeof backward_templates / sizeof *backward_templates)

TestSuite(backward_templates, .init = tf_load_templates, .fini = tf_free_templates);

Test(backward_templates, serve_both_ops_and_define_the_log_one)
{
	for (size_t t = 0; t < NBT; t++) {
		const tmpl_manifest *m = tf_template(backward_templates[t]);
		cr_assert_str_eq(m->op, "softmax_backward");
		cr_assert_eq(manifest_serves(m, "softmax_backward"), 1);
		cr_assert_eq(manifest_serves(m, "log_softmax_backward"), 2);
		cr_assert_eq(manifest_serves(m, "softmax"), 0);
		variant v;
		variant_defaults(&v, m, AT_F32);
		v.op = manifest_source_op(m, "log_softmax_backward");
		char *src = tf_specialize(&v);
		cr_assert_not_null(strstr(src, "#define OP_LOG_SOFTMAX_BACKWARD 1\n"));
		cr_assert_not_null(strstr(src, "softmax_backward_kernel("));
		free(src);
	}
	/* no forward template serves a backward op, nor the reverse */
	size_t n;
	const tmpl_manifest *all = tf_templates(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].op, "softmax") == 0)
			cr_assert_eq(manifest_serves(&all[i], "softmax_backward"), 0, "%s", all[i].name);
}

/* Whether a 16-byte load in ptx has its words split into 16-bit halves in
 * its own basic block (before the block's branch or blank line): ptxas then
 * waits for the load there, and the next load issues only once it is
 * back. */
static int splits_a_load(const char *ptx)
{
	static const char load[] = "ld.global.v4.u32", split[] = "mov.b32 \t{%rs";
	for (const char *p = strstr(ptx, load); p; p = strstr(p + 1, load)) {
		const char *end = strstr(p, "\n\n"), *bra = strstr(p, "bra"), *s = strstr(p, split);
		if (bra && (!end || bra < end))
			end = bra;
		if (s && (!end || s < end))
			return 1;
	}
	return 0;
}

/* In half precision every template's loads of y and dy (load_vec0) meet
 * their masked path as whole words, so none waits for the one before: met
 * as halves, each load's words were split where it was issued, and
 * softmax_backward_warp bf16 32768 x 1000 ran at 54% of a copy, every load
 * a round trip (H200, 2026-11-29; fails with that load_vec0). */
Test(backward_templates, half_precision_loads_are_not_split_where_they_issue, .timeout = 120)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	static const at_dtype halves[] = { AT_F16, AT_BF16 };
	for (size_t t = 0; t < NBT; t++)
		for (size_t d = 0; d < 2; d++) {
			/* element by element but for whole vectors of rows, or
			 * through shared memory by cp.async (their own tests) */
			if (manifest_param_index(tf_template(backward_templates[t]), "vec") < 0 ||
			    strcmp(backward_templates[t], "softmax_backward_tile") == 0)
				continue;
			variant v;
			variant_defaults(&v, tf_template(backward_templates[t]), halves[d]);
			cr_assert_eq(variant_set(&v, "vec=8", &err), 0, "%s", err.msg);
			compiled_kernel k;
			tf_compile_ptx(&v, 90, &k);
			const char *dt = at_dtype_name(halves[d]);
			cr_assert_not_null(strstr(k.ptx, "ld.global.v4.u32"), "%s %s: no 16-byte load",
					   backward_templates[t], dt);
			cr_assert_not(splits_a_load(k.ptx), "%s %s: a load's words split where it issues",
				      backward_templates[t], dt);
			compiled_kernel_free(&k);
		}
}

/* Every variant of template at (dt, M, N), compiled once a distinct
 * source, for op (NULL: its own); returns how many it compiled. */
static size_t compile_every_variant(tf_seen *seen, const char *name, at_dtype dt, long long M,
				    long long N, const char *op)
{
	const tmpl_manifest *m = tf_template(name);
	variant *vs;
	size_t n = tf_enumerate(m, 90, dt, M, N, &vs), compiled = 0;
	cr_assert_gt(n, 0, "%s %s has no variant at %lld x %lld", name, at_dtype_name(dt), M, N);
	for (size_t i = 0; i < n; i++) {
		vs[i].op = op ? manifest_source_op(m, op) : NULL;
		char *src = tf_specialize(&vs[i]);
		if (tf_seen_add(seen, src)) {
			free(src);
			continue;
		}
		compiled_kernel k;
		/* softmax_backward_split's f32 variant of 256 threads x 3 a
		 * multiprocessor (80 registers: one task's slice written while
		 * the next one's comes in) spills 24-32 bytes unpeeled at fit 0
		 * or with prefetch (without 768 threads a multiprocessor f32
		 * lost 3.5%, H200 sweeps); log_softmax_backward's at 1024
		 * threads a multiprocessor up to 16 in half precision, outside
		 * the loops over windows */
		tf_compile_within(&vs[i], src, 90,
				  strcmp(name, "softmax_backward_split") == 0 ? 32 : 0, &k);
		compiled_kernel_free(&k);
		compiled++;
	}
	free(vs);
	return compiled;
}

Test(backward_templates, every_variant_compiles_at_a_few_shapes, .timeout = 300)
{
	static const struct {
		const char *name;
		at_dtype dt;
		long long M, N;
		const char *op;
	} shapes[] = {
		{ "softmax_backward_warp", AT_F16, 4096, 100, NULL },
		{ "softmax_backward_warp", AT_F32, 1, 7, "log_softmax_backward" },
		{ "softmax_backward_block", AT_BF16, 64, 18000, NULL },
		{ "softmax_backward_block", AT_F32, 4096, 12000, "log_softmax_backward" },
		{ "softmax_backward_loop", AT_F16, 64, 131072, NULL },
		{ "softmax_backward_loop", AT_F32, 1, 1000, "log_softmax_backward" },
		{ "softmax_backward_cluster", AT_BF16, 1024, 100001, NULL },
		{ "softmax_backward_cluster", AT_F32, 64, 131072, "log_softmax_backward" },
		{ "softmax_backward_tiny", AT_F16, 591129, 2, NULL },
		{ "softmax_backward_tiny", AT_F32, 16, 200, "log_softmax_backward" },
		{ "softmax_backward_split", AT_F32, 62, 1241920, NULL },
		{ "softmax_backward_split", AT_BF16, 8, 500001, "log_softmax_backward" },
		{ "softmax_backward_tile", AT_F16, 131072, 63, NULL },
		{ "softmax_backward_tile", AT_F32, 1000003, 21, "log_softmax_backward" },
	};
	tf_seen seen = { 0 };
	size_t total = 0;
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
		total += compile_every_variant(&seen, shapes[i].name, shapes[i].dt, shapes[i].M,
					       shapes[i].N, shapes[i].op);
	cr_log_info("%zu kernels compiled", total);
	tf_seen_free(&seen);
}

/* The staged template at the long rows it is for: every variant of both
 * ops compiles without spills (tf_compile_clean). */
Test(backward_templates, every_smem_variant_compiles_at_long_rows, .timeout = 900)
{
	static const long long shapes[][2] = {
		{ 1024, 32000 }, { 4096, 32000 }, { 64, 65536 }, { 16384, 20000 }
	};
	const at_dtype dts[] = { AT_F32, AT_F16, AT_BF16 };
	tf_seen seen = { 0 };
	size_t total = 0;
	for (int d = 0; d < 3; d++) {
		for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
			total += compile_every_variant(&seen, "softmax_backward_smem", dts[d],
						       shapes[i][0], shapes[i][1], NULL);
		total += compile_every_variant(&seen, "softmax_backward_smem", dts[d], 4096, 32000,
					       "log_softmax_backward");
	}
	cr_log_info("%zu kernels compiled", total);
	tf_seen_free(&seen);
}

/* The staged rows: bf16 32000 (y and dy, 125 KB) whole in one CTA, in part
 * with two a multiprocessor, one stage only; f16 20000 in two stages too;
 * f32 32000 in part; f32 65536 (44%) still, f32 131072 (22%) not: there
 * the looped template serves. */
Test(backward_templates, smem_stages_what_fits)
{
	const tmpl_manifest *m = tf_template("softmax_backward_smem");
	variant *vs;
	size_t n = tf_enumerate(m, 90, AT_BF16, 4096, 32000, &vs);
	cr_assert_gt(n, 0);
	int two = 0;
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 4096, 32000);
		cr_assert_eq(g.dyn_smem % 32, 0);
		cr_assert_eq(tf_value(&vs[i], "stages"), 1, "two rows of bf16 32000 do not fit");
		if (tf_value(&vs[i], "ctas_per_sm") == 1) {
			cr_assert_eq(tf_value(&vs[i], "unroll"), 1, "no unstaged tail to unroll");
			cr_assert_eq(g.dyn_smem, 2 * 32000 * 2);
			cr_assert_eq(g.max_n, 32000);
		} else {
			two++;
			/* two CTAs' shares, their slots and reserved 1 KB in 228 KB */
			cr_assert_leq(2 * (g.dyn_smem + 512 + 1024), 228 * 1024);
			cr_assert_lt(g.dyn_smem, 2 * 32000 * 2);
			cr_assert_eq(g.max_n, 32000);
		}
	}
	cr_assert_gt(two, 0);
	free(vs);
	n = tf_enumerate(m, 90, AT_F32, 64, 32000, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 64, 32000);
		cr_assert_lt(g.dyn_smem, 2 * 32000 * 4);
		cr_assert_leq(g.dyn_smem + 512 + 1024, 228 * 1024);
		cr_assert_eq(g.max_n, 32000);
	}
	free(vs);
	/* a row shorter than the tuned one's staging: served up to what it holds */
	n = tf_enumerate(m, 90, AT_F16, 64, 20000, &vs);
	cr_assert_gt(n, 0);
	int stages2 = 0;
	for (size_t i = 0; i < n; i++) {
		launch_geometry g = tf_geometry(&vs[i], 90, 64, 20000);
		const long long stages = tf_value(&vs[i], "stages");
		if (tf_value(&vs[i], "ctas_per_sm") <= 2) /* a share of 114 KB or more */
			cr_assert_eq(g.dyn_smem, stages * 2 * 20000 * 2);
		else /* four or eight CTAs' shares: as much as one holds */
			cr_assert_lt(g.dyn_smem, 2 * 20000 * 2);
		cr_assert_eq(g.max_n, 20000);
		if (stages == 2) {
			stages2++;
			cr_assert_eq(tf_value(&vs[i], "refill"), 0);
			cr_assert_eq(tf_value(&vs[i], "persistent"), 1);
			cr_assert_leq(tf_value(&vs[i], "ctas_per_sm"), 1, "two rows of 78 KB");
		}
	}
	cr_assert_gt(stages2, 0, "two rows of f16 20000 fit");
	free(vs);
	n = tf_enumerate(m, 90, AT_F32, 64, 65536, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tf_value(&vs[i], "ctas_per_sm"), 1);
	free(vs);
	n = tf_enumerate(m, 90, AT_F32, 64, 131072, &vs);
	cr_assert_eq(n, 0);
	free(vs);
	n = tf_enumerate(m, 90, AT_BF16, 64, 1024, &vs);
	cr_assert_eq(n, 0, "registers hold rows of 1K faster");
	free(vs);
	n = tf_enumerate(m, 90, AT_BF16, 16384, 4096, &vs);
	cr_assert_gt(n, 0, "from 2K the staged copy wins");
	int many = 0;
	for (size_t i = 0; i < n; i++)
		many |= tf_value(&vs[i], "ctas_per_sm") >= 4 && tf_value(&vs[i], "threads") == 128;
	cr_assert(many, "several small CTAs a multiprocessor at short rows");
	free(vs);
}

/* The quick long-row config: both backward ops, and at every shape a
 * variant of the staged template to meet the looped one. */
Test(backward_templates, the_quick_smem_config_reaches_the_staged_template)
{
	sweep_plan p;
	at_error err = { { 0 } };
	const char *path = "configs/quick-softmax-backward-smem.yaml";
	cr_assert_eq(plan_load(&p, path, "templates", &err), 0, "%s: %s", path, err.msg);
	cr_assert_eq(p.nshapes, 14);
	for (size_t i = 0; i < p.nshapes; i++) {
		const sweep_shape *s = &p.shapes[i];
		cr_assert(strcmp(s->op, "softmax_backward") == 0 ||
				  strcmp(s->op, "log_softmax_backward") == 0,
			  "%s", s->op);
		variant *vs;
		size_t n = tf_enumerate(tf_template("softmax_backward_smem"), 90, s->dtype, s->M,
					s->N, &vs);
		cr_assert_gt(n, 0, "%lld x %lld %s", s->M, s->N, at_dtype_name(s->dtype));
		free(vs);
	}
	plan_free(&p);
}

/* The backward sweep tunes each op at enough shapes for its performance
 * model (fitted at the sweep's end: the library then serves the shapes
 * between by it, not by the nearest winner), every regime at few and
 * many rows, in every dtype, rows beyond a cluster's shared memory
 * (softmax_backward_split's) among them, and tall matrices of rows of
 * hundreds at each offset from a 16-byte half-precision vector: 8 bytes
 * past, 4 and any even byte (the model had seen only aligned tall rows and
 * picked 0.6-0.75 of a copy at such drawn shapes, H200), and the rows
 * beyond a cluster at a few and at hundreds of rows (with 8 and 48 only,
 * log_softmax_backward's model chose 0.56 of a copy at f16 224 x 808364,
 * where the templates reach 0.78, H200), an odd medium row (with none
 * between 3001 and 100001, log_softmax_backward f16 5095 x 14631 chose
 * the block template at 0.90 of torch) and, at many rows, rows of a few
 * elements longer than a 16-byte vector of halves (f32 205173 x 11 was
 * 0.86 of torch.compile, with 2 and 7 only), and rows of one element at a
 * few rows and at many (with none, a refit chose softmax_backward_loop, a
 * CTA a row, for f32 2 x 1: 3.0 us against 2.5 for the tiny template's
 * kernel, H200). */
Test(backward_templates, the_sweep_config_gives_each_op_a_model)
{
	sweep_plan p;
	at_error err = { { 0 } };
	const char *path = "configs/softmax_backward.yaml";
	cr_assert_eq(plan_load(&p, path, "templates", &err), 0, "%s: %s", path, err.msg);
	const char *ops[] = { "softmax_backward", "log_softmax_backward" };
	for (size_t o = 0; o < 2; o++) {
		size_t shapes = 0, dtypes[3] = { 0 }, very_long = 0, odd_medium = 0, few_past_vector = 0;
		long long ones_fewest = -1, ones_most = 0; /* rows of one element */
		unsigned tall_offsets = 0; /* bit k: a tall row 2^k bytes past a vector */
		long long fewest = -1, most = 0, long_fewest = -1, long_most = 0, longest = 0;
		for (size_t i = 0; i < p.nshapes; i++) {
			const sweep_shape *s = &p.shapes[i];
			if (strcmp(s->op, ops[o]) != 0)
				continue;
			shapes++;
			dtypes[s->dtype]++;
			if (s->N >= 500000) { /* beyond 8 CTAs' shared memory in half precision */
				very_long++;
				long_fewest = long_fewest < 0 || s->M < long_fewest ? s->M : long_fewest;
				long_most = s->M > long_most ? s->M : long_most;
				longest = s->N > longest ? s->N : longest;
			}
			if (s->M >= 131072 && s->N >= 100 && s->N % 8 != 0)
				tall_offsets |= s->N % 2 ? 1u : s->N % 4 ? 2u : 4u;
			if (s->N >= 2048 && s->N <= 32000) {
				fewest = fewest < 0 || s->M < fewest ? s->M : fewest;
				most = s->M > most ? s->M : most;
			}
			odd_medium += s->N > 3001 && s->N < 100001 && s->N % 2 == 1;
			few_past_vector += s->M >= 65536 && s->N > 8 && s->N < 32;
			if (s->N == 1) {
				ones_fewest = ones_fewest < 0 || s->M < ones_fewest ? s->M : ones_fewest;
				ones_most = s->M > ones_most ? s->M : ones_most;
			}
		}
		cr_assert_geq(shapes, 3 * MODEL_MIN_SHAPES, "%s: %zu shapes", ops[o], shapes);
		for (int d = 0; d < 3; d++)
			cr_assert_eq(dtypes[d], shapes / 3, "%s: every dtype alike", ops[o]);
		cr_assert_leq(fewest, 64, "%s: medium rows at few rows", ops[o]);
		cr_assert_geq(most, 16384, "%s: medium rows at many rows", ops[o]);
		cr_assert_geq(very_long, 6, "%s: rows beyond a cluster, in every dtype", ops[o]);
		cr_assert_eq(long_fewest, 1,
			     "%s: a single row beyond a cluster (the split's grid against one cluster)",
			     ops[o]);
		cr_assert_geq(long_most, 256, "%s: rows beyond a cluster at hundreds of rows", ops[o]);
		cr_assert_geq(longest, 4000000, "%s: rows of 4M elements (the longest asked for)", ops[o]);
		cr_assert_eq(tall_offsets, 7u, "%s: tall rows 2, 4 and 8 bytes past a vector",
			     ops[o]);
		cr_assert_geq(odd_medium, 3, "%s: an odd medium row past 3001, in every dtype", ops[o]);
		cr_assert_geq(few_past_vector, 3,
			      "%s: rows of a few elements past a vector at many rows, in every dtype",
			      ops[o]);
		cr_assert(ones_fewest > 0 && ones_fewest <= 16, "%s: rows of one at a few rows", ops[o]);
		cr_assert_geq(ones_most, 65536, "%s: rows of one at many rows", ops[o]);
	}
	plan_free(&p);
}

/* tuner/check/ref_ahead.c: a shape's input and reference, computed now or ahead
 * in a background thread, are exactly what ref_fill_random, the planted
 * extreme rows and ref_softmax give for its seed, whichever way they were
 * made. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tuner/check/extreme_rows.h"
#include "tuner/check/ref_ahead.h"
#include "tuner/check/reference.h"
#include "tuner/ops/ops.h"

/* Checks x and ref against a direct computation of (dt, M, N, seed): the
 * reference is ref_softmax's doubles, each rounded to float. */
static void expect_shape(const void *x, const float *ref, at_dtype dt, long long M, long long N,
			 uint64_t seed)
{
	size_t count = (size_t)(M * N);
	void *want_x = malloc(count * at_dtype_size(dt));
	double *want_ref = malloc(count * sizeof *want_ref);
	ref_fill_random(want_x, dt, count, seed);
	cr_assert_eq(extreme_plant_rows(want_x, dt, M, N),
		     M < EXTREME_FINITE_COUNT ? M : EXTREME_FINITE_COUNT);
	ref_softmax(want_x, dt, M, N, N, want_ref);
	cr_assert_eq(memcmp(x, want_x, count * at_dtype_size(dt)), 0, "%s %lldx%lld: input differs",
		     at_dtype_name(dt), M, N);
	for (size_t i = 0; i < count; i++) {
		float want = (float)want_ref[i];
		cr_assert_eq(memcmp(&ref[i], &want, sizeof want), 0,
			     "%s %lldx%lld: reference differs at %zu", at_dtype_name(dt), M, N, i);
	}
	free(want_x);
	free(want_ref);
}

/* ref_ahead_acquire of softmax, whose reference has no row results. */
static void acquire(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		    const void **x, const float **ref)
{
	const double *rows;
	ref_ahead_acquire(op, dt, M, N, seed, x, ref, &rows);
	cr_assert_not_null(rows);
}

Test(ref_ahead, acquired_without_preparing_is_computed_now)
{
	const void *x;
	const float *ref;
	acquire(&softmax_op, AT_F32, 37, 300, 11, &x, &ref);
	expect_shape(x, ref, AT_F32, 37, 300, 11);
	ref_ahead_release();
}

Test(ref_ahead, prepared_then_acquired_is_the_same_data)
{
	const void *x;
	const float *ref;
	ref_ahead_prepare(&softmax_op, AT_BF16, 64, 1000, 5);
	acquire(&softmax_op, AT_BF16, 64, 1000, 5, &x, &ref);
	expect_shape(x, ref, AT_BF16, 64, 1000, 5);
	ref_ahead_release();
}

Test(ref_ahead, a_wrong_guess_still_gives_the_shape_asked_for_and_keeps_the_guess)
{
	const void *x;
	const float *ref;
	ref_ahead_prepare(&softmax_op, AT_F16, 16, 512, 1);
	acquire(&softmax_op, AT_F32, 16, 256, 2, &x, &ref);
	expect_shape(x, ref, AT_F32, 16, 256, 2);
	acquire(&softmax_op, AT_F16, 16, 512, 1, &x, &ref); /* the guess, now asked for */
	expect_shape(x, ref, AT_F16, 16, 512, 1);
	acquire(&softmax_op, AT_F32, 16, 256, 3, &x, &ref); /* another seed: other data */
	expect_shape(x, ref, AT_F32, 16, 256, 3);
	ref_ahead_release();
}

Test(ref_ahead, a_sequence_of_growing_shapes_each_prepared_ahead)
{
	const void *x;
	const float *ref;
	for (long long N = 128; N <= 2048; N += 384) {
		acquire(&softmax_op, AT_F32, 32, N, (uint64_t)N, &x, &ref);
		ref_ahead_prepare(&softmax_op, AT_F32, 32, N + 384, (uint64_t)(N + 384));
		expect_shape(x, ref, AT_F32, 32, N, (uint64_t)N);
	}
	ref_ahead_release();
}

Test(ref_ahead, preparing_twice_and_preparing_the_current_shape_are_harmless)
{
	const void *x, *x2;
	const float *ref, *ref2;
	acquire(&softmax_op, AT_F32, 8, 100, 9, &x, &ref);
	ref_ahead_prepare(&softmax_op, AT_F32, 8, 100, 9);
	ref_ahead_prepare(&softmax_op, AT_F32, 8, 200, 9);
	ref_ahead_prepare(&softmax_op, AT_F32, 8, 200, 9);
	acquire(&softmax_op, AT_F32, 8, 100, 9, &x2, &ref2);
	cr_assert_eq(x2, x, "the current shape is handed out again, not recomputed");
	cr_assert_eq(ref2, ref);
	expect_shape(x2, ref2, AT_F32, 8, 100, 9);
	acquire(&softmax_op, AT_F32, 8, 200, 9, &x, &ref);
	expect_shape(x, ref, AT_F32, 8, 200, 9);
	ref_ahead_release();
}

Test(ref_ahead, shape_seeds_differ_by_dtype_and_shape_and_sweep)
{
	uint64_t a = ref_shape_seed(1, AT_F32, 4096, 1024);
	cr_assert_eq(a, ref_shape_seed(1, AT_F32, 4096, 1024));
	cr_assert_neq(a, ref_shape_seed(2, AT_F32, 4096, 1024));
	cr_assert_neq(a, ref_shape_seed(1, AT_BF16, 4096, 1024));
	cr_assert_neq(a, ref_shape_seed(1, AT_F32, 4096, 1152));
	cr_assert_neq(a, ref_shape_seed(1, AT_F32, 2048, 1024));
}

Test(ref_ahead, shapes_prepared_ahead_come_in_turn_and_done_frees_a_slot)
{
	const void *x, *x2;
	const float *ref, *ref2;
	acquire(&softmax_op, AT_F32, 16, 300, 1, &x, &ref);
	/* every slot but the handed-out one takes a shape; one more does not */
	for (int k = 0; k < REF_AHEAD_SLOTS - 1; k++)
		ref_ahead_prepare(&softmax_op, k % 2 ? AT_BF16 : AT_F16, 16, 400 + 100 * k,
				  (uint64_t)(2 + k));
	cr_assert_eq(ref_ahead_pending(), REF_AHEAD_SLOTS - 1);
	const long long extra_n = 400 + 100 * (REF_AHEAD_SLOTS - 1);
	ref_ahead_prepare(&softmax_op, AT_F32, 16, extra_n, 99);
	cr_assert_eq(ref_ahead_pending(), REF_AHEAD_SLOTS - 1, "every slot taken: not prepared");
	expect_shape(x, ref, AT_F32, 16, 300, 1);
	acquire(&softmax_op, AT_F16, 16, 400, 2, &x, &ref);
	expect_shape(x, ref, AT_F16, 16, 400, 2);
	/* the first shape stays ready (it may be asked for again) */
	cr_assert_eq(ref_ahead_pending(), REF_AHEAD_SLOTS - 1);
	ref_ahead_done();
	ref_ahead_prepare(&softmax_op, AT_F32, 16, extra_n, 99); /* the slot 400 had */
	cr_assert_eq(ref_ahead_pending(), REF_AHEAD_SLOTS);
	for (int k = 1; k < REF_AHEAD_SLOTS - 1; k++) {
		acquire(&softmax_op, k % 2 ? AT_BF16 : AT_F16, 16, 400 + 100 * k,
				  (uint64_t)(2 + k), &x, &ref);
		expect_shape(x, ref, k % 2 ? AT_BF16 : AT_F16, 16, 400 + 100 * k, (uint64_t)(2 + k));
	}
	acquire(&softmax_op, AT_F32, 16, extra_n, 99, &x2, &ref2);
	expect_shape(x2, ref2, AT_F32, 16, extra_n, 99);
	cr_assert_neq(x2, x, "another slot than the one just handed out");
	acquire(&softmax_op, AT_F32, 16, 300, 1, &x, &ref); /* the first shape, asked for again */
	expect_shape(x, ref, AT_F32, 16, 300, 1);
	ref_ahead_release();
}

Test(ref_ahead, a_shape_past_the_budget_is_computed_when_asked_for)
{
	const void *x;
	const float *ref;
	/* f32 16 x 1000: 64,000 bytes of input and 64,000 of reference */
	const size_t shape = 16 * 1000 * (4 + 4);
	ref_ahead_set_budget(3 * shape);
	acquire(&softmax_op, AT_F32, 16, 1000, 1, &x, &ref);
	ref_ahead_prepare(&softmax_op, AT_F32, 16, 1000, 2);
	cr_assert_eq(ref_ahead_pending(), 1);
	ref_ahead_prepare(&softmax_op, AT_F32, 16, 1000, 3);
	cr_assert_eq(ref_ahead_pending(), 2, "three shapes' bytes: within the budget");
	ref_ahead_prepare(&softmax_op, AT_F32, 16, 1000, 4);
	cr_assert_eq(ref_ahead_pending(), 2, "a fourth would pass the budget");
	acquire(&softmax_op, AT_F32, 16, 1000, 2, &x, &ref);
	expect_shape(x, ref, AT_F32, 16, 1000, 2);
	acquire(&softmax_op, AT_F32, 16, 1000, 4, &x, &ref); /* computed now */
	expect_shape(x, ref, AT_F32, 16, 1000, 4);
	acquire(&softmax_op, AT_F32, 16, 1000, 3, &x, &ref);
	expect_shape(x, ref, AT_F32, 16, 1000, 3);
	ref_ahead_release();
}

/* An op with row results (cross_entropy's loss and lse) and one of two
 * inputs: what acquire hands out is ref_op_check_data's, the M x N part
 * rounded to float, the row results as they are. */
static void expect_op_data(const char *name, at_dtype dt, long long M, long long N)
{
	const at_op *op = op_find(name);
	cr_assert_not_null(op, "%s", name);
	const void *x;
	const float *ref;
	const double *rows;
	ref_ahead_acquire(op, dt, M, N, 21, &x, &ref, &rows);
	size_t count = (size_t)(M * N), in = at_op_input_bytes(op, dt, M, N);
	void *want_x = malloc(in);
	double *want = malloc(at_op_ref_count(op, M, N) * sizeof *want);
	ref_op_check_data(op, dt, M, N, 21, want_x, want);
	cr_assert_eq(memcmp(x, want_x, in), 0, "%s: input differs", name);
	for (size_t i = 0; i < count; i++) {
		float w = (float)want[i];
		cr_assert_eq(memcmp(&ref[i], &w, sizeof w), 0, "%s: reference differs at %zu", name,
			     i);
	}
	cr_assert_eq(memcmp(rows, want + count, (size_t)M * (size_t)op->row_results * sizeof *rows),
		     0, "%s: row results differ", name);
	ref_ahead_release();
	free(want_x);
	free(want);
}

Test(ref_ahead, an_ops_row_results_and_second_input_come_with_its_float_reference)
{
	expect_op_data("cross_entropy", AT_BF16, 37, 700);
	expect_op_data("cross_entropy", AT_F32, 5, 1);
	expect_op_data("softmax_backward", AT_F16, 19, 333);
	expect_op_data("log_softmax", AT_F32, 7, 4099);
}

/* Tests of `autotune selftest` without a GPU: the cases' shapes, the input
 * images (special rows, strides, guards), the output check against real
 * images computed here on the host (correct ones pass, each kind of damage
 * is caught with its reason), and the driver and table with a fake runner
 * (all pass, some fail, a dead context, a template no shape reaches). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/strbuf.h"
#include "tuner/device.h"
#include "tuner/check/reference.h"
#include "tuner/selftest/selftest.h"
#include "tuner/selftest/selftest_cases.h"
#include "tuner/selftest/selftest_report.h"

#include "tests/tmp_folder.h"

TestSuite(selftest_cases);
TestSuite(selftest_check);
TestSuite(selftest_driver, .init = tmp_setup, .fini = tmp_teardown);

static const at_dtype dtypes[] = { AT_F32, AT_F16, AT_BF16 };

/* ---- shapes ------------------------------------------------------------------ */

Test(selftest_cases, sizes_reach_n_1_odd_n_n_off_the_vector_width_and_whole_vectors)
{
	st_shape s[ST_MAX_SHAPES];
	size_t n = st_case_shapes(ST_CASE_SIZES, ST_MODE_FULL, s, ST_MAX_SHAPES);
	static const long long want[] = { 1, 7, 33, 1001, 4097, 12289, 70001 };
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		int found = 0;
		for (size_t i = 0; i < n; i++)
			found |= s[i].N == want[k];
		cr_assert(found, "no sizes shape with N = %lld", want[k]);
	}
	int whole = 0;
	for (size_t i = 0; i < n; i++) {
		/* odd, but for one row length of whole vectors (the warp
		 * template's unchecked path) with an odd M */
		if (s[i].N == 512) {
			cr_assert(s[i].M % 2 == 1, "M = %lld is even", s[i].M);
			whole++;
		} else {
			cr_assert(s[i].N % 2 == 1, "N = %lld is even", s[i].N);
		}
		cr_assert(s[i].ldx == s[i].N && s[i].ldy == s[i].N && !s[i].in_place && s[i].guards);
		cr_assert_leq(s[i].M * s[i].N, 32LL << 20, "a sizes shape is too big for the host");
	}
	cr_assert_eq(whole, 1, "no sizes shape of whole vectors");
}

Test(selftest_cases, strided_shapes_have_two_different_strides_beyond_n)
{
	st_shape s[ST_MAX_SHAPES];
	size_t n = st_case_shapes(ST_CASE_STRIDED, ST_MODE_FULL, s, ST_MAX_SHAPES);
	cr_assert_gt(n, 0);
	int aligned = 0, odd = 0;
	for (size_t i = 0; i < n; i++) {
		cr_assert_gt(s[i].ldx, s[i].N);
		cr_assert_gt(s[i].ldy, s[i].N);
		cr_assert_neq(s[i].ldx, s[i].ldy);
		cr_assert(!s[i].in_place);
		if (s[i].misalign == 0) {
			/* 16-byte rows in every dtype */
			cr_assert_eq(s[i].ldx % 8, 0);
			cr_assert_eq(s[i].ldy % 8, 0);
			aligned++;
		} else {
			/* odd strides from a start one element off 16 bytes:
			 * the kernels must take their scalar path */
			cr_assert_eq(s[i].misalign, 1);
			cr_assert_neq(s[i].ldx % 8, 0);
			odd++;
		}
	}
	cr_assert_eq(aligned, odd, "each row length has both kinds");
}

Test(selftest_cases, in_place_shares_one_stride)
{
	st_shape s[ST_MAX_SHAPES];
	size_t n = st_case_shapes(ST_CASE_INPLACE, ST_MODE_FULL, s, ST_MAX_SHAPES);
	int strided = 0;
	for (size_t i = 0; i < n; i++) {
		cr_assert(s[i].in_place);
		cr_assert_eq(s[i].ldx, s[i].ldy);
		strided += s[i].ldx > s[i].N;
	}
	cr_assert_gt(strided, 0, "no in-place shape with padding");
}

Test(selftest_cases, big_shapes_pass_2_to_the_31_and_quick_skips_them)
{
	st_shape s[ST_MAX_SHAPES];
	size_t n = st_case_shapes(ST_CASE_BIG, ST_MODE_FULL, s, ST_MAX_SHAPES);
	cr_assert_geq(n, 3);
	for (size_t i = 0; i < n; i++) {
		cr_assert_gt(s[i].M * s[i].N, 1LL << 31);
		/* the last two rows lie wholly beyond element 2^31 */
		cr_assert_geq((s[i].M - 2) * s[i].N, 1LL << 31);
		/* and not much more: 8.6 GB per f32 buffer at most */
		cr_assert_leq(s[i].M * s[i].N, (1LL << 31) + 3 * s[i].N);
		cr_assert_leq(s[i].M * s[i].N * 4, 8600000000LL, "%lld x %lld: over 8.6 GB in f32",
			      s[i].M, s[i].N);
	}
	cr_assert_eq(st_case_shapes(ST_CASE_BIG, ST_MODE_QUICK, s, ST_MAX_SHAPES), 0);
}

Test(selftest_cases, sanitizer_shapes_are_small_and_without_guards)
{
	st_shape s[ST_MAX_SHAPES];
	for (int c = 0; c < ST_CASE_COUNT; c++) {
		size_t n = st_case_shapes((st_case)c, ST_MODE_SANITIZE, s, ST_MAX_SHAPES);
		cr_assert(c == ST_CASE_STRIDED ? n > 0 : n == 0, "case %s: %zu shapes",
			  st_case_name((st_case)c), n);
		for (size_t i = 0; i < n; i++) {
			cr_assert_eq(s[i].guards, 0);
			cr_assert_leq(s[i].M * s[i].N, 1 << 20);
			/* the image is exactly the rows (and the misalignment) */
			cr_assert_eq(st_image_elems(&s[i], AT_F32, s[i].ldy),
				     (size_t)((s[i].M - 1) * s[i].ldy + s[i].N + s[i].misalign));
		}
	}
}

Test(selftest_cases, case_lists_parse_by_name)
{
	unsigned mask = 0;
	cr_assert_eq(st_case_list_parse("in-place,2^31", &mask), 0);
	cr_assert_eq(mask, (1u << ST_CASE_INPLACE) | (1u << ST_CASE_BIG));
	cr_assert_eq(st_case_list_parse("sizes", &mask), 0, "a second list adds to the mask");
	cr_assert_eq(mask, (1u << ST_CASE_SIZES) | (1u << ST_CASE_INPLACE) | (1u << ST_CASE_BIG));
	static const char *const bad[] = { "", "size", "sizes,", ",sizes", "sizes,,strided",
					   "2^32", "STRIDED" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		unsigned m = 1u << ST_CASE_SPECIAL;
		cr_assert_eq(st_case_list_parse(bad[i], &m), -1, "\"%s\" parsed", bad[i]);
		cr_assert_eq(m, 1u << ST_CASE_SPECIAL, "\"%s\" changed the mask", bad[i]);
	}
}

Test(selftest_cases, labels)
{
	char buf[160];
	st_shape s = { ST_CASE_STRIDED, 263, 1001, 1004, 1002, 0, 0, 1, 1, 0, 0 };
	st_shape_label(&s, buf, sizeof buf);
	cr_assert_str_eq(buf, "M=263 N=1001 ldx=1004 ldy=1002 (rows start 1 element off 16 B)");
	st_shape p = { ST_CASE_INPLACE, 4, 33, 48, 48, 1, 0, 0, 1, 0, 0 };
	st_shape_label(&p, buf, sizeof buf);
	cr_assert_str_eq(buf, "M=4 N=33 ld=48 in place");
	cr_assert_str_eq(st_case_name(ST_CASE_BIG), "2^31");
}

/* ---- images --------------------------------------------------------------------- */

static uint32_t bits_at(const void *buf, at_dtype dt, size_t i)
{
	if (dt == AT_F32) {
		uint32_t u;
		memcpy(&u, (const char *)buf + 4 * i, 4);
		return u;
	}
	return ((const uint16_t *)buf)[i];
}

static void set_value(void *buf, at_dtype dt, size_t i, double v)
{
	if (dt == AT_F32)
		((float *)buf)[i] = (float)v;
	else if (dt == AT_F16)
		((uint16_t *)buf)[i] = at_f32_to_f16((float)v);
	else
		((uint16_t *)buf)[i] = at_f32_to_bf16((float)v);
}

Test(selftest_cases, input_image_guards_padding_and_rows)
{
	st_shape s = { ST_CASE_STRIDED, 5, 7, 13, 9, 0, 0, 1, 1, 0, 0 };
	for (size_t d = 0; d < 3; d++) {
		at_dtype dt = dtypes[d];
		size_t total = st_image_elems(&s, dt, s.ldx), front = st_front_elems(&s, dt);
		cr_assert_eq(front, ST_GUARD_BYTES / at_dtype_size(dt) + 1);
		cr_assert_eq(total, front + 4 * 13 + 7 + ST_GUARD_BYTES / at_dtype_size(dt));
		void *img = xmalloc(total * at_dtype_size(dt));
		st_fill_input(&s, dt, img, 42);
		uint32_t guard = st_guard_bits(dt);
		for (size_t i = 0; i < total; i++) {
			long long off = (long long)i - (long long)front;
			int in_row = off >= 0 && off < 4 * 13 + 7 && off % 13 < 7;
			double v = ref_load(img, dt, i);
			if (in_row)
				cr_assert(v >= -8 && v < 8, "%s element %zu = %g", at_dtype_name(dt), i, v);
			else
				cr_assert_eq(bits_at(img, dt, i), guard, "%s element %zu is not guard",
					     at_dtype_name(dt), i);
		}
		cr_assert(isnan(ref_load(img, dt, 0)), "the guard is not a NaN");
		free(img);
	}
}

Test(selftest_cases, output_image_starts_as_poison_in_the_rows)
{
	st_shape s = { ST_CASE_STRIDED, 3, 5, 8, 6, 0, 0, 0, 1, 0, 0 };
	void *img = xmalloc(st_image_elems(&s, AT_BF16, s.ldy) * 2);
	st_fill_output(&s, AT_BF16, img);
	size_t front = st_front_elems(&s, AT_BF16);
	cr_assert_eq(bits_at(img, AT_BF16, front), 0xffff);
	cr_assert_eq(bits_at(img, AT_BF16, front + 4), 0xffff);
	cr_assert_eq(bits_at(img, AT_BF16, front + 5), st_guard_bits(AT_BF16)); /* padding */
	cr_assert_eq(bits_at(img, AT_BF16, front + 6), 0xffff);                 /* row 1 */
	cr_assert_eq(bits_at(img, AT_BF16, front - 1), st_guard_bits(AT_BF16));
	free(img);
}

Test(selftest_cases, special_rows_and_their_reference)
{
	st_shape s = { ST_CASE_SPECIAL, 101, 33, 33, 33, 0, 1, 0, 1, 0, 0 };
	int seen[ST_ROW_KIND_COUNT] = { 0 };
	cr_assert_eq(st_row_kind_of(&s, 0), ST_ROW_ALL_NEG_INF);
	cr_assert_eq(st_row_kind_of(&s, 100), ST_ROW_NAN);
	cr_assert_eq(st_row_kind_of(&s, 99), ST_ROW_POS_INF);
	for (long long r = 0; r < s.M; r++)
		seen[st_row_kind_of(&s, r)]++;
	for (int k = 0; k < ST_ROW_KIND_COUNT; k++)
		cr_assert_gt(seen[k], 0, "no row of kind %s", st_row_kind_name((st_row_kind)k));
	cr_assert_gt(seen[ST_ROW_RANDOM], s.M / 2, "special rows must be among random rows");
	for (size_t d = 0; d < 3; d++) {
		at_dtype dt = dtypes[d];
		void *img = xmalloc(st_image_elems(&s, dt, s.ldx) * at_dtype_size(dt));
		st_fill_input(&s, dt, img, 7);
		const char *rows = (const char *)img + st_front_elems(&s, dt) * at_dtype_size(dt);
		double *ref = xmalloc((size_t)(s.M * s.N) * sizeof *ref);
		ref_softmax(rows, dt, s.M, s.N, s.ldx, ref);
		for (long long r = 0; r < s.M; r++) {
			st_row_kind k = st_row_kind_of(&s, r);
			const double *row = ref + r * s.N;
			int nan_row = k == ST_ROW_ALL_NEG_INF || k == ST_ROW_NAN || k == ST_ROW_POS_INF;
			int nans = 0, ones = 0;
			double sum = 0;
			for (long long j = 0; j < s.N; j++) {
				nans += isnan(row[j]);
				ones += row[j] == 1.0;
				if (!isnan(row[j]))
					sum += row[j];
			}
			cr_assert_eq(nans, nan_row ? s.N : 0, "%s row %lld (%s): %d NaN", at_dtype_name(dt),
				     r, st_row_kind_name(k), nans);
			if (!nan_row)
				cr_assert_float_eq(sum, 1.0, 1e-12);
			if (k == ST_ROW_ONE_HOT)
				cr_assert_eq(ones, 1);
			if (k == ST_ROW_CONSTANT)
				cr_assert_float_eq(row[5], 1.0 / 33, 1e-15);
			if (k == ST_ROW_SOME_NEG_INF)
				cr_assert_eq(row[1], 0.0);
		}
		free(ref);
		free(img);
	}
	/* without special rows every row is random */
	s.special_rows = 0;
	cr_assert_eq(st_row_kind_of(&s, 0), ST_ROW_RANDOM);
}

/* ---- checks --------------------------------------------------------------------- */

typedef struct fixture {
	st_shape s;
	at_dtype dt;
	void *x, *y;
	double *ref;
	size_t front, y_elems;
} fixture;

/* The input, its reference, and a correct output image: the reference
 * rounded to the dtype, written into a fresh output image. */
static void make(fixture *f, st_shape s, at_dtype dt)
{
	f->s = s;
	f->dt = dt;
	size_t elem = at_dtype_size(dt);
	f->front = st_front_elems(&s, dt);
	f->x = xmalloc(st_image_elems(&s, dt, s.ldx) * elem);
	st_fill_input(&s, dt, f->x, 99);
	f->ref = xmalloc((size_t)(s.M * s.N) * sizeof *f->ref);
	ref_softmax((char *)f->x + f->front * elem, dt, s.M, s.N, s.ldx, f->ref);
	f->y_elems = st_image_elems(&s, dt, s.ldy);
	f->y = xmalloc(f->y_elems * elem);
	st_fill_output(&s, dt, f->y);
	for (long long r = 0; r < s.M; r++)
		for (long long j = 0; j < s.N; j++)
			set_value(f->y, dt, f->front + (size_t)(r * s.ldy + j), f->ref[r * s.N + j]);
}

static void unmake(fixture *f)
{
	free(f->x);
	free(f->y);
	free(f->ref);
}

static size_t at(const fixture *f, long long r, long long j)
{
	return f->front + (size_t)(r * f->s.ldy + j);
}

static void expect_fail(const fixture *f, const char *want)
{
	st_verdict v = st_check_output(&f->s, f->dt, f->y, f->ref);
	cr_assert_not(v.ok, "%s: the damage was not caught", want);
	cr_assert(strstr(v.reason, want), "reason \"%s\" lacks \"%s\"", v.reason, want);
}

Test(selftest_check, correct_outputs_pass_in_every_dtype)
{
	st_shape shapes[] = {
		{ ST_CASE_SPECIAL, 57, 33, 33, 33, 0, 1, 0, 1, 0, 0 },
		{ ST_CASE_STRIDED, 9, 1001, 1004, 1002, 0, 0, 1, 1, 0, 0 },
		{ ST_CASE_SIZES, 40, 1, 1, 1, 0, 0, 0, 1, 0, 0 },
		{ ST_CASE_SPECIAL, 40, 1, 1, 1, 0, 1, 0, 1, 0, 0 },
		{ ST_CASE_STRIDED, 3, 70001, 70016, 70032, 0, 0, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
		for (size_t d = 0; d < 3; d++) {
			fixture f;
			make(&f, shapes[i], dtypes[d]);
			st_verdict v = st_check_output(&f.s, f.dt, f.y, f.ref);
			cr_assert(v.ok, "shape %zu %s: %s", i, at_dtype_name(f.dt), v.reason);
			unmake(&f);
		}
}

Test(selftest_check, damage_is_caught_with_its_reason)
{
	st_shape s = { ST_CASE_SPECIAL, 23, 33, 40, 36, 0, 1, 0, 1, 0, 0 };
	for (size_t d = 0; d < 3; d++) {
		fixture f;
		make(&f, s, dtypes[d]);
		set_value(f.y, f.dt, at(&f, 3, 34), 0.0);
		expect_fail(&f, "wrote into the padding of row 3, column 34");
		unmake(&f);

		make(&f, s, dtypes[d]);
		set_value(f.y, f.dt, f.front - 2, 1.0);
		expect_fail(&f, "wrote before row 0, 2 elements before it");
		unmake(&f);

		make(&f, s, dtypes[d]);
		set_value(f.y, f.dt, at(&f, 22, 33), 1.0); /* just past the last row */
		expect_fail(&f, "wrote past the end of the last row, at its element N-1+1");
		unmake(&f);

		make(&f, s, dtypes[d]);
		memset((char *)f.y + at(&f, 4, 32) * at_dtype_size(f.dt), 0xff, at_dtype_size(f.dt));
		expect_fail(&f, "row 4 (random), column 32 was not written");
		unmake(&f);

		make(&f, s, dtypes[d]); /* row 0 is all -inf: NaN wanted */
		set_value(f.y, f.dt, at(&f, 0, 5), 0.25);
		expect_fail(&f, "row 0 (all -inf), column 5: got 0.25, want ");
		unmake(&f);

		make(&f, s, dtypes[d]);
		set_value(f.y, f.dt, at(&f, 6, 0), NAN);
		expect_fail(&f, "row 6 (random), column 0: got ");
		unmake(&f);

		make(&f, s, dtypes[d]);
		set_value(f.y, f.dt, at(&f, 8, 7), f.ref[8 * 33 + 7] + 0.5);
		expect_fail(&f, "row 8 (random): relative L2 error");
		unmake(&f);
	}
}

Test(selftest_check, n_1_must_be_exactly_one)
{
	st_shape s = { ST_CASE_SIZES, 10, 1, 1, 1, 0, 0, 0, 1, 0, 0 };
	fixture f;
	make(&f, s, AT_F32);
	set_value(f.y, f.dt, at(&f, 7, 0), 0.99999994);
	expect_fail(&f, "N = 1: row 7 (random) is 0.99999994, not exactly 1");
	unmake(&f);
}

Test(selftest_check, a_slightly_wrong_f32_row_fails_where_f16_passes)
{
	st_shape s = { ST_CASE_SIZES, 4, 1001, 1001, 1001, 0, 0, 0, 1, 0, 0 };
	fixture f;
	make(&f, s, AT_F32);
	for (long long j = 0; j < s.N; j++) /* 1e-4 relative: over f32's 1e-5 */
		set_value(f.y, f.dt, at(&f, 2, j), f.ref[2 * s.N + j] * 1.0001);
	expect_fail(&f, "row 2 (random): relative L2 error ");
	expect_fail(&f, " exceeds 1e-05");
	unmake(&f);
	make(&f, s, AT_F16);
	for (long long j = 0; j < s.N; j++)
		set_value(f.y, f.dt, at(&f, 2, j), f.ref[2 * s.N + j] * 1.0001);
	cr_assert(st_check_output(&f.s, f.dt, f.y, f.ref).ok);
	unmake(&f);
}

Test(selftest_check, a_row_below_the_dtypes_range_is_judged_by_its_floor)
{
	st_shape s = { ST_CASE_SIZES, 3, 7, 7, 7, 0, 0, 0, 1, 0, 0 };
	fixture f;
	make(&f, s, AT_F16);
	/* exact values of 1e-8 round to 0 in f16 (2^-25 and below): zeros pass */
	for (long long j = 0; j < s.N; j++) {
		f.ref[s.N + j] = 1e-8;
		set_value(f.y, f.dt, at(&f, 1, j), 0.0);
	}
	cr_assert(st_check_output(&f.s, f.dt, f.y, f.ref).ok);
	/* but a subnormal off by a thousand spacings does not */
	set_value(f.y, f.dt, at(&f, 1, 3), 1000 * 0x1p-24);
	expect_fail(&f, "row 1 (random): relative L2 error");
	unmake(&f);
}

/* ---- the driver with a fake runner ------------------------------------------------ */

typedef struct fake {
	long long runs, calls;
	long long die_at;        /* the run that kills the context (0: none) */
	int dead;
	const char *fail_template; /* fail its runs whose params contain fail_params */
	const char *fail_params;
	st_case fail_case;
	int checked;             /* invariants of the jobs held */
} fake;

static tr_env fake_env(void *ctx, long long M, long long N, at_dtype dt)
{
	(void)ctx;
	return nominal_shape_env(90, M, N, at_dtype_size(dt));
}

static int fake_run(void *ctx, const st_shape *s, at_dtype dt, const st_job *jobs, size_t n,
		    st_outcome *out, at_error *err)
{
	(void)err;
	fake *f = ctx;
	f->calls++;
	for (size_t i = 0; i < n; i++) {
		const st_job *j = &jobs[i];
		/* what the runner is promised */
		cr_assert(j->v.tmpl->dtype_mask & (1u << dt));
		cr_assert(j->tuned_n == 0 || j->tuned_n > s->N, "tuned at %lld for N = %lld", j->tuned_n,
			  s->N);
		cr_assert(j->geom.max_n == 0 || j->geom.max_n >= s->N);
		cr_assert_geq(j->geom.threads, 1);
		f->checked++;
		memset(&out[i], 0, sizeof out[i]);
		if (f->dead) {
			out[i].status = ST_NOT_RUN;
			snprintf(out[i].reason, sizeof out[i].reason, "the GPU context was lost");
			continue;
		}
		f->runs++;
		char *params = variant_params_str(&j->v);
		if (f->die_at && f->runs == f->die_at) {
			f->dead = 1;
			out[i].status = ST_FAILED;
			snprintf(out[i].reason, sizeof out[i].reason, "CUDA_ERROR_ILLEGAL_ADDRESS (fake)");
		} else if (f->fail_template && s->kind == f->fail_case &&
			   strcmp(j->v.tmpl->name, f->fail_template) == 0 && strstr(params, f->fail_params)) {
			out[i].status = ST_FAILED;
			snprintf(out[i].reason, sizeof out[i].reason, "fake failure");
		} else {
			out[i].status = ST_PASSED;
		}
		free(params);
	}
	return 0;
}

typedef struct captured {
	int status;
	char *text;
} captured;

static captured run_fake(fake *f, const selftest_options *o)
{
	st_runner r = { f, fake_env, fake_run };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	at_error err = { { 0 } };
	int status = selftest_run(o, &r, out, &err);
	fclose(out);
	cr_assert_geq(status, 0, "%s", err.msg);
	return (captured){ status, buf };
}

static const selftest_options f32_quick = { "configs/softmax.yaml", "templates", 1u << AT_F32,
					    ST_MODE_QUICK, NULL, 0, NULL };

Test(selftest_driver, every_template_of_the_default_space_runs_and_passes)
{
	fake f = { 0 };
	captured c = run_fake(&f, &f32_quick);
	cr_assert_eq(c.status, 0, "%s", c.text);
	cr_assert(strstr(c.text, "selftest: PASSED: all "), "%s", c.text);
	/* every manifest in templates/ that serves softmax f32 has rows */
	static const char *const names[] = { "softmax_warp", "softmax_block", "softmax_smem",
					      "softmax_online", "softmax_split" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char want[96];
		snprintf(want, sizeof want, "f32    sizes     %s", names[i]);
		cr_assert(strstr(c.text, want), "no row \"%s\" in:\n%s", want, c.text);
	}
	cr_assert_null(strstr(c.text, "2^31"), "--quick ran the 2^31 case");
	/* the runs are the ones selftest_count promises */
	long long runs[ST_CASE_COUNT], total = 0;
	at_error err = { { 0 } };
	cr_assert_eq(selftest_count(&f32_quick, runs, NULL, &err), 0, "%s", err.msg);
	for (int k = 0; k < ST_CASE_COUNT; k++)
		total += runs[k];
	cr_assert_eq(f.runs, total);
	cr_assert_eq(f.checked, total);
	char verdict[96];
	snprintf(verdict, sizeof verdict, "selftest: PASSED: all %lld runs passed", total);
	cr_assert(strstr(c.text, verdict), "%s", c.text);
	free(c.text);
}

Test(selftest_driver, a_case_mask_runs_only_those_cases)
{
	selftest_options o = f32_quick;
	o.case_mask = 1u << ST_CASE_STRIDED;
	fake f = { 0 };
	captured c = run_fake(&f, &o);
	cr_assert_eq(c.status, 0, "%s", c.text);
	cr_assert(strstr(c.text, "f32    strided  softmax_warp "), "%s", c.text);
	cr_assert_null(strstr(c.text, "sizes "), "%s", c.text);
	cr_assert_null(strstr(c.text, "special "), "%s", c.text);
	long long runs[ST_CASE_COUNT];
	at_error err = { { 0 } };
	cr_assert_eq(selftest_count(&o, runs, NULL, &err), 0, "%s", err.msg);
	for (int k = 0; k < ST_CASE_COUNT; k++)
		cr_assert(k == ST_CASE_STRIDED ? runs[k] > 0 : runs[k] == 0, "case %d: %lld", k,
			  runs[k]);
	cr_assert_eq(f.runs, runs[ST_CASE_STRIDED]);
	free(c.text);
}

Test(selftest_driver, failures_are_listed_with_params_shape_and_reason)
{
	fake f = { .fail_template = "softmax_block", .fail_params = "threads=64 ",
		   .fail_case = ST_CASE_STRIDED };
	captured c = run_fake(&f, &f32_quick);
	cr_assert_eq(c.status, 1);
	cr_assert(strstr(c.text, "\nFailures:\nf32 strided softmax_block:\n  threads=64 "), "%s", c.text);
	cr_assert(strstr(c.text, " at M="), "%s", c.text);
	cr_assert(strstr(c.text, ": fake failure\n"), "%s", c.text);
	cr_assert(strstr(c.text, "  ... and "), "more than 10 failures are not cut short:\n%s", c.text);
	cr_assert(strstr(c.text, "FAILED\n") || strstr(c.text, "FAILED"), "%s", c.text);
	cr_assert(strstr(c.text, "selftest: FAILED: "), "%s", c.text);
	cr_assert_null(strstr(c.text, "f32 sizes softmax_block:"), "other cases failed:\n%s", c.text);
	free(c.text);
}

Test(selftest_driver, a_dead_context_leaves_the_rest_not_run)
{
	fake f = { .die_at = 5 };
	captured c = run_fake(&f, &f32_quick);
	cr_assert_eq(c.status, 1);
	cr_assert(strstr(c.text, "CUDA_ERROR_ILLEGAL_ADDRESS (fake)"), "%s", c.text);
	cr_assert(strstr(c.text, "\nNot run: "), "%s", c.text);
	cr_assert(strstr(c.text, "the GPU context was lost"), "%s", c.text);
	long long runs[ST_CASE_COUNT], total = 0;
	at_error err = { { 0 } };
	cr_assert_eq(selftest_count(&f32_quick, runs, NULL, &err), 0);
	for (int k = 0; k < ST_CASE_COUNT; k++)
		total += runs[k];
	char verdict[128];
	snprintf(verdict, sizeof verdict, "selftest: FAILED: 1 of %lld runs failed, %lld not run", total,
		 total - 5);
	cr_assert(strstr(c.text, verdict), "want \"%s\" in:\n%s", verdict, c.text);
	free(c.text);
}

/* Borrowed variants: no template serves N = 1 or 7 in f16 with the
 * default constraints, so those shapes run the variants of longer rows. */
Test(selftest_driver, short_rows_run_the_variants_tuned_at_longer_ones)
{
	selftest_options o = { "configs/softmax.yaml", "templates", 1u << AT_F16, ST_MODE_SANITIZE,
			       NULL, 0, NULL };
	char *list = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&list, &len);
	long long runs[ST_CASE_COUNT];
	at_error err = { { 0 } };
	cr_assert_eq(selftest_count(&o, runs, out, &err), 0, "%s", err.msg);
	fclose(out);
	cr_assert(strstr(list, "M=67 N=7 ldx=16 ldy=32"), "%s", list);
	cr_assert(strstr(list, "as tuned at a longer row"), "%s", list);
	fake f = { 0 };
	captured c = run_fake(&f, &o);
	cr_assert_eq(c.status, 0, "%s", c.text);
	free(c.text);
	free(list);
}

static const char tiny_manifest[] =
	"template: %s\n"
	"op: softmax\n"
	"source: tiny.cu\n"
	"summary: a test template\n"
	"dtypes: [f32]\n"
	"params:\n"
	"  - name: threads\n"
	"    values: [32, 64]\n"
	"    default: 32\n"
	"    doc: threads\n"
	"constraints:\n"
	"  - expr: \"%s\"\n"
	"    why: test\n"
	"launch:\n"
	"  threads: \"threads\"\n"
	"  rows_per_cta: \"1\"\n"
	"  smem_bytes: \"0\"\n"
	"  persistent: \"0\"\n"
	"  max_n: \"%s\"\n";

static void write_template(const char *dir, const char *name, const char *constraint,
			   const char *max_n)
{
	char path[600], text[2048];
	snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
	snprintf(text, sizeof text, tiny_manifest, name, constraint, max_n);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(selftest_driver, a_template_that_no_shape_reaches_is_untested_and_fails)
{
	const char *dir = tmp_path("templates");
	cr_assert_eq(mkdir(dir, 0700), 0);
	char cu[600];
	snprintf(cu, sizeof cu, "%s/tiny.cu", dir);
	FILE *f = fopen(cu, "w");
	fputs("// nothing\n", f);
	fclose(f);
	write_template(dir, "tiny_short", "N <= 8", "8");            /* N = 1 and N = 7 */
	write_template(dir, "tiny_never", "N > 1000000000", "0");    /* no shape reaches it */
	selftest_options o = { "configs/softmax.yaml", dir, 0, ST_MODE_QUICK, NULL, 0, NULL };
	fake fk = { 0 };
	captured c = run_fake(&fk, &o);
	cr_assert_eq(c.status, 1, "%s", c.text);
	cr_assert(strstr(c.text, "Not tested: f32 tiny_never: no shape of the cases run reaches it"), "%s",
		  c.text);
	cr_assert_null(strstr(c.text, "Not tested: f32 tiny_short"), "%s", c.text);
	cr_assert(strstr(c.text, "no shape of this case reaches it"), "%s", c.text);
	cr_assert(strstr(c.text, "1 template untested"), "%s", c.text);
	/* f16 and bf16 have no template at all: nothing to list for them */
	cr_assert_null(strstr(c.text, "f16 "), "%s", c.text);
	free(c.text);
}

/* ---- the report alone --------------------------------------------------------------- */

Test(selftest_driver, report_counts_and_exit_status)
{
	st_report *r = st_report_new();
	cr_assert_eq(st_report_exit_status(r), 1, "an empty selftest cannot pass");
	st_report_row(r, AT_F32, ST_CASE_SIZES, "a");
	st_report_row(r, AT_F32, ST_CASE_BIG, "a");
	st_outcome ok = { ST_PASSED, "" };
	st_report_add(r, AT_F32, ST_CASE_SIZES, "a", "p=1", "M=1 N=1", 0, &ok);
	st_report_add(r, AT_F32, ST_CASE_SIZES, "a", "p=1", "M=1 N=7", 0, &ok);
	st_report_add(r, AT_F32, ST_CASE_SIZES, "a", "p=2", "M=1 N=7", 0, &ok);
	cr_assert_eq(st_report_exit_status(r), 0);
	st_totals t = st_report_totals(r);
	cr_assert_eq(t.runs, 3);
	cr_assert_eq(t.passed, 3);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	st_report_print(r, out);
	fclose(out);
	cr_assert(strstr(buf, "f32    sizes  a         2         3     3       0       0        ok\n"),
		  "%s", buf);
	cr_assert(strstr(buf, "f32    2^31   a         0         0     0       0       0        no shape "
			      "of this case reaches it\n"), "%s", buf);
	free(buf);
	st_outcome bad = { ST_FAILED, "went wrong" };
	st_report_add(r, AT_F32, ST_CASE_BIG, "a", "p=3", "M=9 N=9", 4097, &bad);
	cr_assert_eq(st_report_exit_status(r), 1);
	buf = NULL;
	out = open_memstream(&buf, &len);
	st_report_print(r, out);
	fclose(out);
	cr_assert(strstr(buf, "f32 2^31 a:\n  p=3 at M=9 N=9 (as tuned at N=4097): went wrong\n"), "%s", buf);
	cr_assert(strstr(buf, "selftest: FAILED: 1 of 4 runs failed, 0 not run, 0 templates untested"),
		  "%s", buf);
	free(buf);
	st_report_free(r);
}

/* Writes a config of the given sweeps (YAML entries) into the test folder. */
static const char *write_config(const char *name, const char *entries)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "warmup: 1\nrepetitions: 1\nsweeps:\n%s", entries);
	fclose(f);
	return path;
}

/* -c CONFIG without --op tests the one op CONFIG sweeps (a run of
 * configs/log_softmax.yaml once tested softmax again); several need --op. */
Test(selftest_driver, the_configs_one_op_is_tested_unless_op_says_another)
{
	const char *log = write_config("log.yaml", "  - op: log_softmax\n    dtypes: [f32]\n"
						   "    M: [4]\n    N: [100]\n");
	selftest_options o = { log, "templates", 1u << AT_F32, ST_MODE_QUICK, NULL,
			       1u << ST_CASE_SIZES, NULL };
	long long runs[ST_CASE_COUNT];
	char *text = NULL;
	size_t len = 0;
	at_error err = { { 0 } };
	FILE *out = open_memstream(&text, &len);
	o.progress = out;
	cr_assert_eq(selftest_count(&o, runs, NULL, &err), 0, "%s", err.msg);
	fclose(out);
	cr_assert(strstr(text, "selftest: log_softmax, the templates of ") != NULL, "%s", text);
	free(text);

	text = NULL;
	out = open_memstream(&text, &len);
	o.progress = out;
	o.op = "softmax";
	cr_assert_eq(selftest_count(&o, runs, NULL, &err), 0, "%s", err.msg);
	fclose(out);
	cr_assert(strstr(text, "selftest: softmax, ") != NULL, "%s", text);
	free(text);

	o.progress = NULL;
	o.op = NULL;
	o.config_path = write_config("two.yaml", "  - op: softmax_backward\n    dtypes: [f32]\n"
						 "    M: [4]\n    N: [100]\n"
						 "  - op: log_softmax_backward\n    dtypes: [f32]\n"
						 "    M: [4]\n    N: [100]\n");
	cr_assert_eq(selftest_count(&o, runs, NULL, &err), -1);
	cr_assert(strstr(err.msg, "sweeps softmax_backward and log_softmax_backward: say which op "
				  "to test with --op") != NULL, "%s", err.msg);
	o.op = "log_softmax_backward";
	cr_assert_eq(selftest_count(&o, runs, NULL, &err), 0, "%s", err.msg);
}

/* Tests for tuner/sweep/enumerate.c with the real templates in templates/: the
 * variants enumerated at a shape are exactly those that a brute-force loop
 * over the manifest's values, with the constraints written out here in C,
 * accepts (so the manifest and the enumerator must agree with this file), in
 * odometer order; and each variant's launch geometry. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

TestSuite(enumerate, .init = tf_load_templates, .fini = tf_free_templates);

static size_t enumerate_ok(const tmpl_manifest *t, at_dtype dt, const tr_env *env,
			   variant **out)
{
	size_t n = 12345;
	at_error err = { { 0 } };
	cr_assert_eq(enumerate_variants(t, dt, env, out, &n, &err), 0, "%s: %s", t->name,
		     err.msg);
	if (n == 0)
		cr_assert_null(*out);
	return n;
}

/* ---- softmax_block ------------------------------------------------------ */

/* templates/softmax_block.yaml's constraints, in C. */
static int block_ok(long long threads, long long vec, long long ept, long long stages,
		    long long persistent, long long packed, long long peel, const tr_env *e)
{
	long long eb = e->elem_bytes, N = e->N;
	return vec * eb <= 16 && vec * eb >= 8 && ept % vec == 0 && threads <= e->max_threads &&
	       (persistent || stages == 1) && (!packed || (eb == 2 && ept >= 16)) &&
	       threads * ept >= N && threads * (ept - vec) < N + (peel ? vec - 1 : 0) &&
	       (!peel || threads * ept >= N + vec - 1) && (!peel || (vec > 1 && N % vec != 0)) &&
	       (threads - 32) * vec < N && ept * stages * eb / 4 + 24 <= 255 &&
	       threads * (ept * stages * eb / 4 + 24) <= e->regs_per_sm;
}

/* Loops over the manifest's values in its param order (last fastest), keeps
 * what block_ok accepts, and checks that the enumeration is that list. */
static size_t check_block(at_dtype dt, long long M, long long N)
{
	const tmpl_manifest *t = tf_template("softmax_block");
	cr_assert_eq(t->nparams, 8, "softmax_block's params changed: update this test");
	static const char *const order[] = { "threads", "vec", "elems_per_thread", "stages",
					     "persistent", "cache_hint", "packed", "peel" };
	for (size_t i = 0; i < 8; i++)
		cr_assert_str_eq(t->params[i].name, order[i]);
	const tmpl_param *p = t->params;
	tr_env env = nominal_shape_env(90, M, N, at_dtype_size(dt));
	variant *vs;
	size_t n = enumerate_ok(t, dt, &env, &vs);
	size_t k = 0;
	for (size_t a = 0; a < p[0].nvalues; a++)
	for (size_t b = 0; b < p[1].nvalues; b++)
	for (size_t c = 0; c < p[2].nvalues; c++)
	for (size_t d = 0; d < p[3].nvalues; d++)
	for (size_t e = 0; e < p[4].nvalues; e++)
	for (size_t f = 0; f < p[5].nvalues; f++)
	for (size_t g = 0; g < p[6].nvalues; g++)
	for (size_t h = 0; h < p[7].nvalues; h++) {
		long long want[8] = { p[0].values[a], p[1].values[b], p[2].values[c],
				      p[3].values[d], p[4].values[e], p[5].values[f],
				      p[6].values[g], p[7].values[h] };
		if (!block_ok(want[0], want[1], want[2], want[3], want[4], want[6], want[7], &env))
			continue;
		cr_assert_lt(k, n, "%s N=%lld: enumerated %zu variants, brute force finds more",
			     at_dtype_name(dt), N, n);
		cr_assert_eq(vs[k].tmpl, t);
		cr_assert_eq(vs[k].dtype, dt);
		cr_assert_eq(memcmp(vs[k].values, want, sizeof want), 0,
			     "%s N=%lld: variant %zu is threads=%lld vec=%lld ept=%lld stages=%lld "
			     "persistent=%lld cache_hint=%lld packed=%lld peel=%lld, want %lld %lld "
			     "%lld %lld %lld %lld %lld %lld",
			     at_dtype_name(dt), N, k, vs[k].values[0], vs[k].values[1],
			     vs[k].values[2], vs[k].values[3], vs[k].values[4], vs[k].values[5],
			     vs[k].values[6], vs[k].values[7], want[0], want[1], want[2], want[3],
			     want[4], want[5], want[6], want[7]);
		k++;
	}
	cr_assert_eq(k, n, "%s N=%lld: brute force finds %zu variants, enumerate_variants %zu",
		     at_dtype_name(dt), N, k, n);
	free(vs);
	return n;
}

Test(enumerate, block_f32_n1024_every_variant_holds_the_row_in_16_byte_or_8_byte_vectors)
{
	const tmpl_manifest *t = tf_template("softmax_block");
	tr_env env = nominal_shape_env(90, 4096, 1024, 4);
	variant *vs;
	size_t n = enumerate_ok(t, AT_F32, &env, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		long long threads = tf_value(&vs[i], "threads"), vec = tf_value(&vs[i], "vec");
		long long ept = tf_value(&vs[i], "elems_per_thread");
		cr_assert_geq(threads * ept, 1024, "variant %zu: threads=%lld ept=%lld", i, threads, ept);
		cr_assert(vec * 4 == 8 || vec * 4 == 16, "variant %zu: vec=%lld", i, vec);
		cr_assert_eq(ept % vec, 0);
		cr_assert(tf_value(&vs[i], "persistent") || tf_value(&vs[i], "stages") == 1);
	}
	free(vs);
}

Test(enumerate, block_matches_brute_force)
{
	cr_assert_gt(check_block(AT_F32, 4096, 1024), 0);
	cr_assert_gt(check_block(AT_F32, 4096, 1000), 0);
	cr_assert_gt(check_block(AT_F16, 4096, 4096), 0);
	cr_assert_gt(check_block(AT_BF16, 65536, 512), 0);
	cr_assert_gt(check_block(AT_F32, 1, 32768), 0);
	cr_assert_gt(check_block(AT_BF16, 4096, 12345), 0);
	cr_assert_gt(check_block(AT_BF16, 4096, 32768), 0);
	cr_assert_gt(check_block(AT_BF16, 4096, 1022), 0); /* 128 x 8 holds it, unpeeled */
}

/* Packed holds only in half precision and from 16 held elements: f32 has
 * none; bf16 4096 x 32768 has both kinds, each hold offered packed and not. */
Test(enumerate, block_packed_only_in_half_precision_with_16_or_more_held)
{
	const tmpl_manifest *t = tf_template("softmax_block");
	variant *vs;
	tr_env env = nominal_shape_env(90, 4096, 32768, 4);
	size_t n = enumerate_ok(t, AT_F32, &env, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(tf_value(&vs[i], "packed"), 0);
	free(vs);
	env = nominal_shape_env(90, 4096, 32768, 2);
	n = enumerate_ok(t, AT_BF16, &env, &vs);
	size_t packed = 0;
	for (size_t i = 0; i < n; i++) {
		if (!tf_value(&vs[i], "packed"))
			continue;
		packed++;
		cr_assert_geq(tf_value(&vs[i], "elems_per_thread"), 16);
	}
	cr_assert_eq(2 * packed, n, "bf16 32768: %zu packed of %zu", packed, n);
	free(vs);
}

Test(enumerate, block_exact_count_f32_n1024)
{
	/* Worked out by hand from the constraints. f32: vec 2 or 4; the row
	 * needs threads * ept in [1024, 1024 + threads * vec), ept a multiple
	 * of vec, and (threads - 32) * vec < 1024:
	 *   threads   64: ept 16 with vec 2 or 4     -> 2
	 *   threads  128: ept 8 with vec 2 or 4      -> 2
	 *   threads  256: ept 4 with vec 2 or 4      -> 2
	 *   threads  512: ept 2 with vec 2 (not 4)   -> 1
	 *   threads 1024: (1024 - 32) * 2 >= 1024    -> 0
	 * each times (persistent, stages) in {(0,1), (1,1), (1,2)} and
	 * cache_hint in {0, 1}: 7 * 6 = 42. */
	cr_assert_eq(check_block(AT_F32, 4096, 1024), 42);
}

Test(enumerate, block_rows_too_long_for_registers_give_none)
{
	tr_env env = nominal_shape_env(90, 4096, 1000000, 4);
	variant *vs = (variant *)1;
	cr_assert_eq(enumerate_ok(tf_template("softmax_block"), AT_F32, &env, &vs), 0);
	cr_assert_null(vs);
	cr_assert_eq(check_block(AT_F32, 4096, 1000000), 0);
}

Test(enumerate, a_dtype_the_template_does_not_serve_gives_none)
{
	tmpl_manifest only_f32 = *tf_template("softmax_block");
	only_f32.dtype_mask = 1u << AT_F32;
	tr_env env = nominal_shape_env(90, 4096, 1024, 2);
	variant *vs = (variant *)1;
	size_t n = 99;
	at_error err = { { 0 } };
	cr_assert_eq(enumerate_variants(&only_f32, AT_BF16, &env, &vs, &n, &err), 0);
	cr_assert_eq(n, 0);
	cr_assert_null(vs);
	cr_assert_eq(enumerate_variants(&only_f32, AT_F16, &env, &vs, &n, &err), 0);
	cr_assert_eq(n, 0);
	/* the same template still serves f32 */
	env.elem_bytes = 4;
	cr_assert_eq(enumerate_variants(&only_f32, AT_F32, &env, &vs, &n, &err), 0);
	cr_assert_gt(n, 0);
	free(vs);
}

Test(enumerate, a_constraint_that_cannot_be_evaluated_is_an_error)
{
	tmpl_manifest bad = *tf_template("softmax_block");
	tmpl_constraint c = { "N / (vec - vec) > 0", "divides by zero" };
	bad.constraints = &c;
	bad.nconstraints = 1;
	tr_env env = nominal_shape_env(90, 4096, 1024, 4);
	variant *vs = (variant *)1;
	size_t n = 99;
	at_error err = { { 0 } };
	cr_assert_eq(enumerate_variants(&bad, AT_F32, &env, &vs, &n, &err), -1);
	cr_assert_eq(n, 0);
	cr_assert_null(vs);
	cr_assert_not_null(strstr(err.msg, "division by zero"), "%s", err.msg);
}

/* A space of 10^12 combinations in which a constraint on the first param
 * leaves one value: a loop over every combination would not end within the
 * timeout; pruning at the first param visits a few thousand. */
Test(enumerate, a_failing_prefix_prunes_every_combination_below_it, .timeout = 20)
{
	long long values[1000];
	for (int i = 0; i < 1000; i++)
		values[i] = i;
	tmpl_param params[4] = {
		{ "a", values, 1000, 0, NULL }, { "b", values, 1000, 0, NULL },
		{ "c", values, 1000, 0, NULL }, { "d", values, 1000, 0, NULL },
	};
	tmpl_constraint cs[] = { { "d == a + 1", NULL }, { "a == 7", NULL },
				 { "b * 10 < N", NULL }, { "c == b", NULL } };
	tmpl_manifest m = *tf_template("softmax_block");
	m.params = params;
	m.nparams = 4;
	m.constraints = cs;
	m.nconstraints = 4;
	tr_env env = nominal_shape_env(90, 4096, 30, 4);
	variant *vs;
	size_t n = enumerate_ok(&m, AT_F32, &env, &vs);
	cr_assert_eq(n, 3); /* b = c in {0, 1, 2} */
	for (size_t i = 0; i < n; i++) {
		long long want[4] = { 7, (long long)i, (long long)i, 8 };
		cr_assert_eq(memcmp(vs[i].values, want, sizeof want), 0, "variant %zu", i);
	}
	free(vs);
}

Test(enumerate, block_geometry)
{
	const tmpl_manifest *t = tf_template("softmax_block");
	tr_env env = nominal_shape_env(90, 4096, 1024, 4);
	variant *vs;
	size_t n = enumerate_ok(t, AT_F32, &env, &vs);
	cr_assert_gt(n, 0);
	int saw_persistent = 0;
	for (size_t i = 0; i < n; i++) {
		launch_geometry g;
		memset(&g, 0x5a, sizeof g);
		at_error err = { { 0 } };
		cr_assert_eq(variant_geometry(&vs[i], &env, &g, &err), 0, "%s", err.msg);
		cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
		cr_assert_eq(g.rows_per_cta, 1);
		cr_assert_eq(g.dyn_smem, 0);
		cr_assert_eq(g.persistent, tf_value(&vs[i], "persistent"));
		cr_assert_eq(g.max_n,
			     tf_value(&vs[i], "threads") * tf_value(&vs[i], "elems_per_thread"));
		cr_assert_geq(g.max_n, 1024);
		saw_persistent |= g.persistent;
	}
	cr_assert(saw_persistent, "no persistent variant to check");
	free(vs);
}

/* ---- softmax_warp ------------------------------------------------------- */

/* templates/softmax_warp.yaml's constraints, in C. */
static int warp_ok(const long long *v, const tr_env *e)
{
	long long threads = v[0], lanes = v[1], rows = v[2], vec = v[3], ept = v[4];
	long long stages = v[5], persistent = v[6], peel = v[8];
	long long eb = e->elem_bytes, N = e->N, groups = threads / lanes;
	return vec * eb <= 16 && vec * eb >= 4 && ept % vec == 0 &&
	       (rows % groups == 0 && rows / groups <= 2) && (persistent || stages == 1) &&
	       lanes * ept >= N && lanes * (ept - vec) < N + (peel ? vec - 1 : 0) &&
	       (!peel || lanes * ept >= N + vec - 1) && (!peel || (vec > 1 && N % vec != 0)) &&
	       (vec <= N || vec * eb == 4) &&
	       (lanes == 2 || (lanes / 2) * vec < N) &&
	       ept * (rows / groups) * stages * eb <= 256;
}

static size_t check_warp(at_dtype dt, long long M, long long N)
{
	const tmpl_manifest *t = tf_template("softmax_warp");
	cr_assert_eq(t->nparams, 9, "softmax_warp's params changed: update this test");
	static const char *const order[] = { "threads", "lanes", "rows_per_cta", "vec",
					     "elems_per_thread", "stages", "persistent",
					     "cache_hint", "peel" };
	for (size_t i = 0; i < 9; i++)
		cr_assert_str_eq(t->params[i].name, order[i]);
	tr_env env = nominal_shape_env(90, M, N, at_dtype_size(dt));
	variant *vs;
	size_t n = enumerate_ok(t, dt, &env, &vs);
	size_t idx[9] = { 0 }, k = 0;
	for (;;) {
		long long want[9];
		for (size_t i = 0; i < 9; i++)
			want[i] = t->params[i].values[idx[i]];
		if (warp_ok(want, &env)) {
			cr_assert_lt(k, n, "%s N=%lld: brute force finds more than %zu",
				     at_dtype_name(dt), N, n);
			cr_assert_eq(memcmp(vs[k].values, want, sizeof want), 0,
				     "%s N=%lld: variant %zu differs", at_dtype_name(dt), N, k);
			k++;
		}
		size_t i = 9;
		while (i > 0 && ++idx[i - 1] == t->params[i - 1].nvalues)
			idx[--i] = 0;
		if (i == 0)
			break;
	}
	cr_assert_eq(k, n, "%s N=%lld: brute force finds %zu variants, enumerate_variants %zu",
		     at_dtype_name(dt), N, k, n);
	free(vs);
	return n;
}

Test(enumerate, warp_matches_brute_force)
{
	cr_assert_gt(check_warp(AT_F32, 4096, 128), 0);
	cr_assert_gt(check_warp(AT_F32, 4096, 1000), 0);
	cr_assert_gt(check_warp(AT_F16, 4096, 256), 0);
	cr_assert_gt(check_warp(AT_BF16, 4096, 33), 0);
	cr_assert_gt(check_warp(AT_BF16, 4096, 126), 0);
	cr_assert_eq(check_warp(AT_F32, 4096, 4096), 0); /* 32 lanes x 32 elements at most */
}

/* A peeled row starts up to vec - 1 elements past a vector boundary: a
 * hold without room for that head sends such rows element by element
 * (bf16 118773 x 126 on 8 lanes x 16, peeled: 51.1 us against torch's
 * 30.3, H200), so no peeled variant holds less than N + vec - 1; peeled
 * ones with room remain. */
static void assert_peeled_holds_have_room(const char *name, const char *width, at_dtype dt,
					  long long N)
{
	const tmpl_manifest *t = tf_template(name);
	variant *vs;
	size_t n = tf_enumerate(t, 90, dt, 4096, N, &vs), peeled = 0;
	for (size_t i = 0; i < n; i++) {
		if (!tf_value(&vs[i], "peel"))
			continue;
		long long hold = tf_value(&vs[i], width) * tf_value(&vs[i], "elems_per_thread");
		cr_assert_geq(hold, N + tf_value(&vs[i], "vec") - 1, "%s %s N=%lld: variant %zu",
			      name, at_dtype_name(dt), N, i);
		peeled++;
	}
	cr_assert_gt(peeled, 0, "%s %s N=%lld: no peeled variant", name, at_dtype_name(dt), N);
	free(vs);
}

Test(enumerate, a_peeled_hold_has_room_for_any_rows_head)
{
	assert_peeled_holds_have_room("softmax_warp", "lanes", AT_BF16, 126);
	assert_peeled_holds_have_room("softmax_warp", "lanes", AT_F16, 255);
	assert_peeled_holds_have_room("softmax_block", "threads", AT_BF16, 1022);
	assert_peeled_holds_have_room("softmax_block", "threads", AT_F32, 3001);
}

/* Rows of one vector or less: 2 lanes, one of them idle. */
Test(enumerate, warp_serves_rows_of_one_vector_with_two_lanes)
{
	static const struct { at_dtype dt; long long N; } rows[] = {
		{ AT_F32, 1 }, { AT_F16, 1 }, { AT_F16, 2 }, { AT_BF16, 2 },
	};
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		const tmpl_manifest *t = tf_template("softmax_warp");
		variant *vs;
		size_t n = tf_enumerate(t, 90, rows[r].dt, 1, rows[r].N, &vs);
		cr_assert_gt(n, 0, "%s N=%lld", at_dtype_name(rows[r].dt), rows[r].N);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(tf_value(&vs[i], "lanes"), 2);
		free(vs);
		cr_assert_eq(check_warp(rows[r].dt, 1, rows[r].N), n);
	}
}

Test(enumerate, warp_geometry_takes_rows_per_cta_from_the_param)
{
	const tmpl_manifest *t = tf_template("softmax_warp");
	tr_env env = nominal_shape_env(90, 4096, 128, 4);
	variant *vs;
	size_t n = enumerate_ok(t, AT_F32, &env, &vs);
	cr_assert_gt(n, 0);
	int rows_seen = 0;
	for (size_t i = 0; i < n; i++) {
		launch_geometry g;
		at_error err = { { 0 } };
		cr_assert_eq(variant_geometry(&vs[i], &env, &g, &err), 0, "%s", err.msg);
		cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
		cr_assert_eq(g.rows_per_cta, tf_value(&vs[i], "rows_per_cta"));
		cr_assert_eq(g.max_n,
			     tf_value(&vs[i], "lanes") * tf_value(&vs[i], "elems_per_thread"));
		cr_assert_eq(g.dyn_smem, 0);
		cr_assert_eq(g.persistent, tf_value(&vs[i], "persistent"));
		rows_seen |= g.rows_per_cta > 1;
	}
	cr_assert(rows_seen, "no variant with several rows per CTA");
	free(vs);
}

Test(enumerate, geometry_rejects_out_of_range_launch_values)
{
	tmpl_manifest t = *tf_template("softmax_block");
	t.launch.threads = "threads - threads"; /* 0 threads */
	variant v;
	variant_defaults(&v, &t, AT_F32);
	tr_env env = nominal_shape_env(90, 4096, 1024, 4);
	launch_geometry g;
	at_error err = { { 0 } };
	cr_assert_eq(variant_geometry(&v, &env, &g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "threads and rows_per_cta >= 1"), "%s", err.msg);

	t = *tf_template("softmax_block");
	t.launch.smem_bytes = "0 - 1";
	variant_defaults(&v, &t, AT_F32);
	cr_assert_eq(variant_geometry(&v, &env, &g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "out of range"), "%s", err.msg);
}

Test(enumerate, nominal_shape_env_is_an_h100_at_the_given_arch)
{
	tr_env e = nominal_shape_env(80, 7, 9, 2);
	cr_assert_eq(e.M, 7);
	cr_assert_eq(e.N, 9);
	cr_assert_eq(e.elem_bytes, 2);
	cr_assert_eq(e.cc, 80);
	cr_assert_eq(e.sm_count, 132);
	cr_assert_eq(e.max_threads, 1024);
	cr_assert_eq(e.max_smem, 227 * 1024);
	cr_assert_eq(e.regs_per_sm, 65536);
}

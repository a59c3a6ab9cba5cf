/* Tests for templates/softmax_backward_split.{cu,yaml}: few long rows of the
 * backward ops cut into slices over a cooperative grid, y and dy staged in
 * shared memory, the row's sum exchanged through module-global scratch
 * (softmax_split_sync.cuh, shared with softmax_split). Which shapes it
 * serves, its launch (every resident CTA, a multiprocessor's shared memory
 * shared by its CTAs), its register bounds, and what its PTX must hold:
 * the copies, the one-way arrival polled with acquire, the reset, and no
 * float atomic (the sum's order is fixed: the same bits in every CTA).
 * The tests run from the repository root. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "tests/template_fixture.h"

TestSuite(backward_split, .init = tf_load_templates, .fini = tf_free_templates);

/* an sm_90 multiprocessor's shared memory (the fixture's GPU) */
#define SM90_SMEM_PER_SM (228 * 1024)

/* A cooperative launch of every resident CTA, each with its share of a
 * multiprocessor's shared memory beside its static slots, for any N. */
Test(backward_split, a_cooperative_grid_sharing_each_multiprocessors_shared_memory)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	cr_assert_eq(manifest_serves(m, "log_softmax_backward"), 2);
	static const struct {
		at_dtype dt;
		long long M, N;
	} shapes[] = { { AT_F16, 62, 1241923 }, { AT_F32, 8, 2097152 }, { AT_BF16, 1024, 100001 } };
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		variant *vs;
		size_t n = tf_enumerate(m, 90, shapes[s].dt, shapes[s].M, shapes[s].N, &vs);
		cr_assert_gt(n, 0, "%s %lld x %lld", at_dtype_name(shapes[s].dt), shapes[s].M,
			     shapes[s].N);
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = tf_geometry(&vs[i], 90, shapes[s].M, shapes[s].N);
			const long long ctas = tf_value(&vs[i], "ctas_per_sm");
			cr_assert_eq(g.cooperative, 1);
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.max_n, 0, "any row length: the rest is read twice");
			cr_assert_eq(g.dyn_smem % 32, 0, "whole pairs of 16-byte windows");
			/* each CTA: its dynamic share, 1 KB for its static slots
			 * (560 B) and the 1 KB the GPU reserves */
			cr_assert_leq(ctas * (g.dyn_smem + 2048), SM90_SMEM_PER_SM);
			cr_assert_geq(g.dyn_smem, SM90_SMEM_PER_SM / ctas - 2048 - 31,
				      "all of the share but a window pair");
		}
		free(vs);
	}
}

/* Its regime: rows of 16384 elements and more, at fewer rows than CTAs or
 * rows whose y and dy overflow one CTA's shared memory; elsewhere one CTA a
 * row needs no exchange. */
Test(backward_split, few_rows_or_rows_beyond_one_ctas_shared_memory)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	cr_assert_eq(tf_count_variants(m, 90, AT_F32, 8, 8192), 0, "short rows");
	/* bf16 32000: 125 KB of y and dy fit one CTA; 16384 rows keep every CTA busy */
	cr_assert_eq(tf_count_variants(m, 90, AT_BF16, 16384, 32000), 0);
	/* the same rows at 64: fewer rows than CTAs */
	cr_assert_gt(tf_count_variants(m, 90, AT_BF16, 64, 32000), 0);
	/* f32 131072 at 16384 rows: 1 MB of y and dy a row, beyond a CTA */
	cr_assert_gt(tf_count_variants(m, 90, AT_F32, 16384, 131072), 0);
	/* cp.async stages the slices: none before sm_80 */
	cr_assert_eq(tf_count_variants(m, 75, AT_F32, 8, 1 << 20), 0);
}

/* At most 1024 threads a multiprocessor (64 registers a thread), and for
 * f32, whose products are summed in double, at most 819 (80). */
Test(backward_split, register_bounds_by_element_size)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	static const at_dtype dts[] = { AT_F32, AT_F16, AT_BF16 };
	for (size_t d = 0; d < 3; d++) {
		variant *vs;
		size_t n = tf_enumerate(m, 90, dts[d], 8, 1 << 21, &vs);
		cr_assert_gt(n, 0);
		long long most = 0;
		for (size_t i = 0; i < n; i++) {
			const long long resident =
				tf_value(&vs[i], "threads") * tf_value(&vs[i], "ctas_per_sm");
			most = resident > most ? resident : most;
		}
		cr_assert_eq(most, dts[d] == AT_F32 ? 768 : 1024, "%s", at_dtype_name(dts[d]));
		free(vs);
	}
}

/* Rows that are not whole vectors are peeled, aligned rows are not; fit
 * only where the spread-out slices overflow a CTA's share (f16 8 x 500001
 * on 132 CTAs: 3.8K elements a slice, which fit). */
Test(backward_split, peel_and_fit_where_they_change_something)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	variant *vs;
	size_t n = tf_enumerate(m, 90, AT_F16, 8, 500001, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tf_value(&vs[i], "peel"), 1);
		cr_assert_eq(tf_value(&vs[i], "fit"), 0);
	}
	free(vs);
	n = tf_enumerate(m, 90, AT_F16, 62, 1241920, &vs);
	int fits = 0;
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tf_value(&vs[i], "peel"), 0);
		fits += tf_value(&vs[i], "fit") == 1;
	}
	cr_assert_gt(fits, 0, "62 rows of 2.4 MB overflow 132-528 CTAs' shares");
	free(vs);
}

/* The exchange as softmax_split's: the slices copied in by cp.async, a
 * one-way release add polled with acquire, the parts read from L2, the
 * last CTA to leave resetting the counts; no float atomic. Both ops, each
 * dtype, peeled and not. */
static void expect_exchange(const variant *v, const compiled_kernel *k, void *part_store)
{
	const char *const wanted[] = {
		"cp.async.cg.shared.global",
		"red.release.gpu.global.add.u32",
		"ld.acquire.gpu.global.u32",
		part_store, /* the sum's type: double for softmax's, float for log_softmax's */
		"atom.add.acq_rel.gpu.global.u32",
		"st.global.v4.", /* 16-byte stores (v4.f32, or words for a peeled row) */
	};
	tf_expect_in_ptx(v, k, wanted, sizeof wanted / sizeof *wanted);
	cr_assert_null(strstr(k->ptx, "atom.global.add.f"), "a float atomic");
	cr_assert_null(strstr(k->ptx, "red.global.add.f"), "a float atomic");
}

Test(backward_split, the_exchange_is_ordered_and_deterministic, .timeout = 300)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	static const struct {
		at_dtype dt;
		long long N;
		const char *op;
	} cases[] = { { AT_F32, 2097152, NULL },
		      { AT_BF16, 500001, NULL },
		      { AT_F16, 2097152, "log_softmax_backward" },
		      { AT_F32, 500001, "log_softmax_backward" } };
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		variant v;
		variant_defaults(&v, m, cases[c].dt);
		cr_assert_eq(variant_set(&v, cases[c].dt == AT_F32 ? "vec=4" : "vec=8", &err), 0);
		cr_assert_eq(variant_set(&v, cases[c].N % 2 ? "peel=1" : "peel=0", &err), 0);
		if (cases[c].op)
			v.op = manifest_source_op(m, cases[c].op);
		tf_for_each_distinct_kernel(&v, 1, 90, expect_exchange,
					    (void *)(cases[c].op ? "st.relaxed.gpu.global.f32"
								 : "st.relaxed.gpu.global.f64"));
	}
}

/* fit 2 where the spread-out slices overflow twice a CTA's share, not where
 * they overflow it once (f32 132 x 40000 at one CTA a multiprocessor: a
 * row's 313 KB of y and dy is one CTA's at fit 0, 227 KB fits it at fit 1
 * only cut in two); prefetch only on sm_90 and later. */
Test(backward_split, fit_2_and_prefetch_where_they_change_something)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	variant *vs;
	size_t n = tf_enumerate(m, 90, AT_F32, 132, 40000, &vs);
	int fits[3] = { 0 }, prefetches = 0;
	for (size_t i = 0; i < n; i++)
		if (tf_value(&vs[i], "ctas_per_sm") == 1) {
			fits[tf_value(&vs[i], "fit")]++;
			prefetches += tf_value(&vs[i], "prefetch") == 1;
		}
	free(vs);
	cr_assert(fits[0] > 0 && fits[1] > 0, "fit 0 and 1 at one CTA a multiprocessor");
	cr_assert_eq(fits[2], 0, "twice the share holds the spread-out slice: fit 2 is fit 0");
	cr_assert_gt(prefetches, 0);
	cr_assert_gt(tf_count_with(m, 90, AT_F32, 32, 2000001, "fit", 2), 0,
		     "32 rows of 16 MB overflow twice any CTA's share");
	cr_assert_gt(tf_count_variants(m, 80, AT_F32, 32, 2000001), 0);
	cr_assert_eq(tf_count_with(m, 80, AT_F32, 32, 2000001, "prefetch", 1), 0,
		     "sm_80 has no bulk prefetch");
}

static int count_in(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* softmax_backward stages y and dy; its prefetch is one bulk prefetch into
 * L2 each of the next task's slices, there only when asked for.
 * log_softmax_backward (whose r is the sum of dy alone) stages dy only,
 * half the copies, and asks L2 for each task's y as the task starts (one
 * bulk prefetch; with prefetch, the next task's dy beside it). */
Test(backward_split, what_each_op_stages_and_asks_l2_for, .timeout = 120)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	int copies[2] = { 0 };
	for (int log = 0; log <= 1; log++)
		for (int prefetch = 0; prefetch <= 1; prefetch++) {
			variant v;
			variant_defaults(&v, m, AT_BF16);
			cr_assert_eq(variant_set(&v, "vec=8", &err), 0);
			cr_assert_eq(variant_set(&v, prefetch ? "prefetch=1" : "prefetch=0", &err), 0);
			if (log)
				v.op = manifest_source_op(m, "log_softmax_backward");
			compiled_kernel k;
			tf_compile_ptx(&v, 90, &k);
			const int bulk = count_in(k.ptx, "cp.async.bulk.prefetch.L2.global");
			cr_assert_eq(bulk, log ? 1 + prefetch : 2 * prefetch, "log %d prefetch %d: %d",
				     log, prefetch, bulk);
			copies[log] = count_in(k.ptx, "cp.async.cg.shared.global");
			compiled_kernel_free(&k);
		}
	cr_assert(copies[1] > 0 && copies[1] < copies[0], "dy alone: %d copies against %d",
		  copies[1], copies[0]);
}

/* A row's windows are counted in 32 bits (log_softmax_backward's): rows of
 * 2^31 elements and more are another template's. */
Test(backward_split, rows_below_two_to_the_31)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	cr_assert_gt(tf_count_variants(m, 90, AT_F16, 1, 2147483647LL), 0);
	cr_assert_eq(tf_count_variants(m, 90, AT_F16, 1, 2147483648LL), 0);
}

/* stagger (softmax_split_sync.cuh's split_stagger) only where rows go in
 * more than one group: f16 8 x 500001 spreads its 8 rows over every CTA at
 * fit 0 and fits them at fit 1; 1024 rows of 131072 f32 go in turns. */
Test(backward_split, stagger_where_rows_go_in_turns)
{
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	cr_assert_gt(tf_count_variants(m, 90, AT_F16, 8, 500001), 0);
	cr_assert_eq(tf_count_with(m, 90, AT_F16, 8, 500001, "stagger", 1), 0);
	cr_assert_gt(tf_count_with(m, 90, AT_F32, 1024, 131072, "stagger", 1), 0);
}

/* log_softmax_backward loads y as it writes, more windows a thread at once
 * where fewer threads are resident (~32 KB in flight a multiprocessor): at
 * two a thread, 256 threads a multiprocessor ran 1.33x slower than staging
 * y (f32 100 x 1170563, H200). More 16-byte loads in its PTX at 256 x 1
 * than at 512 x 1, more there than at 256 x 3. */
Test(backward_split, y_loads_in_flight_by_resident_threads, .timeout = 120)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	const tmpl_manifest *m = tf_template("softmax_backward_split");
	static const char *const shapes[][2] = { { "threads=256", "ctas_per_sm=1" },
						 { "threads=512", "ctas_per_sm=1" },
						 { "threads=256", "ctas_per_sm=3" } };
	int loads[3];
	for (int i = 0; i < 3; i++) {
		variant v;
		variant_defaults(&v, m, AT_F32);
		cr_assert_eq(variant_set(&v, shapes[i][0], &err), 0);
		cr_assert_eq(variant_set(&v, shapes[i][1], &err), 0);
		v.op = manifest_source_op(m, "log_softmax_backward");
		compiled_kernel k;
		tf_compile_ptx(&v, 90, &k);
		loads[i] = count_in(k.ptx, "ld.global.v4.");
		compiled_kernel_free(&k);
	}
	cr_assert(loads[0] > loads[1] && loads[1] > loads[2],
		  "16-byte loads at 256 x 1, 512 x 1, 256 x 3: %d %d %d", loads[0], loads[1],
		  loads[2]);
}

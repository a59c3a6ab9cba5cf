/* Tests for templates/softmax_backward_cluster.{cu,yaml}: a row cut over a
 * thread-block cluster, each CTA staging its slice of y and dy. Which rows
 * it serves, the launch (a cluster a row, not persistent), what a CTA
 * stages, and where only the largest cluster is left (its slices read in
 * part twice). The tests run from the repository root. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "tests/template_fixture.h"

TestSuite(backward_cluster, .init = tf_load_templates, .fini = tf_free_templates);

static long long ceil_div(long long a, long long b)
{
	return (a + b - 1) / b;
}

/* Each CTA stages its share of the row's windows of y and of dy, a peeled
 * row's head included, whole where it fits; a cluster a row. */
Test(backward_cluster, each_cta_stages_its_slice_of_the_rows_windows)
{
	const tmpl_manifest *m = tf_template("softmax_backward_cluster");
	static const struct {
		at_dtype dt;
		long long M, N;
	} shapes[] = { { AT_F16, 1024, 100001 }, { AT_BF16, 4096, 32000 }, { AT_F32, 64, 24186 } };
	for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
		variant *vs;
		const long long M = shapes[s].M, N = shapes[s].N;
		size_t n = tf_enumerate(m, 90, shapes[s].dt, M, N, &vs);
		cr_assert_gt(n, 0, "%s %lld x %lld", at_dtype_name(shapes[s].dt), M, N);
		for (size_t i = 0; i < n; i++) {
			const long long cluster = tf_value(&vs[i], "cluster");
			const long long vec = tf_value(&vs[i], "vec");
			const long long windows = ceil_div(N + tf_value(&vs[i], "peel") * (vec - 1), vec);
			launch_geometry g = tf_geometry(&vs[i], 90, M, N);
			cr_assert_eq(g.ctas_per_row, cluster);
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.dyn_smem, 2 * ceil_div(windows, cluster) * 16,
				     "cluster %lld: the slice of %lld windows whole", cluster, windows);
			cr_assert_geq(g.max_n, N);
		}
		free(vs);
	}
}

/* Rows one CTA stages whole are softmax_backward_smem's; where a slice of a
 * smaller cluster does not fit, only the largest serves, reading the rest
 * twice. */
Test(backward_cluster, serves_long_rows_and_the_largest_cluster_takes_any)
{
	const tmpl_manifest *m = tf_template("softmax_backward_cluster");
	variant *vs;
	cr_assert_eq(tf_count_variants(m, 90, AT_F16, 4096, 8192), 0, "short rows: one CTA's");
	/* f32 131072: 64 KB of y and dy a CTA at 8, 128 KB at 4 (fits), 256 KB at 2 */
	size_t n = tf_enumerate(m, 90, AT_F32, 64, 131072, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_geq(tf_value(&vs[i], "cluster"), 4);
	free(vs);
	/* f32 1M: no slice fits but the largest cluster's, which stages what it can */
	n = tf_enumerate(m, 90, AT_F32, 4, 1 << 20, &vs);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(tf_value(&vs[i], "cluster"), 8);
		launch_geometry g = tf_geometry(&vs[i], 90, 4, 1 << 20);
		cr_assert_lt(g.dyn_smem, 2 * ((1 << 20) / 8) * 4, "part of the slice staged");
		cr_assert_leq(g.dyn_smem + 1024, 227 * 1024);
	}
	free(vs);
}

/* Tests for the backward templates' peeled rows (templates/softmax_backward_
 * {smem,block,warp} with peel=1): rows that are not whole vectors (N % vec)
 * are read and written as the vector windows from the boundary below their
 * start. Which variants peel, what they stage and hold, and that a whole
 * window stays one vector store. Before, such rows went element by
 * element: f16 8797 x 24186 at 0.35 of a copy, 2482 x 79668 at 0.22 (H200,
 * results/h200/softmax-backward-draw-1796023764-h200.csv); peeled, 0.91 and
 * 0.78. The tests run from the repository root. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "tests/template_fixture.h"

TestSuite(backward_peel, .init = tf_load_templates, .fini = tf_free_templates);

/* The staged templates peel exactly the rows that are not whole vectors:
 * unpeeled they stage nothing, and on aligned rows the peel's extra pass
 * cost refilling variants up to 1.5x (bf16 4096 x 4096, H200). */
Test(backward_peel, the_staged_templates_peel_exactly_the_rows_not_whole_vectors)
{
	static const struct {
		const char *name;
		at_dtype dt;
		long long N;
		int peeled;
	} rows[] = {
		{ "softmax_backward_smem", AT_F16, 24186, 1 },
		{ "softmax_backward_smem", AT_F16, 24192, 0 },
		{ "softmax_backward_smem", AT_BF16, 79668, 1 },
		{ "softmax_backward_smem", AT_F32, 3001, 1 },
		{ "softmax_backward_smem", AT_F32, 3000, 0 },
		{ "softmax_backward_cluster", AT_F16, 100001, 1 },
		{ "softmax_backward_cluster", AT_F16, 100000, 0 },
		{ "softmax_backward_cluster", AT_F32, 24186, 1 },
	};
	for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
		variant *vs;
		size_t n = tf_enumerate(tf_template(rows[r].name), 90, rows[r].dt, 1024, rows[r].N,
					&vs);
		cr_assert_gt(n, 0, "%s %s x %lld", rows[r].name, at_dtype_name(rows[r].dt),
			     rows[r].N);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(tf_value(&vs[i], "peel"), rows[r].peeled, "%s %s x %lld",
				     rows[r].name, at_dtype_name(rows[r].dt), rows[r].N);
		free(vs);
	}
}

/* A peeled row spans up to vec - 1 more elements (its head's): the staged
 * template's buffer holds them, so that a row staged whole has no window
 * read from global memory twice. */
Test(backward_peel, a_peeled_rows_buffer_has_room_for_its_head)
{
	const tmpl_manifest *m = tf_template("softmax_backward_smem");
	const long long N = 24186, windows = (N + 7 + 7) / 8;
	variant *vs;
	size_t n = tf_enumerate(m, 90, AT_F16, 4096, N, &vs), whole = 0;
	for (size_t i = 0; i < n; i++) {
		if (tf_value(&vs[i], "ctas_per_sm") > 2)
			continue; /* four or eight CTAs' shares hold part of the row */
		launch_geometry g = tf_geometry(&vs[i], 90, 4096, N);
		cr_assert_eq(g.dyn_smem, tf_value(&vs[i], "stages") * 2 * windows * 16,
			     "%lld windows of y and of dy", windows);
		whole++;
	}
	cr_assert_gt(whole, 0);
	free(vs);
}

/* The register-held templates peel where the hold has room for a row's
 * head, and only rows that are not whole vectors. */
Test(backward_peel, register_held_rows_peel_where_the_hold_has_room)
{
	static const struct {
		const char *name, *width;
		at_dtype dt;
		long long N;
	} rows[] = {
		{ "softmax_backward_block", "threads", AT_F32, 3001 },
		{ "softmax_backward_block", "threads", AT_F16, 1001 },
		{ "softmax_backward_warp", "lanes", AT_BF16, 1001 },
		{ "softmax_backward_warp", "lanes", AT_F32, 77 },
	};
	for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
		const tmpl_manifest *m = tf_template(rows[r].name);
		variant *vs;
		size_t n = tf_enumerate(m, 90, rows[r].dt, 4096, rows[r].N, &vs), peeled = 0;
		for (size_t i = 0; i < n; i++) {
			if (!tf_value(&vs[i], "peel"))
				continue;
			peeled++;
			const long long vec = tf_value(&vs[i], "vec");
			cr_assert_gt(vec, 1, "%s: a peel of one-element vectors", rows[r].name);
			cr_assert_geq(tf_value(&vs[i], rows[r].width) *
					      tf_value(&vs[i], "elems_per_thread"),
				      rows[r].N + vec - 1, "%s: no room for the head", rows[r].name);
		}
		cr_assert_gt(peeled, 0, "%s %s x %lld: no peeled variant", rows[r].name,
			     at_dtype_name(rows[r].dt), rows[r].N);
		free(vs);
		/* an aligned row: nothing to peel */
		n = tf_enumerate(m, 90, rows[r].dt, 4096, rows[r].N - rows[r].N % 8, &vs);
		for (size_t i = 0; i < n; i++)
			cr_assert_eq(tf_value(&vs[i], "peel"), 0, "%s", rows[r].name);
		free(vs);
	}
}

/* Vector stores in ptx (16-byte, with or without a cache hint). */
static int vector_stores(const char *ptx)
{
	int n = 0;
	for (const char *p = strstr(ptx, "st.global."); p; p = strstr(p + 1, "st.global.")) {
		const char *eol = strchr(p, '\n');
		const char *v4 = strstr(p, ".v4.");
		n += v4 && (!eol || v4 < eol);
	}
	return n;
}

static int vector_stores_of(const char *name, at_dtype dt, const char *params)
{
	at_error err;
	variant v;
	variant_defaults(&v, tf_template(name), dt);
	char copy[160], *save = NULL;
	snprintf(copy, sizeof copy, "%s", params);
	for (char *a = strtok_r(copy, " ", &save); a; a = strtok_r(NULL, " ", &save))
		cr_assert_eq(variant_set(&v, a, &err), 0, "%s: %s", a, err.msg);
	compiled_kernel k;
	tf_compile_ptx(&v, 90, &k);
	const int n = vector_stores(k.ptx);
	compiled_kernel_free(&k);
	return n;
}

/* A peeled row's whole windows are stored as one 16-byte store each, as
 * many as unpeeled: with the partial window's half-precision elements
 * taken from the packed vector, NVVM split the whole store too (into
 * 2-byte ones, then 4-byte ones through a uint4), and a peeled f16 row
 * staged whole ran at 0.39 of a copy (8797 x 24186, H200). */
Test(backward_peel, whole_windows_stay_one_vector_store, .timeout = 300)
{
	at_error err;
	cr_assert_eq(nvrtc_load(&err), 0, "%s", err.msg);
	static const struct {
		const char *name, *params;
	} variants[] = {
		{ "softmax_backward_smem", "refill=0 persistent=0 ctas_per_sm=2" },
		{ "softmax_backward_smem", "refill=1 persistent=1 unroll=2" },
		{ "softmax_backward_smem", "cache_hint=1 unroll=4" },
		{ "softmax_backward_block", "threads=256 elems_per_thread=16" },
		{ "softmax_backward_warp", "lanes=16 elems_per_thread=8" },
		{ "softmax_backward_cluster", "cluster=4" },
		{ "softmax_backward_cluster", "cluster=2 cache_hint=1" },
	};
	static const at_dtype dts[] = { AT_F16, AT_BF16, AT_F32 };
	for (size_t i = 0; i < sizeof variants / sizeof *variants; i++)
		for (size_t d = 0; d < 3; d++) {
			char unpeeled[160], peeled[160];
			const char *vec = dts[d] == AT_F32 ? "vec=4" : "vec=8";
			snprintf(unpeeled, sizeof unpeeled, "%s %s peel=0", variants[i].params, vec);
			snprintf(peeled, sizeof peeled, "%s %s peel=1", variants[i].params, vec);
			const int plain = vector_stores_of(variants[i].name, dts[d], unpeeled);
			cr_assert_gt(plain, 0, "%s %s: no vector store", variants[i].name, unpeeled);
			cr_assert_eq(vector_stores_of(variants[i].name, dts[d], peeled), plain,
				     "%s %s %s: vector stores split", variants[i].name,
				     at_dtype_name(dts[d]), peeled);
		}
}

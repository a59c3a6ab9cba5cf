/* The templates that hold a row in registers (block, warp, cluster_regs)
 * take a half-precision row's max in pairs, straight from the loaded
 * vectors (vec_max in templates/softmax_common.cuh), and convert after,
 * without costing registers: a bf16 block of 1024 threads still fits two
 * CTAs per SM. Checked in the compiled PTX and ptxas' register count
 * (NVRTC, no GPU). */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

TestSuite(packed_max, .init = tf_load_templates, .fini = tf_free_templates);

/* The first variant of `name` at M x N in dtype dt whose params match
 * `want` (a "threads=..." style prefix of its params string), compiled. */
static void compile_first(const char *name, at_dtype dt, long long M, long long N,
			  const char *want, compiled_kernel *k)
{
	variant *vs = NULL;
	size_t n = tf_enumerate(tf_template(name), 90, dt, M, N, &vs);
	for (size_t i = 0; i < n; i++) {
		char *params = variant_params_str(&vs[i]);
		int match = strncmp(params, want, strlen(want)) == 0;
		free(params);
		if (!match)
			continue;
		char *src = tf_specialize(&vs[i]);
		tf_compile_clean(&vs[i], src, 90, k);
		free(src);
		free(vs);
		return;
	}
	free(vs);
	cr_assert_fail("%s %s at %lldx%lld: no variant \"%s...\"", name, at_dtype_name(dt), M, N,
		       want);
}

static void expect_pair_max(const char *name, long long M, long long N, const char *want)
{
	static const struct {
		at_dtype dt;
		const char *insn;
	} cases[] = { { AT_BF16, "max.bf16x2" }, { AT_F16, "max.f16x2" } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		compiled_kernel k;
		compile_first(name, cases[c].dt, M, N, want, &k);
		cr_assert_not_null(strstr(k.ptx, cases[c].insn), "%s %s: no %s", name,
				   at_dtype_name(cases[c].dt), cases[c].insn);
		compiled_kernel_free(&k);
	}
	compiled_kernel k;
	compile_first(name, AT_F32, M, N, "", &k);
	cr_assert_null(strstr(k.ptx, "max.bf16x2"), "%s f32: no half-precision max", name);
	cr_assert_null(strstr(k.ptx, "max.f16x2"), "%s f32: no half-precision max", name);
	compiled_kernel_free(&k);
}

Test(packed_max, block_rows_take_their_max_in_pairs)
{
	expect_pair_max("softmax_block", 4096, 8192, "threads=512 vec=8");
}

Test(packed_max, warp_rows_take_their_max_in_pairs)
{
	expect_pair_max("softmax_warp", 4096, 512, "threads=128 lanes=32 rows_per_cta=4 vec=8");
}

Test(packed_max, cluster_rows_take_their_max_in_pairs)
{
	expect_pair_max("softmax_cluster_regs", 4096, 65536, "cluster=8");
}

Test(packed_max, a_bf16_block_of_1024_threads_fits_two_ctas_per_sm)
{
	compiled_kernel k;
	compile_first("softmax_block", AT_BF16, 4096, 16384,
		      "threads=1024 vec=8 elems_per_thread=16", &k);
	/* 2 x 1024 threads x 32 registers = the H100's 65536 per SM */
	cr_assert_leq(k.registers, 32, "%d registers", k.registers);
	compiled_kernel_free(&k);
}

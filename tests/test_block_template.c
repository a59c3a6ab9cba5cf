/* Tests for softmax_block's packed holds (templates/softmax_block.cu,
 * PACKED): compiled by NVRTC for sm_90, a half-precision row kept packed
 * takes at most the registers that let HELD_CTAS's CTAs fit (half of what
 * its f32 exponentials took), spills nothing, and converts the row a
 * second time with prmt (not the first pass's instructions, which ptxas
 * would reuse) before the exp2 that folds in log2 of the sum. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"

TestSuite(block_template, .init = tf_load_templates, .fini = tf_free_templates);

/* The variant of bf16/f16 4096 x N with these threads and hold, in 16-byte
 * vectors, one CTA per row. */
static variant find_variant(at_dtype dt, long long N, long long threads, long long ept,
			    long long packed)
{
	variant *vs;
	size_t n = tf_enumerate(tf_template("softmax_block"), 90, dt, 4096, N, &vs);
	for (size_t i = 0; i < n; i++)
		if (tf_value(&vs[i], "threads") == threads && tf_value(&vs[i], "vec") == 8 &&
		    tf_value(&vs[i], "elems_per_thread") == ept &&
		    tf_value(&vs[i], "packed") == packed && tf_value(&vs[i], "persistent") == 0 &&
		    tf_value(&vs[i], "cache_hint") == 0) {
			variant v = vs[i];
			free(vs);
			return v;
		}
	cr_assert_fail("no %s N=%lld threads=%lld ept=%lld packed=%lld", at_dtype_name(dt), N,
		       threads, ept, packed);
	abort();
}

static compiled_kernel compile_clean(const variant *v)
{
	char *src = tf_specialize(v);
	compiled_kernel k;
	tf_compile_clean(v, src, 90, &k);
	free(src);
	return k;
}

Test(block_template, a_packed_row_takes_half_the_registers_and_spills_nothing, .timeout = 60)
{
	const at_dtype dts[] = { AT_BF16, AT_F16 };
	for (size_t d = 0; d < 2; d++) {
		/* 512 threads x 32 elements: 16 registers of row packed, 32 as f32 */
		variant packed = find_variant(dts[d], 16384, 512, 32, 1);
		variant plain = find_variant(dts[d], 16384, 512, 32, 0);
		compiled_kernel kp = compile_clean(&packed), ku = compile_clean(&plain);
		/* HELD_CTAS(16): 4 CTAs of 512 threads, so at most 32 registers */
		cr_assert_leq(kp.registers, 32, "%s packed: %d registers",
			      at_dtype_name(dts[d]), kp.registers);
		cr_assert_gt(ku.registers, 32, "%s f32 exponentials: %d registers",
			     at_dtype_name(dts[d]), ku.registers);
		const char *wanted[] = { "prmt.b32", "lg2.approx.ftz.f32", "ex2.approx.ftz.f32" };
		tf_expect_in_ptx(&packed, &kp, wanted, sizeof wanted / sizeof *wanted);
		cr_assert_null(strstr(ku.ptx, "lg2.approx"), "the f32 hold divides by the sum");
		compiled_kernel_free(&kp);
		compiled_kernel_free(&ku);
	}
}

Test(block_template, long_packed_rows_compile_without_spills, .timeout = 60)
{
	/* the hold that won bf16/f16 32768 on the H100, 256 threads of 64
	 * (spilled 326 bytes at 48 registers before HELD_REGS's 20), and the
	 * largest */
	static const struct {
		long long N, threads, ept;
	} holds[] = { { 32768, 512, 64 }, { 16384, 256, 64 }, { 65536, 1024, 64 } };
	for (size_t h = 0; h < 3; h++) {
		variant v = find_variant(AT_BF16, holds[h].N, holds[h].threads, holds[h].ept, 1);
		compiled_kernel k = compile_clean(&v);
		cr_assert_leq(k.registers * holds[h].threads, 65536);
		compiled_kernel_free(&k);
	}
}

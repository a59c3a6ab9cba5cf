/* The kernels of variants by identity (tuner/sweep/variant_kernels.c): a
 * variant asked for again, by a later shape or after the look-ahead queued
 * it, gets the same kernel without its source being built again; another
 * dtype or param is another kernel. NVRTC compiles in the background (no
 * GPU); the tests never wait for it. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"
#include "tuner/sweep/variant_kernels.h"

TestSuite(variant_kernels, .init = tf_load_templates, .fini = tf_free_templates);

static variant block_variant(at_dtype dt, const char *threads)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), dt);
	at_error err = { { 0 } };
	cr_assert_eq(variant_set(&v, threads, &err), 0, "%s", err.msg);
	return v;
}

Test(variant_kernels, a_variant_asked_for_again_gets_its_kernel_without_a_new_source)
{
	kernel_cache c;
	kernel_cache_init(&c, 90, 1, NULL);
	variant vs[3] = { block_variant(AT_F32, "threads=128"), block_variant(AT_F32, "threads=256"),
			  block_variant(AT_F16, "threads=128") };
	kernel_entry *first[3], *again[2];
	at_error err = { { 0 } };
	cr_assert_eq(kernel_cache_queue_variants(&c, vs, 3, first, &err), 0, "%s", err.msg);
	cr_assert_eq(c.count, 3, "three sources");
	cr_assert_eq(c.vcount, 3);
	cr_assert_neq(first[0], first[1], "another param, another kernel");
	cr_assert_neq(first[0], first[2], "another dtype, another kernel");

	variant later[2] = { vs[2], vs[0] }; /* a later shape, in another order */
	cr_assert_eq(kernel_cache_queue_variants(&c, later, 2, again, &err), 0, "%s", err.msg);
	cr_assert_eq(again[0], first[2]);
	cr_assert_eq(again[1], first[0]);
	cr_assert_eq(c.count, 3, "no source built or looked up again");
	cr_assert_eq(c.vcount, 3);
	cr_assert_eq(kernel_cache_queue_variants(&c, later, 2, NULL, &err), 0,
		     "queueing alone (the look-ahead) needs no entries");
	kernel_cache_free(&c);
}

Test(variant_kernels, the_index_grows_past_its_first_table_and_keeps_every_kernel)
{
	kernel_cache c;
	kernel_cache_init(&c, 90, 1, NULL);
	size_t n = 0;
	variant *vs = NULL;
	const at_dtype dts[] = { AT_F32, AT_F16, AT_BF16 };
	for (int d = 0; d < 3; d++) { /* warp's variants of rows of 96 in each dtype */
		variant *some;
		size_t k = tf_enumerate(tf_template("softmax_warp"), 90, dts[d], 4096, 96, &some);
		vs = realloc(vs, (n + k) * sizeof *vs);
		memcpy(vs + n, some, k * sizeof *vs);
		n += k;
		free(some);
	}
	cr_assert_gt(n, 1024, "enough variants to grow the index twice (%zu)", n);
	kernel_entry **first = calloc(n, sizeof *first), **again = calloc(n, sizeof *again);
	at_error err = { { 0 } };
	cr_assert_eq(kernel_cache_queue_variants(&c, vs, n, first, &err), 0, "%s", err.msg);
	size_t sources = c.count;
	cr_assert_eq(kernel_cache_queue_variants(&c, vs, n, again, &err), 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(again[i], first[i], "variant %zu", i);
	cr_assert_eq(c.count, sources);
	cr_assert_eq(c.vcount, n);
	free(first);
	free(again);
	free(vs);
	kernel_cache_free(&c);
}

Test(variant_kernels, another_op_of_the_same_template_is_another_kernel)
{
	kernel_cache c;
	kernel_cache_init(&c, 90, 1, NULL);
	variant soft = block_variant(AT_F32, "threads=128"), log = soft, log_again = soft;
	log.op = "log_softmax";
	/* another string of the same op: the identity is the name, not the pointer */
	char name[] = "log_softmax";
	log_again.op = name;
	variant vs[3] = { soft, log, log_again };
	kernel_entry *got[3];
	at_error err = { { 0 } };
	cr_assert_eq(kernel_cache_queue_variants(&c, vs, 3, got, &err), 0, "%s", err.msg);
	cr_assert_neq(got[0], got[1], "log_softmax's source defines OP_LOG_SOFTMAX");
	cr_assert_eq(got[1], got[2]);
	cr_assert_eq(c.count, 2, "two sources");
	kernel_cache_free(&c);
}

/* The template tests' compile memo (tests/compile_memo.h): a source
 * compiled once is the same outcome the next time without NVRTC (PTX, log,
 * resources parsed again; a failure with its log), another source or
 * architecture is compiled, and without $AUTOTUNE_TEST_COMPILE_CACHE
 * nothing is kept. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/compile_memo.h"
#include "tests/tmp_folder.h"

TestSuite(compile_memo, .init = tmp_setup, .fini = tmp_teardown, .timeout = 60);

static const char good[] =
	"extern \"C\" __global__ void softmax_kernel(float *y, int n)\n"
	"{ for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = __expf(y[i]); }\n";
static const char bad[] = "extern \"C\" __global__ void softmax_kernel(float *y) { y[0] = nope; }\n";

static int compile(const char *src, int cc, compiled_kernel *k, int *from_memo)
{
	at_error err = { { 0 } };
	int rc = memo_compile(src, "memo.cu", cc, k, &err, from_memo);
	cr_assert_neq(rc, COMPILE_ERROR, "%s", err.msg);
	return rc;
}

Test(compile_memo, a_source_compiled_once_comes_back_as_nvrtc_gave_it)
{
	cr_assert_eq(setenv(COMPILE_MEMO_ENV, tmp_path("memo.db"), 1), 0);
	compiled_kernel first, again, other;
	int memo;
	cr_assert_eq(compile(good, 90, &first, &memo), COMPILE_OK);
	cr_assert_eq(memo, 0, "nothing was kept yet");
	cr_assert_not_null(first.cubin);
	cr_assert_eq(compile(good, 90, &again, &memo), COMPILE_OK);
	cr_assert_eq(memo, 1);
	cr_assert_str_eq(again.ptx, first.ptx);
	cr_assert_str_eq(again.log, first.log);
	cr_assert_eq(again.registers, first.registers);
	cr_assert_gt(again.registers, 0, "resources parsed from the kept log");
	cr_assert_eq(again.smem_bytes, first.smem_bytes);
	cr_assert_eq(again.spill_bytes, first.spill_bytes);
	cr_assert_eq(again.stack_bytes, first.stack_bytes);
	cr_assert_null(again.cubin, "the cubin is not kept");
	/* another architecture is another outcome */
	cr_assert_eq(compile(good, 80, &other, &memo), COMPILE_OK);
	cr_assert_eq(memo, 0);
	compiled_kernel_free(&first);
	compiled_kernel_free(&again);
	compiled_kernel_free(&other);

	compiled_kernel f1, f2;
	cr_assert_eq(compile(bad, 90, &f1, &memo), COMPILE_FAILED);
	cr_assert_eq(memo, 0);
	cr_assert_eq(compile(bad, 90, &f2, &memo), COMPILE_FAILED);
	cr_assert_eq(memo, 1, "a source that does not compile is kept too");
	cr_assert_str_eq(f2.log, f1.log);
	cr_assert_not_null(strstr(f2.log, "nope"), "%s", f2.log);
	compiled_kernel_free(&f1);
	compiled_kernel_free(&f2);
}

Test(compile_memo, without_the_variable_nothing_is_kept)
{
	cr_assert_eq(setenv(COMPILE_MEMO_ENV, "", 1), 0);
	compiled_kernel a, b;
	int memo;
	cr_assert_eq(compile(good, 90, &a, &memo), COMPILE_OK);
	cr_assert_eq(compile(good, 90, &b, &memo), COMPILE_OK);
	cr_assert_eq(memo, 0);
	cr_assert_not_null(b.cubin);
	compiled_kernel_free(&a);
	compiled_kernel_free(&b);
}

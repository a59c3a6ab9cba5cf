/* Tests for tuner/timing/code_flush.{c,h}: the instruction-cache eviction
 * kernel's source compiles to the straight-line code it is meant to be (its
 * size past the multiprocessor's instruction caches), and the switch reads
 * as documented (no GPU: the kernel is only loaded when on). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "tuner/timing/code_flush.h"

Test(code_flush, its_kernel_is_straight_line_code_of_16_bytes_an_instruction, .timeout = 120)
{
	char *src = code_flush_source(8192);
	compiled_kernel k;
	at_error err = { { 0 } };
	cr_assert_eq(nvrtc_compile(src, "evict_code.cu", 90, &k, &err), COMPILE_OK, "%s", err.msg);
	/* every multiply-add kept, none folded into a loop */
	size_t ffma = 0;
	for (const char *p = k.ptx; (p = strstr(p, "fma.rn.f32")) != NULL; p++)
		ffma++;
	cr_assert_geq(ffma, 8192, "%zu multiply-adds in the PTX", ffma);
	cr_assert_geq(k.cubin_size, 8192 * 16, "cubin of %zu bytes", k.cubin_size);
	compiled_kernel_free(&k);
	free(src);
}

Test(code_flush, off_unless_asked_and_a_bad_value_is_an_error)
{
	gpu_device gpu;
	memset(&gpu, 0, sizeof gpu);
	code_flush f;
	at_error err = { { 0 } };
	unsetenv("AUTOTUNE_CODE_FLUSH");
	cr_assert_eq(code_flush_open(&f, &gpu, &err), 0);
	cr_assert_null(f.module, "off by default");
	cr_assert_eq(code_flush_run(&f, NULL, &err), 0, "off: nothing queued");
	setenv("AUTOTUNE_CODE_FLUSH", "0", 1);
	cr_assert_eq(code_flush_open(&f, &gpu, &err), 0);
	cr_assert_null(f.module);
	setenv("AUTOTUNE_CODE_FLUSH", "yes", 1);
	cr_assert_neq(code_flush_open(&f, &gpu, &err), 0);
	cr_assert_str_eq(err.msg, "AUTOTUNE_CODE_FLUSH must be 0 or 1, got \"yes\"");
	unsetenv("AUTOTUNE_CODE_FLUSH");
}

/* The table of built-in kernels: see builtin_kernels.h. The params must
 * match the Makefile's BUILTIN_PARAMS (a test regenerates the sources and
 * compares). */
#include "dispatch/builtin_kernels.h"

static const builtin_kernel builtins[AT_DTYPE_COUNT] = {
	[AT_F32] = { atd_builtin_softmax_online_f32, "softmax_online",
		     "threads=256 vec=4 unroll=2 cache_hint=0 persistent=0",
		     { 256, 1, 0, 0, 0 } },
	[AT_F16] = { atd_builtin_softmax_online_f16, "softmax_online",
		     "threads=256 vec=8 unroll=2 cache_hint=0 persistent=0",
		     { 256, 1, 0, 0, 0 } },
	[AT_BF16] = { atd_builtin_softmax_online_bf16, "softmax_online",
		      "threads=256 vec=8 unroll=2 cache_hint=0 persistent=0",
		      { 256, 1, 0, 0, 0 } },
};

const builtin_kernel *builtin_kernel_for(at_dtype dt)
{
	return (unsigned)dt < AT_DTYPE_COUNT ? &builtins[dt] : (const builtin_kernel *)0;
}

size_t builtin_kernel_size(at_dtype dt)
{
	switch (dt) {
	case AT_F32: return atd_builtin_softmax_online_f32_size;
	case AT_F16: return atd_builtin_softmax_online_f16_size;
	case AT_BF16: return atd_builtin_softmax_online_bf16_size;
	}
	return 0;
}

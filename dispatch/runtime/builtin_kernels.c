/* The table of built-in kernels: see builtin_kernels.h; their params are
 * builtin_params.h's, from which the Makefile also generates their sources. */
#include "dispatch/runtime/builtin_kernels.h"

#include "dispatch/policy/builtin_params.h"

#define BUILTIN_ROW(dt, name, params)                                                   \
	[dt] = { atd_builtin_softmax_online_##name, BUILTIN_TEMPLATE, params,           \
		 { BUILTIN_THREADS, 1, 0, 0, 0 } },
static const builtin_kernel builtins[AT_DTYPE_COUNT] = { BUILTIN_KERNELS(BUILTIN_ROW) };

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

/* The table of built-in kernels: see builtin_kernels.h; their params are
 * builtin_params.h's, from which the Makefile also generates their sources. */
#include "dispatch/runtime/builtin_kernels.h"

#include "dispatch/policy/builtin_params.h"

#define BUILTIN_ROW(opi, op, tmpl, dt, name, params)                          \
	[opi][dt] = { atd_builtin_##op##_##name, tmpl, params,                \
		      { BUILTIN_THREADS, 1, 0, 0, 0 } },
static const builtin_kernel builtins[ATDI_NOPS][AT_DTYPE_COUNT] = { BUILTIN_KERNELS(BUILTIN_ROW) };

const builtin_kernel *builtin_kernel_for(int op, at_dtype dt)
{
	/* an op of no built-in kernel (cross_entropy until its templates
	 * come) has an empty row */
	return op >= 0 && op < ATDI_NOPS && (unsigned)dt < AT_DTYPE_COUNT && builtins[op][dt].fatbin
		       ? &builtins[op][dt]
		       : (const builtin_kernel *)0;
}

size_t builtin_kernel_size(int op, at_dtype dt)
{
#define BUILTIN_SIZE(opi, o, tmpl, d, name, params) \
	if (op == opi && dt == d)                   \
		return atd_builtin_##o##_##name##_size;
	BUILTIN_KERNELS(BUILTIN_SIZE)
	return 0;
}

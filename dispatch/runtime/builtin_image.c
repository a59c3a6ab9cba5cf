/* The built-in kernels' fat binaries, as the library loads them. They are
 * reached through here rather than builtin_kernel_for() so that they stay
 * out of the shared library's exports: the generated array file is built
 * without -fvisibility=hidden, and the linker gives a symbol the most
 * restrictive visibility among all references to it, so these hidden
 * declarations hide the arrays (and their sizes) in libautotune-dispatch.so. */
#include <stddef.h>

#include "dispatch/policy/builtin_params.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/builtin_image.h"

#pragma GCC visibility push(hidden)
#define BUILTIN_DECLARE(opi, op, tmpl, dt, name, params) \
	extern const unsigned char atd_builtin_##op##_##name[]; \
	extern const size_t atd_builtin_##op##_##name##_size;
BUILTIN_KERNELS(BUILTIN_DECLARE)
#pragma GCC visibility pop

const void *atdi_builtin_image(int op, at_dtype dtype)
{
#define BUILTIN_IMAGE(opi, o, tmpl, dt, name, params) \
	if (op == opi && dtype == dt)                  \
		return atd_builtin_##o##_##name##_size ? atd_builtin_##o##_##name : NULL;
	BUILTIN_KERNELS(BUILTIN_IMAGE)
	return NULL;
}

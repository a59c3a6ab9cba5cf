/* The built-in kernels' fat binaries, as the library loads them. They are
 * reached through here rather than builtin_kernel_for() so that they stay
 * out of the shared library's exports: the generated array file is built
 * without -fvisibility=hidden, and the linker gives a symbol the most
 * restrictive visibility among all references to it, so these hidden
 * declarations hide the arrays (and their sizes) in libautotune-dispatch.so. */
#pragma GCC visibility push(hidden)
#include <stddef.h>
extern const unsigned char atd_builtin_softmax_online_f32[];
extern const size_t atd_builtin_softmax_online_f32_size;
extern const unsigned char atd_builtin_softmax_online_f16[];
extern const size_t atd_builtin_softmax_online_f16_size;
extern const unsigned char atd_builtin_softmax_online_bf16[];
extern const size_t atd_builtin_softmax_online_bf16_size;
#pragma GCC visibility pop

#include "dispatch/runtime/builtin_image.h"

const void *atdi_builtin_image(at_dtype dtype)
{
	const unsigned char *image;
	size_t size;
	switch (dtype) {
	case AT_F32:
		image = atd_builtin_softmax_online_f32;
		size = atd_builtin_softmax_online_f32_size;
		break;
	case AT_F16:
		image = atd_builtin_softmax_online_f16;
		size = atd_builtin_softmax_online_f16_size;
		break;
	case AT_BF16:
		image = atd_builtin_softmax_online_bf16;
		size = atd_builtin_softmax_online_bf16_size;
		break;
	default:
		return NULL;
	}
	return size ? image : NULL;
}

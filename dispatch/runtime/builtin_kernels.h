/* The built-in kernels the library falls back to: the softmax_online
 * template specialised per dtype with the params of builtin_params.h (the
 * build generates their sources into build/builtin/ and embeds them as fat
 * binaries). */
#ifndef AT_DISPATCH_BUILTIN_KERNELS_H
#define AT_DISPATCH_BUILTIN_KERNELS_H

#include <stddef.h>

#include "common/dtype.h"
#include "dispatch/runtime/launch_geometry.h"

extern const unsigned char atd_builtin_softmax_online_f32[];
extern const size_t atd_builtin_softmax_online_f32_size;
extern const unsigned char atd_builtin_softmax_online_f16[];
extern const size_t atd_builtin_softmax_online_f16_size;
extern const unsigned char atd_builtin_softmax_online_bf16[];
extern const size_t atd_builtin_softmax_online_bf16_size;

typedef struct builtin_kernel {
	const unsigned char *fatbin; /* for cuModuleLoadData */
	const char *template_name;
	const char *params; /* as in the generated source's header */
	launch_geometry geom;
} builtin_kernel;

/* The built-in kernel for dt (NULL for an unknown dtype). */
const builtin_kernel *builtin_kernel_for(at_dtype dt);

/* Bytes of dt's fat binary (0 for an unknown dtype). */
size_t builtin_kernel_size(at_dtype dt);

#endif

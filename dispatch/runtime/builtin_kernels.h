/* The built-in kernels the library falls back to: each op family's looped
 * template specialised per op and dtype with the params of builtin_params.h (the
 * build generates their sources into build/builtin/ and embeds them as fat
 * binaries). */
#ifndef AT_DISPATCH_BUILTIN_KERNELS_H
#define AT_DISPATCH_BUILTIN_KERNELS_H

#include <stddef.h>

#include "common/dtype.h"
#include "dispatch/policy/builtin_params.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/launch_geometry.h"

#define BUILTIN_EXTERN(opi, op, tmpl, dt, name, params) \
	extern const unsigned char atd_builtin_##op##_##name[]; \
	extern const size_t atd_builtin_##op##_##name##_size;
BUILTIN_KERNELS(BUILTIN_EXTERN)
#undef BUILTIN_EXTERN

typedef struct builtin_kernel {
	const unsigned char *fatbin; /* for cuModuleLoadData */
	const char *template_name;
	const char *params; /* as in the generated source's header */
	launch_geometry geom;
} builtin_kernel;

/* The built-in kernel of op (atdi_op) for dt (NULL for an unknown one, or
 * an op without one). */
const builtin_kernel *builtin_kernel_for(int op, at_dtype dt);

/* Bytes of its fat binary (0 for an unknown op or dtype). */
size_t builtin_kernel_size(int op, at_dtype dt);

#endif

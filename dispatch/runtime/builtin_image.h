/* The built-in kernels' embedded fat binaries, kept out of the shared
 * library's exports (see builtin_image.c). */
#ifndef AT_DISPATCH_BUILTIN_IMAGE_H
#define AT_DISPATCH_BUILTIN_IMAGE_H

#include "common/dtype.h"

/* The embedded fat binary of the built-in kernel of op (atdi_op) for
 * dtype (NULL if none). */
const void *atdi_builtin_image(int op, at_dtype dtype);

#endif

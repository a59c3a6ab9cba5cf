/* The CUDA source of one variant: a header naming its template and params,
 * DTYPE_<DT>, OP_<OP> for a variant of another op than the template's own
 * (its manifest's also_ops: e.g. OP_LOG_SOFTMAX), and one #define per param,
 * then the template's body (its
 * quoted includes expanded). The generator (`autotune gen`, the sweep) and
 * the dispatch library's run-time compiler both build it here, so that a
 * kernel the library derives is byte for byte the one the tuner would have
 * compiled and checked for those params. */
#ifndef AT_COMMON_KERNEL_SOURCE_H
#define AT_COMMON_KERNEL_SOURCE_H

#include <stddef.h>

#include "common/dtype.h"

/* "threads=256 vec=4 ..." for n params into buf (truncated to cap). */
void kernel_params_text(const char *const *names, const long long *values, size_t n, char *buf,
			size_t cap);

/* The source, malloc'd (NULL when out of memory, or when the header would
 * not fit: names longer than a few hundred bytes). source_file is the
 * template's file name, for the header line; op is NULL for the template's
 * own op (tr_source_op), whose source is the template's as written. */
char *kernel_source(const char *template_name, const char *source_file, at_dtype dtype,
		    const char *op, const char *const *names, const long long *values, size_t n,
		    const char *body);

#endif

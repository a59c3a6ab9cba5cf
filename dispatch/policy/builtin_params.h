/* The built-in kernels' params, one source of truth: the library's table
 * (builtin_kernels.c) and the generator of their sources (build/emit-builtin,
 * gen/emit_builtin_main.c, run by the Makefile into build/builtin/) both
 * expand this list. Macros only: the generator links nothing of the library.
 * X(dtype enum, dtype name, params of BUILTIN_TEMPLATE) */
#ifndef AT_DISPATCH_BUILTIN_PARAMS_H
#define AT_DISPATCH_BUILTIN_PARAMS_H

#define BUILTIN_TEMPLATE "softmax_online"
#define BUILTIN_THREADS 256 /* the params' threads, the table's launch geometry */

#define BUILTIN_KERNELS(X)                                                        \
	X(AT_F32, f32, "threads=256 vec=4 unroll=2 cache_hint=0 persistent=0")   \
	X(AT_F16, f16, "threads=256 vec=8 unroll=2 cache_hint=0 persistent=0")   \
	X(AT_BF16, bf16, "threads=256 vec=8 unroll=2 cache_hint=0 persistent=0")

#endif

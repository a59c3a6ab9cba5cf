/* The built-in kernels' templates and params, one source of truth: the
 * library's table (builtin_kernels.c) and the generator of their sources
 * (build/emit-builtin, gen/emit_builtin_main.c, run by the Makefile into
 * build/builtin/) both expand this list. Macros only: the generator links
 * nothing of the library.
 * X(op index, op name, template, dtype enum, dtype name, params): the op
 * index is dispatch/policy/row_ops.h's, which only the library expands;
 * the generator takes the op's name (a source that defines OP_<NAME> for
 * an op other than the template's own). Each template is the looped one
 * of its family: it serves any N. Files and symbols are named
 * <op>_<dtype> (build/builtin/softmax_backward_f16.cu). */
#ifndef AT_DISPATCH_BUILTIN_PARAMS_H
#define AT_DISPATCH_BUILTIN_PARAMS_H

#define BUILTIN_THREADS 256 /* every built-in's threads, the table's launch geometry */

#define BUILTIN_PARAMS_F32 "threads=256 vec=4 unroll=2 cache_hint=0 persistent=0"
#define BUILTIN_PARAMS_HALF "threads=256 vec=8 unroll=2 cache_hint=0 persistent=0"
#define BUILTIN_GRAD_F32 "threads=256 vec=4 unroll=2 persistent=0"
#define BUILTIN_GRAD_HALF "threads=256 vec=8 unroll=2 persistent=0"

#define BUILTIN_KERNELS(X)                                                                        \
	X(ATDI_SOFTMAX, softmax, "softmax_online", AT_F32, f32, BUILTIN_PARAMS_F32)               \
	X(ATDI_SOFTMAX, softmax, "softmax_online", AT_F16, f16, BUILTIN_PARAMS_HALF)              \
	X(ATDI_SOFTMAX, softmax, "softmax_online", AT_BF16, bf16, BUILTIN_PARAMS_HALF)            \
	X(ATDI_LOG_SOFTMAX, log_softmax, "softmax_online", AT_F32, f32, BUILTIN_PARAMS_F32)       \
	X(ATDI_LOG_SOFTMAX, log_softmax, "softmax_online", AT_F16, f16, BUILTIN_PARAMS_HALF)      \
	X(ATDI_LOG_SOFTMAX, log_softmax, "softmax_online", AT_BF16, bf16, BUILTIN_PARAMS_HALF)    \
	X(ATDI_SOFTMAX_BACKWARD, softmax_backward, "softmax_backward_loop", AT_F32, f32,          \
	  BUILTIN_GRAD_F32)                                                                       \
	X(ATDI_SOFTMAX_BACKWARD, softmax_backward, "softmax_backward_loop", AT_F16, f16,          \
	  BUILTIN_GRAD_HALF)                                                                      \
	X(ATDI_SOFTMAX_BACKWARD, softmax_backward, "softmax_backward_loop", AT_BF16, bf16,        \
	  BUILTIN_GRAD_HALF)                                                                      \
	X(ATDI_LOG_SOFTMAX_BACKWARD, log_softmax_backward, "softmax_backward_loop", AT_F32, f32,  \
	  BUILTIN_GRAD_F32)                                                                       \
	X(ATDI_LOG_SOFTMAX_BACKWARD, log_softmax_backward, "softmax_backward_loop", AT_F16, f16,  \
	  BUILTIN_GRAD_HALF)                                                                      \
	X(ATDI_LOG_SOFTMAX_BACKWARD, log_softmax_backward, "softmax_backward_loop", AT_BF16, bf16, \
	  BUILTIN_GRAD_HALF)                                                                      \
	X(ATDI_CROSS_ENTROPY, cross_entropy, "cross_entropy_loop", AT_F32, f32, BUILTIN_GRAD_F32)  \
	X(ATDI_CROSS_ENTROPY, cross_entropy, "cross_entropy_loop", AT_F16, f16, BUILTIN_GRAD_HALF) \
	X(ATDI_CROSS_ENTROPY, cross_entropy, "cross_entropy_loop", AT_BF16, bf16, BUILTIN_GRAD_HALF)

#endif

/* The table of the library's ops: see row_ops.h. */
#include "dispatch/policy/row_ops.h"

#include <math.h>
#include <string.h>

#include "include/autotune/dispatch.h"

/* the public enum (atd_query_op) and the library's indices agree */
_Static_assert(ATDI_SOFTMAX == (int)ATD_OP_SOFTMAX, "atd_op");
_Static_assert(ATDI_LOG_SOFTMAX == (int)ATD_OP_LOG_SOFTMAX, "atd_op");
_Static_assert(ATDI_SOFTMAX_BACKWARD == (int)ATD_OP_SOFTMAX_BACKWARD, "atd_op");
_Static_assert(ATDI_LOG_SOFTMAX_BACKWARD == (int)ATD_OP_LOG_SOFTMAX_BACKWARD, "atd_op");
_Static_assert(ATDI_CROSS_ENTROPY == (int)ATD_OP_CROSS_ENTROPY, "atd_op");

static double uniform(long long N) { return 1.0 / (double)N; }
static double log_uniform(long long N) { return -log((double)N); }
static double zero(long long N) { (void)N; return 0.0; }

static const atdi_op_desc ops[ATDI_NOPS] = {
	[ATDI_SOFTMAX] = { "softmax", "softmax_kernel", ATDI_SOFTMAX, ATDI_SIG_ROW, 1, 6,
			   { NULL, NULL }, { "f32", "f16", "bf16" }, uniform },
	[ATDI_LOG_SOFTMAX] = { "log_softmax", "softmax_kernel", ATDI_SOFTMAX, ATDI_SIG_ROW, 1, 6,
			       { NULL, NULL },
			       { "log_softmax f32", "log_softmax f16", "log_softmax bf16" },
			       log_uniform },
	[ATDI_SOFTMAX_BACKWARD] = { "softmax_backward", "softmax_backward_kernel",
				    ATDI_SOFTMAX_BACKWARD, ATDI_SIG_ROW_GRAD, 2, 8, { NULL, NULL },
				    { "softmax_backward f32", "softmax_backward f16",
				      "softmax_backward bf16" },
				    zero },
	[ATDI_LOG_SOFTMAX_BACKWARD] = { "log_softmax_backward", "softmax_backward_kernel",
					ATDI_SOFTMAX_BACKWARD, ATDI_SIG_ROW_GRAD, 2, 8,
					{ NULL, NULL },
					{ "log_softmax_backward f32", "log_softmax_backward f16",
					  "log_softmax_backward bf16" },
					zero },
	/* docs/cross-entropy.md; its targets make it no row op of zeros to
	 * tune online */
	[ATDI_CROSS_ENTROPY] = { "cross_entropy", "cross_entropy_kernel", ATDI_CROSS_ENTROPY,
				 ATDI_SIG_CROSS_ENTROPY, 1, 14,
				 { "cross_entropy_prepare_kernel", "cross_entropy_reduce_kernel",
				   "cross_entropy_scale_kernel", CE_PLAIN_KERNEL, CE_DEPENDENT_LAUNCH,
				   CE_SCALE_WAITS, CE_REDUCE_POLLED, CE_LOSSES_POLLED },
				 { "cross_entropy f32", "cross_entropy f16", "cross_entropy bf16" },
				 NULL,
				 .aux_optional = 1u << ATDI_CE_PLAIN | 1u << ATDI_CE_DEPENDENT |
						 1u << ATDI_CE_SCALE_WAITS | 1u << ATDI_CE_REDUCE_POLLED |
						 1u << ATDI_CE_LOSSES_POLLED,
				 .aux_marker = 1u << ATDI_CE_DEPENDENT | 1u << ATDI_CE_SCALE_WAITS |
					       1u << ATDI_CE_LOSSES_POLLED,
				 .main_waits = 1u << ATDI_CE_DEPENDENT,
				 .marker_waits = { [ATDI_CE_DEPENDENT] = 1u << ATDI_CE_REDUCE,
						   [ATDI_CE_SCALE_WAITS] = 1u << ATDI_CE_SCALE,
						   [ATDI_CE_LOSSES_POLLED] =
							   1u << ATDI_CE_REDUCE_POLLED },
				 .aux_shared = 1u << ATDI_CE_PREPARE | 1u << ATDI_CE_REDUCE |
					       1u << ATDI_CE_SCALE | 1u << ATDI_CE_REDUCE_POLLED },
};

const atdi_op_desc *atdi_op_desc_of(int op)
{
	return op >= 0 && op < ATDI_NOPS ? &ops[op] : NULL;
}

const char *atdi_op_name(int op)
{
	return op >= 0 && op < ATDI_NOPS ? ops[op].name : "?";
}

int atdi_op_find(const char *name)
{
	for (int i = 0; name && i < ATDI_NOPS; i++)
		if (strcmp(ops[i].name, name) == 0)
			return i;
	return -1;
}

const char *atdi_op_dtype_name(int op, int dtype)
{
	return op >= 0 && op < ATDI_NOPS && dtype >= 0 && dtype < 3 ? ops[op].kinds[dtype] : "?";
}

int atdi_ops_share_code(int a, int b)
{
	const atdi_op_desc *da = atdi_op_desc_of(a), *db = atdi_op_desc_of(b);
	return da && db && da->family == db->family;
}

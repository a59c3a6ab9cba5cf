/* The cross_entropy op (docs/cross-entropy.md): per row of logits x and its
 * target, the loss lse - z_t (torch's cross_entropy, with label smoothing,
 * z-loss and logit soft-capping as options), its lse and the gradient of
 * the loss with respect to the logits. Its kernel takes another signature
 * than softmax's (targets, two row results, the options) and is launched
 * by launch_cross_entropy after its prepare kernel (its hooks,
 * cross_entropy_gpu.h); the sweep tunes the options' default (int64
 * targets, the gradient written, no smoothing, no z-loss, no cap), which
 * changes no memory traffic. */
#include "tuner/ops/ops.h"

#include <math.h>

#include "tuner/check/cross_entropy_rows.h"
#include "tuner/ops/cross_entropy_gpu.h"

const at_op cross_entropy_op = {
	.name = "cross_entropy",
	.summary = "cross-entropy loss, lse and gradient over each row of logits (torch's "
		   "cross_entropy, fused)",
	.kernel_name = "cross_entropy_kernel",
	.kernel_signature = "(elem *dx, const elem *x, const void *target, float *loss, "
			    "float *lse, const float *scale, long long M, long long V, "
			    "long long lddx, long long ldx, long long ignore_index, "
			    "float label_smoothing, float z_loss, float softcap, unsigned flags)",
	/* the logits read once, the gradient written once (a forward-only
	 * call reads once; the same winner serves it) */
	.reads_per_elem = 1,
	.writes_per_elem = 1,
	/* the gradient's rounding to the dtype sets them, as softmax's output;
	 * the row's loss and lse (f32) are held to the same */
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.ninputs = 1,
	.make_input = ce_check_input,
	/* an int64 target a row; its loss and lse */
	.side_bytes = sizeof(long long),
	.row_results = 2,
	.ref_row_side = ce_ref_row_tuning,
	.gpu = &cross_entropy_gpu,
	.masked_value = NAN, /* no masked semantics: a row of -inf is NaN */
	.softmax_baselines = 0,
};

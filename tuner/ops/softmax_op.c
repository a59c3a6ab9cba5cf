/* The softmax op: y[i, j] = exp(x[i, j] - max_i) / sum_j exp(x[i, j] - max_i)
 * over each row, as torch.softmax (NaN rows as PyTorch: see
 * tuner/check/reference.h). */
#include "tuner/ops/ops.h"

#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"

const at_op softmax_op = {
	.name = "softmax",
	.summary = "softmax over each row (torch.softmax(x, dim=-1))",
	.kernel_name = "softmax_kernel",
	.kernel_signature = "(elem *y, const elem *x, long long M, long long N, long long ldy, "
			    "long long ldx, unsigned flags)",
	/* each element read once and written once (common/bytes_moved.h) */
	.reads_per_elem = 1,
	.writes_per_elem = 1,
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.ref_row = ref_softmax_row,
	/* random rows and the finite extreme ones: a variant that gets the
	 * extremes wrong fails its check and never wins */
	.make_input = extreme_check_input,
	.masked_value = 0.0, /* as SDPA gives a fully masked row */
	.softmax_baselines = 1,
};

/* atd_cross_entropy (docs/cross-entropy.md): the op's kernel as every op's
 * (a winner, derived or built-in, through atdi_op_resolved), with the two
 * one-CTA kernels its code defines around it: prepare (the gradient's
 * scale, the valid and out-of-range targets), the check of the targets,
 * the row kernel, and reduce for SUM and MEAN (polling the row losses
 * where the row kernel's code stores them for it). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "common/dtype.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/launch_geometry.h"
#include "dispatch/runtime/resolve.h"
#include "dispatch/runtime/run_op.h"

#define FN "atd_cross_entropy"
ATD_API size_t atd_cross_entropy_workspace_size(int64_t M)
{
	return ce_workspace_bytes(M);
}

static int finite_at_least_zero(float v)
{
	return v >= 0.0f && v < INFINITY; /* NaN fails both */
}

/* ATD_OK, or the first wrong option with the handle's message. */
static atd_status check_options(atd_handle *h, const atd_cross_entropy_opts *o)
{
	if ((unsigned)o->reduction > ATD_REDUCTION_MEAN)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, FN ": unknown reduction %d",
				 (int)o->reduction);
	if ((unsigned)o->target_type > ATD_INDEX_I32)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, FN ": unknown target type %d",
				 (int)o->target_type);
	if (!(o->label_smoothing >= 0.0f && o->label_smoothing <= 1.0f))
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": label_smoothing must be in [0, 1] (it is %g)",
				 (double)o->label_smoothing);
	if (!finite_at_least_zero(o->z_loss))
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": z_loss must be finite and at least 0 (it is %g)", (double)o->z_loss);
	if (!finite_at_least_zero(o->softcap))
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": softcap must be 0 (none) or finite and positive (it is %g)",
				 (double)o->softcap);
	if (o->flags & ~ATD_TRUST_TARGETS)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": unknown flags 0x%x (known: ATD_TRUST_TARGETS)",
				 o->flags & ~ATD_TRUST_TARGETS);
	return ATD_OK;
}

/* ATD_OK, or the first wrong argument with the handle's message. */
static atd_status check_arguments(atd_handle *h, atd_dtype dtype, const void *logits,
				  int64_t ldlogits, const void *target, int64_t M, int64_t V,
				  const atd_cross_entropy_opts *o, const float *loss,
				  const void *dlogits, int64_t lddlogits, const void *workspace)
{
	if ((unsigned)dtype >= AT_DTYPE_COUNT)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, FN ": unknown dtype %d", (int)dtype);
	const char *null = !logits ? "logits" : !target ? "target" : !loss ? "loss"
			 : !workspace ? "workspace" : NULL;
	if (null)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, FN ": %s is NULL", null);
	if (M < 1 || V < 1)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": M and V must be at least 1 (M = %lld, V = %lld)", (long long)M,
				 (long long)V);
	if (ldlogits < V || (dlogits && lddlogits < V))
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": the strides must be at least V = %lld (%s = %lld)", (long long)V,
				 ldlogits < V ? "ldlogits" : "lddlogits",
				 (long long)(ldlogits < V ? ldlogits : lddlogits));
	if ((uintptr_t)workspace % 8 != 0)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": the workspace must be 8-byte aligned");
	return check_options(h, o);
}

/* The reduce kernel over its one CTA, of the tuner's size (its sum's
 * order, and so its result, is the same in both): the one that polls the
 * losses where the row kernel stores them for it (and r's prepare marks
 * them), else the one that waits for the row kernel's end. */
static int launch_reduce(const atdi_resolved *r, CUdeviceptr out, CUdeviceptr losses,
			 long long M, CUdeviceptr ws, int mean, CUstream stream, at_error *err)
{
	void *args[] = { &out, &losses, &M, &ws, &mean };
	int i = atdi_ce_reduce_of(r);
	return launch_kernel(r->aux[i], 1, CE_ONE_CTA_THREADS, 0, 0, r->aux_dependent >> i & 1u,
			     args, stream, err);
}

/* Whether the targets are to be checked: not trusted, and the stream not
 * capturing a graph (where no synchronisation may happen). */
static atd_status wants_check(atd_handle *h, const atd_cross_entropy_opts *o, CUstream stream,
			      int *check)
{
	*check = 0;
	if (o->flags & ATD_TRUST_TARGETS)
		return ATD_OK;
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
	CUresult rc = cudrv.cuStreamIsCapturing(stream, &cs);
	if (rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) /* the legacy stream while another captures */
		return ATD_OK;
	if (rc != CUDA_SUCCESS)
		return atdi_cuda_fail(h, ATD_ERR_CUDA, rc, FN ": cuStreamIsCapturing");
	*check = cs == CU_STREAM_CAPTURE_STATUS_NONE;
	return ATD_OK;
}

/* After prepare: waits for it and, when a target is out of range, says
 * which (ATD_ERR_TARGET). */
static atd_status check_targets(atd_handle *h, CUdeviceptr ws, const void *target, int i32,
				int64_t V, int64_t ignore_index, CUstream stream)
{
	long long counts[3]; /* n_valid, out of range, first such row */
	CUresult rc = cudrv.cuMemcpyDtoHAsync(counts, ws + 8, sizeof counts, stream);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuStreamSynchronize(stream);
	if (rc != CUDA_SUCCESS)
		return atdi_cuda_fail(h, ATD_ERR_CUDA, rc, FN ": reading the targets' check");
	if (counts[1] == 0)
		return ATD_OK;
	long long t = 0;
	int v32 = 0;
	size_t size = i32 ? sizeof v32 : sizeof t;
	rc = cudrv.cuMemcpyDtoHAsync(i32 ? (void *)&v32 : (void *)&t,
				     (CUdeviceptr)(uintptr_t)target + (CUdeviceptr)counts[2] * size,
				     size, stream);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuStreamSynchronize(stream);
	if (rc != CUDA_SUCCESS)
		return atdi_cuda_fail(h, ATD_ERR_CUDA, rc, FN ": reading a target");
	if (i32)
		t = v32;
	return atdi_fail(h, ATD_ERR_TARGET,
			 FN ": target[%lld] = %lld is outside [0, V = %lld) and not ignore_index "
			 "(%lld); %lld row%s such",
			 counts[2], t, (long long)V, (long long)ignore_index, counts[1],
			 counts[1] == 1 ? " is" : "s are");
}

ATD_API atd_status atd_cross_entropy(atd_handle *h, atd_dtype dtype, const void *logits,
				     int64_t ldlogits, const void *target, int64_t M, int64_t V,
				     const atd_cross_entropy_opts *opts, float *loss, float *lse,
				     void *dlogits, int64_t lddlogits, void *workspace,
				     void *stream)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	static const atd_cross_entropy_opts defaults = ATD_CROSS_ENTROPY_DEFAULTS;
	const atd_cross_entropy_opts *o = opts ? opts : &defaults;
	atd_status s = check_arguments(h, dtype, logits, ldlogits, target, M, V, o, loss, dlogits,
				       lddlogits, workspace);
	atdi_resolved r;
	if (s != ATD_OK ||
	    (s = atdi_op_resolved(h, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V, &r)) != ATD_OK)
		return s;
	CUstream st = (CUstream)stream;
	CUdeviceptr ws = (CUdeviceptr)(uintptr_t)workspace;
	CUdeviceptr tg = (CUdeviceptr)(uintptr_t)target;
	int mean = o->reduction == ATD_REDUCTION_MEAN, i32 = o->target_type == ATD_INDEX_I32;
	unsigned flags = (i32 ? CE_TARGET_I32 : 0u) | (dlogits ? CE_WRITE_GRAD : 0u);
	long long m = M, v = V, ignore = o->ignore_index;
	float upstream = o->upstream;
	at_error err;
	int check;
	if (launch_cross_entropy_prepare(r.aux[ATDI_CE_PREPARE], ws, tg, m, v, ignore, upstream,
					 mean, flags, st, &err) != 0)
		return atdi_launch_failed(h, FN, &r, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V,
					  err.msg);
	if ((s = wants_check(h, o, st, &check)) != ATD_OK ||
	    (check && (s = check_targets(h, ws, target, i32, V, ignore, st)) != ATD_OK))
		return s;
	CUdeviceptr losses = o->reduction == ATD_REDUCTION_NONE ? (CUdeviceptr)(uintptr_t)loss
								 : ws + CE_WS_HEAD_BYTES;
	ce_launch_args a = { (CUdeviceptr)(uintptr_t)dlogits, (CUdeviceptr)(uintptr_t)logits, tg,
			     losses, (CUdeviceptr)(uintptr_t)lse, ws, m, v, lddlogits, ldlogits,
			     ignore, o->label_smoothing, o->z_loss, o->softcap, flags };
	/* code that waits for the kernel before it is launched as it may start
	 * early: the row kernel's loads overlap prepare, reduce's launch the
	 * row kernel's end */
	if (launch_cross_entropy(r.fn, r.aux[ATDI_CE_PLAIN], &r.geom, r.grid, &a,
				 r.dependent_launch, st, &err) != 0)
		return atdi_launch_failed(h, FN, &r, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V,
					  err.msg);
	if (o->reduction != ATD_REDUCTION_NONE &&
	    launch_reduce(&r, (CUdeviceptr)(uintptr_t)loss, losses, m, ws, mean, st, &err) != 0)
		return atdi_launch_failed(h, FN, &r, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V,
					  err.msg);
	return ATD_OK;
}

#undef FN
#define FN "atd_cross_entropy_scale"

ATD_API atd_status atd_cross_entropy_scale(atd_handle *h, atd_dtype dtype, void *dlogits,
					   int64_t lddlogits, int64_t M, int64_t V, const float *g,
					   int per_row, void *stream)
{
	if (!h)
		return ATD_ERR_INVALID_ARGUMENT;
	if (!dlogits || !g)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT, FN ": %s is NULL",
				 !dlogits ? "dlogits" : "g");
	if (M < 1 || V < 1 || lddlogits < V || (per_row != 0 && per_row != 1) ||
	    (unsigned)dtype >= AT_DTYPE_COUNT)
		return atdi_fail(h, ATD_ERR_INVALID_ARGUMENT,
				 FN ": M = %lld and V = %lld must be at least 1, lddlogits = %lld "
				 "at least V, per_row 0 or 1 (got %d), dtype known",
				 (long long)M, (long long)V, (long long)lddlogits, per_row);
	atdi_resolved r;
	atd_status s = atdi_op_resolved(h, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V, &r);
	if (s != ATD_OK)
		return s;
	at_error err;
	if (launch_cross_entropy_scale(r.aux[ATDI_CE_SCALE], (CUdeviceptr)(uintptr_t)dlogits, M, V,
				       lddlogits, (CUdeviceptr)(uintptr_t)g, per_row,
				       r.aux_dependent >> ATDI_CE_SCALE & 1u, (CUstream)stream,
				       &err) != 0)
		return atdi_launch_failed(h, FN, &r, ATDI_CROSS_ENTROPY, (at_dtype)dtype, M, V,
					  err.msg);
	return ATD_OK;
}

/* The selftest's 2^31 case on the GPU (see selftest_big.h): M x N just above
 * 2^31 elements, so that any 32-bit element offset wraps. The input is made
 * on the host in chunks (host memory stays at a chunk plus the rows kept for
 * checking) and never copied back; each variant's output is checked by
 *   - the rows at the start, in the middle, around element 2^31 and at the
 *     end, copied back and compared with the CPU reference on the host;
 *   - every row's sum (1 within the dtype's tolerance) on the GPU, which
 *     also finds rows left unwritten (the output starts as NaN);
 *   - a guard after the last row, which must come back untouched. */
#include "tuner/selftest/selftest_big.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/check/reference.h"

#define CHUNK_ELEMS (64ll << 20)
#define MAX_CHECKED_ROWS 8

typedef struct big_data {
	CUdeviceptr x, y;
	size_t bytes;            /* of the rows of one buffer */
	long long rows[MAX_CHECKED_ROWS];
	int nrows;
	void *inputs;            /* the checked rows' inputs, N elements each */
	double *ref;             /* their reference */
	void *got;               /* one row copied back */
	unsigned char guard[ST_GUARD_BYTES], guard_back[ST_GUARD_BYTES];
} big_data;

static void add_row(big_data *d, long long r, long long M)
{
	if (r < 0 || r >= M || d->nrows == MAX_CHECKED_ROWS)
		return;
	for (int i = 0; i < d->nrows; i++)
		if (d->rows[i] == r)
			return;
	d->rows[d->nrows++] = r;
}

static void free_big(big_data *d)
{
	if (d->x)
		cudrv.cuMemFree(d->x);
	if (d->y)
		cudrv.cuMemFree(d->y);
	free(d->inputs);
	free(d->ref);
	free(d->got);
	memset(d, 0, sizeof *d);
}

/* Uploads the random input chunk by chunk, keeping the checked rows. */
static int upload(const st_shape *s, at_dtype dt, big_data *d, at_error *err)
{
	size_t elem = at_dtype_size(dt);
	long long rows_per_chunk = CHUNK_ELEMS / s->N > 0 ? CHUNK_ELEMS / s->N : 1;
	char *chunk = xmalloc((size_t)(rows_per_chunk * s->N) * elem);
	int rc = 0;
	for (long long r0 = 0, c = 0; r0 < s->M && rc == 0; r0 += rows_per_chunk, c++) {
		long long rows = s->M - r0 < rows_per_chunk ? s->M - r0 : rows_per_chunk;
		size_t bytes = (size_t)(rows * s->N) * elem;
		ref_fill_random(chunk, dt, (size_t)(rows * s->N), 0xb16b16ULL * (uint64_t)(c + 1) ^ (uint64_t)dt);
		for (int i = 0; i < d->nrows; i++)
			if (d->rows[i] >= r0 && d->rows[i] < r0 + rows)
				memcpy((char *)d->inputs + (size_t)i * (size_t)s->N * elem,
				       chunk + (size_t)((d->rows[i] - r0) * s->N) * elem,
				       (size_t)s->N * elem);
		CUresult cr = cudrv.cuMemcpyHtoD(d->x + (size_t)(r0 * s->N) * elem, chunk, bytes);
		if (cr != CUDA_SUCCESS)
			rc = cudrv_error(err, cr, "uploading the 2^31 input");
	}
	free(chunk);
	return rc;
}

/* Allocates and fills the buffers; 1 when the GPU lacks the memory (the
 * runs are then not run, with the reason in why). */
static int make_big(st_gpu *g, const at_op *op, const st_shape *s, at_dtype dt, big_data *d,
		    char *why,
		    size_t cap, at_error *err)
{
	memset(d, 0, sizeof *d);
	size_t elem = at_dtype_size(dt);
	d->bytes = (size_t)(s->M * s->N) * elem;
	size_t free_b = 0, total_b = 0;
	CU_TRY(err, cudrv.cuMemGetInfo(&free_b, &total_b));
	double need = 2.0 * (double)d->bytes + ST_GUARD_BYTES + (256 << 20);
	if (need > (double)free_b) {
		snprintf(why, cap, "the 2^31 case needs %.1f GiB of GPU memory; %.100s has %.1f GiB free",
			 need / (1 << 30), g->gpu.info.name, (double)free_b / (1 << 30));
		return 1;
	}
	/* the first rows, one in the middle, those around element 2^31 (the
	 * one holding element 2^31 - 1 and the next) and the last two, which
	 * lie wholly beyond it */
	long long across = ((1LL << 31) - 1) / s->N;
	add_row(d, 0, s->M);
	add_row(d, 1, s->M);
	add_row(d, s->M / 2, s->M);
	add_row(d, across, s->M);
	add_row(d, across + 1, s->M);
	add_row(d, s->M - 2, s->M);
	add_row(d, s->M - 1, s->M);
	d->inputs = xmalloc((size_t)d->nrows * (size_t)s->N * elem);
	d->ref = xmalloc((size_t)d->nrows * (size_t)s->N * sizeof *d->ref);
	d->got = xmalloc((size_t)s->N * elem);
	CU_TRY(err, cudrv.cuMemAlloc(&d->x, d->bytes));
	CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->bytes + ST_GUARD_BYTES));
	if (upload(s, dt, d, err))
		return -1;
	ref_rows(op->ref_row, d->inputs, dt, d->nrows, s->N, s->N, d->ref);
	uint32_t bits = st_guard_bits(dt);
	for (size_t i = 0; i < ST_GUARD_BYTES; i += elem)
		memcpy(d->guard + i, &bits, elem); /* little-endian: the low bytes */
	CU_TRY(err, cudrv.cuMemcpyHtoD(d->y + d->bytes, d->guard, ST_GUARD_BYTES));
	return 0;
}

/* Every row's sum on the GPU: how many are off, and the first. */
static CUresult row_sums(st_gpu *g, const st_shape *s, at_dtype dt, big_data *d,
			 unsigned long long bad[2])
{
	unsigned long long init[2] = { 0, ~0ull };
	CUresult rc = cudrv.cuMemcpyHtoD(g->rowsum_out, init, sizeof init);
	double tol = dt == AT_F32 ? 1e-4 : 1e-2;
	long long M = s->M, N = s->N;
	void *args[] = { &d->y, &M, &N, &tol, &g->rowsum_out };
	unsigned grid = (unsigned)(g->gpu.info.sm_count * 8);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuLaunchKernel(g->rowsum[dt], grid, 1, 1, 256, 1, 1, 0, g->stream, args,
					  NULL);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuStreamSynchronize(g->stream);
	if (rc == CUDA_SUCCESS)
		rc = cudrv.cuMemcpyDtoH(bad, g->rowsum_out, 2 * sizeof *bad);
	return rc;
}

static void run_one(st_gpu *g, const st_shape *s, at_dtype dt, big_data *d, const st_job *job,
		    kernel_entry *e, const char *label, st_outcome *out)
{
	unsigned grid;
	if (st_gpu_prepare(g, job, e, s->M, &grid, out))
		return;
	size_t elem = at_dtype_size(dt);
	if (st_gpu_check(g, cudrv.cuMemsetD8Async(d->y, 0xff, d->bytes, g->stream),
			 "poisoning the output", label, out) ||
	    st_gpu_launch(g, e, job, grid, d->y, d->x, s->M, s->N, s->N, s->N, 0, label, out))
		return;
	out->status = ST_FAILED;
	for (int i = 0; i < d->nrows; i++) {
		long long r = d->rows[i];
		if (st_gpu_check(g, cudrv.cuMemcpyDtoH(d->got, d->y + (size_t)(r * s->N) * elem,
						       (size_t)s->N * elem),
				 "copying a row back", label, out))
			return;
		if (!st_check_row(s, dt, r, d->got, d->ref + (size_t)i * (size_t)s->N, out->reason,
				  sizeof out->reason))
			return;
	}
	if (st_gpu_check(g, cudrv.cuMemcpyDtoH(d->guard_back, d->y + d->bytes, ST_GUARD_BYTES),
			 "copying the guard back", label, out))
		return;
	if (memcmp(d->guard, d->guard_back, ST_GUARD_BYTES) != 0) {
		snprintf(out->reason, sizeof out->reason, "wrote past the end of the last row");
		return;
	}
	unsigned long long bad[2];
	if (st_gpu_check(g, row_sums(g, s, dt, d, bad), "summing the rows", label, out))
		return;
	if (bad[0]) {
		snprintf(out->reason, sizeof out->reason, "%llu rows do not sum to 1 (unwritten or "
			 "wrong), the first is row %llu (element offset %llu)", bad[0], bad[1],
			 bad[1] * (unsigned long long)s->N);
		return;
	}
	out->status = ST_PASSED;
	out->reason[0] = '\0';
}

int st_gpu_run_big(st_gpu *g, const st_shape *s, at_dtype dt, const st_job *jobs,
		   kernel_entry **entries, size_t n, st_outcome *out, at_error *err)
{
	big_data d;
	char why[300] = "";
	int made = make_big(g, jobs[0].op, s, dt, &d, why, sizeof why, err);
	if (made < 0) {
		free_big(&d);
		return -1;
	}
	char shape[160];
	st_shape_label(s, shape, sizeof shape);
	for (size_t i = 0; i < n; i++) {
		if (made == 1 || g->dead) {
			for (size_t k = i; k < n; k++) {
				out[k].status = ST_NOT_RUN;
				snprintf(out[k].reason, sizeof out[k].reason, "%s",
					 made == 1 ? why : g->dead_reason);
			}
			break;
		}
		char *params = variant_params_str(&jobs[i].v);
		char label[600];
		snprintf(label, sizeof label, "%s %s %s at %s", jobs[i].v.tmpl->name, at_dtype_name(dt),
			 params, shape);
		free(params);
		run_one(g, s, dt, &d, &jobs[i], entries[i], label, &out[i]);
	}
	free_big(&d);
	return 0;
}

/* The backward ops' references and check input: see backward_rows.h. */
#include "tuner/check/backward_rows.h"

#include <math.h>
#include <stdlib.h>

#include "common/strbuf.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"

void ref_softmax_backward_row(const void *const *in, at_dtype dt, size_t offset, long long N,
			      double *out)
{
	ref_load_row(in[0], dt, offset, N, out); /* y */
	double dot = 0;
	for (long long j = 0; j < N; j++)
		dot += ref_load(in[1], dt, offset + (size_t)j) * out[j];
	for (long long j = 0; j < N; j++)
		out[j] = out[j] * (ref_load(in[1], dt, offset + (size_t)j) - dot);
}

void ref_log_softmax_backward_row(const void *const *in, at_dtype dt, size_t offset,
				  long long N, double *out)
{
	ref_load_row(in[0], dt, offset, N, out); /* y */
	double sum = 0;
	for (long long j = 0; j < N; j++)
		sum += ref_load(in[1], dt, offset + (size_t)j);
	for (long long j = 0; j < N; j++)
		out[j] = ref_load(in[1], dt, offset + (size_t)j) - exp(out[j]) * sum;
}

/* Rows of x replaced by their forward op's output (y), in place. */
typedef struct forward_rows {
	void *x;
	at_dtype dt;
	long long N;
	int log_output;
} forward_rows;

static void forward_rows_run(void *ctx, long long begin, long long end)
{
	const forward_rows *f = ctx;
	double *row = xmalloc((size_t)f->N * sizeof *row);
	for (long long i = begin; i < end; i++) {
		size_t at = (size_t)i * (size_t)f->N;
		if (f->log_output)
			ref_log_softmax_row(f->x, f->dt, at, f->N, row);
		else
			ref_softmax_row(f->x, f->dt, at, f->N, row);
		for (long long j = 0; j < f->N; j++)
			row[j] = ref_saturate(row[j], f->dt);
		ref_store_row(f->x, f->dt, at, f->N, row);
	}
	free(row);
}

/* y as the forward op gives it from the softmax check input (its rows on
 * every core: a row of exps a row, 12-24 s of a sweep's wait at 16384 x
 * 32000 on one), then dy. */
static void backward_input(void *x, at_dtype dt, long long M, long long N, uint64_t seed,
			   int log_output)
{
	size_t count = (size_t)M * (size_t)N, size = at_dtype_size(dt);
	extreme_check_input(x, dt, M, N, seed);
	forward_rows f = { x, dt, N, log_output };
	ref_parallel_rows(forward_rows_run, &f, M);
	void *dy = (char *)x + count * size;
	ref_fill_random(dy, dt, count, seed ^ 0x5bd1e995ULL);
	/* a constant gradient: softmax's dot is then dy (sum y = 1) and dx
	 * cancels to about 0; log_softmax's dx is dy (1 - N e^y) */
	long long flat = M > 2 ? M - 1 : -1;
	for (long long j = 0; flat >= 0 && j < N; j++)
		ref_store(dy, dt, (size_t)flat * (size_t)N + (size_t)j, 1.5);
}

void softmax_backward_check_input(void *x, at_dtype dt, long long M, long long N,
				  uint64_t seed)
{
	backward_input(x, dt, M, N, seed, 0);
}

void log_softmax_backward_check_input(void *x, at_dtype dt, long long M, long long N,
				      uint64_t seed)
{
	backward_input(x, dt, M, N, seed, 1);
}

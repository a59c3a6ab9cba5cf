/* The cross_entropy op's reference and check input: see cross_entropy_rows.h. */
#include "tuner/check/cross_entropy_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/op.h"
#include "common/strbuf.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"

static double z_of(double x, double softcap)
{
	return softcap > 0 ? softcap * tanh(x / softcap) : x;
}

/* The gradient of element j (e its e^(z - m), z its soft-capped logit, s
 * the row's sum of e), and in *size the sum of its terms' magnitudes. */
static double grad_of(double e, double z, long long j, long long t, long long N, double s,
		      double lse, const ce_options *o, double *size)
{
	double p = e / s; /* e^(z - lse) */
	double prob = p * (1 + 2 * o->z_loss * lse), target = j == t ? 1 - o->label_smoothing : 0,
	       uniform = o->label_smoothing / (double)N;
	double dz = o->scale * (prob - target - uniform);
	double sz = fabs(o->scale) * (fabs(prob) + fabs(target) + fabs(uniform));
	if (o->softcap > 0) {
		double th = z / o->softcap; /* tanh(x / softcap) */
		dz *= 1 - th * th;
		sz *= 1 - th * th;
	}
	*size = sz;
	return dz;
}

void ce_ref_row(const void *x, at_dtype dt, size_t offset, long long N, long long t,
		const ce_options *o, double *grad, double *loss, double *lse)
{
	ce_ref_row_sized(x, dt, offset, N, t, o, grad, NULL, loss, lse);
}

void ce_ref_row_sized(const void *x, at_dtype dt, size_t offset, long long N, long long t,
		      const ce_options *o, double *grad, double *size, double *loss, double *lse)
{
	/* the row's z, then its e^(z - m), in grad (or a row of its own):
	 * each logit converted and each exp taken once */
	double *e = grad ? grad : xmalloc((size_t)N * sizeof *e);
	ref_load_row(x, dt, offset, N, e);
	double m = -INFINITY, s = 0, sz = 0;
	for (long long j = 0; j < N; j++) {
		e[j] = z_of(e[j], o->softcap);
		if (e[j] > m)
			m = e[j];
	}
	/* a NaN never exceeds m, and its exp is NaN: the row is NaN; so is a
	 * row whose max is +-inf (inf - inf) */
	for (long long j = 0; j < N; j++) {
		sz += e[j];
		e[j] = exp(e[j] - m);
		s += e[j];
	}
	double ln_s = log(s);
	*lse = m + ln_s;
	int ignored = t == o->ignore_index, bad = !ignored && (t < 0 || t >= N);
	if (ignored || bad) {
		*loss = ignored ? 0 : NAN;
		for (long long j = 0; grad && j < N; j++)
			grad[j] = ignored ? 0 : NAN;
		for (long long j = 0; size && j < N; j++)
			size[j] = 0;
		if (!grad)
			free(e);
		return;
	}
	double zt = z_of(ref_load(x, dt, offset + (size_t)t), o->softcap);
	double l = ln_s + (1 - o->label_smoothing) * (m - zt);
	if (o->label_smoothing != 0)
		l += o->label_smoothing * (m - sz / (double)N);
	if (o->z_loss != 0)
		l += o->z_loss * *lse * *lse;
	*loss = l;
	for (long long j = 0; grad && j < N; j++) {
		/* the soft-cap's derivative needs z again: the exp's argument lost it */
		double zj = o->softcap > 0 ? z_of(ref_load(x, dt, offset + (size_t)j), o->softcap) : 0,
		       terms;
		grad[j] = grad_of(e[j], zj, j, t, N, s, *lse, o, &terms);
		if (size)
			size[j] = terms;
	}
	if (!grad)
		free(e);
}

void ce_ref_row_tuning(const void *x, at_dtype dt, size_t offset, long long N,
		       const void *side, double *out, double *row_out)
{
	static const ce_options tuning = CE_OPTIONS_TUNING;
	long long t;
	memcpy(&t, side, sizeof t);
	ce_ref_row(x, dt, offset, N, t, &tuning, out, &row_out[0], &row_out[1]);
}

void ce_check_targets(long long *t, long long M, long long N, uint64_t seed)
{
	uint64_t state = seed ^ 0x7a3c5e1f2b4d6f80ULL;
	for (long long i = 0; i < M; i++) {
		/* splitmix64, as the logits' generator */
		uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		z ^= z >> 31;
		t[i] = (z >> 32) % 10 == 0 ? CE_CHECK_IGNORE_INDEX
					   : (long long)((z & 0xffffffffu) % (uint64_t)N);
	}
}

void ce_check_input(void *x, at_dtype dt, long long M, long long N, uint64_t seed)
{
	extreme_check_input(x, dt, M, N, seed);
	/* where the op's side input starts (one input, 8 bytes a row) */
	const at_op shape = { .side_bytes = sizeof(long long) };
	long long *t = (long long *)((char *)x + at_op_side_offset(&shape, dt, M, N));
	ce_check_targets(t, M, N, seed);
}

void ce_special_rows(void *x, at_dtype dt, long long R, long long N, long long ld, long long *t)
{
	for (long long i = 0; i < R && i < CE_SPECIAL_ROWS; i++) {
		size_t row = (size_t)(i * ld);
		switch (i) {
		case 0:
			for (long long j = 0; j < N; j++)
				ref_store(x, dt, row + (size_t)j, -INFINITY);
			break;
		case 1: ref_store(x, dt, row + (size_t)(N / 2), INFINITY); break;
		case 2: ref_store(x, dt, row + (size_t)(N - 1), NAN); break;
		case 3: t[i] = N; break;
		case 4: t[i] = -7; break;
		case 5:
			ref_store(x, dt, row, NAN);
			t[i] = CE_CHECK_IGNORE_INDEX;
			break;
		case 6: t[i] = N - 1; break;
		default: break;
		}
	}
}

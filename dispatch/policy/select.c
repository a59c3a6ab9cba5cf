/* The selection policy (select.h): one pass over the table keeps the k best
 * winners under a set of weights. */
#include <math.h>
#include <string.h>

#include "dispatch/policy/select.h"

/* Distances closer than this are ties: M' = 2M and M' = M/2 are equally
 * near, whatever the rounding of their logarithms. */
#define DIST_EPS 1e-9

/* A winner tuned at rows of the other alignment class counts as (ln 3)^2
 * farther: as far as three times the length. Which template and params win
 * depends on whether rows can be read in whole vectors (much as Triton
 * specialises on "multiple of 16"): on the H100, f32 4096 x 3001 ran at
 * 1649 GB/s from 3000's winner (scalar path, few elements a thread) and
 * 2615 GB/s derived from 6001's; at (ln 2)^2 the two were tied. A winner
 * run as stored is weighed by distance alone, as the stored levels always
 * were: the penalty was measured between winners re-derived for the row,
 * not between kernels run as tuned. */
const atdi_weights atdi_weights_stored = { .align_penalty = 0, .short_penalty = INFINITY,
					   .seed_penalty = INFINITY, .other_op_penalty = INFINITY };
/* Another op's winner counts as (ln 2)^2 farther: the ops of one template
 * move the same bytes and differ only in the write (softmax's exp and
 * product, log_softmax's difference), so its params are near the best,
 * but a winner tuned for the op itself within a factor of two of the
 * shape is preferred. */
const atdi_weights atdi_weights_derive = { .align_penalty = 1.21, .short_penalty = 0,
					   .seed_penalty = 0, .other_op_penalty = 0.48 };

int atdi_same_model(const atdi_gpu_row *g, const atd_gpu *q)
{
	return q->name && strcmp(g->name, q->name) == 0 && g->cc_major == q->cc_major &&
	       g->cc_minor == q->cc_minor && g->sm_count == q->sm_count;
}

static int rows_aligned(long long N, long long elem_bytes)
{
	return elem_bytes > 0 && elem_bytes <= 16 && N % (16 / elem_bytes) == 0;
}

/* (ln M - ln M')^2 + (ln N - ln N')^2, from ratios so that symmetric
 * neighbours give bit-identical distances where the ratios are exact, plus
 * w's penalties. */
static double distance(const atdi_entry *e, const atdi_gpu_row *g, int op, long long M,
		       long long N, const atdi_weights *w)
{
	long long eb = (long long)at_dtype_size(e->dtype);
	double dm = log((double)e->M / (double)M), dn = log((double)e->N / (double)N);
	double d = dm * dm + dn * dn;
	if (rows_aligned(e->N, eb) != rows_aligned(N, eb))
		d += w->align_penalty;
	if (e->geom.max_n != 0 && e->geom.max_n < N)
		d += w->short_penalty;
	if (g->seeds)
		d += w->seed_penalty;
	/* another family's winner computes another kernel (forward against
	 * backward: another signature), which no rule turns into this op */
	if (e->op != op)
		d += atdi_ops_share_code(e->op, op) ? w->other_op_penalty : INFINITY;
	return d;
}

static int better(const atdi_ranked *a, const atdi_ranked *b)
{
	if (a->other_model != b->other_model)
		return a->other_model < b->other_model;
	if (a->exact != b->exact)
		return a->exact;
	if (fabs(a->dist - b->dist) > DIST_EPS)
		return a->dist < b->dist;
	if (a->e->time_us != b->e->time_us)
		return a->e->time_us < b->e->time_us;
	return a->e->result_id < b->e->result_id;
}

/* Puts r into top (n of k kept, best first) if it ranks; returns the new n. */
static int insert(atdi_ranked *top, int n, int k, const atdi_ranked *r)
{
	int at = n < k ? n++ : k;
	if (at == k && !better(r, &top[k - 1]))
		return n;
	if (at == k)
		at = k - 1;
	while (at > 0 && better(r, &top[at - 1])) {
		top[at] = top[at - 1];
		at--;
	}
	top[at] = *r;
	return n;
}

int atdi_rank(const atdi_table *t, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
	      long long N, const atdi_weights *w, atdi_ranked *top, int k)
{
	int n = 0;
	for (size_t i = 0; i < t->nentries && k > 0; i++) {
		const atdi_entry *e = &t->entries[i];
		const atdi_gpu_row *g = &t->gpus[e->gpu];
		if (e->dtype != dtype ||
		    (!g->seeds && (g->cc_major != gpu->cc_major || g->cc_minor != gpu->cc_minor)))
			continue;
		atdi_ranked r = { e, g, !atdi_same_model(g, gpu),
				  e->op == op && e->M == M && e->N == N, e->op != op,
				  distance(e, g, op, M, N, w) };
		if (!isinf(r.dist))
			n = insert(top, n, k, &r);
	}
	return n;
}

const atdi_entry *atdi_select(const atdi_table *t, const atd_gpu *gpu, int op, at_dtype dtype,
			      long long M, long long N, atd_level *level)
{
	atdi_ranked best;
	if (atdi_rank(t, gpu, op, dtype, M, N, &atdi_weights_stored, &best, 1) == 0) {
		*level = ATD_LEVEL_BUILTIN;
		return NULL;
	}
	*level = best.other_model ? ATD_LEVEL_SAME_ARCH
		 : best.exact	  ? ATD_LEVEL_EXACT
				  : ATD_LEVEL_NEAREST;
	return best.e;
}

const atdi_missing *atdi_select_missing(const atdi_table *t, const atd_gpu *gpu, int op,
					at_dtype dtype, long long M, long long N)
{
	for (size_t i = 0; i < t->nmissing; i++) {
		const atdi_missing *m = &t->missing[i];
		if (m->op == op && m->dtype == dtype && m->M == M && m->N == N &&
		    atdi_same_model(&t->gpus[m->gpu], gpu))
			return m;
	}
	return NULL;
}

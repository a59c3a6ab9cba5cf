/* The selection policy: which tuned winners are nearest a shape, best
 * first. One ranking serves every caller (atdi_select for a winner run as
 * stored, plan.h for one re-derived by its template's rules, online
 * tuning's candidates); what differs between them is only the weights.
 * Pure: no locks, no GPU. */
#ifndef AT_DISPATCH_SELECT_H
#define AT_DISPATCH_SELECT_H

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/tuned_table.h"

/* What a winner's distance from the query adds up from, besides the squared
 * log distance (ln M - ln M')^2 + (ln N - ln N')^2. INFINITY leaves such a
 * winner out. */
typedef struct atdi_weights {
	/* The winner was tuned at rows of the other alignment class (16-byte
	 * aligned or not) than the query's. */
	double align_penalty;
	/* Its max_n is below the query's N: as stored it cannot hold the row. */
	double short_penalty;
	/* It is one of the library's seeds (seed_winners.h): it has no code, so
	 * it serves only through its template's rules. */
	double seed_penalty;
	/* It is another op's winner of the query op's family (softmax's for a
	 * log_softmax query): its code computes that op, so it serves only
	 * through its template's rules, compiled for the query's op. Another
	 * family's winner (a forward op's for a backward query) never ranks. */
	double other_op_penalty;
} atdi_weights;

/* A winner run as it was stored: every one that holds the row and has
 * code, nearest in log space alone. */
extern const atdi_weights atdi_weights_stored;

/* A winner that its template's rules re-derive for the shape: any, seeds
 * and other ops' too, a winner of the other alignment class counting as
 * three times as far, and one of another op as twice (see select.c). */
extern const atdi_weights atdi_weights_derive;

/* A winner as ranked for one query. */
typedef struct atdi_ranked {
	const atdi_entry *e;
	const atdi_gpu_row *gpu; /* the row of the GPU it was tuned on */
	int other_model;         /* 0: the query's GPU model; 1: another of its compute capability */
	int exact;               /* tuned at the query's very shape, for its op */
	int other_op;            /* another op's winner: derived only */
	double dist;             /* squared log distance plus the weights' penalties */
} atdi_ranked;

/* Whether row g is the GPU model q: its name, compute capability and SM
 * count. Total memory is not compared: the same board reports it
 * differently under other drivers and ECC settings (an H100 described as
 * 80e9 bytes missed). */
int atdi_same_model(const atdi_gpu_row *g, const atd_gpu *q);

/*
** The k best winners of (op, dtype) for (M, N) on gpu, best first, into
** top (another op's too where w lets them in: other_op_penalty);
** returns how many (at most k). Only winners of gpu's compute capability
** are ranked (seeds whatever theirs); their order: this GPU model before
** others, the exact shape before the rest, then the smaller distance
** under w (within 1e-9: ties, so that M' = 2M and M' = M/2 are equally
** near whatever the rounding of their logarithms), the smaller tuned time,
** the smaller result id.
*/
int atdi_rank(const atdi_table *t, const atd_gpu *gpu, int op, at_dtype dtype, long long M,
	      long long N, const atdi_weights *w, atdi_ranked *top, int k);

/*
** The winner that serves (dtype, M, N) on gpu as stored, by the four levels
** of dispatch.h: 1 the same GPU model at this exact shape; 2 the same
** model, nearest in (ln M, ln N) among variants valid for N (max_n == 0 or
** max_n >= N); 3 another model of the same compute capability, exact
** first, then nearest; ties as atdi_rank's. The first of atdi_rank under
** atdi_weights_stored. Returns NULL with *level = ATD_LEVEL_BUILTIN when
** none fits.
*/
const atdi_entry *atdi_select(const atdi_table *t, const atd_gpu *gpu, int op, at_dtype dtype,
			      long long M, long long N, atd_level *level);

/* The winner of op without code tuned on gpu's model at exactly (dtype,
 * M, N), or NULL. */
const atdi_missing *atdi_select_missing(const atdi_table *t, const atd_gpu *gpu, int op,
					at_dtype dtype, long long M, long long N);

#endif

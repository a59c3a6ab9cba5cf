/* Rows of extreme values: the numerics contract (include/autotune/
 * dispatch.h) put to the test. Any finite input up to the dtype's largest
 * magnitude gives a distribution summing to 1, as torch.softmax does; +inf
 * or NaN in a row gives NaN; a row of all -inf gives NaN, or zeros with
 * ATD_MASKED_ZERO. One definition of those rows serves two checks: a few
 * finite ones planted in every sweep's check input, so that a variant
 * that gets them wrong fails and can never win, and all of them, row after
 * row, in `autotune selftest`'s extreme case for every template and dtype. */
#ifndef AT_TUNER_EXTREME_ROWS_H
#define AT_TUNER_EXTREME_ROWS_H

#include <stdint.h>

#include "common/dtype.h"

typedef enum extreme_kind {
	EXTREME_HUGE,       /* uniform over (-max, max): all but the largest vanish */
	EXTREME_SPIKE,      /* random in [-8, 8), one element at the dtype's max */
	EXTREME_MAX_MIN,    /* -max everywhere, +max at one column: one-hot */
	EXTREME_ALL_MAX,    /* every element max: 1/N each */
	EXTREME_NEG_HUGE,   /* uniform in [-max, -max/2) */
	EXTREME_OFFSET_POS, /* random in [-8, 8) + 10^4: a max whose low bits matter */
	EXTREME_OFFSET_NEG, /* random in [-8, 8) - 10^4 */
	EXTREME_SUBNORMAL,  /* random subnormals of the dtype: 1/N each, nearly */
	EXTREME_MASKED,     /* random, every third element -inf (an attention mask) */
	EXTREME_FINITE_COUNT,
	/* the kinds above give a distribution; the ones below give NaN */
	EXTREME_ALL_NEG_INF = EXTREME_FINITE_COUNT, /* zeros with ATD_MASKED_ZERO */
	EXTREME_POS_INF,    /* one +inf */
	EXTREME_NAN,        /* one NaN */
	EXTREME_COUNT
} extreme_kind;

/* "huge", "spike", "+-max", ...; "?" for an unknown kind. */
const char *extreme_kind_name(extreme_kind k);

/* The dtype's largest finite value. */
float extreme_dtype_max(at_dtype dt);

/* Turns the N elements of row (contiguous, dtype dt), random in [-8, 8) as
 * ref_fill_random makes them, into a row of kind k; col is the column of
 * its one odd element (spike, +max, +inf, NaN). */
void extreme_fill_row(void *row, at_dtype dt, long long N, extreme_kind k, long long col);

/* The sweep's check input: turns up to EXTREME_FINITE_COUNT rows of x
 * (M x N, contiguous, random in [-8, 8)) into the finite kinds in turn, spread over the rows
 * (the first, the last and between: CTAs that own several rows carry no
 * state from an extreme one into the next). Returns how many. */
int extreme_plant_rows(void *x, at_dtype dt, long long M, long long N);

/* An at_op_input_fn (common/op.h), softmax's check input: M x N random in
 * [-8, 8) (ref_fill_random from seed), then extreme_plant_rows. */
void extreme_check_input(void *x, at_dtype dt, long long M, long long N, uint64_t seed);

/* The row that extreme_plant_rows gives kind k (k < EXTREME_FINITE_COUNT),
 * or -1 when M has too few rows for it. */
long long extreme_planted_row(long long M, int k);

#endif

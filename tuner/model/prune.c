/* Choosing which variants a shape keeps: see prune.h. */
#include "tuner/model/prune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

void prune_defaults(prune_options *o)
{
	*o = (prune_options){ .keep = PRUNE_DEFAULT_KEEP, .explore = PRUNE_DEFAULT_EXPLORE,
			      .seed = PRUNE_DEFAULT_SEED,
			      .compile_weight = PRUNE_DEFAULT_COMPILE_WEIGHT };
}

/* splitmix64: one step of a small, well-mixed generator. */
static unsigned long long next_random(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

unsigned long long prune_shape_seed(unsigned long long seed, at_dtype dt, long long M,
				    long long N)
{
	unsigned long long s = seed;
	unsigned long long parts[3] = { (unsigned long long)dt, (unsigned long long)M,
					(unsigned long long)N };
	for (int i = 0; i < 3; i++) {
		s ^= parts[i];
		s = next_random(&s);
	}
	return s;
}

size_t prune_explore_count(double explore, size_t n_rest)
{
	if (!(explore > 0))
		return 0;
	double k = floor(explore * (double)n_rest + 0.5);
	return k >= (double)n_rest ? n_rest : (size_t)k;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

typedef struct ranked {
	double score;
	size_t index;
} ranked;

static int by_score(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	int xn = isnan(x->score), yn = isnan(y->score);
	if (xn != yn)
		return xn - yn;
	if (!xn && x->score != y->score)
		return x->score < y->score ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

void prune_template_weights(const double *ms, int n, double exponent, double *weight)
{
	double *known = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *known);
	int k = 0;
	for (int i = 0; i < n; i++)
		if (ms[i] > 0)
			known[k++] = ms[i];
	qsort(known, (size_t)k, sizeof *known, by_value);
	double median = k == 0 ? 0 : k % 2 ? known[k / 2] : (known[k / 2 - 1] + known[k / 2]) / 2;
	free(known);
	for (int i = 0; i < n; i++) {
		double w = median > 0 && ms[i] > 0 ? pow(ms[i] / median, exponent) : 1;
		weight[i] = w > 1 ? w : 1;
	}
}

size_t prune_select(const double *score, const int *group, size_t n, const prune_options *o,
		    unsigned long long shape_seed, unsigned char *kept)
{
	return prune_select_weighted(score, group, NULL, n, o, shape_seed, kept);
}

/* How many of r[0..n) (ranked) the top keeps: while their weights sum to
 * keep at most, and at least one. */
static size_t top_count(const ranked *r, const double *weight, size_t n, int keep)
{
	if (keep <= 0)
		return 0;
	if (!weight)
		return (size_t)keep < n ? (size_t)keep : n;
	double sum = 0;
	size_t top = 0;
	while (top < n && (top == 0 || sum + weight[r[top].index] <= keep + 1e-9))
		sum += weight[r[top++].index];
	return top;
}

size_t prune_select_weighted(const double *score, const int *group, const double *weight,
			     size_t n, const prune_options *o, unsigned long long shape_seed,
			     unsigned char *kept)
{
	if (o->exhaustive || (!weight && (size_t)(o->keep < 0 ? 0 : o->keep) >= n)) {
		memset(kept, 1, n);
		return n;
	}
	memset(kept, 0, n);
	ranked *r = xmalloc((n ? n : 1) * sizeof *r);
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked){ score[i], i };
	qsort(r, n, sizeof *r, by_score);
	size_t top = top_count(r, weight, n, o->keep), nkept = top;
	for (size_t i = 0; i < top; i++)
		kept[r[i].index] = 1;
	/* every template that has a variant here keeps its best-scored one
	 * (before the draw: what is drawn only adds, and a draw of a template's
	 * worse variant never stands in for its best) */
	for (size_t i = top; i < n; i++) {
		size_t c = r[i].index;
		int first = 1;
		for (size_t j = 0; j < i && first; j++)
			first = group[r[j].index] != group[c];
		if (first) {
			kept[c] = 1;
			nkept++;
		}
	}
	/* a partial Fisher-Yates shuffle of the rest draws without replacement */
	size_t rest = n - top, draw = prune_explore_count(o->explore, rest);
	unsigned long long state = shape_seed;
	for (size_t i = 0; i < draw; i++) {
		size_t j = i + (size_t)(next_random(&state) % (rest - i));
		ranked t = r[top + i];
		r[top + i] = r[top + j];
		r[top + j] = t;
		nkept += !kept[r[top + i].index];
		kept[r[top + i].index] = 1;
	}
	free(r);
	return nkept;
}

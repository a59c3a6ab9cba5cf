/* Gradient boosting on histograms: see boost.h. */
#include "tuner/model/boost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

#define MAX_BINS 64

/* Each feature's values as bin numbers, and each bin's upper edge: x <=
 * edge[b] for every row of bin b or below. */
typedef struct binned {
	unsigned char *bin; /* [feature * n + row] */
	double *edge;       /* [feature * MAX_BINS + b] */
	int *nbins;
} binned;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Edges between distinct values: all of them when few, else at quantiles. */
static int feature_edges(const double *sorted, size_t n, double *edge)
{
	size_t distinct = 0;
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || sorted[i] != sorted[i - 1];
	int nb = 0;
	if (distinct <= MAX_BINS) {
		for (size_t i = 1; i < n; i++)
			if (sorted[i] != sorted[i - 1])
				edge[nb++] = 0.5 * (sorted[i - 1] + sorted[i]);
	} else {
		for (int q = 1; q < MAX_BINS; q++) {
			size_t i = (size_t)((double)q * (double)n / MAX_BINS);
			/* the next change of value at or after the quantile */
			while (i < n && sorted[i] == sorted[i - 1])
				i++;
			if (i >= n)
				break;
			double e = 0.5 * (sorted[i - 1] + sorted[i]);
			if (nb == 0 || e > edge[nb - 1])
				edge[nb++] = e;
		}
	}
	edge[nb] = INFINITY; /* the last bin takes the rest */
	return nb + 1;
}

static void bin_features(const boost_data *d, binned *b)
{
	size_t n = d->n;
	int nf = d->nfeatures;
	b->bin = xmalloc((size_t)nf * n);
	b->edge = xmalloc((size_t)nf * MAX_BINS * sizeof *b->edge);
	b->nbins = xmalloc((size_t)nf * sizeof *b->nbins);
	double *col = xmalloc(n * sizeof *col);
	for (int f = 0; f < nf; f++) {
		for (size_t i = 0; i < n; i++)
			col[i] = d->x[i * (size_t)nf + (size_t)f];
		qsort(col, n, sizeof *col, cmp_double);
		double *edge = b->edge + (size_t)f * MAX_BINS;
		b->nbins[f] = feature_edges(col, n, edge);
		for (size_t i = 0; i < n; i++) {
			double v = d->x[i * (size_t)nf + (size_t)f];
			int lo = 0, hi = b->nbins[f] - 1; /* the first edge >= v */
			while (lo < hi) {
				int mid = (lo + hi) / 2;
				if (v <= edge[mid])
					hi = mid;
				else
					lo = mid + 1;
			}
			b->bin[(size_t)f * n + i] = (unsigned char)lo;
		}
	}
	free(col);
}

static void binned_free(binned *b)
{
	free(b->bin);
	free(b->edge);
	free(b->nbins);
}

/* One tree being grown: its nodes and the scratch its splits share. */
typedef struct grower {
	const boost_data *d;
	const boost_params *p;
	const binned *b;
	const double *resid;
	double *hg, *hw; /* histograms: [feature * MAX_BINS + bin] */
	te_node *nodes;
	int nnodes, cap;
} grower;

static double weight_of(const boost_data *d, size_t i)
{
	return d->w ? d->w[i] : 1.0;
}

static int new_node(grower *g, double value)
{
	if (g->nnodes == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 64;
		g->nodes = xrealloc(g->nodes, (size_t)g->cap * sizeof *g->nodes);
	}
	g->nodes[g->nnodes] = (te_node){ .feature = -1, .value = value };
	return g->nnodes++;
}

/* The best split of rows[0..n) (gain over none), or feature -1. */
static void best_split(grower *g, const size_t *rows, size_t n, double G, double W, int *feature,
		       int *bin)
{
	const boost_data *d = g->d;
	int nf = d->nfeatures;
	memset(g->hg, 0, (size_t)nf * MAX_BINS * sizeof *g->hg);
	memset(g->hw, 0, (size_t)nf * MAX_BINS * sizeof *g->hw);
	for (int f = 0; f < nf; f++) {
		const unsigned char *bins = g->b->bin + (size_t)f * d->n;
		double *hg = g->hg + (size_t)f * MAX_BINS, *hw = g->hw + (size_t)f * MAX_BINS;
		for (size_t k = 0; k < n; k++) {
			size_t i = rows[k];
			double w = weight_of(d, i);
			hg[bins[i]] += w * g->resid[i];
			hw[bins[i]] += w;
		}
	}
	double lambda = g->p->lambda, none = G * G / (W + lambda), best = 1e-12;
	*feature = -1;
	for (int f = 0; f < nf; f++) {
		const double *hg = g->hg + (size_t)f * MAX_BINS, *hw = g->hw + (size_t)f * MAX_BINS;
		double gl = 0, wl = 0;
		for (int b = 0; b + 1 < g->b->nbins[f]; b++) {
			gl += hg[b];
			wl += hw[b];
			double wr = W - wl;
			if (wl < g->p->min_leaf_weight || wr < g->p->min_leaf_weight)
				continue;
			double gain = gl * gl / (wl + lambda) + (G - gl) * (G - gl) / (wr + lambda) - none;
			if (gain > best) {
				best = gain;
				*feature = f;
				*bin = b;
			}
		}
	}
}

/* Grows the subtree of rows[0..n) under node; its value is set already. */
static void grow(grower *g, int node, size_t *rows, size_t n, int depth)
{
	const boost_data *d = g->d;
	double G = 0, W = 0;
	for (size_t k = 0; k < n; k++) {
		G += weight_of(d, rows[k]) * g->resid[rows[k]];
		W += weight_of(d, rows[k]);
	}
	if (depth >= g->p->depth || W < 2 * g->p->min_leaf_weight)
		return;
	int f, b;
	best_split(g, rows, n, G, W, &f, &b);
	if (f < 0)
		return;
	const unsigned char *bins = g->b->bin + (size_t)f * d->n;
	size_t nl = 0; /* rows of bins <= b first */
	for (size_t k = 0; k < n; k++) {
		if (bins[rows[k]] <= b) {
			size_t t = rows[nl];
			rows[nl++] = rows[k];
			rows[k] = t;
		}
	}
	double side[2][2] = { { 0, 0 }, { 0, 0 } };
	for (size_t k = 0; k < n; k++) {
		side[k >= nl][0] += weight_of(d, rows[k]) * g->resid[rows[k]];
		side[k >= nl][1] += weight_of(d, rows[k]);
	}
	double lr = g->p->learning_rate, lambda = g->p->lambda;
	int left = new_node(g, lr * side[0][0] / (side[0][1] + lambda));
	int right = new_node(g, lr * side[1][0] / (side[1][1] + lambda));
	g->nodes[node].feature = f;
	g->nodes[node].threshold = g->b->edge[(size_t)f * MAX_BINS + (size_t)b];
	g->nodes[node].left = left;
	g->nodes[node].right = right;
	grow(g, left, rows, nl, depth + 1);
	grow(g, right, rows + nl, n - nl, depth + 1);
}

/* A xorshift generator: the same trees for the same seed everywhere. */
static unsigned next_random(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

int boost_fit(const boost_data *d, const boost_params *p, te_ensemble *e)
{
	memset(e, 0, sizeof *e);
	if (d->n == 0)
		return -1;
	double sw = 0, swy = 0;
	for (size_t i = 0; i < d->n; i++) {
		sw += weight_of(d, i);
		swy += weight_of(d, i) * d->y[i];
	}
	e->base = swy / sw;
	binned b;
	bin_features(d, &b);
	double *pred = xmalloc(d->n * sizeof *pred), *resid = xmalloc(d->n * sizeof *resid);
	size_t *rows = xmalloc(d->n * sizeof *rows);
	grower g = { .d = d, .p = p, .b = &b, .resid = resid };
	g.hg = xmalloc((size_t)d->nfeatures * MAX_BINS * sizeof *g.hg);
	g.hw = xmalloc((size_t)d->nfeatures * MAX_BINS * sizeof *g.hw);
	e->trees = xcalloc((size_t)(p->ntrees > 0 ? p->ntrees : 1), sizeof *e->trees);
	unsigned seed = p->seed ? p->seed : 1;
	for (size_t i = 0; i < d->n; i++)
		pred[i] = e->base;
	for (int t = 0; t < p->ntrees; t++) {
		size_t n = 0;
		double G = 0, W = 0;
		for (size_t i = 0; i < d->n; i++) {
			resid[i] = d->y[i] - pred[i];
			if (p->subsample >= 1 || (next_random(&seed) >> 8) < p->subsample * (1u << 24)) {
				rows[n++] = i;
				G += weight_of(d, i) * resid[i];
				W += weight_of(d, i);
			}
		}
		g.nodes = NULL;
		g.nnodes = g.cap = 0;
		new_node(&g, n ? p->learning_rate * G / (W + p->lambda) : 0);
		grow(&g, 0, rows, n, 0);
		e->trees[t] = (te_tree){ .nodes = g.nodes, .nnodes = g.nnodes };
		e->ntrees = t + 1;
		te_ensemble one = { .trees = &e->trees[t], .ntrees = 1 };
		for (size_t i = 0; i < d->n; i++)
			pred[i] += te_predict(&one, d->x + i * (size_t)d->nfeatures);
	}
	free(pred);
	free(resid);
	free(rows);
	free(g.hg);
	free(g.hw);
	binned_free(&b);
	return 0;
}

void boost_average(te_ensemble *parts, int k, te_ensemble *out)
{
	memset(out, 0, sizeof *out);
	int total = 0;
	for (int i = 0; i < k; i++)
		total += parts[i].ntrees;
	out->trees = xcalloc((size_t)(total > 0 ? total : 1), sizeof *out->trees);
	for (int i = 0; i < k; i++) {
		out->base += parts[i].base / k;
		for (int t = 0; t < parts[i].ntrees; t++) {
			te_tree tree = parts[i].trees[t];
			for (int j = 0; j < tree.nnodes; j++)
				tree.nodes[j].value /= k;
			out->trees[out->ntrees++] = tree;
		}
		free(parts[i].trees);
		memset(&parts[i], 0, sizeof parts[i]);
	}
}

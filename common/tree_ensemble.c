/* Evaluating, explaining and reading back a tree ensemble: see
 * tree_ensemble.h. */
#include "common/tree_ensemble.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The leaf of tree t that x reaches; each step adds to contrib when given. */
static const te_node *descend(const te_tree *t, const double *x, double *contrib)
{
	const te_node *n = &t->nodes[0];
	while (n->feature >= 0) {
		const te_node *next = &t->nodes[x[n->feature] <= n->threshold ? n->left : n->right];
		if (contrib)
			contrib[n->feature] += next->value - n->value;
		n = next;
	}
	return n;
}

double te_predict_trees(const te_ensemble *e, const double *x, int first, int n)
{
	double sum = 0;
	for (int i = first; i < first + n; i++)
		sum += descend(&e->trees[i], x, NULL)->value;
	return sum;
}

double te_predict(const te_ensemble *e, const double *x)
{
	return e->base + te_predict_trees(e, x, 0, e->ntrees);
}

double te_explain(const te_ensemble *e, const double *x, double *contrib, int nfeatures)
{
	memset(contrib, 0, (size_t)nfeatures * sizeof *contrib);
	double bias = e->base;
	for (int i = 0; i < e->ntrees; i++) {
		bias += e->trees[i].nodes[0].value;
		descend(&e->trees[i], x, contrib);
	}
	return bias;
}

/* 10^0 .. 10^22: every one exact as a double. */
static const double pow10_exact[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

double te_round_digits(double v)
{
	char buf[40];
	snprintf(buf, sizeof buf, "%.*g", TE_SHORT_DIGITS, v);
	return strtod(buf, NULL);
}

void te_round(te_ensemble *e)
{
	e->base = te_round_digits(e->base);
	for (int i = 0; i < e->ntrees; i++)
		for (int k = 0; k < e->trees[i].nnodes; k++) {
			te_node *n = &e->trees[i].nodes[k];
			n->threshold = te_round_digits(n->threshold);
			n->value = te_round_digits(n->value);
		}
}

/* v in as few of 15 or 17 significant digits as read back the same. */
static void put_double(strbuf *out, double v, char after)
{
	char buf[40];
	snprintf(buf, sizeof buf, "%.*g", TE_SHORT_DIGITS, v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof buf, "%.17g", v);
	strbuf_printf(out, "%s%c", buf, after);
}

void te_to_text(const te_ensemble *e, strbuf *out)
{
	strbuf_puts(out, "ensemble ");
	put_double(out, e->base, ' ');
	strbuf_printf(out, "%d\n", e->ntrees);
	for (int i = 0; i < e->ntrees; i++) {
		const te_tree *t = &e->trees[i];
		strbuf_printf(out, "tree %d\n", t->nnodes);
		for (int k = 0; k < t->nnodes; k++) {
			const te_node *n = &t->nodes[k];
			strbuf_printf(out, "%d ", n->feature);
			put_double(out, n->threshold, ' ');
			strbuf_printf(out, "%d %d ", n->left, n->right);
			put_double(out, n->value, '\n');
		}
	}
}

int te_parse_double(const char *s, double *out, const char **end)
{
	const char *p = s;
	while (*p == ' ' || *p == '\n')
		p++;
	int neg = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	unsigned long long w = 0;
	int digits = 0, scale = 0, seen = 0;
	for (; *p >= '0' && *p <= '9'; p++, seen = 1)
		if (w || *p != '0') { /* leading zeros are not significant */
			w = w * 10 + (unsigned)(*p - '0');
			digits++;
		}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, seen = 1) {
			if (!w && *p == '0') {
				scale--;
				continue;
			}
			w = w * 10 + (unsigned)(*p - '0');
			digits++;
			scale--;
		}
	if (seen && (*p == 'e' || *p == 'E')) {
		const char *q = p + 1;
		int eneg = *q == '-';
		if (*q == '-' || *q == '+')
			q++;
		int ex = 0, any = 0;
		for (; *q >= '0' && *q <= '9' && ex < 10000; q++, any = 1)
			ex = ex * 10 + (*q - '0');
		if (any) {
			scale += eneg ? -ex : ex;
			p = q;
		}
	}
	/* Clinger's fast path: w and 10^|scale| exact, one rounding */
	if (seen && digits <= TE_SHORT_DIGITS && scale >= -22 && scale <= 22 &&
	    !(*p >= '0' && *p <= '9') && *p != '.' && *p != 'x' && *p != 'X') {
		double v = (double)w;
		v = scale < 0 ? v / pow10_exact[-scale] : v * pow10_exact[scale];
		*out = neg ? -v : v;
		*end = p;
		return 0;
	}
	char *e;
	double v = strtod(s, &e); /* anything else (17 digits, inf, nan): exact too */
	if (e == s)
		return -1;
	*out = v;
	*end = e;
	return 0;
}

static int read_word(const char **p, const char *word)
{
	while (**p == ' ' || **p == '\n')
		(*p)++;
	size_t len = strlen(word);
	if (strncmp(*p, word, len) != 0 || (*p)[len] != ' ')
		return -1;
	*p += len;
	return 0;
}

/* A decimal integer of at most 9 digits (node indices, features, counts). */
static int read_long(const char **p, long *out)
{
	const char *q = *p;
	while (*q == ' ' || *q == '\n')
		q++;
	int neg = *q == '-';
	if (*q == '-' || *q == '+')
		q++;
	long v = 0;
	int digits = 0;
	for (; *q >= '0' && *q <= '9'; q++)
		if (++digits > 9)
			return -1;
		else
			v = v * 10 + (*q - '0');
	if (!digits)
		return -1;
	*p = q;
	*out = neg ? -v : v;
	return 0;
}

static int read_double(const char **p, double *out)
{
	return te_parse_double(*p, out, p);
}

/* One tree's nodes, checked: children after their parent and inside. */
static int read_tree(const char **p, int nfeatures, te_tree *t, at_error *err)
{
	long nnodes;
	if (read_word(p, "tree") || read_long(p, &nnodes) || nnodes < 1 || nnodes > 1 << 20)
		return at_error_set(err, "expected \"tree NNODES\"");
	t->nodes = calloc((size_t)nnodes, sizeof *t->nodes);
	if (!t->nodes)
		return at_error_set(err, "out of memory");
	t->nnodes = (int)nnodes;
	for (int k = 0; k < t->nnodes; k++) {
		te_node *n = &t->nodes[k];
		long f, l, r;
		if (read_long(p, &f) || read_double(p, &n->threshold) || read_long(p, &l) ||
		    read_long(p, &r) || read_double(p, &n->value))
			return at_error_set(err, "node %d: expected FEATURE THRESHOLD LEFT RIGHT VALUE",
					    k);
		if (f < -1 || f >= nfeatures)
			return at_error_set(err, "node %d: feature %ld of %d", k, f, nfeatures);
		if (f >= 0 && (l <= k || r <= k || l >= nnodes || r >= nnodes))
			return at_error_set(err, "node %d: children %ld and %ld out of order", k, l, r);
		n->feature = (int)f;
		n->left = (int)l;
		n->right = (int)r;
	}
	return 0;
}

int te_from_text(const char **text, int nfeatures, te_ensemble *e, at_error *err)
{
	memset(e, 0, sizeof *e);
	const char *p = *text;
	long ntrees;
	if (read_word(&p, "ensemble") || read_double(&p, &e->base) || read_long(&p, &ntrees) ||
	    ntrees < 0 || ntrees > 1 << 20)
		return at_error_set(err, "expected \"ensemble BASE NTREES\"");
	e->trees = calloc((size_t)(ntrees ? ntrees : 1), sizeof *e->trees);
	if (!e->trees)
		return at_error_set(err, "out of memory");
	for (e->ntrees = 0; e->ntrees < ntrees;) {
		/* counted before reading, so that te_free frees a half-read tree */
		if (read_tree(&p, nfeatures, &e->trees[e->ntrees++], err)) {
			at_error_prefix(err, "tree %d", e->ntrees - 1);
			te_free(e);
			return -1;
		}
	}
	while (*p == ' ' || *p == '\n')
		p++;
	*text = p;
	return 0;
}

void te_free(te_ensemble *e)
{
	for (int i = 0; i < e->ntrees; i++)
		free(e->trees[i].nodes);
	free(e->trees);
	memset(e, 0, sizeof *e);
}

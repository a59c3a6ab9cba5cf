/* Evaluating, explaining and reading back a tree ensemble: see
 * tree_ensemble.h. */
#include "common/tree_ensemble.h"

#include <errno.h>
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

double te_predict(const te_ensemble *e, const double *x)
{
	double sum = e->base;
	for (int i = 0; i < e->ntrees; i++)
		sum += descend(&e->trees[i], x, NULL)->value;
	return sum;
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

void te_to_text(const te_ensemble *e, strbuf *out)
{
	strbuf_printf(out, "ensemble %.17g %d\n", e->base, e->ntrees);
	for (int i = 0; i < e->ntrees; i++) {
		const te_tree *t = &e->trees[i];
		strbuf_printf(out, "tree %d\n", t->nnodes);
		for (int k = 0; k < t->nnodes; k++) {
			const te_node *n = &t->nodes[k];
			strbuf_printf(out, "%d %.17g %d %d %.17g\n", n->feature, n->threshold,
				      n->left, n->right, n->value);
		}
	}
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

static int read_long(const char **p, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (end == *p || errno)
		return -1;
	*p = end;
	*out = v;
	return 0;
}

static int read_double(const char **p, double *out)
{
	char *end;
	double v = strtod(*p, &end);
	if (end == *p)
		return -1;
	*p = end;
	*out = v;
	return 0;
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

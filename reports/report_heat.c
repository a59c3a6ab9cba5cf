/* The heat map of the report: see report_heat.h. The two parameters are
 * chosen from the data: "threads" (or else the first parameter that varies)
 * across, and down the parameter that, paired with it, separates the most
 * variants, so that the grid is as full as the space allows. */
#include "reports/report_heat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/heatmap.h"
#include "reports/html.h"
#include "reports/numfmt.h"
#include "reports/params.h"

size_t report_heat_shape(const rd_group *g, long long M, long long N)
{
	size_t best = 0;
	for (size_t i = 0; i < g->n_shapes; i++) {
		const rd_shape *s = &g->shapes[i], *b = &g->shapes[best];
		if (M > 0 && N > 0 && s->M == M && s->N == N)
			return i;
		double size = (double)s->M * (double)s->N, bsize = (double)b->M * (double)b->N;
		if (size > bsize || (size == bsize && s->N > b->N))
			best = i;
	}
	return best;
}

/* The timed variants of one template at a shape, with their parameters. */
typedef struct candidates {
	const rd_result **r;
	param_kv (*kv)[PARAMS_MAX];
	size_t *n_kv;
	size_t n;
} candidates;

static void collect(const rd_shape *s, const char *template_name, candidates *c)
{
	c->r = xcalloc(s->n_results, sizeof *c->r);
	c->kv = xcalloc(s->n_results, sizeof *c->kv);
	c->n_kv = xcalloc(s->n_results, sizeof *c->n_kv);
	c->n = 0;
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		if (r->baseline || !r->timed || strcmp(r->template_name, template_name) != 0)
			continue;
		c->r[c->n] = r;
		c->n_kv[c->n] = params_parse(r->params, c->kv[c->n]);
		c->n++;
	}
}

static void free_candidates(candidates *c)
{
	free(c->r);
	free(c->kv);
	free(c->n_kv);
}

static const char *value_of(const candidates *c, size_t i, const char *name)
{
	const char *v = params_find(c->kv[i], c->n_kv[i], name);
	return v ? v : "";
}

/* Distinct values of a parameter (pointers into c), sorted. */
typedef struct axis {
	const char *name;
	const char **values;
	size_t n;
} axis;

static int value_cmp(const void *a, const void *b)
{
	return params_value_cmp(*(const char *const *)a, *(const char *const *)b);
}

static void make_axis(const candidates *c, const char *name, axis *a)
{
	a->name = name;
	a->values = xcalloc(c->n ? c->n : 1, sizeof *a->values);
	a->n = 0;
	for (size_t i = 0; i < c->n; i++) {
		const char *v = value_of(c, i, name);
		size_t k = 0;
		while (k < a->n && strcmp(a->values[k], v) != 0)
			k++;
		if (k == a->n)
			a->values[a->n++] = v;
	}
	qsort(a->values, a->n, sizeof *a->values, value_cmp);
}

static size_t axis_index(const axis *a, const char *v)
{
	for (size_t k = 0; k < a->n; k++)
		if (strcmp(a->values[k], v) == 0)
			return k;
	return 0;
}

/* How many distinct (x, y) value pairs the candidates have. */
static size_t pair_count(const candidates *c, const axis *x, const axis *y)
{
	unsigned char *seen = xcalloc(x->n * y->n, 1);
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		size_t cell = axis_index(y, value_of(c, i, y->name)) * x->n +
			      axis_index(x, value_of(c, i, x->name));
		n += !seen[cell];
		seen[cell] = 1;
	}
	free(seen);
	return n;
}

/* Picks the two axes among the winner's parameters; returns how many were
 * found (0, 1 or 2). */
static int pick_axes(const candidates *c, const param_kv *names, size_t n_names, axis *x,
		     axis *y)
{
	axis all[PARAMS_MAX];
	size_t n = 0;
	for (size_t i = 0; i < n_names; i++) {
		make_axis(c, names[i].name, &all[n]);
		if (all[n].n >= 2)
			n++;
		else
			free(all[n].values);
	}
	int found = 0;
	size_t xi = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(all[i].name, "threads") == 0)
			xi = i;
	if (n >= 1) {
		*x = all[xi];
		found = 1;
	}
	size_t yi = n, best_pairs = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == xi)
			continue;
		size_t pairs = pair_count(c, &all[xi], &all[i]);
		if (yi == n || pairs > best_pairs ||
		    (pairs == best_pairs && all[i].n > all[yi].n)) {
			yi = i;
			best_pairs = pairs;
		}
	}
	if (yi < n) {
		*y = all[yi];
		found = 2;
	}
	for (size_t i = 0; i < n; i++)
		if (i != xi && i != yi)
			free(all[i].values);
	return found;
}

static void caption_shape(strbuf *out, const rd_shape *s, long long req_M, long long req_N)
{
	char m[NUMFMT_CAP], n[NUMFMT_CAP];
	strbuf_printf(out, "Shape M = %s, N = %s", fmt_count(m, s->M), fmt_count(n, s->N));
	if (req_M > 0 && (req_M != s->M || req_N != s->N))
		strbuf_printf(out, " (the largest tuned; %lldx%lld was not tuned for this dtype)",
			      req_M, req_N);
	else if (req_M > 0)
		strbuf_puts(out, " (chosen with --heatmap)");
	else
		strbuf_puts(out, " (the largest tuned; choose another with --heatmap MxN)");
}

/* The cells of the map: for each (x, y) pair the best variant, how many
 * variants have that pair, and the hover text. */
typedef struct grid {
	size_t cells;
	double *values;
	const rd_result **best;
	size_t *count;
	char **titles;
	long marked; /* the winner's cell */
} grid;

static void fill_grid(grid *gr, const candidates *c, const axis *x, const axis *y, int two,
		      const rd_result *w)
{
	gr->cells = x->n * y->n;
	gr->values = xcalloc(gr->cells, sizeof *gr->values);
	gr->best = xcalloc(gr->cells, sizeof *gr->best);
	gr->count = xcalloc(gr->cells, sizeof *gr->count);
	gr->titles = xcalloc(gr->cells, sizeof *gr->titles);
	gr->marked = -1;
	for (size_t i = 0; i < c->n; i++) {
		size_t cell = (two ? axis_index(y, value_of(c, i, y->name)) : 0) * x->n +
			      axis_index(x, value_of(c, i, x->name));
		gr->count[cell]++;
		if (!gr->best[cell] || c->r[i]->time_us < gr->best[cell]->time_us)
			gr->best[cell] = c->r[i];
		if (c->r[i] == w)
			gr->marked = (long)cell;
	}
	for (size_t k = 0; k < gr->cells; k++) {
		const rd_result *b = gr->best[k];
		gr->values[k] = b ? b->time_us : NAN;
		strbuf t = { 0 };
		strbuf_printf(&t, "%s=%s", x->name, x->values[k % x->n]);
		if (two)
			strbuf_printf(&t, ", %s=%s", y->name, y->values[k / x->n]);
		if (b) {
			char us[NUMFMT_CAP], gb[NUMFMT_CAP], pct[NUMFMT_CAP];
			strbuf_printf(&t, ": %s \xc2\xb5s, %s GB/s (%s%% of copy)%s\nbest of %zu: %s",
				      fmt_us(us, b->time_us), fmt_gbps(gb, b->gbps),
				      fmt_pct(pct, b->pct_copy), b == w ? " \xe2\x80\x94 the winner" : "",
				      gr->count[k], b->params);
		} else {
			strbuf_puts(&t, ": no variant with these values passed");
		}
		gr->titles[k] = strbuf_take(&t);
	}
}

static void free_grid(grid *gr)
{
	for (size_t k = 0; k < gr->cells; k++)
		free(gr->titles[k]);
	free(gr->titles);
	free(gr->count);
	free(gr->best);
	free(gr->values);
}

static void heat_caption(strbuf *out, const rd_shape *s, const rd_result *w, const axis *x,
			 const axis *y, int two, long long req_M, long long req_N)
{
	strbuf_puts(out, "<figcaption>Heat map. ");
	caption_shape(out, s, req_M, req_N);
	strbuf_puts(out, ": median time of the best <code>");
	html_escape(out, w->template_name);
	strbuf_puts(out, "</code> variant for each value of <code>");
	html_escape(out, x->name);
	if (two) {
		strbuf_puts(out, "</code> (across) and <code>");
		html_escape(out, y->name);
		strbuf_puts(out, "</code> (down)");
	} else {
		strbuf_puts(out, "</code>");
	}
	strbuf_puts(out, "; the winner's cell is outlined, grey cells had no passing variant. "
			 "Hover a cell for its variant.</figcaption>\n");
}

/* A note in place of the map. */
static void heat_note(strbuf *out, const rd_shape *s, long long req_M, long long req_N,
		      const char *why)
{
	strbuf_puts(out, "<figcaption>Heat map: ");
	caption_shape(out, s, req_M, req_N);
	strbuf_printf(out, ": %s, no heat map.</figcaption>\n", why);
}

int report_heatmap(strbuf *out, const report_data *d, size_t gi, size_t si,
		   long long requested_M, long long requested_N, at_error *err)
{
	const rd_group *g = &d->groups[gi];
	const rd_shape *s = &g->shapes[si];
	const rd_result *w = rd_shape_winner(s);
	strbuf_printf(out, "<figure id=\"g%zu-heatmap-fig\" class=\"heat\">\n", gi);
	if (!w || !w->timed) {
		heat_note(out, s, requested_M, requested_N, "no variant passed");
		strbuf_puts(out, "</figure>\n");
		return 0;
	}
	candidates c;
	collect(s, w->template_name, &c);
	param_kv names[PARAMS_MAX];
	size_t n_names = params_parse(w->params, names);
	axis x = { 0 }, y = { 0 };
	int found = pick_axes(&c, names, n_names, &x, &y), rc = 0;
	if (found == 0) {
		heat_note(out, s, requested_M, requested_N,
			  "the winner's template has no parameter that varies here");
	} else {
		const char *no_value = "";
		axis row = { "", &no_value, 1 }; /* one row when only x varies */
		const axis *yy = found == 2 ? &y : &row;
		grid gr;
		fill_grid(&gr, &c, &x, yy, found == 2, w);
		char id[48], title[256];
		snprintf(id, sizeof id, "g%zu-heatmap", gi);
		snprintf(title, sizeof title, "%s %s M=%lld N=%lld: median time of %s by %s%s%s", g->op,
			 g->dtype, s->M, s->N, w->template_name, x.name, found == 2 ? " and " : "",
			 yy->name);
		heatmap h = { .id = id, .title = title, .x_name = x.name, .y_name = yy->name,
			      .x_labels = x.values, .nx = x.n, .y_labels = yy->values, .ny = yy->n,
			      .values = gr.values, .cell_titles = (const char *const *)gr.titles,
			      .marked = gr.marked, .unit = "\xc2\xb5s" };
		rc = svg_heatmap(out, &h, err);
		heat_caption(out, s, w, &x, yy, found == 2, requested_M, requested_N);
		free_grid(&gr);
	}
	strbuf_puts(out, "</figure>\n");
	free(x.values);
	free(y.values);
	free_candidates(&c);
	return rc;
}

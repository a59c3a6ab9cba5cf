/* The curves of the report: see report_curve.h. Builds the series from the
 * data and leaves the drawing to svg_plot.c. */
#include "reports/report_curve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "reports/html.h"
#include "reports/numfmt.h"
#include "reports/svg_plot.h"

#define MAX_BASELINES 6
#define MAX_PEERS 4
#define MAX_CEILINGS 4

static const char tuned_color[] = "#1f5fbf", copy_color[] = "#c62828";
static const char *const baseline_colors[MAX_BASELINES] = { "#e07b1a", "#2e9d5b", "#8e44ad",
							     "#8c6d31", "#17a2b8", "#6b7480" };
static const char *const peer_colors[MAX_PEERS] = { "#263238", "#00897b", "#c2185b", "#8d6e63" };

const char *report_baseline_label(const char *template_name)
{
	if (strcmp(template_name, "cudnn") == 0)
		return "cuDNN";
	if (strcmp(template_name, "copy") == 0)
		return "copy of the same bytes";
	return template_name;
}

/* Known baselines first, in a fixed order, then the others by name. */
static int baseline_rank(const char *name)
{
	return strcmp(name, "naive") == 0 ? 0 : strcmp(name, "cudnn") == 0 ? 1
					      : strcmp(name, "copy") == 0  ? 2 : 3;
}

static int baseline_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	int rx = baseline_rank(x), ry = baseline_rank(y);
	return rx != ry ? rx - ry : strcmp(x, y);
}

/* The distinct baseline templates timed at shapes [first, last). */
static size_t baseline_names(const rd_group *g, size_t first, size_t last,
			     const char *names[MAX_BASELINES])
{
	size_t n = 0;
	for (size_t s = first; s < last; s++)
		for (size_t i = 0; i < g->shapes[s].n_results; i++) {
			const rd_result *r = &g->shapes[s].results[i];
			if (!r->baseline || !r->timed)
				continue;
			size_t k = 0;
			while (k < n && strcmp(names[k], r->template_name) != 0)
				k++;
			if (k == n && n < MAX_BASELINES)
				names[n++] = r->template_name;
		}
	qsort(names, n, sizeof *names, baseline_cmp);
	return n;
}

typedef struct curve_buf {
	plot_series series[1 + MAX_BASELINES + MAX_PEERS];
	plot_point *points[1 + MAX_BASELINES + MAX_PEERS];
	char peer_keys[MAX_PEERS][80];
	char **titles; /* every point's title, freed at the end */
	size_t n_titles;
} curve_buf;

static const char *keep_title(curve_buf *b, strbuf *text)
{
	b->titles = xrealloc(b->titles, (b->n_titles + 1) * sizeof *b->titles);
	return b->titles[b->n_titles++] = strbuf_take(text);
}

static void add_point(curve_buf *b, size_t series, const rd_shape *s, const rd_result *r,
		      const char *what)
{
	char n[NUMFMT_CAP], m[NUMFMT_CAP], gbps[NUMFMT_CAP], us[NUMFMT_CAP], pct[NUMFMT_CAP];
	strbuf t = { 0 };
	strbuf_printf(&t, "%s at N = %s (M = %s): %s GB/s, %s \xc2\xb5s, %s%% of copy", what,
		      fmt_count(n, s->N), fmt_count(m, s->M), fmt_gbps(gbps, r->gbps),
		      fmt_us(us, r->time_us), fmt_pct(pct, r->pct_copy));
	if (!r->baseline)
		strbuf_printf(&t, "\n%s %s", r->template_name, r->params);
	plot_series *ps = &b->series[series];
	b->points[series][ps->n_points++] = (plot_point){ (double)s->N, r->gbps, keep_title(b, &t) };
}

/* The series of peer method at M: its clean-L2 rows for the group's GPU
 * and dtype, by N. */
static void add_peer_series(curve_buf *b, size_t series, size_t k, const peer_set *peers,
			    const char *gpu, const rd_group *g, long long M, const char *method)
{
	at_dtype dt;
	size_t size = at_dtype_parse(g->dtype, &dt) == 0 ? at_dtype_size(dt) : 4;
	size_t n = 0;
	for (size_t i = 0; i < peers->n_rows; i++)
		n += peers_find(peers, gpu, g->dtype, M, peers->rows[i].N, method) == &peers->rows[i];
	snprintf(b->peer_keys[k], sizeof b->peer_keys[k], "peer-%s", method);
	b->points[series] = xcalloc(n ? n : 1, sizeof(plot_point));
	b->series[series] = (plot_series){ .key = b->peer_keys[k], .label = peers_label(method),
					   .color = peer_colors[k], .hollow = 1,
					   .points = b->points[series] };
	plot_point *pts = b->points[series];
	size_t m = 0;
	for (size_t i = 0; i < peers->n_rows; i++) {
		const peer_row *r = &peers->rows[i];
		if (peers_find(peers, gpu, g->dtype, M, r->N, method) != r)
			continue;
		double gbps = 2.0 * (double)M * (double)r->N * (double)size / r->us / 1e3;
		char nb[NUMFMT_CAP], mb[NUMFMT_CAP], gb[NUMFMT_CAP], us[NUMFMT_CAP];
		strbuf t = { 0 };
		strbuf_printf(&t, "%s at N = %s (M = %s): %s GB/s, %s \xc2\xb5s (%s line %d, clean L2)",
			      peers_label(method), fmt_count(nb, r->N), fmt_count(mb, M),
			      fmt_gbps(gb, gbps), fmt_us(us, r->us), peers->path, r->line);
		size_t at = m++; /* in N order */
		while (at > 0 && pts[at - 1].x > (double)r->N) {
			pts[at] = pts[at - 1];
			at--;
		}
		pts[at] = (plot_point){ (double)r->N, gbps, keep_title(b, &t) };
	}
	b->series[series].n_points = m;
}

static void free_curve(curve_buf *b, size_t n_series)
{
	for (size_t i = 0; i < b->n_titles; i++)
		free(b->titles[i]);
	free(b->titles);
	for (size_t i = 0; i < n_series; i++)
		free(b->points[i]);
}

/* One figure for the shapes [first, last) of group gi, which share M. */
static int curve_at_m(strbuf *out, const report_data *d, size_t gi, size_t first, size_t last,
		      const peer_set *peers, at_error *err)
{
	const rd_group *g = &d->groups[gi];
	const char *gpu = d->gpus[g->gpu].name;
	long long M = g->shapes[first].M;
	const char *names[MAX_BASELINES], *peer_names[MAX_PEERS];
	size_t n_base = baseline_names(g, first, last, names), n_series = 1 + n_base;
	size_t n_peers = peers_methods(peers, gpu, g->dtype, M, peer_names, MAX_PEERS);
	curve_buf b = { 0 };
	for (size_t i = 0; i < n_series; i++) {
		b.points[i] = xcalloc(last - first, sizeof(plot_point));
		b.series[i] = (plot_series){
			.key = i == 0 ? "tuned" : names[i - 1],
			.label = i == 0 ? "tuned winner" : report_baseline_label(names[i - 1]),
			.color = i == 0 ? tuned_color : baseline_colors[i - 1],
			.hollow = i > 0,
			.dashed = i > 0 && strcmp(names[i - 1], "naive") == 0,
			.points = b.points[i],
		};
	}
	for (size_t k = 0; k < n_peers; k++)
		add_peer_series(&b, n_series + k, k, peers, gpu, g, M, peer_names[k]);
	n_series += n_peers;
	plot_hline lines[MAX_CEILINGS];
	char labels[MAX_CEILINGS][96], titles[MAX_CEILINGS][160];
	size_t n_lines = 0;
	for (size_t s = first; s < last; s++) {
		const rd_shape *sh = &g->shapes[s];
		const rd_result *w = rd_shape_winner(sh);
		if (w && w->timed)
			add_point(&b, 0, sh, w, "tuned winner");
		for (size_t k = 0; k < n_base; k++) {
			const rd_result *r = rd_shape_baseline(sh, names[k]);
			if (r)
				add_point(&b, 1 + k, sh, r, report_baseline_label(names[k]));
		}
		const rd_sweep *sw = report_data_sweep(d, sh->sweep_id);
		if (!sw || !(sw->copy_gbps > 0) || n_lines == MAX_CEILINGS)
			continue;
		int seen = 0;
		for (size_t k = 0; k < n_lines; k++)
			seen |= lines[k].y == sw->copy_gbps;
		if (seen)
			continue;
		char v[NUMFMT_CAP];
		snprintf(labels[n_lines], sizeof labels[n_lines], "copy %s GB/s",
			 fmt_gbps(v, sw->copy_gbps));
		snprintf(titles[n_lines], sizeof titles[n_lines],
			 "device-to-device copy of sweep %lld: %s GB/s (bytes read + written)", sw->id,
			 fmt_gbps(v, sw->copy_gbps));
		lines[n_lines] = (plot_hline){ "ceiling", labels[n_lines], copy_color, sw->copy_gbps,
					       titles[n_lines] };
		n_lines++;
	}
	size_t plotted = 0;
	for (size_t i = 0; i < n_series; i++)
		plotted += b.series[i].n_points;
	int rc = 0;
	char id[64], title[512], mb[NUMFMT_CAP];
	snprintf(id, sizeof id, "g%zu-curve-m%lld", gi, M);
	strbuf_printf(out, "<figure id=\"%s-fig\" class=\"curve\">\n", id);
	if (plotted == 0) {
		strbuf_printf(out, "<p class=\"note\">M = %s: no variant or baseline was timed, "
				   "nothing to plot.</p>\n",
			      fmt_count(mb, M));
	} else {
		snprintf(title, sizeof title, "%s %s, M = %s: GB/s against N", g->op, g->dtype,
			 fmt_count(mb, M));
		line_plot p = { .id = id, .title = title, .x_label = "N (elements per row, log2 scale)",
				.y_label = "GB/s (2\xc2\xb7M\xc2\xb7N\xc2\xb7size / median time)",
				.log2_x = 1, .series = b.series, .n_series = n_series, .hlines = lines,
				.n_hlines = n_lines, .width = 570, .height = 340 };
		rc = svg_line_plot(out, &p, err);
		strbuf_printf(out, "<figcaption>Filled points: the tuned winner at each N; rings: "
				   "baselines%s; dashed red: the sweep's device-to-device copy. Hover "
				   "a point for its values.</figcaption>\n",
			      n_peers ? " and the peers (their clean-L2 times from the peers CSV)" : "");
	}
	strbuf_puts(out, "</figure>\n");
	free_curve(&b, n_series);
	return rc;
}

int report_curves(strbuf *out, const report_data *d, size_t gi, const peer_set *peers,
		  at_error *err)
{
	const rd_group *g = &d->groups[gi];
	for (size_t first = 0; first < g->n_shapes;) {
		size_t last = first + 1;
		while (last < g->n_shapes && g->shapes[last].M == g->shapes[first].M)
			last++;
		if (curve_at_m(out, d, gi, first, last, peers, err))
			return -1;
		first = last;
	}
	return 0;
}

/* The per-shape tables of the report: see report_shapes.h. */
#include "reports/report_shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype.h"
#include "reports/html.h"
#include "reports/numfmt.h"
#include "reports/report_curve.h"
#include "reports/report_rest.h"
#include "reports/ties.h"

static void cell_text(strbuf *out, const char *cls, const char *text)
{
	strbuf_printf(out, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	html_escape(out, text);
	strbuf_puts(out, "</td>");
}

/* A numeric cell (already formatted by numfmt). */
static void cell_num(strbuf *out, const char *text)
{
	strbuf_printf(out, "<td class=\"n\">%s</td>", text);
}

static void cell_int(strbuf *out, long long v)
{
	char b[NUMFMT_CAP];
	cell_num(out, v < 0 ? fmt_grouped(b, NAN, 0) : fmt_count(b, v));
}

static void cell_ratio(strbuf *out, const rd_result *base, const rd_result *w)
{
	char b[NUMFMT_CAP];
	if (!base || !w || !w->timed) {
		cell_num(out, fmt_grouped(b, NAN, 0));
		return;
	}
	strbuf_printf(out, "<td class=\"n\">%s\xc3\x97</td>", fmt_grouped(b, base->time_us / w->time_us, 2));
}

#define MAX_SHAPE_PEERS 8

static const char *group_gpu(const report_data *d, const rd_group *g)
{
	return d->gpus[g->gpu].name;
}

/* The winner's speed-up over the best peer (best peer's time / winner's),
 * NAN when either is missing; *best gets the peer. */
static double peer_speedup(const report_data *d, const rd_group *g, const rd_shape *s,
			   const peer_set *peers, const peer_row **best)
{
	const rd_result *w = rd_shape_winner(s);
	*best = peers_best(peers, group_gpu(d, g), g->dtype, s->M, s->N);
	return *best && w && w->timed ? (*best)->us / w->time_us : NAN;
}

static double peer_gbps(const rd_group *g, const peer_row *r)
{
	at_dtype dt;
	size_t size = at_dtype_parse(g->dtype, &dt) == 0 ? at_dtype_size(dt) : 4;
	return 2.0 * (double)r->M * (double)r->N * (double)size / r->us / 1e3;
}

static void count_results(const rd_shape *s, size_t *variants, size_t *failed)
{
	*variants = *failed = 0;
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		*variants += !r->baseline;
		*failed += !r->timed;
	}
}

void report_winners_table(strbuf *out, const report_data *d, size_t gi, const peer_set *peers)
{
	const rd_group *g = &d->groups[gi];
	strbuf_printf(out,
		      "<div class=\"scroll\"><table id=\"g%zu-winners\" class=\"sortable winners\">\n"
		      "<thead><tr><th class=\"n\">M</th><th class=\"n\">N</th><th>winner</th>"
		      "<th>params</th><th class=\"n\">median \xc2\xb5s</th><th class=\"n\">GB/s</th>"
		      "<th class=\"n\">%% copy</th><th class=\"n\">ties</th>"
		      "<th class=\"n\" title=\"the winner's speed-up over cuDNN\">vs cuDNN</th>"
		      "<th class=\"n\" title=\"the winner's speed-up over the naive baseline\">"
		      "vs naive</th>%s"
		      "<th class=\"n\">tried</th><th class=\"n\">failed</th></tr></thead>\n<tbody>\n",
		      gi,
		      peers ? "<th>best peer</th><th class=\"n\" title=\"the winner's speed-up over the "
			      "fastest peer (clean L2)\">vs best peer</th>" : "");
	char b[NUMFMT_CAP];
	for (size_t i = 0; i < g->n_shapes; i++) {
		const rd_shape *s = &g->shapes[i];
		const rd_result *w = rd_shape_winner(s);
		const rd_result *cudnn = rd_shape_baseline(s, "cudnn"),
				*naive = rd_shape_baseline(s, "naive");
		size_t variants, failed;
		count_results(s, &variants, &failed);
		strbuf_printf(out, "<tr><td class=\"n\"><a href=\"#g%zu-shape-%lldx%lld\">%s</a></td>", gi,
			      s->M, s->N, fmt_count(b, s->M));
		strbuf_printf(out, "<td class=\"n\"><a href=\"#g%zu-shape-%lldx%lld\">%s</a></td>", gi,
			      s->M, s->N, fmt_count(b, s->N));
		if (w && w->timed) {
			cell_text(out, "t", w->template_name);
			cell_text(out, "p", w->params);
			cell_num(out, fmt_us(b, w->time_us));
			cell_num(out, fmt_gbps(b, w->gbps));
			cell_num(out, fmt_pct(b, w->pct_copy));
			cell_int(out, (long long)ties_count(s));
		} else {
			strbuf_puts(out, "<td colspan=\"2\"><span class=\"badge fail\">none passed</span></td>"
					 "<td class=\"n\"></td><td class=\"n\"></td><td class=\"n\"></td>"
					 "<td class=\"n\"></td>");
		}
		cell_ratio(out, cudnn, w);
		cell_ratio(out, naive, w);
		if (peers) {
			const peer_row *best;
			double speedup = peer_speedup(d, g, s, peers, &best);
			cell_text(out, "t", best ? peers_label(best->method) : "");
			strbuf_printf(out, "<td class=\"n\">%s%s</td>", fmt_grouped(b, speedup, 2),
				      isfinite(speedup) ? "\xc3\x97" : "");
		}
		cell_int(out, (long long)variants);
		cell_int(out, (long long)failed);
		strbuf_puts(out, "</tr>\n");
	}
	strbuf_puts(out, "</tbody></table></div>\n");
}

static void summary_line(strbuf *out, const report_data *d, const rd_group *g, const rd_shape *s,
			 const peer_set *peers)
{
	char m[NUMFMT_CAP], n[NUMFMT_CAP], us[NUMFMT_CAP], gb[NUMFMT_CAP], pct[NUMFMT_CAP];
	const rd_result *w = rd_shape_winner(s);
	size_t variants, failed;
	count_results(s, &variants, &failed);
	strbuf_printf(out, "<summary><strong>M = %s, N = %s</strong>: ", fmt_count(m, s->M),
		      fmt_count(n, s->N));
	if (w && w->timed) {
		strbuf_puts(out, "winner <code>");
		html_escape(out, w->template_name);
		strbuf_printf(out, "</code> %s \xc2\xb5s, %s GB/s (%s%% of copy); ", fmt_us(us, w->time_us),
			      fmt_gbps(gb, w->gbps), fmt_pct(pct, w->pct_copy));
	} else {
		strbuf_puts(out, "<span class=\"badge fail\">no variant passed</span>; ");
	}
	strbuf_printf(out, "%zu variants, %zu ties, %zu not timed", variants, ties_count(s), failed);
	const peer_row *best;
	double speedup = peer_speedup(d, g, s, peers, &best);
	if (best) {
		strbuf_printf(out, "; best peer %s %s \xc2\xb5s", peers_label(best->method),
			      fmt_us(us, best->us));
		if (isfinite(speedup))
			strbuf_printf(out, " (winner %s\xc3\x97)", fmt_grouped(gb, speedup, 2));
	}
	strbuf_puts(out, "</summary>\n");
}

/* A cell of a shape's results table: its numeric columns are aligned by the
 * page's style rather than a class a cell, 11 bytes a cell on 28,000 rows. */
static void cell_plain(strbuf *out, const char *text)
{
	strbuf_printf(out, "<td>%s</td>", text);
}

/* The min-max cell: both times in one column keeps the table within 1400 px. */
static void cell_range(strbuf *out, double lo, double hi)
{
	char a[NUMFMT_CAP], b[NUMFMT_CAP];
	if (isfinite(lo) || isfinite(hi))
		strbuf_printf(out, "<td>%s\xe2\x80\x93%s</td>", fmt_us(a, lo), fmt_us(b, hi));
	else
		cell_plain(out, fmt_grouped(a, NAN, 0));
}

static void cell_count(strbuf *out, long long v)
{
	char b[NUMFMT_CAP];
	cell_plain(out, v < 0 ? fmt_grouped(b, NAN, 0) : fmt_count(b, v));
}

/* One row of a peer in a shape's results table. */
static void peer_row_cells(strbuf *out, const report_data *d, const rd_group *g, const rd_shape *s,
			   const peer_row *r, const char *path, size_t rank)
{
	char b[NUMFMT_CAP];
	double gbps = peer_gbps(g, r);
	const rd_sweep *sw = report_data_sweep(d, s->sweep_id);
	double pct = sw && sw->copy_gbps > 0 ? gbps / sw->copy_gbps * 100 : NAN;
	strbuf_printf(out, "<tr class=\"peer\"><td>%zu</td><td><span class=\"badge "
			   "peer\">peer</span></td>",
		      rank);
	cell_text(out, "t", peers_label(r->method));
	strbuf_puts(out, "<td class=\"p\">");
	html_escape(out, path);
	strbuf_printf(out, " line %d, clean L2</td>", r->line);
	cell_plain(out, fmt_us(b, r->us));
	cell_range(out, NAN, NAN);
	cell_plain(out, fmt_gbps(b, gbps));
	cell_plain(out, fmt_pct(b, pct));
	for (int i = 0; i < 3; i++)
		cell_count(out, -1);
	strbuf_puts(out, "</tr>\n");
}

/* The peers timed at shape s, fastest first. */
static size_t shape_peers(const report_data *d, const rd_group *g, const rd_shape *s,
			  const peer_set *peers, const peer_row *rows[MAX_SHAPE_PEERS])
{
	const char *names[MAX_SHAPE_PEERS];
	size_t n_names = peers_methods(peers, group_gpu(d, g), g->dtype, s->M, names, MAX_SHAPE_PEERS);
	size_t n = 0;
	for (size_t k = 0; k < n_names; k++) {
		const peer_row *r = peers_find(peers, group_gpu(d, g), g->dtype, s->M, s->N, names[k]);
		if (!r)
			continue;
		size_t at = n++;
		while (at > 0 && rows[at - 1]->us > r->us) {
			rows[at] = rows[at - 1];
			at--;
		}
		rows[at] = r;
	}
	return n;
}

/* The timed rows of s, fastest first, the peers among them; the rows whose
 * ids (report_rest_plan) are not -1 are left to the text block after it. */
static void results_table(strbuf *out, const report_data *d, const rd_group *g, const rd_shape *s,
			  const peer_set *peers, const long *ids)
{
	const rd_result *w = rd_shape_winner(s);
	char b[NUMFMT_CAP];
	const peer_row *prow[MAX_SHAPE_PEERS];
	size_t n_peers = shape_peers(d, g, s, peers, prow), next_peer = 0;
	strbuf_puts(out, "<div class=\"scroll\"><table class=\"sortable results\">\n<thead><tr>"
			 "<th class=\"n\">#</th><th>mark</th><th>template</th><th>params</th>"
			 "<th class=\"n\">median \xc2\xb5s</th>"
			 "<th class=\"n\" title=\"the fastest and the slowest repetition\">"
			 "min\xe2\x80\x93max \xc2\xb5s</th><th class=\"n\">GB/s</th>"
			 "<th class=\"n\">% copy</th>"
			 "<th class=\"n\" title=\"registers a thread\">regs</th>"
			 "<th class=\"n\" title=\"shared memory a CTA, bytes\">smem B</th>"
			 "<th class=\"n\" title=\"bytes spilled to local memory\">spill B</th>"
			 "</tr></thead>\n<tbody>\n");
	size_t rank = 0;
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		if (!r->timed)
			continue;
		/* the peers faster than r come before it */
		while (next_peer < n_peers && prow[next_peer]->us < r->time_us)
			peer_row_cells(out, d, g, s, prow[next_peer++], peers->path, ++rank);
		++rank;
		if (ids[i] >= 0)
			continue;
		const char *cls = r == w ? "win" : r->baseline ? "base" : ties_is_tie(s, r) ? "tie" : NULL;
		if (cls)
			strbuf_printf(out, "<tr class=\"%s\">", cls);
		else
			strbuf_puts(out, "<tr>");
		strbuf_printf(out, "<td>%zu</td><td>", rank);
		if (r == w)
			strbuf_puts(out, "<span class=\"badge win\">winner</span>");
		else if (r->baseline)
			strbuf_puts(out, "<span class=\"badge base\">baseline</span>");
		else if (cls)
			strbuf_puts(out, "<span class=\"badge tie\">tie</span>");
		strbuf_puts(out, "</td>");
		cell_text(out, "t", r->baseline ? report_baseline_label(r->template_name)
						: r->template_name);
		cell_text(out, "p", r->params);
		cell_plain(out, fmt_us(b, r->time_us));
		cell_range(out, r->time_min_us, r->time_max_us);
		cell_plain(out, fmt_gbps(b, r->gbps));
		cell_plain(out, fmt_pct(b, r->pct_copy));
		cell_count(out, r->registers);
		cell_count(out, r->smem_bytes);
		cell_count(out, r->spill_bytes);
		strbuf_puts(out, "</tr>\n");
	}
	while (next_peer < n_peers)
		peer_row_cells(out, d, g, s, prow[next_peer++], peers->path, ++rank);
	strbuf_puts(out, "</tbody></table></div>\n");
}

static void failed_table(strbuf *out, const rd_shape *s, size_t failed)
{
	strbuf_printf(out, "<p><strong>Not timed (%zu)</strong>: failed to compile, failed the check "
			   "against the CPU reference, or failed to launch.</p>\n",
		      failed);
	strbuf_puts(out, "<div class=\"scroll\"><table class=\"sortable failed\">\n<thead><tr>"
			 "<th>template</th><th>params</th><th>status</th><th>reason</th>"
			 "</tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < s->n_results; i++) {
		const rd_result *r = &s->results[i];
		if (r->timed)
			continue;
		strbuf_printf(out, "<tr%s>", r->baseline ? " class=\"base\"" : "");
		cell_text(out, "t", r->baseline ? report_baseline_label(r->template_name)
						: r->template_name);
		cell_text(out, "p", r->params);
		strbuf_puts(out, "<td><span class=\"badge fail\">");
		html_escape(out, strcmp(r->status, "ok") == 0 ? "ok, not timed" : r->status);
		strbuf_puts(out, "</span></td>");
		cell_text(out, "p", r->reason ? r->reason : "");
		strbuf_puts(out, "</tr>\n");
	}
	strbuf_puts(out, "</tbody></table></div>\n");
}

void report_shape_tables(strbuf *out, const report_data *d, size_t gi, const peer_set *peers,
			 vdict *list)
{
	const rd_group *g = &d->groups[gi];
	char tol[NUMFMT_CAP];
	for (size_t i = 0; i < g->n_shapes; i++) {
		const rd_shape *s = &g->shapes[i];
		const rd_result *w = rd_shape_winner(s);
		size_t variants, failed;
		count_results(s, &variants, &failed);
		strbuf_printf(out, "<details id=\"g%zu-shape-%lldx%lld\" class=\"shape\">\n", gi, s->M,
			      s->N);
		summary_line(out, d, g, s, peers);
		if (s->n_results == 0) {
			strbuf_puts(out, "<p class=\"note\">No variant was tried at this shape.</p>\n"
					 "</details>\n");
			continue;
		}
		if (w && w->timed)
			strbuf_printf(out,
				      "<p class=\"note\">Ties: variants whose median is within "
				      "%s%% of the fastest variant's (%s; see "
				      "<a href=\"#about\">how to read</a>).</p>\n",
				      fmt_grouped(tol, ties_band(s) * 100, 2),
				      isfinite(s->noise_band) && s->noise_band > 0
					      ? "the noise band the sweep measured at this shape"
					      : "no band was stored for this shape: the most the "
						"sweep's band can be");
		long *ids = xcalloc(s->n_results, sizeof *ids);
		size_t n_rest = report_rest_plan(s, list, ids);
		if (failed < s->n_results) {
			results_table(out, d, g, s, peers, ids);
			report_rest_block(out, d, g->op, g->dtype, s, ids, n_rest);
		}
		free(ids);
		if (failed)
			failed_table(out, s, failed);
		strbuf_puts(out, "</details>\n");
	}
}

void report_peers_summary(strbuf *out, const report_data *d, size_t gi, const peer_set *peers)
{
	const rd_group *g = &d->groups[gi];
	size_t n = 0, ahead = 0;
	double log_sum = 0, lo = INFINITY, hi = -INFINITY;
	const rd_shape *lo_s = NULL, *hi_s = NULL;
	for (size_t i = 0; peers && i < g->n_shapes; i++) {
		const peer_row *best;
		double x = peer_speedup(d, g, &g->shapes[i], peers, &best);
		if (!isfinite(x))
			continue;
		n++;
		ahead += x >= 1;
		log_sum += log(x);
		if (x < lo) {
			lo = x;
			lo_s = &g->shapes[i];
		}
		if (x > hi) {
			hi = x;
			hi_s = &g->shapes[i];
		}
	}
	if (n == 0)
		return;
	char a[NUMFMT_CAP], b[NUMFMT_CAP], c[NUMFMT_CAP], ml[NUMFMT_CAP], nl[NUMFMT_CAP],
		mh[NUMFMT_CAP], nh[NUMFMT_CAP];
	strbuf_printf(out, "<p id=\"g%zu-peers\" class=\"peers\">Against the peers of <code>", gi);
	html_escape(out, peers->path);
	strbuf_printf(out, "</code> (clean L2): the winner is at least as fast as the best peer at "
			   "<strong>%zu of %zu</strong> shapes; best peer's time / winner's: geometric "
			   "mean <strong>%s\xc3\x97</strong>, from %s\xc3\x97 (M = %s, N = %s) to "
			   "%s\xc3\x97 (M = %s, N = %s).</p>\n",
		      ahead, n, fmt_grouped(a, exp(log_sum / (double)n), 3), fmt_grouped(b, lo, 2),
		      fmt_count(ml, lo_s->M), fmt_count(nl, lo_s->N), fmt_grouped(c, hi, 2),
		      fmt_count(mh, hi_s->M), fmt_count(nh, hi_s->N));
}

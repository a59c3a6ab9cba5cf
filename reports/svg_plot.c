/* The report's line plot, drawn by hand as SVG: see svg_plot.h. Coordinates
 * are rounded to 0.1 px to keep the file small. */
#include "reports/svg_plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/html.h"
#include "reports/numfmt.h"

#define FONT_W 7.0 /* width of a 12 px character (wide fonts included), for layout */

typedef struct frame {
	double left, top, width, height; /* the plot area */
	double x0, x1, y0, y1;           /* data range (x already log2 if log) */
	double ystep;                    /* between y ticks; y1 is a multiple */
	int log2_x;
} frame;

static double data_x(const frame *f, double x)
{
	return f->log2_x ? log2(x) : x;
}

static double px(const frame *f, double x)
{
	return f->left + (data_x(f, x) - f->x0) / (f->x1 - f->x0) * f->width;
}

static double py(const frame *f, double y)
{
	return f->top + f->height - (y - f->y0) / (f->y1 - f->y0) * f->height;
}

/* A "nice" step (1, 2, 2.5 or 5 times a power of ten) near range / target. */
static double nice_step(double range, int target)
{
	double raw = range / target;
	double mag = pow(10, floor(log10(raw)));
	static const double mults[] = { 1, 2, 2.5, 5, 10 };
	for (size_t i = 0; i < sizeof mults / sizeof *mults; i++)
		if (raw <= mults[i] * mag)
			return mults[i] * mag;
	return 10 * mag;
}

static int check_range(const line_plot *p, frame *f, at_error *err)
{
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	size_t points = 0;
	for (size_t s = 0; s < p->n_series; s++)
		for (size_t i = 0; i < p->series[s].n_points; i++) {
			const plot_point *pt = &p->series[s].points[i];
			if (!isfinite(pt->x) || !isfinite(pt->y))
				return at_error_set(err, "plot %s: a point of \"%s\" is not a finite number",
						    p->id, p->series[s].label);
			if (p->log2_x && pt->x <= 0)
				return at_error_set(err, "plot %s: x = %g cannot be drawn on a log2 axis",
						    p->id, pt->x);
			xmin = fmin(xmin, pt->x);
			xmax = fmax(xmax, pt->x);
			ymax = fmax(ymax, pt->y);
			points++;
		}
	if (points == 0)
		return at_error_set(err, "plot %s: no points to draw", p->id);
	for (size_t h = 0; h < p->n_hlines; h++) {
		if (!isfinite(p->hlines[h].y))
			return at_error_set(err, "plot %s: the line \"%s\" is not a finite number",
					    p->id, p->hlines[h].label);
		ymax = fmax(ymax, p->hlines[h].y);
	}
	f->log2_x = p->log2_x;
	f->x0 = data_x(f, xmin);
	f->x1 = data_x(f, xmax);
	/* a margin: 4% of the range, at least a quarter octave on a log axis */
	double pad = f->x1 > f->x0 ? fmax((f->x1 - f->x0) * 0.04, p->log2_x ? 0.25 : 0) : 1;
	if (!p->log2_x && f->x1 == f->x0)
		pad = fmax(fabs(f->x0) * 0.1, 1);
	f->x0 -= pad;
	f->x1 += pad;
	f->y0 = 0;
	if (ymax <= 0)
		ymax = 1;
	f->ystep = nice_step(ymax * 1.05, 6);
	f->y1 = ceil(ymax * 1.05 / f->ystep) * f->ystep;
	return 0;
}

static void legend_entry_width(const char *label, double *w)
{
	*w = 26 + FONT_W * (double)strlen(label) + 18;
}

/* Lays out the legend in rows within the plot's width; returns the rows. */
static int legend_rows(const line_plot *p, double width)
{
	int rows = 1;
	double x = 0;
	size_t n = p->n_series + p->n_hlines;
	for (size_t i = 0; i < n; i++) {
		const char *label = i < p->n_series ? p->series[i].label
						     : p->hlines[i - p->n_series].label;
		double w;
		legend_entry_width(label, &w);
		if (x > 0 && x + w > width) {
			rows++;
			x = 0;
		}
		x += w;
	}
	return rows;
}

static void draw_axes(strbuf *out, const frame *f, const line_plot *p)
{
	char buf[NUMFMT_CAP];
	double bottom = f->top + f->height, right = f->left + f->width;
	strbuf_printf(out,
		      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
		      "stroke=\"#c4cad2\"/>\n",
		      f->left, f->top, f->width, f->height);
	/* y ticks and grid */
	double ystep = f->ystep;
	int decimals = ystep >= 1 ? 0 : (int)ceil(-log10(ystep));
	strbuf_puts(out, "<g class=\"grid\" stroke=\"#e6e9ed\">\n");
	for (double y = f->y0 + ystep; y <= f->y1 + ystep * 1e-6; y += ystep)
		strbuf_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", f->left,
			      right, py(f, y), py(f, y));
	int first = (int)ceil(f->x0), last = (int)floor(f->x1);
	int xstep = p->log2_x ? (last - first > 12 ? 2 : 1) : 0;
	if (p->log2_x)
		for (int k = first; k <= last; k += xstep)
			strbuf_printf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
				      px(f, ldexp(1, k)), px(f, ldexp(1, k)), f->top, bottom);
	strbuf_puts(out, "</g>\n<g class=\"ticks\" font-size=\"11\" fill=\"#4a5561\">\n");
	for (double y = f->y0; y <= f->y1 + ystep * 1e-6; y += ystep)
		strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			      f->left - 6, py(f, y) + 4, fmt_grouped(buf, y, decimals));
	if (p->log2_x) {
		for (int k = first; k <= last; k += xstep)
			strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
				      px(f, ldexp(1, k)), bottom + 16, fmt_axis_n(buf, ldexp(1, k)));
	} else {
		double xs = nice_step(f->x1 - f->x0, 6);
		for (double x = ceil(f->x0 / xs) * xs; x <= f->x1; x += xs)
			strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
				      px(f, x), bottom + 16, fmt_grouped(buf, x, xs >= 1 ? 0 : 2));
	}
	strbuf_puts(out, "</g>\n");
	/* axis names */
	strbuf_printf(out,
		      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" "
		      "fill=\"#1d232b\">",
		      f->left + f->width / 2, bottom + 36);
	html_escape(out, p->x_label);
	strbuf_printf(out,
		      "</text>\n<text transform=\"translate(%.1f %.1f) rotate(-90)\" "
		      "text-anchor=\"middle\" font-size=\"12\" fill=\"#1d232b\">",
		      f->left - 50, f->top + f->height / 2);
	html_escape(out, p->y_label);
	strbuf_puts(out, "</text>\n");
}

static void draw_hline(strbuf *out, const frame *f, const plot_hline *h)
{
	strbuf_puts(out, "<g class=\"hline\" data-series=\"");
	html_escape(out, h->key);
	strbuf_printf(out,
		      "\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
		      "stroke-width=\"2\" stroke-dasharray=\"7 4\"><title>",
		      f->left, f->left + f->width, py(f, h->y), py(f, h->y), h->color);
	html_escape(out, h->title ? h->title : h->label);
	strbuf_puts(out, "</title></line></g>\n");
}

static void draw_series(strbuf *out, const frame *f, const plot_series *s)
{
	strbuf_puts(out, "<g class=\"series\" data-series=\"");
	html_escape(out, s->key);
	strbuf_puts(out, "\">\n");
	if (s->n_points > 1) {
		strbuf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
			      s->color, s->hollow ? "1.6" : "2.2",
			      s->dashed ? " stroke-dasharray=\"5 3\"" : "");
		for (size_t i = 0; i < s->n_points; i++)
			strbuf_printf(out, "%s%.1f,%.1f", i ? " " : "", px(f, s->points[i].x),
				      py(f, s->points[i].y));
		strbuf_puts(out, "\"/>\n");
	}
	for (size_t i = 0; i < s->n_points; i++) {
		const plot_point *pt = &s->points[i];
		if (s->hollow)
			strbuf_printf(out,
				      "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.6\" fill=\"#fff\" "
				      "stroke=\"%s\" stroke-width=\"1.8\"><title>",
				      px(f, pt->x), py(f, pt->y), s->color);
		else
			strbuf_printf(out,
				      "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" "
				      "stroke=\"#fff\" stroke-width=\"1\"><title>",
				      px(f, pt->x), py(f, pt->y), s->color);
		if (pt->title) {
			html_escape(out, pt->title);
		} else {
			char xb[NUMFMT_CAP], yb[NUMFMT_CAP];
			strbuf_printf(out, "%s, %s", fmt_grouped(xb, pt->x, 0), fmt_grouped(yb, pt->y, 1));
		}
		strbuf_puts(out, "</title></circle>\n");
	}
	strbuf_puts(out, "</g>\n");
}

static void draw_legend(strbuf *out, const line_plot *p, double left, double top, double width)
{
	strbuf_puts(out, "<g class=\"legend\" font-size=\"12\" fill=\"#1d232b\">\n");
	double x = 0, y = top;
	size_t n = p->n_series + p->n_hlines;
	for (size_t i = 0; i < n; i++) {
		const plot_series *s = i < p->n_series ? &p->series[i] : NULL;
		const plot_hline *h = s ? NULL : &p->hlines[i - p->n_series];
		const char *label = s ? s->label : h->label;
		double w;
		legend_entry_width(label, &w);
		if (x > 0 && x + w > width) {
			x = 0;
			y += 18;
		}
		double lx = left + x;
		if (s) {
			strbuf_printf(out,
				      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				      "stroke-width=\"2\"%s/>",
				      lx, lx + 20, y - 4, y - 4, s->color,
				      s->dashed ? " stroke-dasharray=\"5 3\"" : "");
			strbuf_printf(out,
				      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.6\" fill=\"%s\" stroke=\"%s\" "
				      "stroke-width=\"1.8\"/>",
				      lx + 10, y - 4, s->hollow ? "#fff" : s->color, s->color);
		} else {
			strbuf_printf(out,
				      "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
				      "stroke-width=\"2\" stroke-dasharray=\"7 4\"/>",
				      lx, lx + 20, y - 4, y - 4, h->color);
		}
		strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">", lx + 26, y);
		html_escape(out, label);
		strbuf_puts(out, "</text>\n");
		x += w;
	}
	strbuf_puts(out, "</g>\n");
}

int svg_line_plot(strbuf *out, const line_plot *p, at_error *err)
{
	frame f = { 0 };
	if (check_range(p, &f, err))
		return -1;
	int width = p->width > 0 ? p->width : 640, height = p->height > 0 ? p->height : 360;
	f.left = 70;
	double right = 16, bottom = 46;
	f.width = width - f.left - right;
	int rows = legend_rows(p, width - f.left);
	f.top = 30 + 18 * rows;
	f.height = height - f.top - bottom;
	strbuf_printf(out,
		      "<svg id=\"%s\" class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		      "role=\"img\" aria-labelledby=\"%s-title\" font-family=\"system-ui,-apple-system,"
		      "'Segoe UI',Roboto,Arial,sans-serif\">\n<title id=\"%s-title\">",
		      p->id, width, height, width, height, p->id, p->id);
	html_escape(out, p->title);
	strbuf_printf(out, "</title>\n<text x=\"%.1f\" y=\"17\" font-size=\"13.5\" font-weight=\"600\" "
			   "fill=\"#1d232b\">",
		      f.left);
	html_escape(out, p->title);
	strbuf_puts(out, "</text>\n");
	draw_legend(out, p, f.left, 40, width - f.left);
	draw_axes(out, &f, p);
	for (size_t h = 0; h < p->n_hlines; h++)
		draw_hline(out, &f, &p->hlines[h]);
	/* the first series is drawn last, on top */
	for (size_t s = p->n_series; s-- > 0;)
		draw_series(out, &f, &p->series[s]);
	strbuf_puts(out, "</svg>\n");
	return 0;
}

/* The report's heat map, drawn by hand as SVG: see heatmap.h. Values are
 * placed on a log scale between the lowest and the highest, as times of
 * variants spread over orders of magnitude. */
#include "reports/heatmap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/html.h"
#include "reports/numfmt.h"

#define FONT_W 6.6
#define SCALE_STEPS 24

/* Viridis, reversed: light yellow for the lowest value, dark violet for the
 * highest; readable in grey and by the colour-blind. */
static const unsigned char stops[][3] = {
	{ 253, 231, 37 }, { 181, 222, 43 }, { 110, 206, 88 }, { 53, 183, 121 },
	{ 31, 158, 137 }, { 38, 130, 142 }, { 49, 104, 142 }, { 62, 73, 137 },
	{ 72, 40, 120 },  { 68, 1, 84 },
};

int heatmap_color(double t, char buf[8])
{
	const size_t n = sizeof stops / sizeof *stops;
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	double pos = t * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i >= n - 1)
		i = n - 2;
	double f = pos - (double)i;
	int rgb[3];
	for (int c = 0; c < 3; c++)
		rgb[c] = (int)lround(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]));
	snprintf(buf, 8, "#%02x%02x%02x", rgb[0] & 0xff, rgb[1] & 0xff, rgb[2] & 0xff);
	return t > 0.45; /* dark enough for white text */
}

static double max_label_width(const char *const *labels, size_t n)
{
	double w = 0;
	for (size_t i = 0; i < n; i++)
		w = fmax(w, FONT_W * (double)strlen(labels[i]));
	return w;
}

int svg_heatmap(strbuf *out, const heatmap *h, at_error *err)
{
	if (h->nx == 0 || h->ny == 0)
		return at_error_set(err, "heat map %s: no rows or columns", h->id);
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < h->nx * h->ny; i++)
		if (isfinite(h->values[i]) && h->values[i] > 0) {
			lo = fmin(lo, h->values[i]);
			hi = fmax(hi, h->values[i]);
		}
	if (!isfinite(lo))
		return at_error_set(err, "heat map %s: no values", h->id);
	double span = hi > lo ? log(hi / lo) : 1;

	double cell_w = fmax(44, fmin(84, 480.0 / (double)h->nx));
	double cell_h = h->ny > 16 ? 20 : 26;
	double ylab_w = fmax(max_label_width(h->y_labels, h->ny), FONT_W * 2) + 10;
	double left = 30 + ylab_w, top = 34;
	double grid_w = cell_w * (double)h->nx, grid_h = cell_h * (double)h->ny;
	double scale_top = top + grid_h + 48;
	double width = fmax(left + grid_w + 12, 420);
	double height = scale_top + 42;
	int show_values = cell_w >= 44;

	strbuf_printf(out,
		      "<svg id=\"%s\" class=\"heatmap\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
		      "height=\"%.0f\" role=\"img\" aria-labelledby=\"%s-title\" "
		      "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif\">\n"
		      "<title id=\"%s-title\">",
		      h->id, width, height, width, height, h->id, h->id);
	html_escape(out, h->title);
	strbuf_puts(out, "</title>\n");
	/* the x parameter's name above the columns, the y parameter's at the left */
	strbuf_printf(out, "<text x=\"%.1f\" y=\"12\" text-anchor=\"middle\" font-size=\"12\" "
			   "font-weight=\"600\" fill=\"#1d232b\">",
		      left + grid_w / 2);
	html_escape(out, h->x_name);
	strbuf_printf(out,
		      "</text>\n<text transform=\"translate(12 %.1f) rotate(-90)\" text-anchor=\"middle\" "
		      "font-size=\"12\" font-weight=\"600\" fill=\"#1d232b\">",
		      top + grid_h / 2);
	html_escape(out, h->y_name);
	strbuf_puts(out, "</text>\n<g font-size=\"11\" fill=\"#4a5561\">\n");
	for (size_t x = 0; x < h->nx; x++) {
		strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
			      left + cell_w * ((double)x + 0.5), top - 6);
		html_escape(out, h->x_labels[x]);
		strbuf_puts(out, "</text>\n");
	}
	for (size_t y = 0; y < h->ny; y++) {
		strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", left - 6,
			      top + cell_h * ((double)y + 0.5) + 4);
		html_escape(out, h->y_labels[y]);
		strbuf_puts(out, "</text>\n");
	}
	strbuf_puts(out, "</g>\n<g class=\"cells\" font-size=\"10.5\">\n");
	char color[8], buf[NUMFMT_CAP];
	for (size_t y = 0; y < h->ny; y++)
		for (size_t x = 0; x < h->nx; x++) {
			size_t i = y * h->nx + x;
			double v = h->values[i], cx = left + cell_w * (double)x,
			       cy = top + cell_h * (double)y;
			int filled = isfinite(v) && v > 0;
			int white = 0;
			if (filled)
				white = heatmap_color(log(v / lo) / span, color);
			else
				strcpy(color, "#f1f3f5");
			strbuf_printf(out,
				      "<g class=\"cell%s\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
				      "height=\"%.1f\" fill=\"%s\" stroke=\"#fff\"/>",
				      filled ? "" : " empty", cx, cy, cell_w, cell_h, color);
			if (filled && show_values)
				strbuf_printf(out,
					      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
					      "fill=\"%s\">%s</text>",
					      cx + cell_w / 2, cy + cell_h / 2 + 4,
					      white ? "#fff" : "#1d232b", fmt_us(buf, v));
			strbuf_puts(out, "<title>");
			if (h->cell_titles && h->cell_titles[i])
				html_escape(out, h->cell_titles[i]);
			else
				strbuf_puts(out, "no variant");
			strbuf_puts(out, "</title></g>\n");
		}
	strbuf_puts(out, "</g>\n");
	if (h->marked >= 0 && (size_t)h->marked < h->nx * h->ny) {
		size_t x = (size_t)h->marked % h->nx, y = (size_t)h->marked / h->nx;
		strbuf_printf(out,
			      "<rect class=\"marked\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			      "fill=\"none\" stroke=\"#d6226b\" stroke-width=\"3\" pointer-events=\"none\"/>\n",
			      left + cell_w * (double)x + 1.5, top + cell_h * (double)y + 1.5, cell_w - 3,
			      cell_h - 3);
	}
	/* the colour scale: discrete steps from the lowest to the highest value */
	double scale_w = fmin(fmax(grid_w, 240), 360), step_w = scale_w / SCALE_STEPS;
	strbuf_printf(out, "<g class=\"scale\" font-size=\"11\" fill=\"#4a5561\">\n"
			   "<text x=\"%.1f\" y=\"%.1f\">",
		      left, scale_top - 8);
	strbuf_puts(out, "median time, ");
	html_escape(out, h->unit);
	strbuf_puts(out, " (log scale; lighter is faster)</text>\n");
	for (int s = 0; s < SCALE_STEPS; s++) {
		double t = (s + 0.5) / SCALE_STEPS;
		heatmap_color(t, color);
		strbuf_printf(out,
			      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"12\" fill=\"%s\"><title>",
			      left + step_w * s, scale_top, step_w + 0.3, color);
		strbuf_printf(out, "%s ", fmt_us(buf, lo * exp(t * span)));
		html_escape(out, h->unit);
		strbuf_puts(out, "</title></rect>\n");
	}
	strbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\">%s ", left, scale_top + 26, fmt_us(buf, lo));
	html_escape(out, h->unit);
	strbuf_printf(out, "</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s ",
		      left + scale_w, scale_top + 26, fmt_us(buf, hi));
	html_escape(out, h->unit);
	strbuf_puts(out, "</text>\n</g>\n</svg>\n");
	return 0;
}

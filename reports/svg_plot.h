/* A line plot drawn as inline SVG: series of points joined by a polyline,
 * each point a circle whose <title> child carries its values (shown on
 * hover), horizontal reference lines (a ceiling), axes with ticks, grid
 * lines and unit labels, and a legend above the plot area. The x axis can
 * be log2. Knows nothing of the database: the caller passes plain text and
 * the plot escapes it. */
#ifndef AT_REPORTS_SVG_PLOT_H
#define AT_REPORTS_SVG_PLOT_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"

typedef struct plot_point {
	double x, y;
	const char *title; /* plain text for the hover box; NULL: "x, y" */
} plot_point;

typedef struct plot_series {
	const char *key;   /* stable name, written as data-series="key" */
	const char *label; /* legend text */
	const char *color; /* an SVG colour, e.g. "#1f5fbf" (constant text) */
	int hollow;        /* draw the points as rings */
	int dashed;        /* draw the line dashed */
	const plot_point *points;
	size_t n_points;   /* in x order; 0 draws the legend entry only */
} plot_series;

typedef struct plot_hline {
	const char *key, *label, *color;
	double y;
	const char *title; /* hover text */
} plot_hline;

typedef struct line_plot {
	const char *id;          /* the <svg> element's id (letters, digits, '-') */
	const char *title;       /* drawn above the legend and as the SVG <title> */
	const char *x_label, *y_label; /* axis names with units */
	int log2_x;              /* x on a log2 scale, ticks at powers of two */
	const plot_series *series;
	size_t n_series;
	const plot_hline *hlines;
	size_t n_hlines;
	int width, height;       /* 0: 640 x 360 */
} line_plot;

/* Appends the <svg> element. Returns 0, or -1 with err set if a value
 * cannot be drawn (not finite, or x <= 0 on a log2 axis) or there is
 * nothing to draw. */
int svg_line_plot(strbuf *out, const line_plot *p, at_error *err);

#endif

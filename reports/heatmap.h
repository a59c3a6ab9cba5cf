/* A heat map drawn as inline SVG: a grid of cells over two parameters,
 * coloured by value on a sequential scale (lighter is lower, the better
 * for times), each cell with a <title> child carrying its values, a colour
 * scale bar with its end values, and one cell optionally outlined. Knows
 * nothing of the database: the caller passes plain text and the map
 * escapes it. */
#ifndef AT_REPORTS_HEATMAP_H
#define AT_REPORTS_HEATMAP_H

#include <stddef.h>

#include "common/error.h"
#include "common/strbuf.h"

typedef struct heatmap {
	const char *id;      /* the <svg> element's id (letters, digits, '-') */
	const char *title;   /* the SVG <title> */
	const char *x_name, *y_name;      /* the two parameters' names */
	const char *const *x_labels;      /* nx column labels */
	size_t nx;
	const char *const *y_labels;      /* ny row labels, drawn top to bottom */
	size_t ny;
	const double *values;             /* ny * nx, row-major; NAN: empty cell */
	const char *const *cell_titles;   /* ny * nx hover texts, or NULL */
	long marked;                      /* index of the cell to outline, -1: none */
	const char *unit;                 /* of the values, e.g. "µs" */
} heatmap;

/* Appends the <svg> element. Returns 0, or -1 with err set when the grid
 * is empty or has no finite value. */
int svg_heatmap(strbuf *out, const heatmap *h, at_error *err);

/* The colour for t in [0, 1] (0 the lowest value) as "#rrggbb" in buf (8
 * bytes), and whether text on it should be white. */
int heatmap_color(double t, char buf[8]);

#endif

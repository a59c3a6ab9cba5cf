/* Text, CSV and JSON tables: see table.h. */
#include "tuner/table.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

void table_init(table *t, const char *const *header)
{
	memset(t, 0, sizeof *t);
	while (header[t->ncols])
		t->ncols++;
	table_add(t, header);
}

void table_add(table *t, const char *const *cells)
{
	if ((t->nrows + 1) * t->ncols > t->cap) {
		t->cap = t->cap ? t->cap * 2 : t->ncols * 16;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	for (size_t c = 0; c < t->ncols; c++)
		t->cells[t->nrows * t->ncols + c] = xstrdup(cells[c] ? cells[c] : "");
	t->nrows++;
}

void table_free(table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

int table_format_parse(const char *name, table_format *out)
{
	if (strcmp(name, "table") == 0)
		*out = TABLE_TEXT;
	else if (strcmp(name, "csv") == 0)
		*out = TABLE_CSV;
	else if (strcmp(name, "json") == 0)
		*out = TABLE_JSON;
	else
		return -1;
	return 0;
}

static const char *cell(const table *t, size_t r, size_t c)
{
	return t->cells[r * t->ncols + c];
}

static void print_text(const table *t, FILE *out)
{
	size_t *width = xcalloc(t->ncols, sizeof *width);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (strlen(cell(t, r, c)) > width[c])
				width[c] = strlen(cell(t, r, c));
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			int last = c + 1 == t->ncols;
			fprintf(out, "%-*s%s", last ? 0 : (int)width[c], cell(t, r, c),
				last ? "\n" : "  ");
		}
	}
	free(width);
}

static void print_csv_cell(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void print_csv(const table *t, FILE *out)
{
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			print_csv_cell(out, cell(t, r, c));
			fputc(c + 1 == t->ncols ? '\n' : ',', out);
		}
}

static void print_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static int is_numeric_col(const table *t, size_t c, const char *const *numeric)
{
	for (; numeric && *numeric; numeric++)
		if (strcmp(*numeric, cell(t, 0, c)) == 0)
			return 1;
	return 0;
}

static void print_json(const table *t, FILE *out, const char *const *numeric)
{
	fputs("[", out);
	for (size_t r = 1; r < t->nrows; r++) {
		fputs(r > 1 ? ",\n  {" : "\n  {", out);
		for (size_t c = 0; c < t->ncols; c++) {
			if (c)
				fputs(", ", out);
			print_json_string(out, cell(t, 0, c));
			fputs(": ", out);
			const char *v = cell(t, r, c);
			if (is_numeric_col(t, c, numeric))
				fputs(*v ? v : "null", out);
			else
				print_json_string(out, v);
		}
		fputs("}", out);
	}
	fputs(t->nrows > 1 ? "\n]\n" : "]\n", out);
}

void table_print(const table *t, FILE *out, table_format fmt, const char *const *numeric)
{
	switch (fmt) {
	case TABLE_TEXT: print_text(t, out); break;
	case TABLE_CSV: print_csv(t, out); break;
	case TABLE_JSON: print_json(t, out, numeric); break;
	}
}

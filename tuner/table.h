/* Text tables for the command line: rows of cells printed with aligned
 * columns, or as CSV or JSON (an array of objects keyed by the header). */
#ifndef AT_TUNER_TABLE_H
#define AT_TUNER_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum table_format { TABLE_TEXT, TABLE_CSV, TABLE_JSON } table_format;

typedef struct table {
	size_t ncols;
	char **cells; /* row-major, the header first */
	size_t nrows; /* including the header */
	size_t cap;
} table;

/* Starts a table with the given column names (NULL-terminated). */
void table_init(table *t, const char *const *header);

/* Adds a row of ncols cells (copied; NULL is an empty cell). */
void table_add(table *t, const char *const *cells);

/* Numeric columns (given by their header name) are written unquoted in JSON. */
void table_print(const table *t, FILE *out, table_format fmt, const char *const *numeric);

void table_free(table *t);

/* Parses "table", "csv" or "json"; -1 if none of them. */
int table_format_parse(const char *name, table_format *out);

#endif

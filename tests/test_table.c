/* Tests for tuner/table.c: the exact text, CSV and JSON a table prints. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/table.h"

TestSuite(table);

/* What table_print writes, malloc'd. */
static char *print_to_string(const table *t, table_format fmt, const char *const *numeric)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	table_print(t, f, fmt, numeric);
	fclose(f);
	return buf;
}

static void expect_print(const table *t, table_format fmt, const char *const *numeric,
			 const char *want)
{
	char *got = print_to_string(t, fmt, numeric);
	cr_assert_str_eq(got, want, "\n--- got:\n%s--- want:\n%s---", got, want);
	free(got);
}

Test(table, init_and_add_copy_the_cells)
{
	static const char *const header[] = { "a", "b", "c", NULL };
	table t;
	table_init(&t, header);
	cr_assert_eq(t.ncols, 3);
	cr_assert_eq(t.nrows, 1);
	char cell[8] = "x";
	const char *row[] = { cell, NULL, "z" };
	table_add(&t, row);
	cell[0] = 'Q'; /* the table kept its own copy */
	cr_assert_eq(t.nrows, 2);
	cr_assert_str_eq(t.cells[3], "x");
	cr_assert_str_eq(t.cells[4], ""); /* NULL is an empty cell */
	cr_assert_str_eq(t.cells[5], "z");
	cr_assert_str_eq(t.cells[0], "a");
	table_free(&t);
	cr_assert_null(t.cells);
	cr_assert_eq(t.nrows, 0);
	cr_assert_eq(t.ncols, 0);
}

Test(table, grows_past_its_first_allocation)
{
	static const char *const header[] = { "i", "sq", NULL };
	table t;
	table_init(&t, header);
	for (int i = 0; i < 100; i++) {
		char a[16], b[16];
		snprintf(a, sizeof a, "%d", i);
		snprintf(b, sizeof b, "%d", i * i);
		const char *row[] = { a, b };
		table_add(&t, row);
	}
	cr_assert_eq(t.nrows, 101);
	cr_assert_geq(t.cap, 101 * 2);
	for (int i = 0; i < 100; i++) {
		char b[16];
		snprintf(b, sizeof b, "%d", i * i);
		cr_assert_str_eq(t.cells[(i + 1) * 2 + 1], b);
	}
	char *csv = print_to_string(&t, TABLE_CSV, NULL);
	cr_assert_eq(strncmp(csv, "i,sq\n0,0\n1,1\n2,4\n", 17), 0);
	cr_assert_not_null(strstr(csv, "\n99,9801\n"));
	free(csv);
	table_free(&t);
}

/* ---- text ------------------------------------------------------------------------ */

Test(table, text_columns_are_aligned)
{
	static const char *const header[] = { "name", "n", "time_us", NULL };
	table t;
	table_init(&t, header);
	table_add(&t, (const char *const[]){ "softmax_block", "1024", "3.5" });
	table_add(&t, (const char *const[]){ "w", "", "12.25" });
	/* two spaces between columns, each as wide as its longest cell, the last
	 * column not padded */
	expect_print(&t, TABLE_TEXT, NULL,
		     "name           n     time_us\n"
		     "softmax_block  1024  3.5\n"
		     "w                    12.25\n");
	table_free(&t);
}

Test(table, text_of_a_header_only_table)
{
	static const char *const header[] = { "gpu", "M", NULL };
	table t;
	table_init(&t, header);
	expect_print(&t, TABLE_TEXT, NULL, "gpu  M\n");
	table_free(&t);
}

/* ---- CSV ------------------------------------------------------------------------- */

Test(table, csv_quotes_only_what_needs_it)
{
	static const char *const header[] = { "params", "note", "n", NULL };
	table t;
	table_init(&t, header);
	table_add(&t, (const char *const[]){ "threads=256 vec=4", "a,b", "1" });
	table_add(&t, (const char *const[]){ "say \"hi\"", "two\nlines", "" });
	table_add(&t, (const char *const[]){ "\"", ",", NULL });
	expect_print(&t, TABLE_CSV, NULL,
		     "params,note,n\n"
		     "threads=256 vec=4,\"a,b\",1\n"
		     "\"say \"\"hi\"\"\",\"two\nlines\",\n"
		     "\"\"\"\",\",\",\n");
	table_free(&t);
}

Test(table, csv_ignores_numeric_columns)
{
	static const char *const header[] = { "M", NULL };
	table t;
	table_init(&t, header);
	table_add(&t, (const char *const[]){ "" });
	static const char *const numeric[] = { "M", NULL };
	expect_print(&t, TABLE_CSV, numeric, "M\n\n");
	table_free(&t);
}

/* ---- JSON ------------------------------------------------------------------------ */

Test(table, json_numeric_columns_are_unquoted)
{
	static const char *const header[] = { "template", "M", "time_us", NULL };
	static const char *const numeric[] = { "M", "time_us", NULL };
	table t;
	table_init(&t, header);
	table_add(&t, (const char *const[]){ "softmax_block", "4096", "3.250" });
	table_add(&t, (const char *const[]){ "softmax_warp", "64", "" });
	expect_print(&t, TABLE_JSON, numeric,
		     "[\n"
		     "  {\"template\": \"softmax_block\", \"M\": 4096, \"time_us\": 3.250},\n"
		     "  {\"template\": \"softmax_warp\", \"M\": 64, \"time_us\": null}\n"
		     "]\n");
	/* without numeric columns everything is a string, empty ones included */
	expect_print(&t, TABLE_JSON, NULL,
		     "[\n"
		     "  {\"template\": \"softmax_block\", \"M\": \"4096\", \"time_us\": \"3.250\"},\n"
		     "  {\"template\": \"softmax_warp\", \"M\": \"64\", \"time_us\": \"\"}\n"
		     "]\n");
	table_free(&t);
}

Test(table, json_escapes_strings)
{
	static const char *const header[] = { "k\"ey", NULL };
	table t;
	table_init(&t, header);
	table_add(&t, (const char *const[]){ "a\"b\\c\nd\te\x01" "f\x1f/\x7f" "\xc3\xa9" });
	expect_print(&t, TABLE_JSON, NULL,
		     "[\n"
		     "  {\"k\\\"ey\": \"a\\\"b\\\\c\\u000ad\\u0009e\\u0001f\\u001f/\x7f\xc3\xa9\"}\n"
		     "]\n");
	table_free(&t);
}

Test(table, json_of_a_header_only_table_is_an_empty_array)
{
	static const char *const header[] = { "a", "b", NULL };
	table t;
	table_init(&t, header);
	expect_print(&t, TABLE_JSON, NULL, "[]\n");
	table_free(&t);
}

/* ---- table_format_parse -------------------------------------------------------------- */

Test(table, format_parse)
{
	table_format f = TABLE_CSV;
	cr_assert_eq(table_format_parse("table", &f), 0);
	cr_assert_eq(f, TABLE_TEXT);
	cr_assert_eq(table_format_parse("csv", &f), 0);
	cr_assert_eq(f, TABLE_CSV);
	cr_assert_eq(table_format_parse("json", &f), 0);
	cr_assert_eq(f, TABLE_JSON);
	static const char *const bad[] = { "xml", "", "JSON", "text", "csv ", "jso" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = TABLE_CSV;
		cr_assert_eq(table_format_parse(bad[i], &f), -1, "\"%s\" accepted", bad[i]);
		cr_assert_eq(f, TABLE_CSV, "\"%s\" changed *out", bad[i]);
	}
}

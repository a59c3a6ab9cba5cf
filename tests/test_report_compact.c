/* The report's size and that every result stays in it (reports/report_rest.h,
 * reports/variant_dict.h): the default sweep's page (results/example) is
 * under 2 MB, and each of its shapes' results, HTML rows and text lines
 * together, decodes to the database's rows in rank order; a shape of many
 * variants keeps the first ten, the ties, the baselines and rows that have
 * no compact form as HTML and writes the rest as text; the variant list's
 * legend and lines. tests/browser/check_report.sh checks the script that
 * turns the text into rows, and the tables' width. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "db/tuning_db.h"
#include "reports/numfmt.h"
#include "reports/report.h"
#include "reports/report_curve.h"
#include "reports/report_rest.h"
#include "reports/variant_dict.h"

#include "tests/test_report_fixture.h"

#define EXAMPLE_DB "results/example/h100-default.db"
#define PAGE_LIMIT 2000000 /* bytes: "under 2 MB" */

TestSuite(report_compact, .init = tmp_setup, .fini = tmp_teardown);
TestSuite(variant_dict);

static char *render(const char *db)
{
	report_options opt = { .db_path = db, .out_path = tmp_path("out.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), 0, "report_write: %s", err.msg);
	return tmp_read(tmp_path("out.html"));
}

/* The text between start and end after from (not included), copied; NULL
 * when either is missing. */
static char *inside(const char *from, const char *start, const char *end)
{
	const char *a = strstr(from, start);
	if (!a)
		return NULL;
	a += strlen(start);
	const char *b = strstr(a, end);
	if (!b)
		return NULL;
	char *s = malloc((size_t)(b - a) + 1);
	memcpy(s, a, (size_t)(b - a));
	s[b - a] = '\0';
	return s;
}

/* ---- decoding the page, as html.c's script does --------------------------- */

typedef struct row {
	long rank;
	char *tmpl, *params, *median;
} row;

/* The page's variant list: per line, its template and params. */
typedef struct vlist {
	char **tmpl, **params;
	size_t n;
} vlist;

static int legend_index(char key)
{
	return key >= 'a' && key <= 'z' ? key - 'a' : key - 'A' + 26;
}

static void vlist_read(const char *html, vlist *v)
{
	memset(v, 0, sizeof *v);
	char *pre = inside(html, "<pre id=\"variants\">", "</pre>");
	cr_assert_not_null(pre, "no variant list");
	char *blank = strstr(pre, "\n\n");
	cr_assert_not_null(blank, "no blank line after the legend");
	blank[1] = '\0';
	char *legend_tmpl[VDICT_MAX_LEGENDS] = { 0 }, *legend_names[VDICT_MAX_LEGENDS] = { 0 };
	char *save, *line;
	for (line = strtok_r(pre, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':');
		cr_assert(line[1] == ' ' && colon, "legend line \"%s\"", line);
		int idx = legend_index(line[0]);
		legend_tmpl[idx] = strndup(line + 2, (size_t)(colon - line - 2));
		legend_names[idx] = strdup(colon[1] ? colon + 2 : "");
	}
	for (line = strtok_r(blank + 2, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int idx = legend_index(line[0]);
		cr_assert_not_null(legend_tmpl[idx], "variant line \"%s\" without its legend", line);
		strbuf params = { 0 };
		char *names = strdup(legend_names[idx]), *ns, *vs;
		char *name = strtok_r(names, " ", &ns), *value = strtok_r(line + 1, " ", &vs);
		for (; name && value; name = strtok_r(NULL, " ", &ns), value = strtok_r(NULL, " ", &vs))
			strbuf_printf(&params, "%s%s=%s", params.len ? " " : "", name, value);
		cr_assert(!name && !value, "variant line %zu: values and names differ", v->n);
		free(names);
		v->tmpl = realloc(v->tmpl, (v->n + 1) * sizeof *v->tmpl);
		v->params = realloc(v->params, (v->n + 1) * sizeof *v->params);
		v->tmpl[v->n] = strdup(legend_tmpl[idx]);
		v->params[v->n++] = params.data ? strbuf_take(&params) : strdup("");
	}
	for (int i = 0; i < VDICT_MAX_LEGENDS; i++) {
		free(legend_tmpl[i]);
		free(legend_names[i]);
	}
	free(pre);
}

static void vlist_free(vlist *v)
{
	for (size_t k = 0; k < v->n; k++) {
		free(v->tmpl[k]);
		free(v->params[k]);
	}
	free(v->tmpl);
	free(v->params);
}

/* The text of cell index of the row starting at tr (escaped as in the page). */
static char *cell(const char *tr, size_t index)
{
	const char *p = tr;
	for (size_t i = 0; i <= index; i++) {
		p = strstr(p, "<td");
		cr_assert_not_null(p);
		p++;
	}
	return inside(p - 1, ">", "</td>");
}

/* The rows of one shape's block, HTML rows and text lines merged by rank;
 * returns how many, and *n_failed the failed table's rows. */
static size_t shape_rows(const char *block, const vlist *v, row *rows, size_t cap,
			 size_t *n_failed)
{
	size_t n = 0;
	char *body = inside(block, "<table class=\"sortable results\">", "</table>");
	char *tbody = body ? inside(body, "<tbody>", "</tbody>") : NULL;
	free(body);
	body = tbody;
	long ranks_taken[4096] = { 0 };
	for (const char *tr = body ? strstr(body, "<tr") : NULL; tr; tr = strstr(tr + 1, "<tr")) {
		char *rank = cell(tr, 0);
		cr_assert_lt(n, cap);
		rows[n] = (row){ atol(rank), cell(tr, 2), cell(tr, 3), cell(tr, 4) };
		if (rows[n].rank > 0 && rows[n].rank < 4096)
			ranks_taken[rows[n].rank] = 1;
		free(rank);
		n++;
	}
	free(body);
	char *pre = inside(block, "<pre class=\"rest\"", "</pre>");
	if (pre) {
		long next = 0;
		char *save, *text = strchr(pre, '>') + 1;
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char id[16], med[32];
			cr_assert_eq(sscanf(l, "%15s %31s", id, med), 2, "text line \"%s\"", l);
			long k = strtol(id, NULL, 36);
			cr_assert_lt((size_t)k, v->n, "text line \"%s\" names no variant", l);
			do
				next++;
			while (next < 4096 && ranks_taken[next]);
			cr_assert_lt(n, cap);
			rows[n++] = (row){ next, strdup(v->tmpl[k]), strdup(v->params[k]), strdup(med) };
		}
		free(pre);
	}
	char *failed = inside(block, "<table class=\"sortable failed\">", "</table>");
	*n_failed = failed ? rf_count(failed, "<tr") - 1 : 0;
	free(failed);
	for (size_t i = 1; i < n; i++) /* by rank */
		for (size_t j = i; j > 0 && rows[j - 1].rank > rows[j].rank; j--) {
			row t = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = t;
		}
	return n;
}

static void rows_free(row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].tmpl);
		free(rows[i].params);
		free(rows[i].median);
	}
}

/* ---- the default sweep's page ------------------------------------------------ */

Test(report_compact, the_default_sweeps_page_is_under_2_mb_with_every_result, .timeout = 60)
{
	char *html = render(EXAMPLE_DB);
	size_t size = strlen(html);
	cr_assert_lt(size, PAGE_LIMIT, "the example report is %zu bytes", size);
	vlist v;
	vlist_read(html, &v);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open_v2("file:" EXAMPLE_DB "?immutable=1", &db,
				     SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL),
		     SQLITE_OK);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(db,
					"SELECT kind = 'baseline', template, params, time_us, "
					"status = 'ok' AND time_us > 0 FROM results WHERE dtype = ?1 "
					"AND m = ?2 AND n = ?3 ORDER BY status = 'ok' AND time_us > 0 "
					"DESC, time_us, id",
					-1, &st, NULL),
		     SQLITE_OK);
	static row rows[4096];
	size_t shapes = 0, total = 0;
	for (const char *p = strstr(html, "<details id=\"g"); p; p = strstr(p + 1, "<details id=\"g")) {
		/* the group's dtype from its heading, the shape from the id */
		const char *section = p;
		while (section > html && strncmp(section, "<section id=\"g", 14) != 0)
			section--;
		char dtype[8] = "";
		long long M, N;
		cr_assert_eq(sscanf(strstr(section, "<h3>"), "<h3>softmax \xc2\xb7 %7[a-z0-9]<", dtype), 1);
		cr_assert_eq(sscanf(strstr(p, "-shape-"), "-shape-%lldx%lld", &M, &N), 2);
		const char *end = strstr(p + 1, "<details id=\"g");
		char *block = end ? strndup(p, (size_t)(end - p)) : strdup(p);
		size_t failed, n = shape_rows(block, &v, rows, 4096, &failed);
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, dtype, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, M);
		sqlite3_bind_int64(st, 3, N);
		size_t i = 0, db_failed = 0;
		char us[NUMFMT_CAP];
		while (sqlite3_step(st) == SQLITE_ROW) {
			if (!sqlite3_column_int(st, 4)) {
				db_failed++;
				continue;
			}
			const char *t = (const char *)sqlite3_column_text(st, 1);
			if (sqlite3_column_int(st, 0))
				t = report_baseline_label(t);
			cr_assert_lt(i, n, "%s %lldx%lld: fewer rows in the page than results", dtype, M, N);
			cr_assert_eq(rows[i].rank, (long)i + 1, "%s %lldx%lld: rank %ld at %zu", dtype, M,
				     N, rows[i].rank, i);
			cr_assert_str_eq(rows[i].tmpl, t, "%s %lldx%lld rank %zu", dtype, M, N, i + 1);
			cr_assert_str_eq(rows[i].params, (const char *)sqlite3_column_text(st, 2));
			cr_assert_str_eq(rows[i].median, fmt_us(us, sqlite3_column_double(st, 3)));
			i++;
		}
		cr_assert_eq(i, n, "%s %lldx%lld: %zu rows in the page, %zu results", dtype, M, N, n, i);
		cr_assert_eq(failed, db_failed, "%s %lldx%lld: failed rows", dtype, M, N);
		total += n + failed;
		shapes++;
		rows_free(rows, n);
		free(block);
	}
	sqlite3_finalize(st);
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM results", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(total, (size_t)sqlite3_column_int64(st, 0), "rows in the page: %zu", total);
	sqlite3_finalize(st);
	sqlite3_close(db);
	cr_assert_eq(shapes, 132);
	vlist_free(&v);
	free(html);
}

/* ---- a shape of many variants ----------------------------------------------- */

static result_row timed(const char *params, double us, int regs, int smem, int spill)
{
	double gbps = 2.0 * 64 * 1024 * 4 / (us * 1e-6) / 1e9;
	return (result_row){ .template_name = "softmax_block", .params = params,
			     .status = RESULT_OK, .rel_err = 1e-7, .time_us = us,
			     .time_min_us = us * 0.99, .time_max_us = us * 1.01, .reps = 25,
			     .gbps = gbps, .pct_copy = gbps / 30, .registers = regs,
			     .smem_bytes = smem, .spill_bytes = spill, .threads = 128,
			     .rows_per_cta = 1 };
}

/* f32 64 x 1024, band 1%: 30 variants "threads=T vec=4" at 10.00 + 0.004 k
 * us for k < 12 (all ties: 10.044 is within 1% of 10.0), then 11 + k; the
 * one at k = 14 has params with no compact form (two spaces); k = 20 has
 * shared memory and spills; a naive baseline between them. */
static void make_many(const char *name)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	gpu_info g = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017493504LL };
	long long gpu, sweep;
	cr_assert_eq(tdb_gpu_id(db, &g, &gpu, &err), 0, "%s", err.msg);
	sweep_info s = { .gpu_id = gpu, .driver_version = 13000, .nvrtc_version = "13.0",
			 .tool_version = "0.1.0", .config_path = "c.yaml", .config_text = "",
			 .copy_gbps = 3000 };
	cr_assert_eq(tdb_sweep_begin(db, &s, &sweep, &err), 0, "%s", err.msg);
	static char params[30][48];
	result_row rows[31];
	for (int k = 0; k < 30; k++) {
		snprintf(params[k], sizeof params[k], k == 14 ? "threads=%d  vec=4" : "threads=%d vec=4",
			 32 * (k + 1));
		double us = k < 12 ? 10.0 + 0.004 * k : 11.0 + k;
		rows[k] = timed(params[k], us, k == 0 ? 30 : 40, k == 20 ? 4096 : 0, k == 20 ? 8 : 0);
	}
	rows[30] = timed("", 27.5, -1, -1, -1);
	rows[30].baseline = 1;
	rows[30].template_name = "naive";
	shape_key key = { .gpu_id = gpu, .op = "softmax", .dtype = AT_F32, .M = 64, .N = 1024 };
	cr_assert_eq(tdb_store_shape_band(db, sweep, &key, rows, 31, 0.01, &err), 0, "%s", err.msg);
	cr_assert_eq(tdb_sweep_finish(db, sweep, 1, 1, &err), 0, "%s", err.msg);
	tdb_close(db);
}

Test(report_compact, a_long_shape_keeps_its_head_as_html_and_the_rest_as_text)
{
	make_many("many.db");
	char *html = render(tmp_path("many.db"));
	char *table = rf_between(html, "<table class=\"sortable results\">", "</table>");
	/* ten variants, two more ties, the baseline, the one with no compact form */
	cr_assert_eq(rf_count(table, "<tr") - 1, 14);
	cr_assert_eq(rf_count(table, "<tr class=\"tie\">"), 11);
	cr_assert_eq(rf_count(table, "<tr class=\"base\">"), 1);
	cr_assert_not_null(strstr(table, "<td class=\"p\">threads=480  vec=4</td>"));
	cr_assert_null(strstr(table, "threads=416 vec=4"), "rank 14 is text");
	char *rest = rf_between(html, "<details class=\"rest\" data-n=\"17\">", "</details>");
	char *pre = inside(rest, "data-copy=\"3000\">", "</pre>");
	cr_assert_not_null(pre);
	/* variants 12, 13, 15..29 (k = 14 is HTML), in rank order, named by their
	 * line in the list; smem and spill only where not 0 */
	cr_assert_eq(rf_count(pre, "\n"), 17);
	cr_assert(strncmp(pre, "0 23.00 22.77 23.23 40\n1 24.00 23.76 24.24 40\n2 26.00 ", 48) == 0,
		  "%s", pre);
	cr_assert_not_null(strstr(pre, "\n7 31.00 30.69 31.31 40 4,096 8\n"), "%s", pre);
	char *list = inside(html, "<pre id=\"variants\">", "</pre>");
	cr_assert_not_null(list);
	cr_assert(strncmp(list, "a softmax_block: threads vec\n\na 416 4\na 448 4\na 512 4\n", 53) == 0,
		  "%s", list);
	cr_assert_not_null(strstr(html, "The page's 17 variants, as text"));
	free(list);
	free(pre);
	free(rest);
	free(table);
	free(html);
}

Test(report_compact, a_short_page_has_no_text_rows)
{
	rf_make_db("t.db");
	char *html = render(tmp_path("t.db"));
	cr_assert_null(strstr(html, "class=\"rest\""));
	cr_assert_null(strstr(html, "id=\"variants\""));
	free(html);
}

/* ---- the variant list ------------------------------------------------------- */

Test(variant_dict, lists_a_variant_once_and_names_it_in_base_36)
{
	vdict v;
	vdict_init(&v);
	char params[32], id[16];
	for (int i = 0; i < 2000; i++) {
		snprintf(params, sizeof params, "threads=%d vec=4", i);
		cr_assert_eq(vdict_id(&v, "softmax_block", params), i);
	}
	cr_assert_eq(vdict_id(&v, "softmax_block", "threads=7 vec=4"), 7);
	cr_assert_eq(vdict_id(&v, "softmax_warp", "threads=7 vec=4"), 2000);
	cr_assert_eq(vdict_id(&v, "softmax_block", "threads=7"), 2001, "other names, other legend");
	cr_assert_eq(v.n_legends, 3);
	cr_assert_eq(vdict_id(&v, "t", ""), 2002, "no params");
	cr_assert_str_eq(vdict_base36(id, 0), "0");
	cr_assert_str_eq(vdict_base36(id, 35), "z");
	cr_assert_str_eq(vdict_base36(id, 36), "10");
	cr_assert_str_eq(vdict_base36(id, 46655), "zzz");
	strbuf out = { 0 };
	vdict_write(&out, &v);
	cr_assert_not_null(strstr(out.data, "<pre id=\"variants\">a softmax_block: threads vec\n"
					    "b softmax_warp: threads vec\nc softmax_block: threads\n"
					    "d t:\n\na 0 4\n"));
	cr_assert_not_null(strstr(out.data, "\nb 7 4\nc 7\nd\n</pre>"));
	strbuf_free(&out);
	vdict_free(&v);
}

Test(variant_dict, refuses_what_it_could_not_give_back)
{
	static const char *const bad[][2] = {
		{ "softmax block", "threads=1" },    { "<script>", "threads=1" },
		{ "softmax_block", "threads=1  vec=4" }, { "softmax_block", " threads=1" },
		{ "softmax_block", "threads=1 " },   { "softmax_block", "threads" },
		{ "softmax_block", "threads=" },     { "softmax_block", "=4" },
		{ "softmax_block", "threads=<b>" },  { "softmax_block", "threads=1&2" },
		{ "softmax_block", "a=1=2" },        { "softmax_block", "thr:eads=1" },
	};
	vdict v;
	vdict_init(&v);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_assert_eq(vdict_id(&v, bad[i][0], bad[i][1]), -1, "\"%s\" \"%s\"", bad[i][0],
			     bad[i][1]);
	cr_assert_eq(v.n, 0);
	cr_assert_eq(vdict_id(&v, "softmax_block", "eps=1e-5 x=+2.5"), 0);
	char params[8];
	for (int i = 0; i < VDICT_MAX_LEGENDS + 1; i++) {
		snprintf(params, sizeof params, "p%d=1", i);
		cr_assert_eq(vdict_id(&v, "t", params) < 0, i >= VDICT_MAX_LEGENDS - 1, "legend %d", i);
	}
	vdict_free(&v);
}

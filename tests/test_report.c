/* Tests of `autotune report` (reports/): a page rendered from a database
 * built by test_report_fixture.c is taken apart and checked: every section
 * is there, strings from the database come out escaped only, nothing is
 * fetched from elsewhere, the winner and the ties (by the documented rule)
 * are marked, the curves have one point per timed shape, the heat map shows
 * the chosen shape; bad input (missing database, no results, unwritable
 * output) fails with its message and leaves no file behind. Also the small
 * pieces: escaping, number formats, the tie rule, parameter strings. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "reports/html.h"
#include "reports/numfmt.h"
#include "reports/params.h"
#include "reports/report.h"
#include "reports/ties.h"
#include "tuner/timing/refine.h"

#include "tests/test_report_fixture.h"

int cmd_report(int argc, char **argv);

TestSuite(report, .init = tmp_setup, .fini = tmp_teardown);
TestSuite(report_units);

/* Renders the fixture database into out.html and returns the page. */
static char *render(long long heat_M, long long heat_N)
{
	rf_make_db("t.db");
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("out.html"),
			       .heat_M = heat_M, .heat_N = heat_N, .tool_version = "9.9.9" };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), 0, "report_write: %s", err.msg);
	return tmp_read(tmp_path("out.html"));
}

static void expect_in(const char *text, const char *want)
{
	cr_assert_not_null(strstr(text, want), "\"%s\" not in the page", want);
}

/* Names in the temporary folder other than the given ones (NULL-terminated). */
static size_t stray_files(const char *const *expected)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tmp_path(""));
	DIR *d = opendir(dir);
	cr_assert_not_null(d);
	size_t n = 0;
	const struct dirent *e;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		int known = 0;
		for (const char *const *x = expected; *x; x++)
			known |= strcmp(e->d_name, *x) == 0;
		if (!known) {
			cr_log_error("stray file %s", e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* ---- the page ---------------------------------------------------------------------- */

Test(report, every_section_is_present)
{
	char *html = render(0, 0);
	cr_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	static const char *const ids[] = {
		"id=\"contents\"", "id=\"gpu0\"", "id=\"gpu0-sweeps\"", "id=\"sweep-1\"",
		"id=\"g0\"", "id=\"g1\"", "id=\"g2\"", /* f32, f16, bf16 */
		"<svg id=\"g0-curve-m64\"", "<svg id=\"g0-curve-m128\"", "<svg id=\"g1-curve-m64\"",
		"<svg id=\"g0-heatmap\"", "<svg id=\"g1-heatmap\"", "id=\"g2-heatmap-fig\"",
		"<table id=\"g0-winners\"", "<table id=\"g1-winners\"", "<table id=\"g2-winners\"",
		"<details id=\"g0-shape-64x256\"", "<details id=\"g0-shape-64x1024\"",
		"<details id=\"g0-shape-64x4096\"", "<details id=\"g0-shape-128x512\"",
		"<details id=\"g1-shape-64x1024\"", "<details id=\"g1-shape-64x2048\"",
		"<details id=\"g2-shape-8x3\"", "id=\"about\"", "id=\"tie-rule\"",
	};
	for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
		expect_in(html, ids[i]);
	static const char *const headings[] = {
		"<h1>Autotuning report</h1>", "<h2>NVIDIA H100 80GB HBM3</h2>", "<h3>Sweeps</h3>",
		"<h3>softmax \xc2\xb7 f32</h3>", "<h3>softmax \xc2\xb7 f16</h3>",
		"<h3>softmax \xc2\xb7 bf16</h3>", ">Winners</h4>", ">Every variant, per shape</h4>",
		"<h2>How to read this report</h2>",
	};
	for (size_t i = 0; i < sizeof headings / sizeof *headings; i++)
		expect_in(html, headings[i]);
	/* groups in dtype order, and the shapes of a group by M then N */
	cr_assert_lt(strstr(html, "id=\"g0\""), strstr(html, "id=\"g1\""));
	cr_assert_lt(strstr(html, "g0-shape-64x4096\""), strstr(html, "g0-shape-128x512\""));
	cr_assert_str_eq(html + strlen(html) - 8, "</html>\n");
	free(html);
}

Test(report, sweep_facts)
{
	char *html = render(0, 0);
	char *sweep = rf_between(html, "<div id=\"sweep-1\"", "</div>");
	expect_in(sweep, "NVIDIA H100 80GB HBM3 (compute capability 9.0, 132 SMs, 79.2 GiB)");
	expect_in(sweep, "<dt>driver</dt><dd>13.0 (13000)</dd>");
	expect_in(sweep, "<dt>NVRTC</dt><dd>13.0</dd>");
	expect_in(sweep, "<dt>autotune</dt><dd>0.1.0</dd>");
	expect_in(sweep, "<dt>started (UTC)</dt><dd>20");
	cr_assert_null(strstr(sweep, "not finished"));
	/* variant rows 6 + 4 + 4 + 1 (f32) + 4 (f16) + 1 (bf16); distinct (dtype, template,
	 * params) 10 + 2 + 1; baselines 2 + 1 + 2 + 0 + 2 + 2; failed 2 + 1 + 1 */
	expect_in(sweep, "<dd>20 runs of 13 distinct variants over 7 shapes; 9 baseline runs; "
			 "4 not timed (failed)</dd>");
	expect_in(sweep, "<dd>12.5 s compiling, 30.5 s benchmarking</dd>");
	expect_in(sweep, "<dd>3,000 GB/s (device-to-device");
	expect_in(sweep, "<code>configs/&lt;evil&gt;&amp;.yaml</code>");
	expect_in(sweep, "<details class=\"config\"><summary>config text</summary><pre># "
			 "&lt;/pre&gt;&lt;script&gt;alert(&#39;config&#39;)&lt;/script&gt;\nsweeps: []\n"
			 "</pre></details>");
	free(sweep);
	free(html);
}

Test(report, strings_from_the_database_are_escaped)
{
	char *html = render(0, 0);
	/* the one <script> is the page's own, at the end */
	cr_assert_eq(rf_count(html, "<script"), 1, "<script appears %zu times",
		     rf_count(html, "<script"));
	expect_in(html, "<script>\n(function(){");
	cr_assert_null(strstr(html, "alert(\"tmpl\")"), "unescaped script from the database");
	cr_assert_null(strstr(html, "alert('reason')"), "unescaped script from the database");
	cr_assert_null(strstr(html, "alert('config')"), "unescaped script from the database");
	/* the template, params and reason, escaped, where they are shown */
	expect_in(html, "<td class=\"t\">&lt;script&gt;alert(&quot;tmpl&quot;)&lt;/script&gt;&amp;&#39;</td>"
			"<td class=\"p\">threads=&lt;script&gt;&amp;&quot;&#39; vec=4</td>");
	expect_in(html, "&lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt; &amp; "
			"&quot;quoted&quot;");
	/* no raw quote or angle bracket from the data can close an attribute or a tag */
	cr_assert_null(strstr(html, "<script>alert"));
	cr_assert_null(strstr(html, "&\"'"));
	free(html);
}

Test(report, nothing_is_fetched_from_elsewhere)
{
	char *html = render(0, 0);
	static const char *const banned[] = { "http://", "https://", "src=\"//", "<link",
					      "@import", "url(", "src=", "<img", "<iframe",
					      "<object", "<embed" };
	for (size_t i = 0; i < sizeof banned / sizeof *banned; i++)
		cr_assert_null(strstr(html, banned[i]), "the page contains \"%s\"", banned[i]);
	expect_in(html, "<style>");
	free(html);
}

Test(report, the_winner_is_marked_once_per_shape)
{
	char *html = render(0, 0);
	char *shape = rf_between(html, "<details id=\"g0-shape-64x256\"", "</details>");
	cr_assert_eq(rf_count(shape, "<tr class=\"win\">"), 1);
	char *row = rf_between(shape, "<tr class=\"win\">", "</tr>");
	expect_in(row, "<span class=\"badge win\">winner</span>");
	expect_in(row, "<td class=\"p\">threads=128 vec=4</td>");
	expect_in(row, "<td>10.00</td><td>9.900\xe2\x80\x93" "10.10</td>");
	free(row);
	/* the fastest row is first */
	cr_assert_lt(strstr(shape, "<tr class=\"win\">"), strstr(shape, "threads=256 vec=4"));
	free(shape);
	/* the winners table names it too */
	char *winners = rf_between(html, "<table id=\"g0-winners\"", "</table>");
	expect_in(winners, "64x256\">256</a></td><td class=\"t\">softmax_block</td>"
			   "<td class=\"p\">threads=128 vec=4</td><td class=\"n\">10.00</td>");
	free(winners);
	/* where nothing passed, no winner */
	shape = rf_between(html, "<details id=\"g2-shape-8x3\"", "</details>");
	cr_assert_eq(rf_count(shape, "class=\"win\""), 0);
	expect_in(shape, "no variant passed");
	free(shape);
	free(html);
}

/* The params of the rows with class cls in text, in order, space-separated. */
static void rows_of_class(const char *text, const char *cls, char *out, size_t cap)
{
	char tag[64];
	snprintf(tag, sizeof tag, "<tr class=\"%s\">", cls);
	out[0] = '\0';
	for (const char *p = strstr(text, tag); p; p = strstr(p + 1, tag)) {
		const char *a = strstr(p, "<td class=\"p\">") + 14, *b = strstr(a, "</td>");
		size_t len = strlen(out);
		snprintf(out + len, cap - len, "%s%.*s", len ? "; " : "", (int)(b - a), a);
	}
}

Test(report, ties_follow_the_noise_rule)
{
	char *html = render(0, 0);
	char got[512];
	/* the sweep's band of 2%: 10.15 ties with the 10.0 winner, 10.30 does not */
	char *shape = rf_between(html, "<details id=\"g0-shape-64x256\"", "</details>");
	rows_of_class(shape, "tie", got, sizeof got);
	cr_assert_str_eq(got, "threads=256 vec=4");
	expect_in(shape, "within 2.00% of the fastest variant's (the noise band the sweep "
			 "measured at this shape;");
	expect_in(shape, "1 ties");
	free(shape);
	/* no band stored: 1%, so 20.19 ties with 20.0 and 20.21 does not */
	shape = rf_between(html, "<details id=\"g0-shape-64x1024\"", "</details>");
	rows_of_class(shape, "tie", got, sizeof got);
	cr_assert_str_eq(got, "threads=128 vec=4");
	expect_in(shape, "within 1.00% of the fastest variant's (no band was stored");
	cr_assert_eq(rf_count(shape, "<span class=\"badge tie\">tie</span>"), 1);
	free(shape);
	/* a winner whose own repetitions spread 25% does not widen the band
	 * (0.8%): 55.0 and 60.0 are no ties; baselines are labelled, never
	 * ties, even when as fast */
	shape = rf_between(html, "<details id=\"g0-shape-64x4096\"", "</details>");
	rows_of_class(shape, "tie", got, sizeof got);
	cr_assert_str_eq(got, "");
	expect_in(shape, "within 0.80% of the fastest");
	expect_in(shape, "0 ties");
	cr_assert_eq(rf_count(shape, "<tr class=\"base\">"), 2);
	expect_in(shape, "<span class=\"badge base\">baseline</span></td><td class=\"t\">naive</td>");
	expect_in(shape, "<span class=\"badge base\">baseline</span></td><td class=\"t\">cuDNN</td>");
	free(shape);
	free(html);
}

Test(report, failed_variants_are_listed_with_their_reason)
{
	char *html = render(0, 0);
	char *shape = rf_between(html, "<details id=\"g0-shape-64x256\"", "</details>");
	char *failed = rf_between(shape, "<table class=\"sortable failed\">", "</table>");
	cr_assert_eq(rf_count(failed, "<tr>"), 1 + 2); /* the header and two rows */
	expect_in(failed, "<td class=\"p\">threads=1024 vec=4</td><td><span class=\"badge fail\">"
			  "compile_failed</span></td><td class=\"p\">nvrtc: too many resources "
			  "requested</td>");
	expect_in(failed, "check_failed");
	/* a failed variant is not in the timed table */
	char *timed = rf_between(shape, "<table class=\"sortable results\">", "</table>");
	cr_assert_null(strstr(timed, "threads=1024"));
	cr_assert_eq(rf_count(timed, "<tr"), 1 + 6); /* header, 4 variants, 2 baselines */
	free(timed);
	free(failed);
	free(shape);
	shape = rf_between(html, "<details id=\"g0-shape-64x4096\"", "</details>");
	expect_in(shape, "launch_failed</span></td><td class=\"p\">CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
	free(shape);
	free(html);
}

Test(report, curves_have_a_point_per_timed_shape)
{
	char *html = render(0, 0);
	/* f32 at M = 64: N = 256, 1024, 4096; cuDNN was not run at 1024 */
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "tuned"), 3);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "naive"), 3);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "cudnn"), 2);
	cr_assert_eq(rf_points_of(html, "g0-curve-m128", "tuned"), 1);
	cr_assert_eq(rf_points_of(html, "g0-curve-m128", "naive"), 0);
	cr_assert_eq(rf_points_of(html, "g1-curve-m64", "cudnn"), 2);
	char *svg = rf_between(html, "<svg id=\"g0-curve-m64\"", "</svg>");
	/* the ceiling, the axes' units and the legend */
	expect_in(svg, "<g class=\"hline\" data-series=\"ceiling\"><line");
	expect_in(svg, ">copy 3,000 GB/s</text>");
	expect_in(svg, "N (elements per row, log2 scale)");
	expect_in(svg, "GB/s (2\xc2\xb7M\xc2\xb7N\xc2\xb7size / median time)");
	expect_in(svg, "<g class=\"legend\"");
	expect_in(svg, ">tuned winner</text>");
	expect_in(svg, ">naive</text>");
	expect_in(svg, ">cuDNN</text>");
	/* log2 ticks at the powers of two in range, and a point's hover text */
	expect_in(svg, ">256</text>");
	expect_in(svg, ">4096</text>");
	expect_in(svg, "<title>tuned winner at N = 4,096 (M = 64): 42 GB/s, 50.00 \xc2\xb5s, "
		       "1.4% of copy\nsoftmax_block threads=256 vec=4</title>");
	free(svg);
	/* bf16: nothing passed, so nothing to plot */
	expect_in(html, "M = 8: no variant or baseline was timed");
	free(html);
}

Test(report, heat_map_of_the_largest_shape_by_default)
{
	char *html = render(0, 0);
	char *fig = rf_between(html, "<figure id=\"g0-heatmap-fig\"", "</figure>");
	expect_in(fig, "Shape M = 64, N = 4,096 (the largest tuned");
	char *svg = rf_between(fig, "<svg id=\"g0-heatmap\"", "</svg>");
	/* threads {256, 512} across, vec {2, 4} down; 512 x 2 had no passing variant */
	cr_assert_eq(rf_count(svg, "<g class=\"cell\">"), 3);
	cr_assert_eq(rf_count(svg, "<g class=\"cell empty\">"), 1);
	expect_in(svg, "<title>threads=256, vec=4: 50.00 \xc2\xb5s");
	expect_in(svg, "the winner\nbest of 1: threads=256 vec=4</title>");
	cr_assert_eq(rf_count(svg, "class=\"marked\""), 1);
	expect_in(svg, "median time, \xc2\xb5s (log scale; lighter is faster)");
	free(svg);
	free(fig);
	/* f16: only threads varies, one row; bf16: no winner, a note */
	fig = rf_between(html, "<figure id=\"g1-heatmap-fig\"", "</figure>");
	expect_in(fig, "Shape M = 64, N = 2,048");
	cr_assert_eq(rf_count(fig, "<g class=\"cell\">"), 2);
	free(fig);
	fig = rf_between(html, "<figure id=\"g2-heatmap-fig\"", "</figure>");
	expect_in(fig, "no variant passed, no heat map");
	free(fig);
	free(html);
}

Test(report, heat_map_of_a_chosen_shape)
{
	char *html = render(64, 256);
	char *fig = rf_between(html, "<figure id=\"g0-heatmap-fig\"", "</figure>");
	expect_in(fig, "Shape M = 64, N = 256 (chosen with --heatmap)");
	/* threads {64, 128, 256} x vec {2, 4}: 4 variants timed */
	cr_assert_eq(rf_count(fig, "<g class=\"cell\">"), 4);
	cr_assert_eq(rf_count(fig, "<g class=\"cell empty\">"), 2);
	free(fig);
	/* f16 has no 64 x 256: its largest, saying so */
	fig = rf_between(html, "<figure id=\"g1-heatmap-fig\"", "</figure>");
	expect_in(fig, "Shape M = 64, N = 2,048 (the largest tuned; 64x256 was not tuned for "
		       "this dtype)");
	free(fig);
	free(html);
}

Test(report, the_rules_are_documented)
{
	char *html = render(0, 0);
	char *about = rf_between(html, "<section id=\"about\">", "</section>");
	expect_in(about, "is within the shape's <strong>noise band</strong> of the fastest "
			 "variant's median");
	expect_in(about, "the one with the fewest registers");
	expect_in(about, "<strong>GB/s</strong> = 2\xc2\xb7M\xc2\xb7N\xc2\xb7" "element size / "
			 "median time");
	expect_in(about, "<strong>heat map</strong>");
	free(about);
	free(html);
}

Test(report, the_written_file_is_the_rendered_page)
{
	rf_make_db("t.db");
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(tmp_path("t.db"), &db, &err), 0, "%s", err.msg);
	report_data d;
	cr_assert_eq(report_data_load(db, tmp_path("t.db"), &d, &err), 0, "%s", err.msg);
	tdb_close(db);
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("out.html") };
	strbuf page = { 0 };
	cr_assert_eq(report_render(&d, &opt, &page, &err), 0, "%s", err.msg);
	cr_assert_eq(report_write(&opt, &err), 0, "%s", err.msg);
	char *file = tmp_read(tmp_path("out.html"));
	cr_assert_str_eq(file, page.data);
	free(file);
	strbuf_free(&page);
	report_data_free(&d);
	/* mode 0666 less the umask, and no temporary file left */
	struct stat st;
	cr_assert_eq(stat(tmp_path("out.html"), &st), 0);
	mode_t mask = umask(0);
	umask(mask);
	cr_assert_eq(st.st_mode & 0777, 0666 & ~mask);
	static const char *const expected[] = { "t.db", "t.db-wal", "t.db-shm", "out.html", NULL };
	cr_assert_eq(stray_files(expected), 0);
}

Test(report, a_link_is_followed_and_a_device_written_in_place)
{
	rf_make_db("t.db");
	FILE *f = fopen(tmp_path("target.html"), "w");
	cr_assert_not_null(f);
	fputs("old", f);
	fclose(f);
	cr_assert_eq(chmod(tmp_path("target.html"), 0640), 0);
	cr_assert_eq(symlink("target.html", tmp_path("link.html")), 0);
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("link.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), 0, "%s", err.msg);
	struct stat st;
	cr_assert_eq(lstat(tmp_path("link.html"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "the link was replaced by a file");
	cr_assert_eq(stat(tmp_path("target.html"), &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0640, "the replaced file lost its mode");
	char *text = tmp_read(tmp_path("target.html"));
	cr_assert(strncmp(text, "<!DOCTYPE html>", 15) == 0);
	free(text);
	/* a link to a device: the device is written, the link stays */
	cr_assert_eq(symlink("/dev/null", tmp_path("null.html")), 0);
	opt.out_path = tmp_path("null.html");
	cr_assert_eq(report_write(&opt, &err), 0, "%s", err.msg);
	cr_assert_eq(lstat(tmp_path("null.html"), &st), 0);
	cr_assert(S_ISLNK(st.st_mode), "the link to /dev/null was replaced by a file");
	static const char *const expected[] = { "t.db", "t.db-wal", "t.db-shm", "target.html",
						"link.html", "null.html", NULL };
	cr_assert_eq(stray_files(expected), 0);
}

/* ---- bad input --------------------------------------------------------------------- */

Test(report, missing_database)
{
	report_options opt = { .db_path = tmp_path("missing.db"),
			       .out_path = tmp_path("out.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s: no such database", tmp_path("missing.db"));
	cr_assert_str_eq(err.msg, want);
	cr_assert_neq(access(tmp_path("out.html"), F_OK), 0, "an output file was written");
	cr_assert_neq(access(tmp_path("missing.db"), F_OK), 0, "the database was created");
}

Test(report, database_without_results)
{
	rf_make_empty_db("empty.db");
	report_options opt = { .db_path = tmp_path("empty.db"), .out_path = tmp_path("out.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s has no results: run autotune sweep first",
		 tmp_path("empty.db"));
	cr_assert_str_eq(err.msg, want);
	cr_assert_neq(access(tmp_path("out.html"), F_OK), 0);
}

Test(report, unwritable_output)
{
	rf_make_db("t.db");
	/* a folder that does not exist */
	const char *out = tmp_path("no/such/folder/report.html");
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = out };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), -1);
	char want[700];
	snprintf(want, sizeof want, "%s: cannot write: No such file or directory", out);
	cr_assert_str_eq(err.msg, want);
	/* a path that is a folder: the temporary file beside it must go */
	cr_assert_eq(mkdir(tmp_path("dir.html"), 0755), 0);
	opt.out_path = tmp_path("dir.html");
	cr_assert_eq(report_write(&opt, &err), -1);
	snprintf(want, sizeof want, "%s: cannot write: ", tmp_path("dir.html"));
	cr_assert(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
	static const char *const expected[] = { "t.db", "t.db-wal", "t.db-shm", "no", "dir.html",
						NULL };
	cr_assert_eq(stray_files(expected), 0);
}

static char *read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	char *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);
		if (n == 0)
			break;
		*len += n;
	}
	fclose(f);
	return buf;
}

Test(report, the_database_is_never_the_output)
{
	rf_make_db("t.db");
	cr_assert_eq(symlink("t.db", tmp_path("alias.html")), 0);
	size_t before_len, after_len;
	char *before = read_bytes(tmp_path("t.db"), &before_len);
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("alias.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s: cannot write: it is the database", tmp_path("alias.html"));
	cr_assert_str_eq(err.msg, want);
	opt.out_path = tmp_path("t.db");
	cr_assert_eq(report_write(&opt, &err), -1);
	char *after = read_bytes(tmp_path("t.db"), &after_len);
	cr_assert(after_len == before_len && memcmp(after, before, after_len) == 0,
		  "the database changed");
	free(before);
	free(after);
}

Test(report, a_failed_run_keeps_the_old_file)
{
	FILE *f = fopen(tmp_path("out.html"), "w");
	cr_assert_not_null(f);
	fputs("old", f);
	fclose(f);
	rf_make_empty_db("empty.db");
	report_options opt = { .db_path = tmp_path("empty.db"), .out_path = tmp_path("out.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), -1);
	char *text = tmp_read(tmp_path("out.html"));
	cr_assert_str_eq(text, "old");
	free(text);
}

/* ---- the subcommand, in this process ------------------------------------------------- */

static int run_cmd(const char *const *args)
{
	char *argv[16];
	int argc = 0;
	argv[argc++] = (char *)"report";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	return cmd_report(argc, argv);
}

#define CMD(...) run_cmd((const char *const[]){ __VA_ARGS__, NULL })

Test(report, cmd_exit_codes)
{
	cr_redirect_stderr();
	rf_make_db("t.db");
	rf_make_empty_db("empty.db");
	cr_assert_eq(CMD("--db", tmp_path("t.db"), "-o", tmp_path("a.html")), 0);
	cr_assert_eq(access(tmp_path("a.html"), F_OK), 0);
	cr_assert_eq(CMD("--db", tmp_path("t.db"), "--output", tmp_path("b.html"), "--heatmap",
			 "64x1024"),
		     0);
	cr_assert_eq(CMD("--db", tmp_path("missing.db"), "-o", tmp_path("c.html")), 1);
	cr_assert_eq(CMD("--db", tmp_path("empty.db"), "-o", tmp_path("c.html")), 1);
	cr_assert_eq(CMD("--db", tmp_path("t.db"), "-o", tmp_path("no/c.html")), 1);
	cr_assert_neq(access(tmp_path("c.html"), F_OK), 0);
	cr_assert_eq(CMD("--bogus"), 2);
	cr_assert_eq(CMD("--db"), 2);
	cr_assert_eq(CMD("--heatmap", "4096"), 2);
	cr_assert_eq(CMD("--heatmap", "0x5"), 2);
	cr_assert_eq(CMD("extra"), 2);
}

/* ---- the pieces -------------------------------------------------------------------- */

Test(report_units, escape)
{
	strbuf s = { 0 };
	html_escape(&s, "<script>&\"'a\tb\x01" "c");
	html_escape(&s, NULL);
	cr_assert_str_eq(s.data, "&lt;script&gt;&amp;&quot;&#39;a\tb&#xFFFD;c");
	strbuf_free(&s);
}

Test(report_units, number_formats)
{
	char b[NUMFMT_CAP];
	cr_assert_str_eq(fmt_grouped(b, 3079.518, 1), "3,079.5");
	cr_assert_str_eq(fmt_grouped(b, -0.04, 1), "0.0");
	cr_assert_str_eq(fmt_count(b, -1234567), "-1,234,567");
	cr_assert_str_eq(fmt_count(b, 999), "999");
	cr_assert_str_eq(fmt_count(b, 100000), "100,000");
	cr_assert_str_eq(fmt_grouped(b, 123456789012345.0, 6), "123,456,789,012,345.000000");
	cr_assert_str_eq(fmt_grouped(b, -2e300, 2), "-2e+300");
	cr_assert_str_eq(fmt_grouped(b, NAN, 0), "\xe2\x80\x93");
	cr_assert_str_eq(fmt_us(b, 5.4719), "5.472");
	cr_assert_str_eq(fmt_us(b, 87.168), "87.17");
	cr_assert_str_eq(fmt_us(b, 412.34), "412.3");
	cr_assert_str_eq(fmt_us(b, 1204.4), "1,204");
	cr_assert_str_eq(fmt_gbps(b, 3079.5), "3,080");
	cr_assert_str_eq(fmt_gbps(b, 7.254), "7.25");
	cr_assert_str_eq(fmt_pct(b, 101.47), "101.5");
	cr_assert_str_eq(fmt_bytes(b, 85017493504LL), "79.2 GiB");
	cr_assert_str_eq(fmt_bytes(b, 49152), "48 KiB");
	cr_assert_str_eq(fmt_bytes(b, 256), "256 B");
	cr_assert_str_eq(fmt_seconds(b, 74.6079), "74.6 s");
	cr_assert_str_eq(fmt_seconds(b, 207), "3 min 27 s");
	cr_assert_str_eq(fmt_seconds(b, 7500), "2 h 05 min");
	cr_assert_str_eq(fmt_axis_n(b, 128), "128");
	cr_assert_str_eq(fmt_axis_n(b, 8192), "8192");
	cr_assert_str_eq(fmt_axis_n(b, 16384), "16K");
	cr_assert_str_eq(fmt_axis_n(b, 1048576), "1M");
	cr_assert_str_eq(fmt_driver(b, 13000), "13.0");
	cr_assert_str_eq(fmt_driver(b, 12040), "12.4");
}

static rd_result timed_result(double med, double min, double max)
{
	return (rd_result){ .timed = 1, .time_us = med, .time_min_us = min, .time_max_us = max };
}

Test(report_units, tie_rule)
{
	/* the winner (fewer registers) 100.5 us, the fastest 100.0 us, band 1% */
	rd_result rows[] = { timed_result(100, 90, 130), timed_result(100.5, 80, 140),
			     timed_result(100.99, 100, 102), timed_result(101.01, 100, 102),
			     timed_result(100.2, 100, 101), timed_result(100.3, 0, 0) };
	rows[4].baseline = 1;
	rows[5].timed = 0;
	rd_shape s = { .winner = 1, .results = rows, .n_results = 6, .noise_band = 0.01 };
	cr_assert_float_eq(ties_band(&s), 0.01, 1e-12);
	cr_assert(ties_is_tie(&s, &rows[0]), "the fastest ties with the winner");
	cr_assert(!ties_is_tie(&s, &rows[1]), "the winner is not its own tie");
	cr_assert(ties_is_tie(&s, &rows[2]), "within 1% of the fastest");
	cr_assert(!ties_is_tie(&s, &rows[3]), "beyond 1% of the fastest: the spreads of 30-60%% "
					      "do not count");
	cr_assert(!ties_is_tie(&s, &rows[4]), "baselines never tie");
	cr_assert(!ties_is_tie(&s, &rows[5]), "nor untimed rows");
	cr_assert_eq(ties_count(&s), 2);
	/* another band, none (NULL), or none measured (0): 1% */
	s.noise_band = 0.005;
	cr_assert(!ties_is_tie(&s, &rows[2]));
	cr_assert_eq(ties_count(&s), 1);
	s.noise_band = NAN;
	cr_assert_float_eq(ties_band(&s), 0.01, 1e-12);
	s.noise_band = 0;
	cr_assert_float_eq(ties_band(&s), 0.01, 1e-12);
	/* which is the most the sweep's band can be */
	cr_assert_float_eq(TIES_BAND_UNKNOWN, REFINE_BAND_MAX, 1e-12);
	s.winner = -1;
	cr_assert_eq(ties_count(&s), 0, "no winner, no ties");
}

Test(report_units, params)
{
	param_kv kv[PARAMS_MAX];
	size_t n = params_parse("threads=256  vec=4 junk =x <script>&\"' stages=", kv);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(kv[0].name, "threads");
	cr_assert_str_eq(kv[0].value, "256");
	cr_assert_str_eq(kv[1].name, "vec");
	cr_assert_str_eq(kv[2].name, "stages");
	cr_assert_str_eq(kv[2].value, "");
	cr_assert_str_eq(params_find(kv, n, "vec"), "4");
	cr_assert_null(params_find(kv, n, "lanes"));
	cr_assert_eq(params_parse("", kv), 0);
	cr_assert_eq(params_parse(NULL, kv), 0);
	cr_assert_lt(params_value_cmp("64", "128"), 0);
	cr_assert_gt(params_value_cmp("b", "a"), 0);
	cr_assert_eq(params_value_cmp("8", "8.0"), 0);
}

/* Tests of `autotune report --peers` (reports/report*.c with
 * reports/peers_csv.c): the fixture database (test_report_fixture.c) with a
 * peers CSV for its f32 and f16 shapes: the peers drawn on the curves (one
 * point per timed clean row, the library's own rows and the failed ones
 * not), the winners table's best peer and speed-up, the peers among each
 * shape's rows, the summing-up paragraph with its exact figures; and the
 * command's errors: a bad CSV (file and line), a CSV of another GPU, one
 * with no shape in the database, an empty --peers. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/report.h"
#include "tests/test_report_fixture.h"
#include "tests/test_run_fixture.h"

TestSuite(report_peers, .init = tmp_setup, .fini = tmp_teardown);

#define GPU "NVIDIA H100 80GB HBM3"
#define HEADER "dtype,M,N,flush,method,status,us,gbps,rel_err,served_by,gpu\n"

/* Winners of the fixture: f32 64x256 10.0 us, 64x1024 20.0 us, 64x4096
 * 50.0 us, 128x512 8.0 us; f16 64x1024 15.0 us. */
static const char peers_csv[] =
	HEADER
	"f32,64,256,clean,lib,ok,9.0,,,exact,"GPU"\n"
	"f32,64,256,clean,torch,ok,12.5,,,,"GPU"\n"
	"f32,64,256,dirty,torch,ok,14.0,,,,"GPU"\n"
	"f32,64,256,clean,triton,ok,15.0,,,,"GPU"\n"
	"f32,64,256,clean,compile,ok,20.0,,,,"GPU"\n"
	"f32,64,256,clean,copy,ok,6.0,,,,"GPU"\n"
	"f32,64,1024,clean,torch,ok,30.0,,,,"GPU"\n"
	"f32,64,1024,clean,triton,ok,16.0,,,,"GPU"\n"
	"f32,64,1024,clean,compile,\"fails: no, not here\",nan,,,,"GPU"\n"
	"f32,64,8192,clean,torch,ok,100.0,,,,"GPU"\n"
	"f16,64,1024,clean,torch,ok,18.0,,,,"GPU"\n";

static char *render_with_peers(const char *csv)
{
	rf_make_db("t.db");
	tmp_write("peers.csv", csv);
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("out.html"),
			       .peers_path = tmp_path("peers.csv") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), 0, "report_write: %s", err.msg);
	return tmp_read(tmp_path("out.html"));
}

static void expect_in(const char *text, const char *want)
{
	cr_assert_not_null(strstr(text, want), "\"%s\" not in the page", want);
}

Test(report_peers, peers_are_drawn_on_the_curves)
{
	char *html = render_with_peers(peers_csv);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "tuned"), 3);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "peer-torch"), 3); /* 8192 too */
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "peer-triton"), 2);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "peer-compile"), 1); /* failed at 1024 */
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "peer-lib"), 0);
	cr_assert_eq(rf_points_of(html, "g0-curve-m64", "peer-copy"), 0);
	cr_assert_eq(rf_points_of(html, "g0-curve-m128", "peer-torch"), 0);
	cr_assert_eq(rf_points_of(html, "g1-curve-m64", "peer-torch"), 1);
	char *svg = rf_between(html, "<svg id=\"g0-curve-m64\"", "</svg>");
	expect_in(svg, ">torch.softmax</text>");
	expect_in(svg, ">Triton tutorial</text>");
	expect_in(svg, ">torch.compile</text>");
	char want[600];
	/* 2 * 64 * 256 * 4 B / 12.5 us = 10.5 GB/s */
	snprintf(want, sizeof want, "<title>torch.softmax at N = 256 (M = 64): 10 GB/s, 12.50 \xc2\xb5s "
		 "(%s line 3, clean L2)</title>", tmp_path("peers.csv"));
	expect_in(svg, want);
	/* the torch series in N order: 256, 1024, 8192 */
	char *g = rf_between(svg, "data-series=\"peer-torch\">", "</g>");
	const char *a = strstr(g, "at N = 256 "), *b = strstr(g, "at N = 1,024 "),
		   *c = strstr(g, "at N = 8,192 ");
	cr_assert(a && b && c && a < b && b < c);
	free(g);
	free(svg);
	free(html);
}

Test(report_peers, winners_table_has_the_best_peer)
{
	char *html = render_with_peers(peers_csv);
	char *winners = rf_between(html, "<table id=\"g0-winners\"", "</table>");
	expect_in(winners, "<th>best peer</th>");
	/* 64x256: torch 12.5 / 10.0 */
	char *row = rf_between(winners, "<a href=\"#g0-shape-64x256\">64</a>", "</tr>");
	expect_in(row, "<td class=\"t\">torch.softmax</td><td class=\"n\">1.25\xc3\x97</td>");
	free(row);
	/* 64x1024: Triton 16 / 20 */
	row = rf_between(winners, "<a href=\"#g0-shape-64x1024\">64</a>", "</tr>");
	expect_in(row, "<td class=\"t\">Triton tutorial</td><td class=\"n\">0.80\xc3\x97</td>");
	free(row);
	/* 128x512: no peer */
	row = rf_between(winners, "<a href=\"#g0-shape-128x512\">128</a>", "</tr>");
	expect_in(row, "<td class=\"t\"></td><td class=\"n\">\xe2\x80\x93</td>");
	free(row);
	free(winners);
	free(html);
}

Test(report_peers, shape_tables_have_the_peers_in_time_order)
{
	char *html = render_with_peers(peers_csv);
	char *shape = rf_between(html, "<details id=\"g0-shape-64x256\"", "</details>");
	expect_in(shape, "; best peer torch.softmax 12.50 \xc2\xb5s (winner 1.25\xc3\x97)</summary>");
	char *table = rf_between(shape, "<table class=\"sortable results\">", "</table>");
	cr_assert_eq(rf_count(table, "<tr class=\"peer\">"), 3);
	cr_assert_eq(rf_count(table, "<span class=\"badge peer\">peer</span>"), 3);
	/* 12.0 us (the slowest variant) before torch's 12.5, Triton's 15 and compile's 20 */
	const char *slow = strstr(table, "threads=128 vec=2"), *torch = strstr(table, ">torch.softmax<"),
		   *triton = strstr(table, ">Triton tutorial<"), *compile = strstr(table, ">torch.compile<");
	cr_assert(slow && torch && triton && compile);
	cr_assert(slow < torch && torch < triton && triton < compile);
	cr_assert_null(strstr(table, ">lib<"));
	free(table);
	free(shape);
	shape = rf_between(html, "<details id=\"g0-shape-64x4096\"", "</details>");
	cr_assert_null(strstr(shape, "class=\"peer\""));
	cr_assert_null(strstr(shape, "best peer"));
	free(shape);
	free(html);
}

Test(report_peers, the_comparison_is_summed_up)
{
	char *html = render_with_peers(peers_csv);
	char want[800];
	/* f32: 1.25 and 0.80, geometric mean 1 */
	snprintf(want, sizeof want,
		 "<p id=\"g0-peers\" class=\"peers\">Against the peers of <code>%s</code> (clean L2): "
		 "the winner is at least as fast as the best peer at <strong>1 of 2</strong> shapes; "
		 "best peer's time / winner's: geometric mean <strong>1.000\xc3\x97</strong>, from "
		 "0.80\xc3\x97 (M = 64, N = 1,024) to 1.25\xc3\x97 (M = 64, N = 256).</p>",
		 tmp_path("peers.csv"));
	expect_in(html, want);
	expect_in(html, "<p id=\"g1-peers\" class=\"peers\">");
	cr_assert_null(strstr(html, "<p id=\"g2-peers\""));
	expect_in(html, "<li id=\"about-peers\">");
	free(html);
}

Test(report_peers, without_peers_nothing_changes)
{
	rf_make_db("t.db");
	report_options opt = { .db_path = tmp_path("t.db"), .out_path = tmp_path("out.html") };
	at_error err = { { 0 } };
	cr_assert_eq(report_write(&opt, &err), 0, "%s", err.msg);
	char *html = tmp_read(tmp_path("out.html"));
	cr_assert_null(strstr(html, "data-series=\"peer-"));
	cr_assert_null(strstr(html, "<tr class=\"peer\">"));
	cr_assert_null(strstr(html, "best peer"));
	cr_assert_null(strstr(html, "about-peers"));
	free(html);
}

/* `autotune report --db t.db -o r.html --peers CSV` exits 1 with want
 * (a format taking the CSV's path) and writes nothing. */
static void expect_cli_error(const char *csv, const char *want_fmt)
{
	rf_make_db("t.db");
	tmp_write("peers.csv", csv);
	unlink(tmp_path("r.html"));
	tr_result r = RUN("report", "--db", tmp_path("t.db"), "-o", tmp_path("r.html"), "--peers",
			  tmp_path("peers.csv"));
	tr_expect_status(&r, 1);
	char want[800];
	snprintf(want, sizeof want, want_fmt, tmp_path("peers.csv"), tmp_path("t.db"));
	cr_assert_str_eq(r.err, want);
	cr_assert_neq(access(tmp_path("r.html"), F_OK), 0);
	tr_free(&r);
}

Test(report_peers, command_line)
{
	rf_make_db("t.db");
	tmp_write("peers.csv", peers_csv);
	tr_result r = RUN("report", "--db", tmp_path("t.db"), "-o", tmp_path("r.html"), "--peers",
			  tmp_path("peers.csv"));
	tr_expect_status(&r, 0);
	tr_free(&r);
	char *html = tmp_read(tmp_path("r.html"));
	expect_in(html, "data-series=\"peer-torch\"");
	free(html);
	expect_cli_error(HEADER "f32,64,256,clean,torch,ok,fast,,,,x\n",
			 "autotune: %s:2: us is \"fast\", expected a time in microseconds (the status "
			 "is ok)\n");
	expect_cli_error(HEADER "f32,64,256,clean,torch,ok,1.0,,,,NVIDIA A100\n",
			 "autotune: %s: its GPU (NVIDIA A100) is not one of %s's\n");
	expect_cli_error(HEADER "f32,32,256,clean,torch,ok,1.0,,,,"GPU"\n",
			 "autotune: %s: none of its shapes with a timed peer (clean L2) is tuned in %s\n");
	r = RUN("report", "--db", tmp_path("t.db"), "--peers", tmp_path("missing.csv"), "-o",
		tmp_path("r.html"));
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "missing.csv: cannot read: No such file or directory");
	tr_free(&r);
	r = RUN("report", "--peers", "");
	tr_expect_status(&r, 2);
	tr_expect_in(r.err, "--peers needs a file name");
	tr_free(&r);
}

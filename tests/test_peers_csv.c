/* Tests of the peers CSV reader (reports/peers_csv.c): columns by name in
 * any order, quoted fields, CRLF, the gpu column optional; each kind of bad
 * file refused with its file and line; and the lookups the report makes
 * (a peer at a shape, the best one, the methods in drawing order). */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "reports/peers_csv.h"
#include "tests/tmp_folder.h"

TestSuite(peers_csv);
TestSuite(peers_csv_files, .init = tmp_setup, .fini = tmp_teardown);

static const char header[] = "dtype,M,N,flush,method,status,us,gbps,rel_err,served_by,gpu\n";

static int parse(const char *text, peer_set *p, at_error *err)
{
	return peers_parse("p.csv", text, strlen(text), p, err);
}

/* Parsing text fails with exactly want. */
static void expect_error(const char *text, const char *want)
{
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(parse(text, &p, &err), -1, "parsed: %s", text);
	cr_assert_str_eq(err.msg, want);
	cr_assert_eq(p.n_rows, 0);
	cr_assert_null(p.rows);
}

Test(peers_csv, reads_what_the_peers_module_writes)
{
	const char *text = "dtype,M,N,flush,method,status,us,gbps,rel_err,served_by,gpu\n"
			   "f32,4096,256,clean,lib,ok,5.500,1525.2,6.80e-08,\"exact: softmax_warp "
			   "threads=256, vec=4\",NVIDIA H100 80GB HBM3\n"
			   "f32,4096,256,dirty,torch,ok,7.25,1157.0,1e-7,,NVIDIA H100 80GB HBM3\r\n"
			   "\n"
			   "bf16,4096,1000000,clean,triton,\"fails: BLOCK_SIZE 1048576 > 131072, not "
			   "\"\"attempted\"\"\",nan,nan,,,NVIDIA H100 80GB HBM3\n";
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(parse(text, &p, &err), 0, "%s", err.msg);
	cr_assert_eq(p.n_rows, 3);
	cr_assert(p.has_gpu);
	cr_assert_str_eq(p.path, "p.csv");
	const peer_row *r = &p.rows[0];
	cr_assert_str_eq(r->dtype, "f32");
	cr_assert_eq(r->M, 4096);
	cr_assert_eq(r->N, 256);
	cr_assert(r->clean);
	cr_assert_str_eq(r->method, "lib");
	cr_assert(r->ok);
	cr_assert_float_eq(r->us, 5.5, 1e-12);
	cr_assert_str_eq(r->gpu, "NVIDIA H100 80GB HBM3");
	cr_assert_eq(r->line, 2);
	cr_assert_not(p.rows[1].clean);
	cr_assert_eq(p.rows[1].line, 3);
	r = &p.rows[2];
	cr_assert_eq(r->line, 5);
	cr_assert_not(r->ok);
	cr_assert(isnan(r->us));
	cr_assert_eq(r->N, 1000000);
	peers_free(&p);
	peers_free(&p); /* twice is harmless */
}

Test(peers_csv, columns_in_any_order_and_no_gpu_column)
{
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(parse("us,method,N,M,dtype,status,flush\n12.5,torch,512,64,f16,ok,clean\n", &p,
			   &err),
		     0, "%s", err.msg);
	cr_assert_not(p.has_gpu);
	cr_assert_null(p.rows[0].gpu);
	cr_assert_eq(p.rows[0].M, 64);
	cr_assert_eq(p.rows[0].N, 512);
	cr_assert_str_eq(p.rows[0].dtype, "f16");
	cr_assert(peers_row_on(&p.rows[0], "any GPU"));
	peers_free(&p);
}

Test(peers_csv, bad_files_name_their_line)
{
	expect_error("", "p.csv: empty, expected a header line (dtype,M,N,flush,method,status,us,...)");
	expect_error(header, "p.csv: no rows after the header");
	expect_error("dtype,M,N,flush,method,status,gbps\n",
		     "p.csv:1: no column \"us\" (the header must name dtype, M, N, flush, method, "
		     "status and us, as python -m autotune_dispatch.peers writes them)");
	expect_error("dtype,M,N,flush,method,status,us,M\n", "p.csv:1: the column \"M\" appears twice");
	char text[1024];
	snprintf(text, sizeof text, "%sf32,64,256,clean,torch,ok,1.0,1,1,x,G\nf32,64,256,clean,torch\n",
		 header);
	expect_error(text, "p.csv:3: 5 fields, but the header has 11");
	snprintf(text, sizeof text, "%sf32,64,256,clean,torch,ok,1.0,1,1,\"x,G\n", header);
	expect_error(text, "p.csv:2: a quoted field is not closed on its line");
	snprintf(text, sizeof text, "%sf32,64,256,clean,torch,ok,1.0,1,1,\"x\"y,G\n", header);
	expect_error(text, "p.csv:2: text after a quoted field (field 10)");
	snprintf(text, sizeof text, "%sf64,64,256,clean,torch,ok,1.0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: dtype is \"f64\", expected f32, f16 or bf16");
	snprintf(text, sizeof text, "%sf32,-64,256,clean,torch,ok,1.0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: M is \"-64\", expected a positive integer");
	snprintf(text, sizeof text, "%sf32,64,25x,clean,torch,ok,1.0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: N is \"25x\", expected a positive integer");
	snprintf(text, sizeof text, "%sf32,64,256,warm,torch,ok,1.0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: flush is \"warm\", expected clean or dirty");
	snprintf(text, sizeof text, "%sf32,64,256,clean,,ok,1.0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: the method is empty");
	snprintf(text, sizeof text, "%sf32,64,256,clean,torch,ok,nan,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: us is \"nan\", expected a time in microseconds (the status is ok)");
	snprintf(text, sizeof text, "%sf32,64,256,clean,torch,ok,0,1,1,x,G\n", header);
	expect_error(text, "p.csv:2: us is \"0\", expected a time in microseconds (the status is ok)");
	snprintf(text, sizeof text,
		 "%sf32,64,256,clean,torch,ok,1.0,1,1,x,G\nf32,64,256,dirty,torch,ok,1.0,1,1,x,G\n"
		 "f32,64,256,clean,torch,ok,2.0,1,1,x,G\n",
		 header);
	expect_error(text, "p.csv:4: a second row for f32 64x256 clean torch (the first is line 2)");
	static const char nul[] = "dtype,M,N,flush,method,status,us\nf32,64,2\0006,clean,torch,ok,1\n";
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(peers_parse("p.csv", nul, sizeof nul - 1, &p, &err), -1);
	cr_assert_str_eq(err.msg, "p.csv:2: a NUL byte: not a text file");
}

Test(peers_csv_files, a_missing_file)
{
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(peers_load(tmp_path("none.csv"), &p, &err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s: cannot read: No such file or directory", tmp_path("none.csv"));
	cr_assert_str_eq(err.msg, want);
}

Test(peers_csv_files, a_file_is_read_whole)
{
	tmp_write("p.csv", "dtype,M,N,flush,method,status,us\nf32,64,256,clean,torch,ok,3.5\n");
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(peers_load(tmp_path("p.csv"), &p, &err), 0, "%s", err.msg);
	cr_assert_eq(p.n_rows, 1);
	cr_assert_str_eq(p.path, tmp_path("p.csv"));
	peers_free(&p);
}

Test(peers_csv, lookups)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "%s"
		 "f32,64,256,clean,lib,ok,5.0,1,1,x,A\n"       /* the library: not a peer */
		 "f32,64,256,clean,copy,ok,4.0,1,1,x,A\n"      /* nor the copy */
		 "f32,64,256,clean,compile,ok,9.0,1,1,x,A\n"
		 "f32,64,256,clean,torch,ok,8.0,1,1,x,A\n"
		 "f32,64,256,dirty,triton,ok,1.0,1,1,x,A\n"    /* dirty: not used */
		 "f32,64,256,clean,triton,fails: no,nan,1,1,x,A\n"
		 "f32,64,256,clean,other,ok,7.0,1,1,x,A\n"
		 "f32,64,256,clean,torch,ok,2.0,1,1,x,B\n"     /* another GPU */
		 "f32,64,512,clean,triton,ok,6.0,1,1,x,A\n",
		 header);
	peer_set p;
	at_error err = { { 0 } };
	cr_assert_eq(parse(text, &p, &err), 0, "%s", err.msg);
	const peer_row *best = peers_best(&p, "A", "f32", 64, 256);
	cr_assert_not_null(best);
	cr_assert_str_eq(best->method, "other");
	cr_assert_float_eq(peers_best(&p, "B", "f32", 64, 256)->us, 2.0, 1e-12);
	cr_assert_null(peers_best(&p, "A", "f16", 64, 256));
	cr_assert_null(peers_best(&p, "A", "f32", 32, 256));
	cr_assert_null(peers_find(&p, "A", "f32", 64, 256, "triton"));
	cr_assert_null(peers_find(&p, "A", "f32", 64, 256, "lib"));
	cr_assert_eq(peers_find(&p, "A", "f32", 64, 256, "torch")->line, 5);
	const char *names[8];
	size_t n = peers_methods(&p, "A", "f32", 64, names, 8);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(names[0], "torch");
	cr_assert_str_eq(names[1], "triton");
	cr_assert_str_eq(names[2], "compile");
	cr_assert_str_eq(names[3], "other");
	cr_assert_eq(peers_methods(&p, "A", "f32", 64, names, 2), 2);
	cr_assert_eq(peers_methods(NULL, "A", "f32", 64, names, 8), 0);
	cr_assert_str_eq(peers_label("torch"), "torch.softmax");
	cr_assert_str_eq(peers_label("triton"), "Triton tutorial");
	cr_assert_str_eq(peers_label("compile"), "torch.compile");
	cr_assert_str_eq(peers_label("other"), "other");
	cr_assert_not(peers_is_peer("lib_nodb"));
	cr_assert(peers_is_peer("torch"));
	peers_free(&p);
}

/* Schema version 4: each stored kernel image (cubin, PTX) has its SHA-256
 * beside it, written by the tuner's writer, computed for the kernels of an
 * older database when it is migrated, copied by `autotune db merge`; an
 * image altered after the sweep stored it is refused, naming the shape, by
 * the library's loader (atdi_db_code, which atd_softmax loads through), by
 * atd_query_gpu and by `autotune show`. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "common/sha256.h"
#include "db/merge.h"
#include "db/tuning_db.h"
#include "dispatch/policy/tuned_db.h"
#include "include/autotune/dispatch.h"

#include "tests/sql_probe.h"
#include "tests/test_dispatch_fixture.h"
#include "tests/test_run_fixture.h"

TestSuite(kernel_digest, .init = tmp_setup, .fini = tmp_teardown);

#define GPU "Test GPU"

/* t.db: one f32 winner at M = 8, N = 1000 (softmax_block), its code stored
 * for sm_90; returns its result id. */
static long long make_db(const char *name)
{
	tdb *db = td_db_new(name);
	long long gpu = td_gpu(db, GPU, 9, 0, 132, 80LL << 30);
	long long sweep = td_sweep(db, gpu);
	long long id = td_shape(db, sweep, gpu, "softmax", AT_F32, 8, 1000, "softmax_block",
				"threads=256 vec=4", 10, 0);
	tdb_close(db);
	return id;
}

/* Whether the stored digest of column col (cubin or ptx) is the SHA-256 of
 * what is stored. */
static int digest_matches(const char *path, const char *col)
{
	sqlite3 *s;
	cr_assert_eq(sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT %s, %s_sha256 FROM kernels", col, col);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(s));
	int rows = 0, ok = 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const void *image = sqlite3_column_blob(st, 0);
		char want[SHA256_HEX_LEN + 1];
		sha256_hex(image ? image : "", (size_t)sqlite3_column_bytes(st, 0), want);
		const unsigned char *got = sqlite3_column_text(st, 1);
		ok = ok && got && strcmp((const char *)got, want) == 0;
		rows++;
	}
	sqlite3_finalize(st);
	sqlite3_close(s);
	cr_assert_gt(rows, 0, "no kernels in %s", path);
	return ok;
}

/* The library's loader on result id of path, for a GPU of arch. */
static atd_status load_code(const char *path, long long id, int arch, char *msg, size_t cap)
{
	sqlite3 *s;
	cr_assert_eq(atdi_db_open(path, &s, msg, cap), ATD_OK, "%s", msg);
	atdi_code code;
	atd_status st = atdi_db_code(s, id, arch, &code, msg, cap);
	atdi_code_free(&code);
	sqlite3_close(s);
	return st;
}

static void expect_in(const char *text, const char *want)
{
	cr_assert(strstr(text, want) != NULL, "no \"%s\" in:\n%s", want, text);
}

Test(kernel_digest, the_writer_stores_each_images_digest)
{
	make_db("t.db");
	const char *p = tmp_path("t.db");
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), 4);
	cr_assert(digest_matches(p, "cubin"));
	cr_assert(digest_matches(p, "ptx"));
	cr_assert_eq(sql_int(p, "SELECT length(cubin_sha256) FROM kernels"), 64);
}

Test(kernel_digest, an_intact_image_loads_as_cubin_and_as_ptx)
{
	long long id = make_db("t.db");
	char msg[1024] = "";
	cr_assert_eq(load_code(tmp_path("t.db"), id, 90, msg, sizeof msg), ATD_OK, "%s", msg);
	cr_assert_eq(load_code(tmp_path("t.db"), id, 80, msg, sizeof msg), ATD_OK, "%s", msg);
}

Test(kernel_digest, an_altered_cubin_is_refused_by_the_loader_and_the_check)
{
	long long id = make_db("t.db");
	const char *p = tmp_path("t.db");
	sql_exec(p, "UPDATE kernels SET cubin = cubin || x'00'");
	char msg[1024] = "";
	cr_assert_eq(load_code(p, id, 90, msg, sizeof msg), ATD_ERR_KERNEL_ALTERED, "%s", msg);
	expect_in(msg, "'s cubin does not match the digest stored beside it");
	expect_in(msg, "refusing to load it");
	/* the PTX (what another GPU loads) is intact */
	cr_assert_eq(load_code(p, id, 80, msg, sizeof msg), ATD_OK, "%s", msg);
	sqlite3 *s;
	cr_assert_eq(atdi_db_open(p, &s, msg, sizeof msg), ATD_OK, "%s", msg);
	cr_assert_eq(atdi_db_verify(s, id, msg, sizeof msg), ATD_ERR_KERNEL_ALTERED);
	sqlite3_close(s);
}

Test(kernel_digest, altered_ptx_and_a_missing_digest_are_refused)
{
	long long id = make_db("t.db");
	const char *p = tmp_path("t.db");
	sql_exec(p, "UPDATE kernels SET ptx = ptx || ' '");
	char msg[1024] = "";
	cr_assert_eq(load_code(p, id, 80, msg, sizeof msg), ATD_ERR_KERNEL_ALTERED, "%s", msg);
	expect_in(msg, "'s PTX does not match the digest");
	cr_assert_eq(load_code(p, id, 90, msg, sizeof msg), ATD_OK, "%s", msg);
	sql_exec(p, "UPDATE kernels SET cubin_sha256 = NULL");
	cr_assert_eq(load_code(p, id, 90, msg, sizeof msg), ATD_ERR_KERNEL_ALTERED, "%s", msg);
	expect_in(msg, "'s cubin has no digest");
}

Test(kernel_digest, the_library_refuses_the_shape_whose_kernel_was_altered)
{
	make_db("t.db");
	const char *p = tmp_path("t.db");
	sql_exec(p, "UPDATE kernels SET cubin = zeroblob(length(cubin))");
	atd_handle *h;
	cr_assert_eq(atd_open(p, 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	atd_gpu gpu = { .name = GPU, .cc_major = 9, .cc_minor = 0, .sm_count = 132,
			.mem_bytes = 80LL << 30 };
	atd_choice c;
	cr_assert_eq(atd_query_gpu(h, &gpu, ATD_F32, 8, 1000, &c), ATD_ERR_KERNEL_ALTERED, "%s",
		     atd_errmsg(h));
	expect_in(atd_errmsg(h), "f32 M=8 N=1000: the tuned kernel softmax_block threads=256 "
				 "vec=4 (tuned at M=8 N=1000): result ");
	expect_in(atd_errmsg(h), "does not match the digest");
	cr_assert_str_eq(atd_status_string(ATD_ERR_KERNEL_ALTERED),
			 "a stored kernel does not match its digest");
	atd_close(h);
}

Test(kernel_digest, autotune_show_refuses_the_shape_whose_kernel_was_altered)
{
	make_db("t.db");
	const char *p = tmp_path("t.db");
	tr_result ok = RUN("show", "--db", p, "--gpu", GPU, "--cc", "9.0", "-M", "8", "-N", "1000");
	tr_expect_status(&ok, 0);
	tr_expect_in(ok.out, "level       exact\n");
	tr_free(&ok);
	sql_exec(p, "UPDATE kernels SET cubin = cubin || x'00'");
	tr_result r = RUN("show", "--db", p, "--gpu", GPU, "--cc", "9.0", "-M", "8", "-N", "1000");
	tr_expect_status(&r, 1);
	tr_expect_in(r.err, "f32 M=8 N=1000: the tuned kernel softmax_block");
	tr_expect_in(r.err, "'s cubin does not match the digest stored beside it");
	cr_assert_str_eq(r.out, "");
	tr_free(&r);
}

Test(kernel_digest, a_version_3_database_is_read_unchecked_and_migrated_with_digests)
{
	long long id = make_db("t.db");
	const char *p = tmp_path("t.db");
	sql_exec(p, "ALTER TABLE kernels DROP COLUMN cubin_sha256; "
		    "ALTER TABLE kernels DROP COLUMN ptx_sha256; PRAGMA user_version = 3;");
	char msg[1024] = "";
	cr_assert_eq(load_code(p, id, 90, msg, sizeof msg), ATD_OK, "%s", msg);
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), 3);
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(p, &db, &err), 0, "%s", err.msg);
	tdb_close(db);
	cr_assert_eq(sql_int(p, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	cr_assert(digest_matches(p, "cubin"));
	cr_assert(digest_matches(p, "ptx"));
	cr_assert_eq(load_code(p, id, 90, msg, sizeof msg), ATD_OK, "%s", msg);
}

Test(kernel_digest, merge_copies_the_digests)
{
	make_db("a.db");
	make_db("b.db");
	const char *inputs[] = { tmp_path("a.db"), tmp_path("b.db") };
	merge_stats stats;
	at_error err = { { 0 } };
	const char *out = tmp_path("out.db");
	cr_assert_eq(db_merge(out, inputs, 2, &stats, &err), 0, "%s", err.msg);
	cr_assert_gt(sql_int(out, "SELECT count(*) FROM kernels"), 0);
	cr_assert_eq(sql_int(out, "SELECT count(*) FROM kernels WHERE cubin_sha256 IS NULL OR "
				  "ptx_sha256 IS NULL"), 0);
	cr_assert(digest_matches(out, "cubin"));
	cr_assert(digest_matches(out, "ptx"));
}

/* Reading a tuning database writes nothing (common/sqlite_reader.h): in a
 * folder the reader may not write (a database installed under /usr/share),
 * list, show, report, db export and the dispatch library read it; in a
 * writable folder no -wal or -shm file is left behind. The read-only folder
 * is made with chmod and read by a user it binds: these tests run as root
 * here, whom chmod does not stop, so a reader process drops to nobody
 * (65534) first and checks that it cannot write the folder. */
#include <criterion/criterion.h>

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/sqlite_reader.h"
#include "db/tuning_db.h"
#include "include/autotune/dispatch.h"

#include "tests/test_dispatch_fixture.h"
#include "tests/test_run_fixture.h"

TestSuite(readonly_db, .init = tmp_setup, .fini = tmp_teardown, .timeout = 60);

#define NOBODY 65534
#define CANNOT_DROP 77 /* a reader's exit status: could not become nobody */

static const atd_gpu h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85520809984LL };

/* A WAL database (as the sweep writes) with one tuned f32 shape,
 * 4096 x 1000, at tmp_path(name). */
static void make_db(const char *name)
{
	tdb *db = td_db_new(name);
	long long gpu = td_gpu(db, h100.name, 9, 0, 132, h100.mem_bytes);
	td_shape(db, td_sweep(db, gpu), gpu, "softmax", AT_F32, 4096, 1000, "tuned", "t=1", 1, 0);
	tdb_close(db);
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Fails the test if anything but the database is in the folder. */
static void expect_alone(const char *folder, const char *db_name)
{
	char path[600];
	static const char *const extra[] = { "-wal", "-shm", "-journal" };
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s%s", folder, db_name, extra[i]);
		cr_assert(!exists(path), "reading left %s behind", path);
	}
}

/* tmp_path(name), kept (tmp_path's own results are reused after eight). */
static const char *kept_path(const char *name)
{
	static char paths[4][512];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, sizeof paths[0], "%s", tmp_path(name));
	return p;
}

/* tmp_path("ro/x.db"), its folder made read-only (0555) and the temporary
 * folder above it passable, so that nobody can reach it. */
static const char *make_readonly_folder_db(void)
{
	cr_assert_eq(mkdir(tmp_path("ro"), 0755), 0);
	make_db("ro/x.db");
	expect_alone(tmp_path("ro"), "x.db");
	cr_assert_eq(chmod(tmp_folder(), 0755), 0);
	cr_assert_eq(chmod(tmp_path("ro/x.db"), 0644), 0);
	cr_assert_eq(chmod(tmp_path("ro"), 0555), 0);
	return kept_path("ro/x.db");
}

/* In a child process: become nobody if root, check that the folder is
 * read-only for this user, then exit with fn's status. */
static void become_reader(const char *folder)
{
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0))
		_exit(CANNOT_DROP);
	if (access(folder, W_OK) == 0) {
		fprintf(stderr, "%s is writable for uid %d\n", folder, (int)geteuid());
		_exit(CANNOT_DROP);
	}
}

/* Runs fn(path) in a reader of the read-only folder; fails the test if fn
 * returns non-zero. */
static void as_reader(const char *path, int (*fn)(const char *path))
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		become_reader(tmp_path("ro"));
		_exit(fn(path));
	}
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	cr_assert(WIFEXITED(ws), "the reader died with signal %d", WTERMSIG(ws));
	if (WEXITSTATUS(ws) == CANNOT_DROP)
		cr_skip_test("cannot read as a user whom the read-only folder binds");
	cr_assert_eq(WEXITSTATUS(ws), 0, "the reader failed (status %d); see stderr",
		     WEXITSTATUS(ws));
}

/* The reader's checks print what failed and return 1. */
#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			fprintf(stderr, __VA_ARGS__);     \
			fputc('\n', stderr);              \
			return 1;                         \
		}                                         \
	} while (0)

static int count_winner(const winner_row *w, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static int tuner_reads(const char *path)
{
	tdb *db;
	at_error err = { { 0 } };
	CHECK(tdb_open_readonly(path, &db, &err) == 0, "tdb_open_readonly: %s", err.msg);
	int n = 0;
	int rc = tdb_each_winner(db, count_winner, &n, &err);
	tdb_close(db);
	CHECK(rc == 0, "tdb_each_winner: %s", err.msg);
	CHECK(n == 1, "%d winners, want 1", n);
	return 0;
}

static int library_reads(const char *path)
{
	for (unsigned flags = 0; flags <= ATD_OPEN_FALLBACK; flags += ATD_OPEN_FALLBACK) {
		atd_handle *h;
		atd_status s = atd_open(path, flags | ATD_OPEN_NO_JIT, &h);
		CHECK(s == ATD_OK, "atd_open: %s: %s", atd_status_string(s), atd_errmsg(NULL));
		CHECK(!*atd_errmsg(h), "atd_open fell back: %s", atd_errmsg(h));
		atd_choice c;
		s = atd_query_gpu(h, &h100, ATD_F32, 4096, 1000, &c);
		atd_close(h);
		CHECK(s == ATD_OK && c.level == ATD_LEVEL_EXACT, "level %s, want exact",
		      atd_level_name(c.level));
	}
	return 0;
}

Test(readonly_db, the_tuner_reads_a_database_in_a_folder_it_cannot_write)
{
	const char *path = make_readonly_folder_db();
	as_reader(path, tuner_reads);
	expect_alone(tmp_path("ro"), "x.db");
}

Test(readonly_db, the_library_reads_it_without_falling_back)
{
	const char *path = make_readonly_folder_db();
	as_reader(path, library_reads);
	expect_alone(tmp_path("ro"), "x.db");
}

static void become_folder_reader(void)
{
	become_reader(tmp_path("ro"));
}

/* Runs build/autotune ARGS as a reader of the read-only folder. */
static tr_result run_as_reader(const char *const *args)
{
	tr_result r = tr_run_as(args, NULL, become_folder_reader);
	if (r.status == CANNOT_DROP)
		cr_skip_test("cannot read as a user whom the read-only folder binds");
	return r;
}

Test(readonly_db, list_show_report_and_export_read_it)
{
	const char *path = make_readonly_folder_db();
	tr_result r = run_as_reader((const char *const[]){ "list", "--db", path, NULL });
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "t=1");
	tr_free(&r);
	r = run_as_reader((const char *const[]){ "show", "--db", path, "--gpu", h100.name, "--cc",
						 "9.0", "-M", "4096", "-N", "1000", NULL });
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "level       exact");
	tr_free(&r);
	/* the page and the exported file go to a folder the reader may write */
	cr_assert_eq(mkdir(tmp_path("out"), 0777), 0);
	cr_assert_eq(chmod(tmp_path("out"), 0777), 0);
	r = run_as_reader((const char *const[]){ "report", "--db", path, "-o",
						 tmp_path("out/r.html"), NULL });
	tr_expect_status(&r, 0);
	tr_free(&r);
	cr_assert(exists(tmp_path("out/r.html")));
	r = run_as_reader((const char *const[]){ "db", "export", path, tmp_path("out/ship.db"),
						 NULL });
	tr_expect_status(&r, 0);
	tr_expect_in(r.out, "1 winners");
	tr_free(&r);
	expect_alone(tmp_path("ro"), "x.db");
}

Test(readonly_db, reading_in_a_writable_folder_leaves_no_wal_or_shm_behind)
{
	make_db("x.db");
	const char *path = kept_path("x.db");
	expect_alone(tmp_folder(), "x.db");
	cr_assert_eq(tuner_reads(path), 0);
	expect_alone(tmp_folder(), "x.db");
	cr_assert_eq(library_reads(path), 0);
	expect_alone(tmp_folder(), "x.db");
	tr_result r = RUN("list", "--db", path);
	tr_expect_status(&r, 0);
	tr_free(&r);
	r = RUN("report", "--db", path, "-o", tmp_path("r.html"));
	tr_expect_status(&r, 0);
	tr_free(&r);
	r = RUN("db", "export", path, tmp_path("ship.db"));
	tr_expect_status(&r, 0);
	tr_free(&r);
	expect_alone(tmp_folder(), "x.db");
	/* and a database being written is read through the writer's files */
	tdb *writer;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(path, &writer, &err), 0, "%s", err.msg);
	cr_assert(exists(tmp_path("x.db-wal")));
	cr_assert_eq(library_reads(path), 0);
	cr_assert_eq(tuner_reads(path), 0);
	tdb_close(writer);
	expect_alone(tmp_folder(), "x.db");
}

static int reads_immutable(const char *path)
{
	at_read_mode m = at_sqlite_read_mode(path);
	CHECK(m == AT_READ_IMMUTABLE, "mode %d, want immutable", (int)m);
	return 0;
}

static int reads_shared(const char *path)
{
	at_read_mode m = at_sqlite_read_mode(path);
	CHECK(m == AT_READ_SHARED, "mode %d, want shared", (int)m);
	return 0;
}

Test(readonly_db, the_rule_picks_by_who_may_write_and_what_is_beside_the_file)
{
	make_db("x.db");
	cr_assert_eq(at_sqlite_read_mode(tmp_path("x.db")), AT_READ_QUERY_ONLY,
		     "its writer reads through SQLite's locks");
	const char *path = make_readonly_folder_db();
	as_reader(path, reads_immutable);
	/* a writer's rollback journal (or log) beside it: read through it */
	cr_assert_eq(chmod(tmp_path("ro"), 0755), 0);
	tmp_write("ro/x.db-journal", "");
	cr_assert_eq(chmod(tmp_path("ro"), 0555), 0);
	as_reader(path, reads_shared);

	char *uri = at_sqlite_uri("/a b/c?d#e%f.db", AT_READ_IMMUTABLE);
	cr_assert_str_eq(uri, "file:///a%20b/c%3Fd%23e%25f.db?mode=ro&immutable=1");
	free(uri);
	uri = at_sqlite_uri("rel/x.db", AT_READ_SHARED);
	cr_assert_str_eq(uri, "file:./rel/x.db?mode=ro");
	free(uri);
	uri = at_sqlite_uri("//x.db", AT_READ_QUERY_ONLY);
	cr_assert_str_eq(uri, "file:////x.db");
	free(uri);
}

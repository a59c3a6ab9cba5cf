/* The persistent compile cache (tuner/sweep/kernel_cache.c with a database) and
 * the schema migration from version 1. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "tuner/sweep/kernel_cache.h"

#include "tests/sql_probe.h"
#include "tests/tmp_folder.h"

static const char good[] =
	"extern \"C\" __global__ void softmax_kernel(float *y) { y[threadIdx.x] = 1.0f; }\n";
static const char bad[] = "extern \"C\" __global__ void softmax_kernel(float *y) { y = ; }\n";

static tdb *open_db(const char *name)
{
	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open(tmp_path(name), &db, &err), 0, "%s", err.msg);
	return db;
}

Test(compile_cache, a_second_run_compiles_nothing, .init = tmp_setup, .fini = tmp_teardown)
{
	tdb *db = open_db("a.db");
	char *sources[] = { (char *)good, (char *)bad };
	kernel_entry *first[2], *second[2];
	at_error err = { { 0 } };

	kernel_cache c1;
	kernel_cache_init(&c1, 90, 2, db);
	cr_assert_eq(kernel_cache_get(&c1, sources, 2, first, &err), 0, "%s", err.msg);
	cr_assert_eq(c1.compiled, 2);
	cr_assert_eq(c1.from_db, 0);
	cr_assert_eq(first[0]->status, COMPILE_OK);
	cr_assert_eq(first[1]->status, COMPILE_FAILED);

	kernel_cache c2;
	kernel_cache_init(&c2, 90, 2, db);
	cr_assert_eq(kernel_cache_get(&c2, sources, 2, second, &err), 0, "%s", err.msg);
	cr_assert_eq(c2.compiled, 0);
	cr_assert_eq(c2.from_db, 2);
	cr_assert_eq(second[0]->status, COMPILE_OK);
	cr_assert(second[0]->from_db);
	cr_assert_eq(second[0]->k.cubin_size, first[0]->k.cubin_size);
	cr_assert_eq(memcmp(second[0]->k.cubin, first[0]->k.cubin, first[0]->k.cubin_size), 0);
	cr_assert_str_eq(second[0]->k.ptx, first[0]->k.ptx);
	cr_assert_eq(second[0]->k.registers, first[0]->k.registers);
	cr_assert_eq(second[1]->status, COMPILE_FAILED);
	cr_assert_str_eq(second[1]->k.log, first[1]->k.log);

	/* another architecture is another kernel */
	kernel_cache c3;
	kernel_cache_init(&c3, 80, 2, db);
	cr_assert_eq(kernel_cache_get(&c3, sources, 1, second, &err), 0, "%s", err.msg);
	cr_assert_eq(c3.compiled, 1);
	cr_assert_eq(c3.from_db, 0);

	kernel_cache_free(&c1);
	kernel_cache_free(&c2);
	kernel_cache_free(&c3);
	tdb_close(db);
}

Test(compile_cache, keys_depend_on_source_and_architecture)
{
	char a[33], b[33], c[33], d[33];
	kernel_cache_key(good, 90, a);
	kernel_cache_key(good, 90, b);
	kernel_cache_key(good, 80, c);
	kernel_cache_key(bad, 90, d);
	cr_assert_eq(strlen(a), 32);
	cr_assert_str_eq(a, b);
	cr_assert_str_neq(a, c);
	cr_assert_str_neq(a, d);
}

Test(compile_cache, a_version_1_database_is_read_as_is_and_migrated_on_write,
     .init = tmp_setup, .fini = tmp_teardown)
{
	tdb_close(open_db("v1.db"));
	const char *path = tmp_path("v1.db");
	sql_exec(path, "DROP TABLE compile_cache; ALTER TABLE winners DROP COLUMN noise_band; "
		       "PRAGMA user_version = 1;");

	tdb *db;
	at_error err = { { 0 } };
	cr_assert_eq(tdb_open_readonly(path, &db, &err), 0, "%s", err.msg);
	tdb_close(db);
	cr_assert_eq(sql_int(path, "PRAGMA user_version"), 1);

	cr_assert_eq(tdb_open(path, &db, &err), 0, "%s", err.msg);
	tdb_close(db);
	cr_assert_eq(sql_int(path, "PRAGMA user_version"), TDB_SCHEMA_VERSION);
	cr_assert_eq(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'compile_cache'"), 1);
	cr_assert_eq(sql_int(path, "SELECT count(*) FROM pragma_table_info('winners') "
				   "WHERE name = 'noise_band'"), 1);
}

/* Distinct small kernels: y = i. */
static char **numbered_sources(size_t n)
{
	char **s = calloc(n, sizeof *s);
	for (size_t i = 0; i < n; i++) {
		char buf[160];
		snprintf(buf, sizeof buf,
			 "extern \"C\" __global__ void softmax_kernel(float *y) { y[threadIdx.x] = %zu.0f; }\n",
			 i);
		s[i] = strdup(buf);
	}
	return s;
}

static void free_sources(char **s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

Test(compile_cache, prefetched_kernels_compile_in_the_background_and_a_get_finds_them,
     .init = tmp_setup, .fini = tmp_teardown)
{
	tdb *db = open_db("p.db");
	enum { N = 6 };
	char **sources = numbered_sources(N);
	at_error err = { { 0 } };
	kernel_cache c;
	kernel_cache_init(&c, 90, 3, db);
	cr_assert_eq(kernel_cache_prefetch(&c, sources, N, &err), 0, "%s", err.msg);
	cr_assert_eq(c.count, N);
	/* prefetching the same again queues nothing more */
	cr_assert_eq(kernel_cache_prefetch(&c, sources, N, &err), 0, "%s", err.msg);
	cr_assert_eq(c.count, N);
	for (int i = 0; i < 600 && kernel_cache_pending(&c) > 0; i++)
		usleep(50 * 1000);
	cr_assert_eq(kernel_cache_pending(&c), 0, "the pool did not finish in 30 s");
	cr_assert_eq(c.compiled, N);

	kernel_entry *e[N];
	cr_assert_eq(kernel_cache_get(&c, sources, N, e, &err), 0, "%s", err.msg);
	cr_assert_eq(c.compiled, N, "a get of prefetched kernels compiles nothing");
	cr_assert_eq(c.compile_ms, 0, "nor waits");
	for (int i = 0; i < N; i++) {
		cr_assert_eq(e[i]->state, ENTRY_READY);
		cr_assert_eq(e[i]->status, COMPILE_OK, "%s", e[i]->k.log);
		cr_assert_gt(e[i]->k.cubin_size, 0);
	}
	cr_assert_gt(c.compile_cpu_ms, 0);
	kernel_cache_free(&c);

	/* they were stored in the database */
	kernel_cache c2;
	kernel_cache_init(&c2, 90, 3, db);
	cr_assert_eq(kernel_cache_get(&c2, sources, N, e, &err), 0, "%s", err.msg);
	cr_assert_eq(c2.compiled, 0);
	cr_assert_eq(c2.from_db, N);
	kernel_cache_free(&c2);
	free_sources(sources, N);
	tdb_close(db);
}

Test(compile_cache, a_get_waits_for_kernels_queued_behind_prefetches)
{
	enum { AHEAD = 8, N = 3 };
	char **sources = numbered_sources(AHEAD + N);
	at_error err = { { 0 } };
	kernel_cache c;
	kernel_cache_init(&c, 90, 1, NULL); /* one pool thread, and the caller */
	cr_assert_eq(kernel_cache_prefetch(&c, sources, AHEAD + N, &err), 0, "%s", err.msg);
	kernel_entry *e[N];
	cr_assert_eq(kernel_cache_get(&c, sources + AHEAD, N, e, &err), 0, "%s", err.msg);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(e[i]->state, ENTRY_READY);
		cr_assert_eq(e[i]->status, COMPILE_OK, "%s", e[i]->k.log);
	}
	/* the last ones queued came first: some prefetches are still waiting */
	cr_assert_lt(c.compiled, AHEAD + N);
	kernel_cache_free(&c); /* drops what is still queued */
	free_sources(sources, AHEAD + N);
}

Test(compile_cache, freeing_a_cache_with_queued_kernels_stores_only_the_compiled_ones,
     .init = tmp_setup, .fini = tmp_teardown)
{
	tdb *db = open_db("q.db");
	enum { N = 40 };
	char **sources = numbered_sources(N);
	at_error err = { { 0 } };
	kernel_cache c;
	kernel_cache_init(&c, 90, 1, db);
	cr_assert_eq(kernel_cache_prefetch(&c, sources, N, &err), 0, "%s", err.msg);
	kernel_cache_free(&c);
	const char *path = tmp_path("q.db");
	int stored = (int)sql_int(path, "SELECT count(*) FROM compile_cache");
	cr_assert_lt(stored, N, "40 kernels cannot all have compiled at once");

	kernel_cache c2;
	kernel_cache_init(&c2, 90, 2, db);
	kernel_entry **e = calloc(N, sizeof *e);
	cr_assert_eq(kernel_cache_get(&c2, sources, N, e, &err), 0, "%s", err.msg);
	cr_assert_eq(c2.from_db, (size_t)stored);
	cr_assert_eq(c2.compiled, N - (size_t)stored);
	for (int i = 0; i < N; i++)
		cr_assert_eq(e[i]->status, COMPILE_OK);
	free(e);
	kernel_cache_free(&c2);
	free_sources(sources, N);
	tdb_close(db);
}

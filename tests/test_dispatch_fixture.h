/* Tuning databases for the dispatch tests (tests/test_dispatch_fixture.c),
 * written through the tuner's own writer (db/tuning_db.h) so that the
 * library is tested against exactly what `autotune sweep` stores. The
 * databases go in the test's temporary folder (tests/tmp_folder.h). */
#ifndef TESTS_TEST_DISPATCH_FIXTURE_H
#define TESTS_TEST_DISPATCH_FIXTURE_H

#include "db/tuning_db.h"
#include "tests/tmp_folder.h"

/* A new database tmp_path(name), fsync off. */
tdb *td_db_new(const char *name);
/* The id of a GPU row / of a new sweep on it. */
long long td_gpu(tdb *db, const char *name, int cc_major, int cc_minor, int sm_count,
		 long long mem_bytes);
long long td_sweep(tdb *db, long long gpu_id);
/* Stores a shape whose winner is one passing variant (with a slower one
 * beside it); returns the winner's result id. */
long long td_shape(tdb *db, long long sweep, long long gpu, const char *op, at_dtype dt,
		   long long M, long long N, const char *tmpl, const char *params, double us,
		   long long max_n);
/* A winner whose code was not stored. */
long long td_shape_nocode(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
			  long long N, const char *tmpl);
/* A shape where no variant passed. */
void td_shape_failed(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
		     long long N);

#endif

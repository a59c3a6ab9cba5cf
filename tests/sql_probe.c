/* The helpers of tests/sql_probe.h (no tests here). */
#include <criterion/criterion.h>
#include <sqlite3.h>

#include "tests/sql_probe.h"

long long sql_int(const char *path, const char *sql)
{
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(path, &s), SQLITE_OK, "cannot open %s", path);
	sqlite3_stmt *st;
	cr_assert_eq(sqlite3_prepare_v2(s, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(s));
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(s);
	return v;
}

void sql_exec(const char *path, const char *sql)
{
	sqlite3 *s;
	cr_assert_eq(sqlite3_open(path, &s), SQLITE_OK, "cannot open %s", path);
	cr_assert_eq(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(s));
	sqlite3_close(s);
}

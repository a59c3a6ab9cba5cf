/* SQLite run directly on a database file (tests/sql_probe.c), beside the
 * tuner's writer and the dispatch library's reader: to read back what they
 * stored, or to make an old or damaged database. One copy for the database
 * tests. */
#ifndef TESTS_SQL_PROBE_H
#define TESTS_SQL_PROBE_H

/* The first column of the first row sql gives on the database at path;
 * fails the test if sql fails or gives no row. */
long long sql_int(const char *path, const char *sql);
/* Runs sql (one or more statements) on the database at path; fails the test
 * if it fails. */
void sql_exec(const char *path, const char *sql);

#endif

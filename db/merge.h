/* Merging tuning databases (`autotune db merge OUT IN...`), for sweeps run
 * in shards on several machines: every GPU, sweep, result and stored kernel
 * of the inputs is copied into OUT (a sweep already there, by GPU, start
 * time and config, is skipped, so merging twice changes nothing), then the
 * winner of every shape is chosen again among the sweeps' own winners (the
 * results with a stored kernel) by the sweep's rule (db/winners.h), so that
 * every winner keeps its kernel. Inputs of another schema version, and an
 * input with a winner whose shape has no stored kernel, are refused before
 * anything is written. */
#ifndef AT_DB_MERGE_H
#define AT_DB_MERGE_H

#include <stddef.h>

#include "common/error.h"

typedef struct merge_stats {
	long long sweeps, sweeps_skipped, results, shapes;
} merge_stats;

/* Merges inputs[0..n) into out (created if missing). One transaction per
 * input, so a failure leaves OUT as it was before that input; stats count
 * inside it what that input added. */
int db_merge(const char *out, const char *const *inputs, size_t n, merge_stats *stats,
	     at_error *err);

/* 0 if path is a tuning database of exactly this program's schema version,
 * else -1 with a message (verb: what was refused, e.g. "merge"). */
int db_check_input(const char *path, const char *verb, at_error *err);

struct sqlite3;
/* Attaches path as schema "src" of s (opened with SQLITE_OPEN_URI, as
 * tdb_open does), to be read as common/sqlite_reader.h reads. */
int db_attach_source(struct sqlite3 *s, const char *path, at_error *err);

/* The first column of the first row of sql, or -1. */
long long db_query_ll(struct sqlite3 *s, const char *sql);

/* Whether a and b name the same existing file. */
int db_same_file(const char *a, const char *b);

#endif

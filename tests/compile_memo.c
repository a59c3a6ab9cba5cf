/* The compile memo of the template tests: see compile_memo.h. A memo that
 * cannot be opened or written is no memo: the source is compiled. */
#include "tests/compile_memo.h"

#include <stdlib.h>
#include <string.h>

#include "db/tuning_db.h"
#include "tuner/sweep/kernel_cache.h"

/* One database per test process (Criterion runs each test in its own),
 * closed when the process exits so that its write-ahead log is folded in. */
static tdb *memo;

static void close_memo(void)
{
	tdb_close(memo);
	memo = NULL;
}

static tdb *memo_db(void)
{
	static int tried;
	if (!tried) {
		tried = 1;
		const char *path = getenv(COMPILE_MEMO_ENV);
		at_error err;
		if (path && *path && tdb_open(path, &memo, &err) != 0)
			memo = NULL;
		if (memo)
			atexit(close_memo);
	}
	return memo;
}

static int from_entry(const cache_entry *e, compiled_kernel *out)
{
	memset(out, 0, sizeof *out);
	out->log = e->log;
	out->compile_ms = e->compile_ms;
	free(e->cubin);
	if (e->status != 0) {
		free(e->ptx);
		return COMPILE_FAILED;
	}
	out->ptx = e->ptx ? e->ptx : strdup("");
	nvrtc_parse_resources(out->log, out);
	return COMPILE_OK;
}

int memo_compile(const char *src, const char *name, int cc, compiled_kernel *out,
		 at_error *err, int *from_memo)
{
	if (from_memo)
		*from_memo = 0;
	tdb *db = memo_db();
	char key[33];
	if (db) {
		kernel_cache_key(src, cc, key);
		cache_entry e;
		int found = 0;
		at_error ignored;
		if (tdb_cache_get(db, key, &e, &found, &ignored) == 0 && found) {
			if (from_memo)
				*from_memo = 1;
			return from_entry(&e, out);
		}
	}
	int rc = nvrtc_compile(src, name, cc, out, err);
	if (db && rc != COMPILE_ERROR) {
		cache_entry e = { .status = rc == COMPILE_OK ? 0 : 1, .ptx = out->ptx,
				  .log = out->log, .registers = out->registers,
				  .smem_bytes = out->smem_bytes, .spill_bytes = out->spill_bytes,
				  .stack_bytes = out->stack_bytes, .compile_ms = out->compile_ms };
		const char *keys[] = { key };
		const cache_entry *entries[] = { &e };
		at_error ignored;
		(void)tdb_cache_put(db, keys, entries, 1, cc, nvrtc_version_string(), &ignored);
	}
	return rc;
}

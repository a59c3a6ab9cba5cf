/* The dispatch library's own read-only reader of the tuning database
 * (db/schema.sql): opening and checking a file, reading every winner's
 * metadata into an atdi_table, and fetching one winner's code on first use.
 * It shares only the schema version and default path with the tuner's
 * writer (db/tuning_db.h), so the library links nothing of the tuner. */
#ifndef AT_DISPATCH_TUNED_DB_H
#define AT_DISPATCH_TUNED_DB_H

#include <stddef.h>

#include "dispatch/policy/tuned_table.h"

struct sqlite3;

/* Opens path read-only (never creating it) and checks that it is a tuning
 * database whose schema this library reads. Returns ATD_OK and *out, or
 * ATD_ERR_DB_MISSING, ATD_ERR_DB_CORRUPT, ATD_ERR_DB_NEWER,
 * ATD_ERR_NO_MEMORY with *out NULL and a message in msg. */
atd_status atdi_db_open(const char *path, struct sqlite3 **out, char *msg, size_t cap);

/* Reads the gpus and every usable winner of an op the library serves
 * (row_ops.h) into t (emptied first):
 * rows with a NULL result_id, no stored code, an unknown dtype or a
 * nonsensical geometry are left out; those with no stored code are listed
 * in t->missing, for warnings. Returns ATD_OK, ATD_ERR_DB_CORRUPT
 * (e.g. missing tables) or ATD_ERR_NO_MEMORY with a message. */
atd_status atdi_db_load(struct sqlite3 *db, const char *path, atdi_table *t, char *msg,
			size_t cap);

/* One winner's code, ready for cuModuleLoadData. */
typedef struct atdi_code {
	int arch;     /* what the cubin was built for, e.g. 90 */
	int is_ptx;   /* image is NUL-terminated PTX rather than a cubin */
	char *entry;  /* the kernel's name */
	void *image;
	size_t size;
} atdi_code;

/* Fetches result_id's code: the cubin if it was built for gpu_arch (e.g.
 * 90), else the PTX, which the driver compiles for the GPU. In a database
 * of schema version 4 the image must match the digest stored beside it.
 * Returns ATD_OK, ATD_ERR_NO_KERNEL (no code, or no PTX for another arch),
 * ATD_ERR_KERNEL_ALTERED (a digest that does not match, or none),
 * ATD_ERR_DB_CORRUPT or ATD_ERR_NO_MEMORY with a message. Not thread-safe
 * for one db: the caller serialises. */
atd_status atdi_db_code(struct sqlite3 *db, long long result_id, int gpu_arch, atdi_code *out,
			char *msg, size_t cap);

/* Checks both of result_id's images (cubin and PTX) against their digests,
 * as atdi_db_code would before loading either: ATD_OK (also in a database
 * older than version 4, which keeps none), ATD_ERR_KERNEL_ALTERED,
 * ATD_ERR_NO_KERNEL, ATD_ERR_DB_CORRUPT or ATD_ERR_NO_MEMORY with a
 * message. Not thread-safe for one db. */
atd_status atdi_db_verify(struct sqlite3 *db, long long result_id, char *msg, size_t cap);

/* NULL-safe; empties c. */
void atdi_code_free(atdi_code *c);

#endif

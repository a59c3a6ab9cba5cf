/* Compiled kernels of one run, keyed by their specialised source: a variant
 * that serves several shapes (kernels take M and N at run time) is compiled
 * once, and the misses of a batch are compiled in parallel, one thread per
 * core. With a database, kernels also persist across runs in its
 * compile_cache table, keyed by a hash of the source, the NVRTC options,
 * the NVRTC version and the architecture: a second sweep of a config
 * compiles nothing. */
#ifndef AT_TUNER_KERNEL_CACHE_H
#define AT_TUNER_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "db/tuning_db.h"
#include "dispatch/cuda_driver.h"
#include "gen/nvrtc_compile.h"

typedef struct kernel_entry {
	char *source;
	uint64_t hash;
	int status;            /* COMPILE_OK, COMPILE_FAILED or COMPILE_ERROR */
	int from_db;           /* loaded from the database's compile cache */
	char key[33];          /* the persistent cache key */
	char *error;           /* for COMPILE_ERROR */
	compiled_kernel k;
	CUmodule module;       /* loaded on first use when a GPU is present */
	CUfunction fn;
	struct kernel_entry *next;
} kernel_entry;

typedef struct kernel_cache {
	kernel_entry **buckets;
	size_t nbuckets;
	size_t count;
	int cc;                /* architecture compiled for, e.g. 90 */
	int nthreads;
	double compile_ms;     /* wall time spent compiling */
	size_t compiled;       /* programs compiled in this run */
	size_t from_db;        /* programs found in the database's cache */
	tdb *db;               /* NULL: no persistent cache */
} kernel_cache;

/* db may be NULL. The cache does not own it. */
void kernel_cache_init(kernel_cache *c, int cc, int nthreads, tdb *db);

/* The persistent key of a source compiled for sm_<cc>: 32 hex digits. */
void kernel_cache_key(const char *source, int cc, char key[33]);

/* Unloads modules (if a context is current) and frees everything. */
void kernel_cache_free(kernel_cache *c);

/* For each sources[i], sets entries[i] to its cache entry, compiling the
 * sources not seen before (nor in the database) in parallel. The cache
 * copies the sources. Fails only if the database does. */
int kernel_cache_get(kernel_cache *c, char *const *sources, size_t n,
		     kernel_entry **entries, at_error *err);

/* Loads e's module and function in the current context (once). */
int kernel_entry_load(kernel_entry *e, at_error *err);

#endif

/* Compiled kernels of one run, keyed by their specialised source: a variant
 * that serves several shapes (kernels take M and N at run time) is compiled
 * once, and the misses of a batch are compiled in parallel, one thread per
 * core. */
#ifndef AT_TUNER_KERNEL_CACHE_H
#define AT_TUNER_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch/cuda_driver.h"
#include "gen/nvrtc_compile.h"

typedef struct kernel_entry {
	char *source;
	uint64_t hash;
	int status;            /* COMPILE_OK, COMPILE_FAILED or COMPILE_ERROR */
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
	size_t compiled;       /* programs compiled (misses) */
} kernel_cache;

void kernel_cache_init(kernel_cache *c, int cc, int nthreads);

/* Unloads modules (if a context is current) and frees everything. */
void kernel_cache_free(kernel_cache *c);

/* For each sources[i], sets entries[i] to its cache entry, compiling the
 * sources not seen before in parallel. The cache copies the sources. */
void kernel_cache_get(kernel_cache *c, char *const *sources, size_t n,
		      kernel_entry **entries);

/* Loads e's module and function in the current context (once). */
int kernel_entry_load(kernel_entry *e, at_error *err);

#endif

/* Compiled kernels of one run, keyed by their specialised source: a variant
 * that serves several shapes (kernels take M and N at run time) is compiled
 * once. With a database, kernels also persist across runs in its
 * compile_cache table, keyed by a hash of the source, the NVRTC options,
 * the NVRTC version and the architecture: a second sweep of a config
 * compiles nothing.
 *
 * Compiling is done by a pool of threads (one per core) that lives as long
 * as the cache. kernel_cache_get waits for the kernels it asks for, which go
 * to the front of the queue; kernel_cache_prefetch queues kernels that will
 * be asked for later and returns at once, so that they compile while the
 * caller does other work (the GPU times the current shape). Pool threads run
 * at a lower priority than the caller's. Only the calling thread touches
 * the database: compiled kernels are stored by the next get or prefetch. */
#ifndef AT_TUNER_KERNEL_CACHE_H
#define AT_TUNER_KERNEL_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "db/tuning_db.h"
#include "cuda/driver.h"
#include "cuda/nvrtc_compile.h"

typedef enum entry_state {
	ENTRY_QUEUED,    /* waiting for a pool thread */
	ENTRY_COMPILING, /* a pool thread has it */
	ENTRY_READY,     /* status, k and error are final */
} entry_state;

typedef struct kernel_entry {
	char *source;
	uint64_t hash;
	entry_state state;     /* under the cache's lock until ENTRY_READY */
	int urgent;            /* a get is waiting for it */
	int status;            /* COMPILE_OK, COMPILE_FAILED or COMPILE_ERROR */
	int from_db;           /* loaded from the database's compile cache */
	int stored;            /* in the database, or not to be stored */
	char key[33];          /* the persistent cache key */
	char *error;           /* for COMPILE_ERROR */
	compiled_kernel k;
	CUmodule module;       /* loaded on first use when a GPU is present */
	CUfunction fn;
	struct kernel_entry *next;
} kernel_entry;

/* A first-in first-out list of entries (a ring that grows). */
typedef struct entry_fifo {
	kernel_entry **items;
	size_t head, count, cap;
} entry_fifo;

typedef struct kernel_cache {
	kernel_entry **buckets;
	size_t nbuckets;
	size_t count;
	int cc;                /* architecture compiled for, e.g. 90 */
	int nthreads;
	double compile_ms;     /* wall time get spent waiting for compiles */
	double compile_cpu_ms; /* NVRTC time summed over the compiled kernels */
	size_t compiled;       /* programs compiled in this run */
	size_t from_db;        /* programs found in the database's cache */
	tdb *db;               /* NULL: no persistent cache */
	/* variant_kernels.h's index: open addressing, at most half full */
	struct variant_slot *vslots;
	size_t vcap, vcount;
	/* Called by the thread waiting in kernel_cache_get or _wait each time
	 * it wakes (a kernel is ready), without the lock (kernel_cache_counts
	 * says how far the compiles are). */
	void (*progress)(void *arg);
	void *progress_arg;
	/* When set, asked at least every KERNEL_CACHE_POLL_MS while a get or
	 * wait waits: non-zero ends the wait early (interrupt.h's Ctrl-C). */
	int (*interrupted)(void);

	/* the pool; everything below is under lock */
	pthread_mutex_t lock;
	pthread_cond_t work;   /* signalled when something is queued or on stop */
	pthread_cond_t done;   /* broadcast when an entry becomes ready */
	entry_fifo urgent;     /* asked for by a get: compiled first */
	entry_fifo ahead;      /* prefetched */
	entry_fifo finished;   /* ready, not yet stored in the database */
	size_t pending;        /* queued or compiling */
	size_t running;        /* compiling */
	double first_start_ms; /* when the first compile of this run began; 0: none yet */
	pthread_t *threads;
	int nstarted;
	int stop;
} kernel_cache;

/* kernel_cache_get and _wait's value when c->interrupted ended the wait
 * before every entry was ready (what was compiled is stored all the same). */
#define KERNEL_CACHE_INTERRUPTED 1
#define KERNEL_CACHE_POLL_MS 100

/* db may be NULL. The cache does not own it. */
void kernel_cache_init(kernel_cache *c, int cc, int nthreads, tdb *db);

/* The persistent key of a source compiled for sm_<cc>: 32 hex digits. */
void kernel_cache_key(const char *source, int cc, char key[33]);

/* Stops the pool: kernels being compiled are finished and stored, queued
 * ones left queued (a later get or wait compiles them after all). Fails
 * only if the database does. */
int kernel_cache_stop(kernel_cache *c, at_error *err);

/* kernel_cache_stop (a database error ignored: it is only a cache), then
 * unloads modules (if a context is current) and frees everything. */
void kernel_cache_free(kernel_cache *c);

/* For each sources[i], sets entries[i] to its cache entry, compiling the
 * sources not seen before (nor in the database), and waits until all are
 * ready, or returns KERNEL_CACHE_INTERRUPTED when c->interrupted says so.
 * The cache copies the sources. Fails (-1) only if the database does. */
int kernel_cache_get(kernel_cache *c, char *const *sources, size_t n,
		     kernel_entry **entries, at_error *err);

/* Queues the sources not seen before (nor in the database) for compiling
 * in the background and returns without waiting. Fails only if the
 * database does. */
int kernel_cache_prefetch(kernel_cache *c, char *const *sources, size_t n, at_error *err);

/* kernel_cache_prefetch that also sets entries[i] to sources[i]'s entry,
 * to wait for later with kernel_cache_wait. */
int kernel_cache_queue(kernel_cache *c, char *const *sources, size_t n,
		       kernel_entry **entries, at_error *err);

/* Waits until every one of entries (from kernel_cache_queue) is ready, or
 * c->interrupted says stop (KERNEL_CACHE_INTERRUPTED), moving those still
 * queued to the front; then stores what was compiled. Fails (-1) only if
 * the database does. */
int kernel_cache_wait(kernel_cache *c, kernel_entry **entries, size_t n, at_error *err);

/* How far this run's compiles are, for a progress display. */
typedef struct compile_counts {
	size_t compiled;    /* programs compiled in this run so far */
	size_t running;     /* being compiled now */
	size_t pending;     /* queued or being compiled */
	double compiling_s; /* since the first compile began (0: none has) */
} compile_counts;

void kernel_cache_counts(kernel_cache *c, compile_counts *out);

/* Kernels queued or being compiled now. */
size_t kernel_cache_pending(kernel_cache *c);

/* Loads e's module and its function kernel_name (the op's, at_op.kernel_name)
 * in the current context (once). */
int kernel_entry_load(kernel_entry *e, const char *kernel_name, at_error *err);

#endif

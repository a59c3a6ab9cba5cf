/* Run-time compilation of derived variants (ATD_LEVEL_DERIVED): the
 * variant's source is built from its template's body (kernel_source.h),
 * compiled with NVRTC (loaded at run time) for the GPU, and kept in a
 * persistent cache database keyed by a digest of the source, the
 * architecture and the NVRTC version, so that a later process loads it
 * without compiling. In background mode a worker thread compiles while the
 * caller is served the best kernel already at hand. */
#ifndef AT_DISPATCH_JIT_H
#define AT_DISPATCH_JIT_H

#include <pthread.h>
#include <stddef.h>

#include "common/dtype.h"
#include "common/template_rules.h"
#include "include/autotune/dispatch.h"

typedef enum atdi_jit_mode {
	ATDI_JIT_OFF = 0,
	ATDI_JIT_BLOCK = 1,      /* the first call of a shape compiles, then runs */
	ATDI_JIT_BACKGROUND = 2, /* the first call runs what is at hand; a worker compiles */
} atdi_jit_mode;

/* One derived variant: what is compiled, and for which architecture. */
typedef struct atdi_jit_job {
	const tr_template *rules;
	at_dtype dtype;
	long long values[TR_MAX_PARAMS];
	int arch;
} atdi_jit_job;

/* A compiled image kept in memory, by job key. */
typedef struct atdi_jit_image {
	char *key;
	void *cubin; /* NULL: compiling failed (reason says why) */
	size_t size;
	char *reason;
} atdi_jit_image;

typedef struct atdi_jit {
	atdi_jit_mode mode;
	int tune;          /* online tuning of untuned shapes (ATD_OPEN_TUNE, ATD_TUNE=1) */
	double tune_budget_ms; /* GPU time a shape's tuning may spend timing */
	char off_reason[512]; /* why mode is off although asked for ("" otherwise) */
	char *cache_path;     /* NULL: no persistent cache */
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t wake;
	atdi_jit_image *images;
	size_t nimages, image_cap;
	atdi_jit_job *queue;
	size_t nqueue, queue_cap;
	int worker_started, stopping;
	pthread_t worker;
	unsigned generation; /* bumped when the worker finishes a job */
	unsigned compiles;   /* NVRTC runs (not cache hits), for tests and logs */
} atdi_jit;

/* Sets mode and cache path from flags and the environment (ATD_JIT,
 * ATD_JIT_CACHE, XDG_CACHE_HOME, HOME); see dispatch.h. 0, or -1 (no memory). */
int atdi_jit_init(atdi_jit *j, unsigned open_flags);

/* Stops the worker (waiting for the job it is on) and frees everything. */
void atdi_jit_free(atdi_jit *j);

/* "template dtype sm_XX params": the job's key, into buf. */
void atdi_jit_key(const atdi_jit_job *job, char *buf, size_t cap);

/* The job's cubin, malloc'd into *image: from memory, else the cache
 * database, else compiled now (and stored in both). ATD_OK, or
 * ATD_ERR_NO_KERNEL (NVRTC missing, the source did not compile) or
 * ATD_ERR_NO_MEMORY with why set. */
atd_status atdi_jit_get(atdi_jit *j, const atdi_jit_job *job, void **image, size_t *size,
			char *why, size_t cap);

/* Background mode: whether the job's image is ready (1), failed (-1), or
 * not yet (0, and it is queued unless it already was). */
int atdi_jit_poll(atdi_jit *j, const atdi_jit_job *job);

/* The generation counter, read without the lock's cost on the fast path. */
unsigned atdi_jit_generation(atdi_jit *j);

/* A shape tuned online, as kept in the cache database. */
typedef struct atdi_tuned {
	char template_name[64];
	char params[512];
	double time_us;
} atdi_tuned;

/* The online-tuned variant of (gpu, dtype, M, N) from the cache database:
 * 1 with *out set, 0 when none. */
int atdi_jit_tuned_get(const atdi_jit *j, const atd_gpu *gpu, at_dtype dtype, long long M,
		       long long N, atdi_tuned *out);

/* Keeps an online-tuned variant (replacing an earlier one). Best effort. */
void atdi_jit_tuned_put(const atdi_jit *j, const atd_gpu *gpu, at_dtype dtype, long long M,
			long long N, const atdi_tuned *t, int candidates);

/* The default persistent cache path into buf (for messages and `autotune
 * show`): "" when none can be had. */
void atdi_jit_cache_path(char *buf, size_t cap);

#endif

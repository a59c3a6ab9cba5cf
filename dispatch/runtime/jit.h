/* Run-time compilation of derived variants (ATD_LEVEL_DERIVED): the
 * variant's source is built from its template's body (jit_job.h),
 * compiled with NVRTC (loaded at run time) for the GPU, and kept in
 * memory (jit_images.h) and in a persistent cache database (jit_cache.h),
 * so that a later process loads it without compiling. In background mode
 * a worker thread (jit_queue.h) compiles while the caller is served the
 * best kernel already at hand. The online-tuned store, in the same
 * database, is jit_tuned.h. */
#ifndef AT_DISPATCH_JIT_H
#define AT_DISPATCH_JIT_H

#include <pthread.h>
#include <stddef.h>

#include "dispatch/runtime/jit_building.h"
#include "dispatch/runtime/jit_images.h"
#include "dispatch/runtime/jit_job.h"
#include "dispatch/runtime/jit_queue.h"
#include "include/autotune/dispatch.h"

typedef enum atdi_jit_mode {
	ATDI_JIT_OFF = 0,
	ATDI_JIT_BLOCK = 1,      /* the first call of a shape compiles, then runs */
	ATDI_JIT_BACKGROUND = 2, /* the first call runs what is at hand; a worker compiles */
} atdi_jit_mode;

/* How long a blocking online tuning waits for its candidates to compile,
 * by default (ATD_TUNE_WAIT_MS). */
#define ATDI_TUNE_WAIT_MS_DEFAULT 200

typedef struct atdi_jit {
	atdi_jit_mode mode;
	int tune;          /* online tuning of untuned shapes (ATD_OPEN_TUNE, ATD_TUNE=1) */
	double tune_budget_ms; /* GPU time a shape's tuning may spend timing */
	double tune_wait_ms;   /* how long a blocking tuning waits for its
				  candidates to compile (< 0: for all) */
	char off_reason[512]; /* why mode is off although asked for ("" otherwise) */
	char *cache_path;     /* NULL: no persistent cache */
	pthread_mutex_t lock; /* guards everything below */
	atdi_jit_images images;
	atdi_jit_building building; /* keys some thread is compiling now */
	pthread_cond_t built;       /* broadcast when a compile ends */
	int detached;               /* compiles on threads nobody joins */
	atdi_jit_queue queue;
	unsigned generation; /* bumped when the worker finishes a job */
	unsigned compiles;   /* NVRTC runs (not cache hits), for tests and logs */
} atdi_jit;

/* Sets mode and cache path from flags and the environment (ATD_JIT,
 * ATD_JIT_CACHE, XDG_CACHE_HOME, HOME); see dispatch.h. 0, or -1 (no memory).
 * j must stay where it is until atdi_jit_free (the worker holds it). */
int atdi_jit_init(atdi_jit *j, unsigned open_flags);

/* Stops the worker (waiting for the job it is on) and frees everything. */
void atdi_jit_free(atdi_jit *j);

/* The job's cubin, malloc'd into *image: from memory, else the cache
 * database, else compiled now (and stored in both). ATD_OK, or
 * ATD_ERR_NO_KERNEL (NVRTC missing, the source did not compile) or
 * ATD_ERR_NO_MEMORY with why set. */
atd_status atdi_jit_get(atdi_jit *j, const atdi_jit_job *job, void **image, size_t *size,
			char *why, size_t cap);

/* Compiles the jobs at once, a thread each (NVRTC is thread-safe), and
 * waits until all have ended or wait_ms have passed (wait_ms < 0: until
 * all have ended). ready[i]: 1 built, -1 failed, 0 not yet (still
 * compiling: kept when done, and atdi_jit_free waits for it; or its thread
 * could not start). Returns how many are built. */
int atdi_jit_build_within(atdi_jit *j, const atdi_jit_job *jobs, int n, double wait_ms,
			  int *ready);

/* Background mode: whether the job's image is ready (1), failed (-1), or
 * not yet (0, and it is queued unless it already was). */
int atdi_jit_poll(atdi_jit *j, const atdi_jit_job *job);

/* The generation counter, read without the lock's cost on the fast path. */
unsigned atdi_jit_generation(atdi_jit *j);

#endif

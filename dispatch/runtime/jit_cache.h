/* The persistent cache of derived variants' images: a SQLite database
 * (ATD_JIT_CACHE, else $XDG_CACHE_HOME/autotune/jit.db, else
 * ~/.cache/autotune/jit.db) keyed by a digest of the source, the
 * architecture and the NVRTC version and options, so that a later process
 * loads a variant without compiling. The database also holds the
 * online-tuned store's table (jit_tuned.h). It is opened per lookup (a
 * miss path, once per shape and process); writers race harmlessly (INSERT
 * OR IGNORE of the same bytes) under WAL and a busy timeout. */
#ifndef AT_DISPATCH_JIT_CACHE_H
#define AT_DISPATCH_JIT_CACHE_H

#include <stddef.h>

#include "cuda/nvrtc_compile.h"
#include "dispatch/runtime/jit_job.h"

struct sqlite3;

/* The default persistent cache path into buf (for messages and `autotune
 * show`): "" when none can be had. */
void atdi_jit_cache_path(char *buf, size_t cap);

/* The cache database at path, or NULL (path NULL, or it cannot be opened).
 * write: created (with its folder) if missing, its tables too, in WAL
 * mode; else opened read-only, leaving no -wal/-shm behind. */
struct sqlite3 *atdi_jit_cache_open(const char *path, int write);

/* The cache key of a source compiled for arch (sm_XX) by the loaded NVRTC,
 * into out (33 bytes). */
void atdi_jit_cache_key(const char *src, int arch, char *out, size_t cap);

/* The image stored under key, malloc'd into *image: 1, or 0 (none, no
 * cache, no memory). */
int atdi_jit_cache_get(const char *path, const char *key, void **image, size_t *size);

/* Stores job's compiled image under key. Best effort: a read-only or full
 * cache only costs the next process a compile. */
void atdi_jit_cache_put(const char *path, const char *key, const atdi_jit_job *job,
			const compiled_kernel *k);

#endif

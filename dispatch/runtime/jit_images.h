/* The compiled images of derived variants kept in memory, by job key
 * (jit_job.h), with the failures to compile (so that a variant that does
 * not compile is not compiled again in this process). The owner (jit.h)
 * guards them with its lock. */
#ifndef AT_DISPATCH_JIT_IMAGES_H
#define AT_DISPATCH_JIT_IMAGES_H

#include <stddef.h>

/* A compiled image kept in memory, by job key. */
typedef struct atdi_jit_image {
	char *key;
	void *cubin; /* NULL: compiling failed (reason says why) */
	size_t size;
	char *reason;
} atdi_jit_image;

typedef struct atdi_jit_images {
	atdi_jit_image *v;
	size_t n, cap;
} atdi_jit_images;

/* The image kept for key, or NULL. */
atdi_jit_image *atdi_jit_images_find(atdi_jit_images *s, const char *key);

/* Keeps a copy of the outcome for key (cubin NULL: the failure, reason
 * saying why), unless one is kept already. Best effort: out of memory
 * keeps nothing. */
void atdi_jit_images_keep(atdi_jit_images *s, const char *key, const void *cubin, size_t size,
			  const char *reason);

/* Frees every image and empties s. */
void atdi_jit_images_free(atdi_jit_images *s);

#endif

/* Derived variants' images kept in memory: see jit_images.h. */
#include "dispatch/runtime/jit_images.h"

#include <stdlib.h>
#include <string.h>

atdi_jit_image *atdi_jit_images_find(atdi_jit_images *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0)
			return &s->v[i];
	return NULL;
}

void atdi_jit_images_keep(atdi_jit_images *s, const char *key, const void *cubin, size_t size,
			  const char *reason)
{
	if (atdi_jit_images_find(s, key))
		return;
	if (s->n == s->cap) {
		size_t n = s->cap ? 2 * s->cap : 8;
		atdi_jit_image *v = realloc(s->v, n * sizeof *v);
		if (!v)
			return;
		s->v = v;
		s->cap = n;
	}
	atdi_jit_image im = { strdup(key), cubin ? malloc(size) : NULL, size,
			      reason ? strdup(reason) : NULL };
	if (!im.key || (cubin && !im.cubin)) {
		free(im.key);
		free(im.cubin);
		free(im.reason);
		return;
	}
	if (cubin)
		memcpy(im.cubin, cubin, size);
	s->v[s->n++] = im;
}

void atdi_jit_images_free(atdi_jit_images *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].cubin);
		free(s->v[i].reason);
	}
	free(s->v);
	memset(s, 0, sizeof *s);
}

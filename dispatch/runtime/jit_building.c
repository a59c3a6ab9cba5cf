/* The jobs being compiled: see jit_building.h. */
#include "dispatch/runtime/jit_building.h"

#include <stdlib.h>
#include <string.h>

int atdi_jit_building_has(const atdi_jit_building *b, const char *key)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->keys[i], key) == 0)
			return 1;
	return 0;
}

int atdi_jit_building_add(atdi_jit_building *b, const char *key)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		char **keys = realloc(b->keys, cap * sizeof *keys);
		if (!keys)
			return -1;
		b->keys = keys;
		b->cap = cap;
	}
	if (!(b->keys[b->n] = strdup(key)))
		return -1;
	b->n++;
	return 0;
}

void atdi_jit_building_remove(atdi_jit_building *b, const char *key)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->keys[i], key) == 0) {
			free(b->keys[i]);
			b->keys[i] = b->keys[--b->n];
			return;
		}
}

void atdi_jit_building_free(atdi_jit_building *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->keys[i]);
	free(b->keys);
	memset(b, 0, sizeof *b);
}

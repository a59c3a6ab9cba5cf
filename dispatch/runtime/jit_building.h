/* The keys of the jobs some thread is compiling now, so that a second
 * thread asking for one waits for that compile instead of running its own
 * (a tuning's candidates left compiling past its wait, then asked for again
 * by the background tuner). The owner (jit.h) guards it with its lock. */
#ifndef AT_DISPATCH_JIT_BUILDING_H
#define AT_DISPATCH_JIT_BUILDING_H

#include <stddef.h>

typedef struct atdi_jit_building {
	char **keys;
	size_t n, cap;
} atdi_jit_building;

/* Whether key is being compiled. */
int atdi_jit_building_has(const atdi_jit_building *b, const char *key);

/* Marks key as being compiled: 0, or -1 (no memory: nothing marked, and a
 * second asker compiles it too, as before this set existed). */
int atdi_jit_building_add(atdi_jit_building *b, const char *key);

/* Unmarks key (if marked). */
void atdi_jit_building_remove(atdi_jit_building *b, const char *key);

void atdi_jit_building_free(atdi_jit_building *b);

#endif

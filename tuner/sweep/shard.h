/* Sharding a sweep over machines: `--shard K/N` keeps the shapes whose hash
 * falls in share K of N. The hash depends only on (op, dtype, M, N), so the
 * shares are disjoint, together complete, and the same on every machine and
 * for any order or grouping of the config. */
#ifndef AT_TUNER_SHARD_H
#define AT_TUNER_SHARD_H

#include <stddef.h>

#include "tuner/config.h"

typedef struct shard_spec {
	int index; /* 1-based K */
	int count; /* N; 0 or 1: no sharding */
} shard_spec;

/* Parses "K/N" with 1 <= K <= N <= 100000. Returns 0, or -1. */
int shard_parse(const char *text, shard_spec *out);

/* The 1-based share (1..count) a shape belongs to. */
int shard_of(const sweep_shape *s, int count);

/* Keeps, in order, the shapes of share spec->index; returns the new count. */
size_t shard_filter(sweep_shape *shapes, size_t n, const shard_spec *spec);

#endif

/* Shape sharding: see shard.h. */
#include "tuner/sweep/shard.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 31);
}

int shard_of(const sweep_shape *s, int count)
{
	uint64_t h = 0x243f6a8885a308d3ULL;
	for (const char *c = s->op; *c; c++)
		h = mix(h, (unsigned char)*c);
	h = mix(h, (uint64_t)s->dtype);
	h = mix(h, (uint64_t)s->M);
	h = mix(h, (uint64_t)s->N);
	return count > 1 ? (int)(h % (uint64_t)count) + 1 : 1;
}

static int parse_int(const char *begin, const char *end, long *out)
{
	char *stop;
	errno = 0;
	long v = strtol(begin, &stop, 10);
	if (errno || stop != end || stop == begin)
		return -1;
	*out = v;
	return 0;
}

int shard_parse(const char *text, shard_spec *out)
{
	const char *slash = text;
	while (*slash && *slash != '/')
		slash++;
	long k, n;
	if (!*slash || parse_int(text, slash, &k) || parse_int(slash + 1, slash + 1 + strlen(slash + 1), &n))
		return -1;
	if (n < 1 || n > 100000 || k < 1 || k > n)
		return -1;
	out->index = (int)k;
	out->count = (int)n;
	return 0;
}

size_t shard_filter(sweep_shape *shapes, size_t n, const shard_spec *spec)
{
	if (spec->count <= 1)
		return n;
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (shard_of(&shapes[i], spec->count) == spec->index)
			shapes[kept++] = shapes[i];
	return kept;
}

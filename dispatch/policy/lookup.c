/* Open-addressing hash table of resolved shapes: see lookup.h. Kept at
 * most half full, so a probe sequence is short and always ends at an
 * empty slot. */
#include "dispatch/policy/lookup.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64

static inline uint64_t mix(uint64_t h)
{
	/* The splitmix64 finaliser: every input bit moves every output bit. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static inline uint64_t key_hash(const atdi_key *k)
{
	uint64_t h = mix((uint64_t)(uintptr_t)k->ctx ^ ((uint64_t)(unsigned)k->dtype << 56) ^
			 ((uint64_t)(unsigned)k->op << 48));
	h = mix(h ^ (uint64_t)k->M);
	return mix(h ^ (uint64_t)k->N);
}

static inline int key_equal(const atdi_key *a, const atdi_key *b)
{
	return a->ctx == b->ctx && a->M == b->M && a->N == b->N && a->dtype == b->dtype &&
	       a->op == b->op;
}

/* The slot holding key, or the empty slot where it would go. */
static inline atdi_slot *probe(atdi_slot *slots, size_t cap, const atdi_key *key)
{
	size_t mask = cap - 1;
	for (size_t i = (size_t)key_hash(key) & mask;; i = (i + 1) & mask)
		if (!slots[i].used || key_equal(&slots[i].key, key))
			return &slots[i];
}

int atdi_lookup_find(const atdi_lookup *l, const atdi_key *key, atdi_resolved *out)
{
	if (l->cap == 0)
		return 0;
	const atdi_slot *s = probe(l->slots, l->cap, key);
	if (!s->used)
		return 0;
	*out = s->val;
	return 1;
}

static int grow(atdi_lookup *l)
{
	size_t cap = l->cap ? 2 * l->cap : MIN_CAP;
	atdi_slot *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return -1;
	for (size_t i = 0; i < l->cap; i++)
		if (l->slots[i].used)
			*probe(slots, cap, &l->slots[i].key) = l->slots[i];
	free(l->slots);
	l->slots = slots;
	l->cap = cap;
	return 0;
}

int atdi_lookup_put(atdi_lookup *l, const atdi_key *key, const atdi_resolved *val)
{
	if (2 * (l->count + 1) > l->cap && grow(l) != 0)
		return -1;
	atdi_slot *s = probe(l->slots, l->cap, key);
	if (!s->used) {
		s->used = 1;
		s->key = *key;
		l->count++;
	}
	s->val = *val;
	return 0;
}

int atdi_lookup_mark(atdi_lookup *l, const atdi_key *key)
{
	atdi_resolved found;
	if (atdi_lookup_find(l, key, &found))
		return 0;
	atdi_resolved mark = { 0 };
	atdi_lookup_put(l, key, &mark); /* no memory: unmarked, said again later */
	return 1;
}

void atdi_lookup_free(atdi_lookup *l)
{
	free(l->slots);
	memset(l, 0, sizeof *l);
}

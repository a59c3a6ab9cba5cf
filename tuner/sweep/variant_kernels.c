/* Kernels by variant identity, in front of the kernel cache: see
 * variant_kernels.h. */
#include "tuner/sweep/variant_kernels.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/sweep/plan.h"

typedef struct variant_slot {
	variant v;         /* v.tmpl == NULL: empty */
	kernel_entry *entry;
} variant_slot;

static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static size_t nparams(const variant *v)
{
	return v->tmpl->nparams < VARIANT_MAX_PARAMS ? v->tmpl->nparams : VARIANT_MAX_PARAMS;
}

/* The op a variant computes: its template's own (NULL) or one of its
 * also_ops, whose source differs (OP_<OP> defined): part of the identity,
 * or a sweep of softmax_backward then log_softmax_backward is handed the
 * first op's kernels for the second (every check failed, 2026-11-26). */
static const char *variant_op(const variant *v)
{
	return v->op ? v->op : "";
}

static uint64_t variant_hash(const variant *v)
{
	uint64_t h = mix((uint64_t)(uintptr_t)v->tmpl ^ ((uint64_t)v->dtype << 56));
	for (const char *c = variant_op(v); *c; c++)
		h = mix(h ^ (uint64_t)(unsigned char)*c);
	for (size_t i = 0; i < nparams(v); i++)
		h = mix(h ^ (uint64_t)v->values[i]);
	return h;
}

static int same_variant(const variant *a, const variant *b)
{
	return a->tmpl == b->tmpl && a->dtype == b->dtype &&
	       strcmp(variant_op(a), variant_op(b)) == 0 &&
	       memcmp(a->values, b->values, nparams(a) * sizeof a->values[0]) == 0;
}

/* The slot holding v, or the empty one where it would go. */
static variant_slot *probe(variant_slot *slots, size_t cap, const variant *v)
{
	for (size_t i = (size_t)variant_hash(v) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!slots[i].v.tmpl || same_variant(&slots[i].v, v))
			return &slots[i];
}

static void grow(kernel_cache *c)
{
	size_t cap = c->vcap ? 2 * c->vcap : 1024;
	variant_slot *slots = xcalloc(cap, sizeof *slots);
	for (size_t i = 0; i < c->vcap; i++)
		if (c->vslots[i].v.tmpl)
			*probe(slots, cap, &c->vslots[i].v) = c->vslots[i];
	free(c->vslots);
	c->vslots = slots;
	c->vcap = cap;
}

static void remember(kernel_cache *c, const variant *v, kernel_entry *e)
{
	if (2 * (c->vcount + 1) > c->vcap)
		grow(c);
	variant_slot *s = probe(c->vslots, c->vcap, v);
	if (!s->v.tmpl)
		c->vcount++;
	s->v = *v;
	s->entry = e;
}

int kernel_cache_queue_variants(kernel_cache *c, const variant *vs, size_t n,
				kernel_entry **entries, at_error *err)
{
	size_t *missing = xmalloc((n ? n : 1) * sizeof *missing), nmissing = 0;
	for (size_t i = 0; i < n; i++) {
		const variant_slot *s = c->vcap ? probe(c->vslots, c->vcap, &vs[i]) : NULL;
		if (s && s->v.tmpl) {
			if (entries)
				entries[i] = s->entry;
		} else {
			missing[nmissing++] = i;
		}
	}
	int rc = 0;
	if (nmissing) {
		variant *subset = xmalloc(nmissing * sizeof *subset);
		for (size_t k = 0; k < nmissing; k++)
			subset[k] = vs[missing[k]];
		char **sources = plan_sources(subset, nmissing, err);
		kernel_entry **found = xcalloc(nmissing, sizeof *found);
		rc = sources ? kernel_cache_queue(c, sources, nmissing, found, err) : -1;
		if (sources)
			plan_free_sources(sources, nmissing);
		for (size_t k = 0; rc == 0 && k < nmissing; k++) {
			remember(c, &subset[k], found[k]);
			if (entries)
				entries[missing[k]] = found[k];
		}
		free(found);
		free(subset);
	}
	free(missing);
	return rc;
}

int kernel_cache_get_variants(kernel_cache *c, const variant *vs, size_t n,
			      kernel_entry **entries, at_error *err)
{
	if (kernel_cache_queue_variants(c, vs, n, entries, err))
		return -1;
	return kernel_cache_wait(c, entries, n, err);
}

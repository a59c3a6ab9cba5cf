/* Variant selection over the in-memory table (atdi_select in
 * tuned_table.h): one pass keeps the best candidate of each level, then the
 * first level that has one wins. A pure function, so that the whole policy
 * is tested without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/tuned_table.h"

/* Squared distances closer than this are ties: M' = 2M and M' = M/2 are
 * equally near, whatever the rounding of their logarithms. */
#define DIST_EPS 1e-9

typedef struct candidate {
	const atdi_entry *e;
	double dist;
} candidate;

static void consider(candidate *best, const atdi_entry *e, double dist)
{
	int take;
	if (!best->e || dist < best->dist - DIST_EPS)
		take = 1;
	else if (dist > best->dist + DIST_EPS)
		take = 0;
	else if (e->time_us != best->e->time_us)
		take = e->time_us < best->e->time_us;
	else
		take = e->result_id < best->e->result_id;
	if (take) {
		best->e = e;
		best->dist = dist;
	}
}

/* A GPU model is its name, compute capability and SM count. Its total
 * memory is not compared: the same board reports it differently under
 * other drivers and ECC settings (an H100 described as 80e9 bytes missed). */
static int same_identity(const atdi_gpu_row *g, const atd_gpu *q)
{
	return q->name && strcmp(g->name, q->name) == 0 && g->cc_major == q->cc_major &&
	       g->cc_minor == q->cc_minor && g->sm_count == q->sm_count;
}

/* (ln M - ln M')^2 + (ln N - ln N')^2, from ratios so that symmetric
 * neighbours give bit-identical distances where the ratios are exact. */
static double log_distance(long long M, long long N, const atdi_entry *e)
{
	double dm = log((double)e->M / (double)M);
	double dn = log((double)e->N / (double)N);
	return dm * dm + dn * dn;
}

const atdi_entry *atdi_select(const atdi_table *t, const atd_gpu *gpu, at_dtype dtype,
			      long long M, long long N, atd_level *level)
{
	candidate exact = { 0 }, nearest = { 0 }, arch_exact = { 0 }, arch_nearest = { 0 };
	for (size_t i = 0; i < t->nentries; i++) {
		const atdi_entry *e = &t->entries[i];
		if (e->dtype != dtype || (e->geom.max_n != 0 && e->geom.max_n < N))
			continue;
		const atdi_gpu_row *g = &t->gpus[e->gpu];
		if (g->seeds || g->cc_major != gpu->cc_major || g->cc_minor != gpu->cc_minor)
			continue; /* seeds have no code to run as they are */
		int same = same_identity(g, gpu);
		if (e->M == M && e->N == N)
			consider(same ? &exact : &arch_exact, e, 0);
		else
			consider(same ? &nearest : &arch_nearest, e, log_distance(M, N, e));
	}
	const candidate *order[] = { &exact, &nearest, &arch_exact, &arch_nearest };
	static const atd_level levels[] = { ATD_LEVEL_EXACT, ATD_LEVEL_NEAREST,
					    ATD_LEVEL_SAME_ARCH, ATD_LEVEL_SAME_ARCH };
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		if (order[i]->e) {
			*level = levels[i];
			return order[i]->e;
		}
	}
	*level = ATD_LEVEL_BUILTIN;
	return NULL;
}

const atdi_missing *atdi_select_missing(const atdi_table *t, const atd_gpu *gpu, at_dtype dtype,
					long long M, long long N)
{
	for (size_t i = 0; i < t->nmissing; i++) {
		const atdi_missing *m = &t->missing[i];
		if (m->dtype == dtype && m->M == M && m->N == N && same_identity(&t->gpus[m->gpu], gpu))
			return m;
	}
	return NULL;
}

void atdi_table_free(atdi_table *t)
{
	for (size_t i = 0; i < t->ngpus; i++)
		free(t->gpus[i].name);
	for (size_t i = 0; i < t->nentries; i++) {
		free(t->entries[i].template_name);
		free(t->entries[i].params);
	}
	for (size_t i = 0; i < t->nmissing; i++) {
		free(t->missing[i].template_name);
		free(t->missing[i].params);
	}
	free(t->gpus);
	free(t->entries);
	free(t->missing);
	memset(t, 0, sizeof *t);
}

/* Choosing what serves a shape, derivation included: see plan.h. */
#include "dispatch/plan.h"

#include <math.h>
#include <string.h>

/* A winner tuned at rows of the other alignment class (16-byte aligned or
 * not) counts as this much farther, (ln 3)^2: as far as three times the
 * length. Which template and params win depends on whether rows can be read
 * in whole vectors (much as Triton specialises on "multiple of 16"): on the
 * H100, f32 4096 x 3001 ran at 1649 GB/s from 3000's winner (scalar path,
 * few elements a thread) and 2615 GB/s derived from 6001's; at (ln 2)^2 the
 * two were tied. */
#define ALIGN_PENALTY 1.21

static int rows_aligned(long long N, long long elem_bytes)
{
	return elem_bytes > 0 && elem_bytes <= 16 && N % (16 / elem_bytes) == 0;
}

typedef struct ranked {
	const atdi_entry *e;
	int other_model; /* 0: this GPU model; 1: another of its compute capability */
	int seeds;       /* the library's seeds: no code, always derived */
	double dist;
} ranked;

/* As atdi_select's identity: name, compute capability, SM count. */
static int same_model(const atdi_gpu_row *g, const atd_gpu *q)
{
	return q->name && strcmp(g->name, q->name) == 0 && g->cc_major == q->cc_major &&
	       g->cc_minor == q->cc_minor && g->sm_count == q->sm_count;
}

static int better(const ranked *a, const ranked *b)
{
	if (a->other_model != b->other_model)
		return a->other_model < b->other_model;
	if (fabs(a->dist - b->dist) > 1e-9)
		return a->dist < b->dist;
	if (a->e->time_us != b->e->time_us)
		return a->e->time_us < b->e->time_us;
	return a->e->result_id < b->e->result_id;
}

/* The k nearest winners of dtype on gpu's compute capability, best first. */
static int nearest(const atdi_table *t, const atd_gpu *gpu, at_dtype dtype, const atdi_env *env,
		   ranked *top, int k)
{
	const long long M = env->M, N = env->N;
	const int aligned = rows_aligned(N, env->elem_bytes);
	int n = 0;
	for (size_t i = 0; i < t->nentries; i++) {
		const atdi_entry *e = &t->entries[i];
		const atdi_gpu_row *g = &t->gpus[e->gpu];
		if (e->dtype != dtype ||
		    (!g->seeds && (g->cc_major != gpu->cc_major || g->cc_minor != gpu->cc_minor)))
			continue;
		double dm = log((double)e->M / (double)M), dn = log((double)e->N / (double)N);
		double penalty = rows_aligned(e->N, env->elem_bytes) != aligned ? ALIGN_PENALTY : 0;
		ranked r = { e, !same_model(g, gpu), g->seeds, dm * dm + dn * dn + penalty };
		int at = n < k ? n++ : k;
		if (at == k && !better(&r, &top[k - 1]))
			continue;
		if (at == k)
			at = k - 1;
		while (at > 0 && better(&r, &top[at - 1])) {
			top[at] = top[at - 1];
			at--;
		}
		top[at] = r;
	}
	return n;
}

static int try_derive(const tr_template *ts, int nts, const ranked *r, const atdi_env *env,
		      at_dtype dtype, atdi_plan *out)
{
	const atdi_entry *e = r->e;
	const tr_template *rules = atdi_rules_find(ts, nts, e->template_name);
	long long winner[ATDI_MAX_PARAMS];
	if (!rules || !(rules->dtype_mask & (1u << dtype)) ||
	    atdi_params_parse(rules, e->params, winner) != 0 ||
	    !atdi_derive(rules, winner, env, 1, out->values) ||
	    atdi_rules_geometry(rules, out->values, env, &out->geom) != 0)
		return 0;
	out->entry = e;
	out->rules = rules;
	if (!r->seeds && memcmp(winner, out->values, (size_t)rules->nparams * sizeof *winner) == 0 &&
	    (e->geom.max_n == 0 || e->geom.max_n >= env->N))
		out->level = r->other_model ? ATD_LEVEL_SAME_ARCH : ATD_LEVEL_NEAREST;
	else
		out->level = ATD_LEVEL_DERIVED;
	return 1;
}

/* Whether a and b run the same code. */
static int same_variant(const atdi_plan *a, const atdi_plan *b)
{
	return a->rules == b->rules &&
	       memcmp(a->values, b->values, (size_t)a->rules->nparams * sizeof a->values[0]) == 0;
}

int atdi_plan_candidates(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
			 const atdi_env *env, at_dtype dtype, atdi_plan *out, int max)
{
	ranked top[ATDI_DERIVE_CANDIDATES];
	int n = nearest(t, gpu, dtype, env, top, ATDI_DERIVE_CANDIDATES), k = 0;
	for (int i = 0; i < n && k < max; i++) {
		atdi_plan p;
		memset(&p, 0, sizeof p);
		if (!try_derive(ts, nts, &top[i], env, dtype, &p))
			continue;
		int dup = 0;
		for (int j = 0; j < k && !dup; j++)
			dup = same_variant(&out[j], &p);
		if (!dup)
			out[k++] = p;
	}
	return k;
}

void atdi_plan_shape(const atdi_table *t, const tr_template *ts, int nts, const atd_gpu *gpu,
		     const atdi_env *env, at_dtype dtype, atdi_plan *out)
{
	memset(out, 0, sizeof *out);
	atd_level level;
	const atdi_entry *e = atdi_select(t, gpu, dtype, env->M, env->N, &level);
	if (ts && (!e || level != ATD_LEVEL_EXACT)) {
		ranked top[ATDI_DERIVE_CANDIDATES];
		int n = nearest(t, gpu, dtype, env, top, ATDI_DERIVE_CANDIDATES);
		/* The nearest winner that derives, widened or not. Trying every
		 * winner that derives unwidened first (as before 2026-11-25) took
		 * farther winners of other regimes: over the H100 grid, leave one
		 * out (tools/derive_loo.py), 8 shapes chose better in distance
		 * order and none worse by more than noise; bf16 32 x 500000 took
		 * 64 x 1048576's split winner as it was (29.7 us) over 64 x
		 * 262144's cluster widened to 512 threads (26.3). */
		for (int i = 0; i < n; i++)
			if (try_derive(ts, nts, &top[i], env, dtype, out))
				return;
	}
	out->level = level;
	out->entry = e;
}

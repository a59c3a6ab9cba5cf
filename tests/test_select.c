/* Tests of the one selection policy (dispatch/policy/select.h) on hand-made
 * tables: its order, and what each weight does, so that the stored levels
 * (atdi_select) and derivation (plan.h) differ by their weights alone. */
#include <criterion/criterion.h>
#include <math.h>

#include "dispatch/policy/select.h"

#define H100 "NVIDIA H100 80GB HBM3"
static atdi_gpu_row gpus[] = {
	{ 1, H100, 9, 0, 132, 85017493504LL, 0 },
	{ 2, "NVIDIA H100 PCIe", 9, 0, 114, 85029158912LL, 0 },
	{ 3, "NVIDIA A100-SXM4-80GB", 8, 0, 108, 85095874560LL, 0 },
	{ 4, "the library's seed winners", 9, 0, 132, 0, 1 },
};
static const atd_gpu sxm = { H100, 9, 0, 132, 80000000000LL }; /* memory as another driver says */

static atdi_entry entry(long long id, size_t gpu, long long M, long long N, double us,
			long long max_n)
{
	atdi_entry e = { 0 };
	e.result_id = id;
	e.gpu = gpu;
	e.dtype = AT_F32;
	e.M = M;
	e.N = N;
	e.time_us = us;
	e.template_name = (char *)"t";
	e.params = (char *)"p";
	e.geom = (launch_geometry){ .threads = 128, .rows_per_cta = 1, .max_n = max_n };
	return e;
}

static int rank(const atdi_entry *es, size_t n, long long M, long long N, const atdi_weights *w,
		atdi_ranked *top, int k)
{
	atdi_table t = { .gpus = gpus, .ngpus = 4, .entries = (atdi_entry *)es, .nentries = n };
	return atdi_rank(&t, &sxm, ATDI_SOFTMAX, AT_F32, M, N, w, top, k);
}

static const atdi_weights plain = { 0, 0, 0 };

Test(select_policy, this_model_then_the_exact_shape_then_distance_then_time_then_id)
{
	atdi_entry es[] = {
		entry(1, 1, 4096, 1000, 1, 0),  /* another model, the exact shape */
		entry(2, 0, 4096, 2000, 5, 0),  /* this model, N twice */
		entry(3, 0, 4096, 500, 4, 0),   /* this model, N half: as near, faster */
		entry(4, 0, 4096, 500, 4, 0),   /* the same again, a later result */
		entry(5, 0, 4096, 1000, 9, 0),  /* this model, the exact shape */
		entry(6, 2, 4096, 1000, 1, 0),  /* another compute capability: never */
	};
	atdi_ranked top[8];
	int n = rank(es, 6, 4096, 1000, &plain, top, 8);
	cr_assert_eq(n, 5);
	long long order[] = { 5, 3, 4, 2, 1 };
	for (int i = 0; i < n; i++)
		cr_assert_eq(top[i].e->result_id, order[i], "place %d: result %lld", i,
			     top[i].e->result_id);
	cr_assert(top[0].exact && !top[0].other_model);
	cr_assert(top[4].exact && top[4].other_model);
	cr_assert_eq(rank(es, 6, 4096, 1000, &plain, top, 2), 2, "at most k");
	cr_assert_eq(top[1].e->result_id, 3);
}

Test(select_policy, each_weight_adds_to_the_distance_and_infinity_leaves_a_winner_out)
{
	atdi_entry es[] = {
		entry(1, 0, 4096, 2048, 1, 2048), /* holds rows of up to 2048 */
		entry(2, 0, 4096, 3001, 1, 0),    /* rows not 16-byte aligned */
		entry(3, 3, 4096, 4096, 1, 0),    /* a seed */
	};
	atdi_ranked top[3];
	cr_assert_eq(rank(es, 3, 4096, 3000, &plain, top, 3), 3);
	double d[4];
	for (int i = 0; i < 3; i++)
		d[top[i].e->result_id] = top[i].dist;
	atdi_weights w = { .align_penalty = 0.5, .short_penalty = 2, .seed_penalty = 4 };
	cr_assert_eq(rank(es, 3, 4096, 3000, &w, top, 3), 3);
	for (int i = 0; i < 3; i++) {
		long long id = top[i].e->result_id;
		double add = id == 1 ? 2 : id == 2 ? 0.5 : 4;
		cr_assert_float_eq(top[i].dist, d[id] + add, 1e-12, "result %lld", id);
	}
	w = (atdi_weights){ INFINITY, INFINITY, 0 };
	cr_assert_eq(rank(es, 3, 4096, 3000, &w, top, 3), 1);
	cr_assert_eq(top[0].e->result_id, 3, "only the seed is left");
}

Test(select_policy, stored_and_derived_differ_by_their_weights_alone)
{
	atdi_entry es[] = {
		entry(1, 0, 4096, 2048, 1, 2048),
		entry(2, 0, 4096, 3001, 1, 0),
		entry(3, 3, 4096, 4096, 1, 0),
		entry(4, 0, 4096, 4096, 1, 0),
	};
	atdi_ranked top[4];
	/* stored: neither the seed nor 2048's winner can run rows of 3000;
	 * 3001 is nearer than 4096 */
	cr_assert_eq(rank(es, 4, 4096, 3000, &atdi_weights_stored, top, 4), 2);
	cr_assert_eq(top[0].e->result_id, 2);
	cr_assert_eq(top[1].e->result_id, 4);
	/* derived: all; 3001's rows, of the other alignment class, count as
	 * farther than 2048's; the seeds are another model */
	cr_assert_eq(rank(es, 4, 4096, 3000, &atdi_weights_derive, top, 4), 4);
	cr_assert_eq(top[0].e->result_id, 4, "(ln 4096/3000)^2 = 0.10");
	cr_assert_eq(top[1].e->result_id, 1, "(ln 2048/3000)^2 = 0.15");
	cr_assert_eq(top[2].e->result_id, 2);
	cr_assert_float_eq(top[2].dist, pow(log(3001.0 / 3000), 2) + 1.21, 1e-12);
	cr_assert(top[3].gpu->seeds && top[3].other_model);
	/* atdi_select is the first of the stored ranking, at its level */
	atdi_table t = { .gpus = gpus, .ngpus = 4, .entries = es, .nentries = 4 };
	atd_level level;
	cr_assert_eq(atdi_select(&t, &sxm, ATDI_SOFTMAX, AT_F32, 4096, 3000, &level), &es[1]);
	cr_assert_eq(level, ATD_LEVEL_NEAREST);
	cr_assert_eq(atdi_select(&t, &sxm, ATDI_SOFTMAX, AT_F32, 4096, 4096, &level), &es[3]);
	cr_assert_eq(level, ATD_LEVEL_EXACT);
	atd_gpu pcie = { "NVIDIA H100 PCIe", 9, 0, 114, 0 };
	cr_assert_eq(atdi_select(&t, &pcie, ATDI_SOFTMAX, AT_F32, 4096, 4096, &level), &es[3]);
	cr_assert_eq(level, ATD_LEVEL_SAME_ARCH);
	atd_gpu a100 = { "NVIDIA A100-SXM4-80GB", 8, 0, 108, 0 };
	cr_assert_null(atdi_select(&t, &a100, ATDI_SOFTMAX, AT_F32, 4096, 4096, &level));
	cr_assert_eq(level, ATD_LEVEL_BUILTIN);
}

Test(select_policy, a_model_is_its_name_compute_capability_and_sm_count_not_its_memory)
{
	cr_assert(atdi_same_model(&gpus[0], &sxm));
	atd_gpu other = sxm;
	other.sm_count = 114;
	cr_assert_not(atdi_same_model(&gpus[0], &other));
	other = sxm;
	other.cc_minor = 1;
	cr_assert_not(atdi_same_model(&gpus[0], &other));
	other = sxm;
	other.name = NULL;
	cr_assert_not(atdi_same_model(&gpus[0], &other));
}

Test(select_policy, another_ops_winner_serves_only_through_its_rules)
{
	/* softmax's winner at the very shape, log_softmax's at twice N */
	atdi_entry es[] = { entry(1, 0, 4096, 4096, 10.0, 0), entry(2, 0, 4096, 8192, 20.0, 0) };
	es[1].op = ATDI_LOG_SOFTMAX;
	atdi_table t = { .gpus = gpus, .ngpus = 4, .entries = es, .nentries = 2 };
	atd_level level;
	/* run as stored: only log_softmax's own, never softmax's code */
	cr_assert_eq(atdi_select(&t, &sxm, ATDI_LOG_SOFTMAX, AT_F32, 4096, 4096, &level), &es[1]);
	cr_assert_eq(level, ATD_LEVEL_NEAREST, "softmax's exact shape is not log_softmax's");
	cr_assert_eq(atdi_select(&t, &sxm, ATDI_SOFTMAX, AT_F32, 4096, 8192, &level), &es[0]);
	cr_assert_eq(level, ATD_LEVEL_NEAREST);
	/* derived: softmax's exact shape counts as 0.48 away, just nearer
	 * than log_softmax's winner at twice N ((ln 2)^2 = 0.4805); neither
	 * is exact for log_softmax */
	atdi_ranked top[2];
	cr_assert_eq(atdi_rank(&t, &sxm, ATDI_LOG_SOFTMAX, AT_F32, 4096, 4096, &atdi_weights_derive,
			       top, 2), 2);
	cr_assert(!top[0].exact && !top[1].exact);
	cr_assert_eq(top[1].e->result_id, 2);
	cr_assert(top[0].other_op && !top[1].other_op);
	cr_assert_float_eq(top[0].dist, 0.48, 1e-12);
	cr_assert_float_eq(top[1].dist, pow(log(2.0), 2), 1e-12);
	/* with only softmax's winners, log_softmax derives from them */
	t.nentries = 1;
	cr_assert_null(atdi_select(&t, &sxm, ATDI_LOG_SOFTMAX, AT_F32, 4096, 4096, &level));
	cr_assert_eq(atdi_rank(&t, &sxm, ATDI_LOG_SOFTMAX, AT_F32, 4096, 4096, &atdi_weights_derive,
			       top, 2), 1);
	cr_assert(top[0].other_op);
}

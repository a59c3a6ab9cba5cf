/* Tests of re-deriving a winner for an untuned shape (dispatch/policy/derive.c,
 * dispatch/policy/plan.c): the search over a manifest's derive params, its
 * preferences and widening, params texts, and which winner a shape's plan
 * derives from. A toy template pins the mechanism; the built-in table pins
 * the rules the real manifests give. No GPU. */
#include <criterion/criterion.h>
#include <string.h>

#include "dispatch/policy/derive.h"
#include "dispatch/policy/plan.h"
#include "dispatch/policy/template_table.h"

/* A row held as threads x elems, read vec elements at a time. */
static const long long threads_v[] = { 64, 128, 256 };
static const long long vec_v[] = { 1, 2, 4 };
static const long long elems_v[] = { 4, 8, 12, 16 };
static const tr_param toy_params[] = {
	{ "threads", threads_v, 3, 128 },
	{ "vec", vec_v, 3, 4 },
	{ "elems", elems_v, 4, 8 },
};
static const char *const toy_constraints[] = {
	"elems % vec == 0",
	"threads * elems >= N",
	"threads * (elems - vec) < N",
};
static const int toy_derive[] = { 1, 2 };
static const int toy_widen[] = { 0 };
static const char *const toy_prefer[] = { "N % vec == 0" };
static const tr_template toy = {
	"toy", "toy.cu", "", 7u, toy_params, 3, toy_constraints, 3,
	{ "threads", "1", "0", "0", "threads * elems", "1", "0" },
	toy_derive, 2, toy_widen, 1, toy_prefer, 1,
};

static atdi_env env_n(long long N)
{
	return (atdi_env){ .M = 4096, .N = N, .elem_bytes = 4, .sm_count = 132, .cc = 90,
			   .max_threads = 1024, .max_smem = 232448, .regs_per_sm = 65536 };
}

Test(derive, the_searched_params_follow_the_row_length_and_the_rest_stay)
{
	const long long winner[] = { 128, 4, 8 }; /* tuned at N = 1024 */
	long long out[3];
	atdi_env env = env_n(1500);
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 1);
	cr_assert_eq(out[0], 128, "threads is not searched while derive finds a variant");
	cr_assert_eq(out[1], 4, "1500 %% 4 == 0: the winner's vector width stays");
	cr_assert_eq(out[2], 12, "128 x 12 >= 1500 > 128 x 8");
}

Test(derive, an_earlier_preference_outweighs_nearness_to_the_winner)
{
	const long long winner[] = { 128, 4, 8 };
	long long out[3];
	atdi_env env = env_n(1502); /* 1502 % 4 != 0, 1502 % 2 == 0 */
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 1);
	cr_assert_eq(out[1], 2, "the widest vector that keeps rows aligned");
	cr_assert_eq(out[2], 12);
}

Test(derive, a_variant_that_meets_no_preference_is_still_taken)
{
	const long long winner[] = { 128, 4, 8 };
	long long out[3];
	atdi_env env = env_n(1001); /* odd: only vec = 1 divides it */
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 1);
	cr_assert_eq(out[1], 1, "vec = 1 meets N %% vec == 0");
	cr_assert_eq(out[2], 8);
	env = env_n(1025); /* vec 1 and 2 cannot hold it without a spare vector */
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 1);
	cr_assert_eq(out[1], 4, "unaligned, the only valid width");
	cr_assert_eq(out[2], 12, "128 x 12 >= 1025 > 128 x 8");
}

Test(derive, the_widen_params_are_searched_only_when_derive_alone_fails)
{
	const long long winner[] = { 128, 4, 8 };
	long long out[3];
	atdi_env env = env_n(4000); /* above 128 x 16 */
	cr_assert_eq(atdi_derive(&toy, winner, &env, 0, out), 0, "not without widening");
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 2);
	cr_assert_eq(out[0], 256, "threads widened to hold the row");
	cr_assert_eq(out[2], 16);
	env = env_n(5000); /* above 256 x 16: nothing holds it */
	cr_assert_eq(atdi_derive(&toy, winner, &env, 1, out), 0);
}

/* A toy whose derive params alone reach a variant that meets no
 * preference, and whose widened ones meet it. */
static const long long lanes_v[] = { 8, 32 };
static const long long vec2_v[] = { 1, 4 };
static const long long elems2_v[] = { 1, 4 };
static const tr_param lanes_params[] = {
	{ "lanes", lanes_v, 2, 32 },
	{ "vec", vec2_v, 2, 1 },
	{ "elems", elems2_v, 2, 1 },
};
static const char *const lanes_constraints[] = {
	"elems % vec == 0",
	"lanes * elems >= N",
	"lanes * (elems - vec) < N",
	"(lanes / 2) * vec < N",
};
static const int lanes_derive[] = { 1, 2 };
static const int lanes_widen[] = { 0 };
static const char *const lanes_prefer[] = { "vec == 4" };
static const tr_template lanes_toy = {
	"lanes_toy", "toy.cu", "", 7u, lanes_params, 3, lanes_constraints, 4,
	{ "32", "1", "0", "0", "lanes * elems", "1", "0" },
	lanes_derive, 2, lanes_widen, 1, lanes_prefer, 1,
};

Test(derive, widening_is_taken_to_meet_a_preference_the_derive_params_cannot)
{
	const long long winner[] = { 32, 1, 1 };
	long long out[3];
	atdi_env env = env_n(32); /* 32 lanes of one element, or 8 lanes of a vector of 4 */
	cr_assert_eq(atdi_derive(&lanes_toy, winner, &env, 0, out), 1);
	cr_assert_eq(out[1], 1, "without widening: the winner's 32 lanes, no vector");
	cr_assert_eq(atdi_derive(&lanes_toy, winner, &env, 1, out), 2);
	cr_assert_eq(out[0], 8, "widened to 8 lanes");
	cr_assert_eq(out[1], 4, "for the preferred vector");
	cr_assert_eq(out[2], 4);
}

Test(derive, params_texts_round_trip_and_missing_params_take_their_default)
{
	long long v[3];
	cr_assert_eq(atdi_params_parse(&toy, "threads=256 vec=2 elems=12", v), 0);
	cr_assert_eq(v[0], 256);
	cr_assert_eq(v[1], 2);
	cr_assert_eq(v[2], 12);
	char text[128];
	atdi_params_text(&toy, v, text, sizeof text);
	cr_assert_str_eq(text, "threads=256 vec=2 elems=12");
	cr_assert_eq(atdi_params_parse(&toy, "threads=64", v), 0);
	cr_assert_eq(v[1], 4, "vec's default");
	cr_assert_eq(v[2], 8, "elems' default");
	cr_assert_eq(atdi_params_parse(&toy, "threads=64 lanes=4", v), -1, "an unknown param");
	cr_assert_eq(atdi_params_parse(&toy, "threads=x", v), -1);
	cr_assert_eq(atdi_params_parse(&toy, "", v), -1);
}

Test(derive, the_launch_geometry_comes_from_the_launch_expressions)
{
	const long long v[] = { 256, 2, 12 };
	atdi_env env = env_n(3000);
	launch_geometry g;
	cr_assert_eq(atdi_rules_geometry(&toy, v, &env, &g), 0);
	cr_assert_eq(g.threads, 256);
	cr_assert_eq(g.rows_per_cta, 1);
	cr_assert_eq(g.max_n, 3072);
	cr_assert_eq(g.ctas_per_row, 1);
	cr_assert_eq(g.cooperative, 0);
}

/* The real manifests, as built into the library. */
static const tr_template *real(const char *name)
{
	const tr_template *t = atdi_rules_find(tr_templates, tr_ntemplates, name);
	cr_assert_not_null(t, "%s is built in", name);
	return t;
}

Test(derive, softmax_block_rederives_a_4096_winner_for_rows_of_3000_and_16384)
{
	const tr_template *t = real("softmax_block");
	long long w[ATDI_MAX_PARAMS], out[ATDI_MAX_PARAMS];
	cr_assert_eq(atdi_params_parse(t, "threads=128 vec=4 elems_per_thread=32 stages=1 "
					  "persistent=0 cache_hint=0 packed=0", w), 0);
	atdi_env env = env_n(3000);
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 1);
	char text[256];
	atdi_params_text(t, out, text, sizeof text);
	cr_assert_str_eq(text, "threads=128 vec=4 elems_per_thread=24 stages=1 persistent=0 "
			       "cache_hint=0 packed=0 peel=0");
	env = env_n(16384); /* 128 threads cannot hold it in 64 elements: widened */
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 2);
	cr_assert(out[0] * out[2] >= 16384);
	cr_assert_eq(atdi_rules_valid(t, out, &env), 1);
}

Test(derive, softmax_warp_rederives_for_short_rows_keeping_its_row_group)
{
	const tr_template *t = real("softmax_warp");
	long long w[ATDI_MAX_PARAMS], out[ATDI_MAX_PARAMS];
	cr_assert_eq(atdi_params_parse(t, "threads=64 lanes=32 rows_per_cta=2 vec=4 "
					  "elems_per_thread=16 stages=1 persistent=0 cache_hint=0", w), 0);
	atdi_env env = env_n(500);
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 1);
	char text[256];
	atdi_params_text(t, out, text, sizeof text);
	cr_assert_str_eq(text, "threads=64 lanes=32 rows_per_cta=2 vec=4 elems_per_thread=16 "
			       "stages=1 persistent=0 cache_hint=0 peel=0");
	env = env_n(15); /* more than half the lanes would be idle at 32: widened */
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 2);
	cr_assert_eq(atdi_rules_valid(t, out, &env), 1);
	cr_assert_lt(out[1], 32, "fewer lanes a row");
}

/* Derives winner (a params text) for env by the built-in manifest of
 * template name and checks how (1: the derive params alone, 2: widened)
 * and the derived params' text. */
static void expect_derived(const char *name, const char *winner, const atdi_env *env, int how,
			   const char *want)
{
	const tr_template *t = real(name);
	long long w[ATDI_MAX_PARAMS], out[ATDI_MAX_PARAMS];
	cr_assert_eq(atdi_params_parse(t, winner, w), 0, "%s", winner);
	cr_assert_eq(atdi_derive(t, w, env, 1, out), how, "%s at N = %lld", winner, env->N);
	char text[256];
	atdi_params_text(t, out, text, sizeof text);
	cr_assert_str_eq(text, want, "%s at N = %lld", winner, env->N);
}

static atdi_env env_of(long long M, long long N, long long elem_bytes)
{
	atdi_env env = env_n(N);
	env.M = M;
	env.elem_bytes = elem_bytes;
	return env;
}

#define BLOCK_128x32 "threads=128 vec=4 elems_per_thread=32 stages=1 persistent=0 cache_hint=0 " \
		     "packed=0 peel=0"

/* Rows whose length is not a multiple of the vector are peeled, the
 * winner's vector kept, and the hold grown by room for a row's head. */
Test(derive, unaligned_rows_are_peeled_and_keep_the_winners_vector)
{
	atdi_env env = env_n(3001);
	expect_derived("softmax_block", BLOCK_128x32, &env, 1,
		       "threads=128 vec=4 elems_per_thread=24 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=1");
	/* 3071 + a head of up to 3 needs 3074: one vector more than 3071 alone */
	env = env_n(3071);
	expect_derived("softmax_block", BLOCK_128x32, &env, 1,
		       "threads=128 vec=4 elems_per_thread=28 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=1");
	/* and a peeled winner derived for aligned rows drops the peel */
	const char *peeled = "threads=128 vec=4 elems_per_thread=24 stages=1 persistent=0 "
			     "cache_hint=0 packed=0 peel=1";
	env = env_n(3000);
	expect_derived("softmax_block", peeled, &env, 1,
		       "threads=128 vec=4 elems_per_thread=24 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
	/* rows of 3070 are 8-byte aligned: 8-byte vectors, not peeled */
	env = env_n(3070);
	expect_derived("softmax_block", peeled, &env, 1,
		       "threads=128 vec=2 elems_per_thread=24 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
}

/* softmax_warp: an unaligned row shorter than 512 goes element by element
 * with a lane's elements 4 bytes apart (bf16 8192 x 255's exact winner),
 * on a persistent grid where there are more than 8 row steps a
 * multiprocessor (8192 rows of 4 a CTA on 132: 15.5) and not for a few
 * rows; from 512 it is peeled, short of doubling the hold. */
Test(derive, short_unaligned_rows_go_element_by_element_longer_ones_are_peeled)
{
	const char *w = "threads=128 lanes=32 rows_per_cta=4 vec=8 elems_per_thread=8 stages=1 "
			"persistent=0 cache_hint=0 peel=0";
	atdi_env env = env_of(8192, 255, 2);
	expect_derived("softmax_warp", w, &env, 1,
		       "threads=128 lanes=32 rows_per_cta=4 vec=2 elems_per_thread=8 stages=1 "
		       "persistent=1 cache_hint=0 peel=0");
	env.M = 64;
	expect_derived("softmax_warp", w, &env, 1,
		       "threads=128 lanes=32 rows_per_cta=4 vec=2 elems_per_thread=8 stages=1 "
		       "persistent=0 cache_hint=0 peel=0");
	/* 1001 elements: peeled, 16-byte vectors kept, room for a head of 7,
	 * and (half precision, not persistent) the evict-first hint */
	env.M = 8192;
	env.N = 1001;
	expect_derived("softmax_warp",
		       "threads=128 lanes=32 rows_per_cta=4 vec=8 elems_per_thread=32 stages=1 "
		       "persistent=0 cache_hint=0 peel=0", &env, 1,
		       "threads=128 lanes=32 rows_per_cta=4 vec=8 elems_per_thread=32 stages=1 "
		       "persistent=0 cache_hint=1 peel=1");
}

/* Aligned rows take the widest vector that divides them, unpeeled: a
 * winner of 4-byte vectors derived for f16 rows of 1000 (21.8 us on the
 * H100 against 5.4 with 16-byte vectors), and rows of bf16 1500, 8-byte
 * aligned, take 8-byte vectors rather than peeled 16-byte ones, with the
 * evict-first hint on the persistent grid (the next test). */
Test(derive, aligned_rows_take_the_widest_vector_that_divides_them)
{
	atdi_env env = env_of(512, 1000, 2);
	expect_derived("softmax_warp",
		       "threads=64 lanes=32 rows_per_cta=4 vec=2 elems_per_thread=32 stages=1 "
		       "persistent=0 cache_hint=0 peel=0", &env, 1,
		       "threads=64 lanes=32 rows_per_cta=4 vec=8 elems_per_thread=32 stages=1 "
		       "persistent=0 cache_hint=0 peel=0");
	env = env_of(4096, 1500, 2);
	expect_derived("softmax_block",
		       "threads=128 vec=8 elems_per_thread=8 stages=1 persistent=0 cache_hint=1 "
		       "packed=0 peel=1", &env, 1,
		       "threads=128 vec=4 elems_per_thread=12 stages=1 persistent=1 cache_hint=1 "
		       "packed=0 peel=0");
}

/* Half-precision rows read in 8-byte vectors (N = 4 mod 8, unpeeled) take
 * the evict-first hint on the persistent grid, the fastest 8-byte variants
 * at every such shape measured on the H100 (the others 4-9% slower); f32
 * rows of 8-byte vectors, 16-byte ones and peeled ones keep the winner's. */
Test(derive, half_rows_of_8_byte_vectors_take_the_hint_on_a_persistent_grid)
{
	const char *plain = "threads=128 vec=8 elems_per_thread=16 stages=1 persistent=0 "
			    "cache_hint=0 packed=0 peel=0";
	atdi_env env = env_of(4096, 2500, 2);
	expect_derived("softmax_block", plain, &env, 1,
		       "threads=128 vec=4 elems_per_thread=20 stages=1 persistent=1 cache_hint=1 "
		       "packed=0 peel=0");
	env = env_of(4096, 2504, 2); /* 16-byte aligned: as it was */
	expect_derived("softmax_block", plain, &env, 1,
		       "threads=128 vec=8 elems_per_thread=24 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
	env = env_of(4096, 2502, 4); /* f32 rows of 8-byte vectors: as it was */
	expect_derived("softmax_block", BLOCK_128x32, &env, 1,
		       "threads=128 vec=2 elems_per_thread=20 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
}

/* Peeled half-precision rows take the evict-first hint on a grid of one
 * CTA a row: without the hint or the persistent grid they ran 1.15-1.8x
 * slower over the H100 grid (f16 4096 x 4097: 76.5 us against 27.7), and
 * with it the non-persistent grid was within 2% of the best everywhere.
 * f32 rows keep the winner's. */
Test(derive, peeled_half_rows_take_the_evict_first_hint_without_persistence)
{
	atdi_env env = env_of(4096, 4097, 2);
	expect_derived("softmax_block",
		       "threads=128 vec=8 elems_per_thread=32 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0", &env, 1,
		       "threads=128 vec=8 elems_per_thread=40 stages=1 persistent=0 cache_hint=1 "
		       "packed=0 peel=1");
	/* a persistent winner without the hint (f16 4096 x 6001's) goes to one
	 * CTA a row with the hint: the exact winner at 4097, 26.3 us against
	 * 30.5 as it was */
	expect_derived("softmax_block",
		       "threads=256 vec=8 elems_per_thread=24 stages=1 persistent=1 cache_hint=0 "
		       "packed=1 peel=1", &env, 1,
		       "threads=256 vec=8 elems_per_thread=24 stages=1 persistent=0 cache_hint=1 "
		       "packed=1 peel=1");
	env.elem_bytes = 4; /* f32 4097: peeled too, the winner's hint kept */
	expect_derived("softmax_block", BLOCK_128x32, &env, 1,
		       "threads=128 vec=4 elems_per_thread=36 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=1");
}

/* A softmax_tile winner (short unaligned rows) keeps its tile and lanes
 * for another unaligned length, with the hold re-derived; its tile widens
 * where the rows no longer fit 32 KB; an aligned length has no tile. */
Test(derive, softmax_tile_rederives_its_hold_and_never_serves_aligned_rows)
{
	const tr_template *t = real("softmax_tile");
	long long w[ATDI_MAX_PARAMS], out[ATDI_MAX_PARAMS];
	cr_assert_eq(atdi_params_parse(t, "threads=256 lanes=16 rows_per_cta=64 vec=8 "
					  "elems_per_thread=5 cache_hint=0", w), 0);
	atdi_env env = env_n(100);
	env.M = 65536;
	env.elem_bytes = 2;
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 1);
	char text[256];
	atdi_params_text(t, out, text, sizeof text);
	cr_assert_str_eq(text, "threads=256 lanes=16 rows_per_cta=64 vec=8 elems_per_thread=7 "
			       "cache_hint=0");
	launch_geometry g;
	cr_assert_eq(atdi_rules_geometry(t, out, &env, &g), 0);
	cr_assert_eq(g.dyn_smem, 64 * 100 * 2 + 32, "the tile sized for the exact N");
	env.N = 301; /* 64 rows of 602 bytes are over 32 KB: the tile shrinks */
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 2);
	cr_assert_eq(atdi_rules_valid(t, out, &env), 1);
	cr_assert_lt(out[2], 64);
	env.N = 128;
	cr_assert_eq(atdi_derive(t, w, &env, 1, out), 0, "aligned rows are not the tile's");
}

/* An unpeeled row fills at least four fifths of the CTA's hold: f32 4096 x
 * 2048's winner (256 threads x 8) derived for rows of 1536 takes 128 x 12,
 * the exact winner (13.4 us against 14.0 dirty L2, H100); a peeled row
 * keeps its vector and threads for a looser hold. */
Test(derive, unpeeled_rows_fill_four_fifths_of_the_hold)
{
	const char *winner = "threads=256 vec=2 elems_per_thread=8 stages=1 persistent=0 "
			     "cache_hint=0 packed=0 peel=0";
	atdi_env env = env_of(2048, 1536, 4);
	expect_derived("softmax_block", winner, &env, 2,
		       "threads=128 vec=4 elems_per_thread=12 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
	env = env_of(2048, 2000, 4); /* 256 x 8 holds 2000 within a quarter: kept */
	expect_derived("softmax_block", winner, &env, 1,
		       "threads=256 vec=4 elems_per_thread=8 stages=1 persistent=0 cache_hint=0 "
		       "packed=0 peel=0");
	env = env_of(4096, 4097, 2); /* peeled: 256 x 24 of 16-byte vectors, 1.5x the row */
	expect_derived("softmax_block",
		       "threads=256 vec=8 elems_per_thread=24 stages=1 persistent=0 cache_hint=1 "
		       "packed=1 peel=1", &env, 1,
		       "threads=256 vec=8 elems_per_thread=24 stages=1 persistent=0 cache_hint=1 "
		       "packed=1 peel=1");
}

/* A softmax_tile winner's CTAs fill their last wave at least three
 * quarters, or all fit at once, or make four waves or more: f32 65536 x
 * 77's winner (256 threads, 32 rows a CTA) at 50000 x 33 would launch 1563
 * CTAs, 1.48 waves of 8 a multiprocessor (9.5 us on the H100); at 128
 * threads they fit at once (8.6 us), with 8 lanes of 5 rather than 16 of 3
 * (a quarter more than the row at most). A shape the winner's grid suits
 * keeps its threads and lanes. */
Test(derive, softmax_tile_keeps_its_grid_to_whole_waves)
{
	const char *winner = "threads=256 lanes=16 rows_per_cta=32 vec=4 elems_per_thread=5 "
			     "cache_hint=1";
	atdi_env env = env_of(50000, 33, 4);
	expect_derived("softmax_tile", winner, &env, 2,
		       "threads=128 lanes=8 rows_per_cta=32 vec=4 elems_per_thread=5 cache_hint=1");
	env = env_of(1 << 20, 77, 4); /* 32768 CTAs: 31 waves */
	expect_derived("softmax_tile", winner, &env, 1, winner);
	env = env_of(33792, 77, 4); /* 1056 CTAs: one whole wave */
	expect_derived("softmax_tile", winner, &env, 1, winner);
}

/* A table of one GPU and the given winners. */
static atdi_gpu_row h100 = { 1, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017493504LL, 0 };
static const atd_gpu h100_q = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85017493504LL };

static atdi_entry block_entry(long long id, long long N, const char *params, long long max_n)
{
	atdi_entry e = { 0 };
	e.result_id = id;
	e.dtype = AT_F32;
	e.M = 4096;
	e.N = N;
	e.time_us = 10;
	e.template_name = (char *)"softmax_block";
	e.params = (char *)params;
	e.geom = (launch_geometry){ .threads = 128, .rows_per_cta = 1, .max_n = max_n };
	e.arch = 90;
	return e;
}

Test(plan, an_exact_winner_is_served_as_tuned)
{
	atdi_entry es[] = { block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096) };
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 1 };
	atdi_env env = env_n(4096);
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_EXACT);
	cr_assert_eq(p.entry, &es[0]);
}

Test(plan, an_untuned_length_is_derived_from_the_nearest_winner)
{
	atdi_entry es[] = {
		block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096),
		block_entry(2, 1024, "threads=128 vec=4 elems_per_thread=8", 1024),
	};
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_env env = env_n(3000);
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_DERIVED);
	cr_assert_eq(p.entry, &es[0], "4096 is nearer 3000 than 1024 in log N");
	cr_assert_eq(p.values[2], 24);
	cr_assert_eq(p.geom.max_n, 128 * 24);
	/* Without rules (no NVRTC): the nearest winner that holds the row. */
	atdi_plan_shape(&t, NULL, 0, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_NEAREST);
	cr_assert_eq(p.entry, &es[0]);
}

Test(plan, a_winner_whose_params_come_out_unchanged_is_reused_as_stored)
{
	atdi_entry es[] = { block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096) };
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 1 };
	atdi_env env = env_n(4000); /* 128 x 32 holds it, 128 x 28 does not */
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_NEAREST, "its stored kernel runs");
	cr_assert_eq(p.entry, &es[0]);
}

Test(plan, a_winner_of_a_template_unknown_to_the_library_is_skipped)
{
	atdi_entry es[] = {
		block_entry(1, 3000, "threads=128", 3072),
		block_entry(2, 1024, "threads=128 vec=4 elems_per_thread=8", 1024),
	};
	es[0].template_name = (char *)"softmax_gone";
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_env env = env_n(2900);
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_DERIVED);
	cr_assert_eq(p.entry, &es[1]);
}

Test(plan, no_winner_of_the_dtype_means_the_built_in_kernel)
{
	atdi_entry es[] = { block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096) };
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 1 };
	atdi_env env = env_n(4096);
	env.elem_bytes = 2;
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_BF16, &p);
	cr_assert_eq(p.level, ATD_LEVEL_BUILTIN);
	cr_assert_null(p.entry);
}

Test(plan, rows_of_the_same_alignment_class_are_nearer)
{
	atdi_entry es[] = {
		block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096),
		block_entry(2, 3001, "threads=128 vec=4 elems_per_thread=24", 3072),
	};
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_env env = env_n(3600); /* aligned: 4096 wins though 3001 is nearer in log N */
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.entry, &es[0]);
	env = env_n(3599); /* unaligned, like 3001 */
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.entry, &es[1]);
}

Test(plan, the_nearest_winner_is_taken_even_when_it_must_widen)
{
	atdi_entry es[] = {
		block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096),
		block_entry(2, 1024, "threads=512 vec=4 elems_per_thread=4", 2048),
	};
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_env env = env_n(12000); /* 128 x 64 < 12000: the nearer must widen */
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.level, ATD_LEVEL_DERIVED);
	cr_assert_eq(p.entry, &es[0], "4096 is nearer 12000 than 1024, widened or not");
	cr_assert_gt(p.values[0], 128, "threads widened");
	cr_assert_geq(p.values[0] * p.values[2], 12000);
}

Test(plan, online_tuning_gets_the_distinct_variants_of_the_nearest_winners)
{
	atdi_entry es[] = {
		block_entry(1, 4096, "threads=128 vec=4 elems_per_thread=32", 4096),
		block_entry(2, 2048, "threads=128 vec=4 elems_per_thread=16", 2048),
		block_entry(3, 8192, "threads=256 vec=4 elems_per_thread=32", 8192),
	};
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 3 };
	atdi_env env = env_n(3000);
	atdi_plan c[6];
	int n = atdi_plan_candidates(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, c, 6);
	cr_assert_eq(n, 2, "4096's and 2048's winners give the same 128 x 24 variant");
	cr_assert_eq(c[0].entry, &es[0]);
	cr_assert_eq(c[0].values[2], 24);
	cr_assert_eq(c[1].entry, &es[2]);
	cr_assert_eq(c[1].values[0], 256);
	cr_assert_eq(c[1].values[2], 12);
	cr_assert_eq(atdi_plan_candidates(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, c,
					  1), 1, "at most max");
}

Test(plan, the_same_alignment_class_at_twice_the_length_beats_the_other_at_the_same_length)
{
	atdi_entry es[] = {
		block_entry(1, 3000, "threads=256 vec=4 elems_per_thread=12", 3072),
		block_entry(2, 6001, "threads=256 vec=2 elems_per_thread=24", 6144),
	};
	atdi_table t = { .gpus = &h100, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_env env = env_n(3001); /* f32 rows of 3001: not 16-byte aligned */
	atdi_plan p;
	atdi_plan_shape(&t, tr_templates, tr_ntemplates, &h100_q, ATDI_SOFTMAX, &env, AT_F32, &p);
	cr_assert_eq(p.entry, &es[1], "6001's winner: its params fit misaligned rows");
	cr_assert_eq(p.level, ATD_LEVEL_DERIVED);
	cr_assert_eq(p.values[1], 2);
	cr_assert_eq(p.values[2], 12);
}

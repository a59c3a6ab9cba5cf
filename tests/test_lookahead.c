/* tuner/sweep/lookahead.c without a GPU: which shapes' kernels are queued on the
 * kernel cache after a shape, with a stand-in device, a real database and a
 * plan over a small template (4 variants per shape that compile fast):
 * softmax f32, M = 64, N = 64, 128, ..., 640. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/sweep/lookahead.h"

#include "tests/test_run_fixture.h"
#include "tests/tmp_folder.h"

static sweep_plan plan;
static tdb *db;
static gpu_device gpu;
static kernel_cache cache;
static lookahead_ctx ctx;

static void setup(void)
{
	tmp_setup();
	tr_write_tiny_sweep();
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&plan, tmp_path("c.yaml"), tmp_path("templates"), &err), 0, "%s",
		     err.msg);
	cr_assert_eq(tdb_open(tmp_path("t.db"), &db, &err), 0, "%s", err.msg);
	gpu = (gpu_device){ .cc = 90, .max_threads = 1024, .max_smem = 227 * 1024,
			    .regs_per_sm = 65536, .info = { .name = "stand-in", .cc_major = 9,
							    .sm_count = 132 } };
	kernel_cache_init(&cache, 90, 1, NULL); /* enough queued: 4 kernels, one shape */
	ctx = (lookahead_ctx){ .plan = &plan, .gpu = &gpu, .cache = &cache, .db = db, .seed = 1 };
	cr_assert_eq(tdb_gpu_id(db, &gpu.info, &ctx.gpu_id, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
	kernel_cache_free(&cache);
	tdb_close(db);
	plan_free(&plan);
	tmp_teardown();
}

TestSuite(lookahead, .init = setup, .fini = teardown);

/* The variants of plan shape `shape` on the stand-in device and their
 * sources, as the sweep makes them (plan_free_sources and free them). */
static char **shape_sources(size_t shape, variant **vs, size_t *n)
{
	const sweep_shape *s = &plan.shapes[shape];
	tr_env env = gpu_shape_env(&gpu, s->M, s->N, 4);
	at_error err = { { 0 } };
	cr_assert_eq(plan_shape_variants(&plan, s, &env, vs, n, &err), 0, "%s", err.msg);
	char **src = plan_sources(*vs, *n, &err);
	cr_assert_not_null(src, "%s", err.msg);
	return src;
}

/* The distinct kernels of the given shapes together. */
static size_t distinct_kernels(const size_t *shapes, size_t nshapes)
{
	char **all = NULL;
	size_t count = 0;
	for (size_t k = 0; k < nshapes; k++) {
		variant *vs;
		size_t n;
		char **src = shape_sources(shapes[k], &vs, &n);
		all = realloc(all, (count + n) * sizeof *all);
		for (size_t i = 0; i < n; i++) {
			size_t j = 0;
			while (j < count && strcmp(all[j], src[i]) != 0)
				j++;
			if (j == count)
				all[count++] = strdup(src[i]);
		}
		plan_free_sources(src, n);
		free(vs);
	}
	for (size_t j = 0; j < count; j++)
		free(all[j]);
	free(all);
	return count;
}

/* Whether every kernel of the shape is in the cache (the check queues the
 * ones that are not). */
static int all_queued(size_t shape)
{
	variant *vs;
	size_t n;
	char **src = shape_sources(shape, &vs, &n);
	size_t before = cache.count;
	at_error err = { { 0 } };
	cr_assert_eq(kernel_cache_prefetch(&cache, src, n, &err), 0, "%s", err.msg);
	plan_free_sources(src, n);
	free(vs);
	return cache.count == before;
}

static void wait_for_the_pool(void)
{
	for (int i = 0; i < 1200 && kernel_cache_pending(&cache) > 0; i++)
		usleep(50 * 1000);
	cr_assert_eq(kernel_cache_pending(&cache), 0, "the pool did not finish in 60 s");
}

/* Shape i (N = 64 (i + 1)) has the kernels k = i + 1 .. i + 4. With one
 * compile thread, 4 queued kernels are enough: past the next two shapes,
 * planning stops while a tiny kernel compiles (tens of ms; planning a
 * shape takes well under one). */
Test(lookahead, after_a_shape_the_next_two_shapes_kernels_are_queued)
{
	cr_assert_eq(plan.nshapes, 10);
	lookahead_after(&ctx, &plan.shapes[0]);
	size_t next[] = { 1, 2 };
	cr_assert_eq(distinct_kernels(next, 2), 5);
	cr_assert_geq(cache.count, 5);
	cr_assert(all_queued(1));
	cr_assert(all_queued(2));
	cr_assert(!all_queued(5), "the queue was long enough long before shape 5");
}

Test(lookahead, a_shape_already_tuned_is_skipped)
{
	at_error err = { { 0 } };
	sweep_info info = { ctx.gpu_id, 13000, "13.0", "test", "c.yaml", "", 3000 };
	long long sweep_id;
	cr_assert_eq(tdb_sweep_begin(db, &info, &sweep_id, &err), 0, "%s", err.msg);
	const sweep_shape *s1 = &plan.shapes[1];
	shape_key key = { ctx.gpu_id, s1->op, s1->dtype, s1->M, s1->N };
	cr_assert_eq(tdb_store_shape(db, sweep_id, &key, NULL, 0, &err), 0, "%s", err.msg);
	lookahead_after(&ctx, &plan.shapes[0]);
	cr_assert(all_queued(2));
	cr_assert(!all_queued(1), "kernel k = 2 is shape 1's alone");
}

Test(lookahead, the_stride_between_the_last_two_shapes_is_followed)
{
	lookahead_after(&ctx, &plan.shapes[0]); /* queues shapes 1 and 2 */
	wait_for_the_pool();
	lookahead_after(&ctx, &plan.shapes[3]); /* stride 3: shapes 6 and 9 */
	/* k = 2..6, 7..10 and 10..13; with a stride of 1 it would be 2..9 */
	cr_assert_eq(cache.count, 12);
	cr_assert(all_queued(6));
	cr_assert(all_queued(9));
}

Test(lookahead, autotune_lookahead_0_turns_it_off)
{
	setenv("AUTOTUNE_LOOKAHEAD", "0", 1);
	lookahead_after(&ctx, &plan.shapes[0]);
	cr_assert_eq(cache.count, 0);
}

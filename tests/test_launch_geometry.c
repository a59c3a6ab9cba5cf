/* The launch arithmetic that the tuner and the dispatch library share
 * (dispatch/runtime/launch_geometry.c), without a GPU: the grid of plain,
 * persistent, cluster and cooperative launches, and the geometries no
 * launch can honour. */
#include <criterion/criterion.h>

#include <string.h>

#include "dispatch/runtime/launch_geometry.h"

static unsigned grid_of(const launch_geometry *g, long long M, int per_sm, int sms)
{
	unsigned grid = 12345;
	at_error err = { { 0 } };
	cr_assert_eq(launch_grid_size(g, M, per_sm, sms, &grid, &err), 0, "%s", err.msg);
	return grid;
}

static void expect_error(const launch_geometry *g, long long M, int per_sm, const char *text)
{
	unsigned grid = 12345;
	at_error err = { { 0 } };
	cr_assert_eq(launch_grid_size(g, M, per_sm, 132, &grid, &err), -1);
	cr_assert_eq(grid, 12345, "the grid was written on failure");
	cr_assert_not_null(strstr(err.msg, text), "\"%s\" does not say \"%s\"", err.msg, text);
}

Test(launch_geometry, one_cta_per_row_step)
{
	launch_geometry g = { .threads = 128, .rows_per_cta = 4 };
	cr_assert_eq(grid_of(&g, 4096, 0, 132), 1024);
	cr_assert_eq(grid_of(&g, 4097, 0, 132), 1025);
	cr_assert_eq(grid_of(&g, 1, 0, 132), 1);
	g.ctas_per_row = 1; /* the same as 0 */
	cr_assert_eq(grid_of(&g, 4096, 0, 132), 1024);
}

Test(launch_geometry, persistent_is_capped_by_what_is_resident)
{
	launch_geometry g = { .threads = 256, .rows_per_cta = 1, .persistent = 1 };
	cr_assert_eq(grid_of(&g, 100000, 3, 132), 396);
	cr_assert_eq(grid_of(&g, 100, 3, 132), 100);
	expect_error(&g, 100, 0, "no CTA fits");
}

Test(launch_geometry, a_cluster_per_row_step)
{
	launch_geometry g = { .threads = 256, .rows_per_cta = 1, .ctas_per_row = 16 };
	cr_assert_eq(grid_of(&g, 4096, 0, 132), 4096 * 16);
	cr_assert_eq(grid_of(&g, 1, 0, 132), 16);
	g.ctas_per_row = 2;
	g.rows_per_cta = 2;
	cr_assert_eq(grid_of(&g, 5, 0, 132), 6); /* 3 steps of 2 CTAs */
	cr_assert_eq(grid_of(&g, 5, 0, 132) % 2, 0);
	/* the grid limit counts CTAs, not clusters */
	g.rows_per_cta = 1;
	g.ctas_per_row = 16;
	cr_assert_eq(grid_of(&g, 0x7fffffffLL / 16, 0, 132), 0x7fffffffLL / 16 * 16);
	expect_error(&g, 0x7fffffffLL / 16 + 1, 0, "more CTAs than a grid can have");
}

Test(launch_geometry, cooperative_is_every_resident_cta_whatever_m_is)
{
	launch_geometry g = { .threads = 512, .rows_per_cta = 1, .cooperative = 1 };
	cr_assert_eq(grid_of(&g, 8, 2, 132), 264);
	cr_assert_eq(grid_of(&g, 1, 2, 132), 264);
	cr_assert_eq(grid_of(&g, 1000000, 1, 132), 132);
	cr_assert_eq(grid_of(&g, 8, 1, 114), 114); /* an H100 PCIe */
	expect_error(&g, 8, 0, "no CTA fits");
}

Test(launch_geometry, geometries_no_launch_can_honour)
{
	at_error err = { { 0 } };
	launch_geometry ok = { .threads = 1, .rows_per_cta = 1 };
	cr_assert_eq(launch_geometry_check(&ok, &err), 0, "%s", err.msg);

	launch_geometry g = ok;
	g.threads = 0;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "threads and rows_per_cta >= 1"), "%s", err.msg);
	g = ok;
	g.rows_per_cta = 0;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	g = ok;
	g.ctas_per_row = -2;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "cannot be negative"), "%s", err.msg);
	g = ok;
	g.dyn_smem = -1;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	g = ok;
	g.cooperative = -1;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);

	/* a cluster is launched one per row step */
	g = ok;
	g.ctas_per_row = 4;
	g.persistent = 1;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "cannot also be persistent or cooperative"), "%s",
			   err.msg);
	expect_error(&g, 8, 1, "cannot also be persistent or cooperative");
	g.persistent = 0;
	g.cooperative = 1;
	cr_assert_eq(launch_geometry_check(&g, &err), -1);
	g.ctas_per_row = 1; /* one CTA per row: no cluster */
	cr_assert_eq(launch_geometry_check(&g, &err), 0, "%s", err.msg);
}

/* ---- opting a kernel into its shared memory (a stand-in driver) ---------- */

static int fn_max_dyn, fn_set_calls, fn_cluster_allowed;

static CUresult f_get_attribute(int *v, CUfunction_attribute a, CUfunction fn)
{
	(void)fn;
	*v = a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? fn_max_dyn
	     : a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED ? fn_cluster_allowed
									 : 0;
	return CUDA_SUCCESS;
}

static CUresult f_set_attribute(CUfunction fn, CUfunction_attribute a, int v)
{
	(void)fn;
	if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
		if (v > 227 * 1024)
			return CUDA_ERROR_INVALID_VALUE;
		fn_set_calls++;
		fn_max_dyn = v;
	} else if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
		fn_cluster_allowed = v;
	}
	return CUDA_SUCCESS;
}

static CUresult f_get_error_string(CUresult rc, const char **s)
{
	*s = rc == CUDA_SUCCESS ? "no error" : "invalid argument";
	return CUDA_SUCCESS;
}

/* A kernel with 512 B of static shared memory: its default dynamic limit
 * is 48 KB less that. */
static void fake_kernel_with_static_smem(void)
{
	memset(&cudrv, 0, sizeof cudrv);
	cudrv.cuFuncGetAttribute = f_get_attribute;
	cudrv.cuFuncSetAttribute = f_set_attribute;
	cudrv.cuGetErrorString = f_get_error_string;
	cudrv.cuGetErrorName = f_get_error_string;
	fn_max_dyn = 48 * 1024 - 512;
	fn_set_calls = fn_cluster_allowed = 0;
}

Test(launch_geometry, a_row_of_exactly_48_kb_beside_static_smem_is_opted_in)
{
	/* softmax_smem at f32 x 12288: a 49152-byte row and 512 B of slots;
	 * the H200 sweep recorded "no CTA fits" before */
	fake_kernel_with_static_smem();
	at_error err = { { 0 } };
	launch_geometry g = { .threads = 256, .rows_per_cta = 1, .dyn_smem = 48 * 1024 };
	cr_assert_eq(launch_prepare_fn(&g, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(fn_set_calls, 1);
	cr_assert_eq(fn_max_dyn, 48 * 1024);
	/* raised only: a later, smaller need leaves it */
	g.dyn_smem = 1024;
	cr_assert_eq(launch_prepare_fn(&g, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(fn_set_calls, 1);
	cr_assert_eq(fn_max_dyn, 48 * 1024);
}

Test(launch_geometry, what_fits_the_default_is_left_alone)
{
	fake_kernel_with_static_smem();
	at_error err = { { 0 } };
	launch_geometry g = { .threads = 256, .rows_per_cta = 1, .dyn_smem = 48 * 1024 - 512 };
	cr_assert_eq(launch_prepare_fn(&g, NULL, &err), 0, "%s", err.msg);
	g.dyn_smem = 0;
	cr_assert_eq(launch_prepare_fn(&g, NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(fn_set_calls, 0);
}

Test(launch_geometry, more_than_the_gpu_has_says_so)
{
	fake_kernel_with_static_smem();
	at_error err = { { 0 } };
	launch_geometry g = { .threads = 256, .rows_per_cta = 1, .dyn_smem = 300 * 1024 };
	cr_assert_eq(launch_prepare_fn(&g, NULL, &err), -1);
	cr_assert_not_null(strstr(err.msg, "MAX_DYNAMIC_SHARED_SIZE_BYTES, 307200"), "%s", err.msg);
}

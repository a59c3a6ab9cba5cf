/* tuner/helper_module.c: the tuner's helper kernels compile with NVRTC and
 * load through the driver table; each failure names the kernel. The
 * driver is a stand-in (no GPU). */
#include <criterion/criterion.h>

#include <string.h>

#include "tuner/helper_module.h"

static int loads;

static CUresult f_load_ok(CUmodule *m, const void *image)
{
	loads++;
	*m = (CUmodule)(void *)&loads;
	return CUDA_SUCCESS;
}

static CUresult f_load_fails(CUmodule *m, const void *image)
{
	loads++;
	return CUDA_ERROR_INVALID_IMAGE;
}

static const char good[] = "extern \"C\" __global__ void k(int *p) { *p = 1; }\n";

Test(helper_module, a_helper_compiles_and_loads)
{
	memset(&cudrv, 0, sizeof cudrv);
	cudrv.cuModuleLoadData = f_load_ok;
	CUmodule m = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(helper_module_load(good, "k.cu", 90, "the test kernel", &m, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(loads, 1);
	cr_assert_not_null(m);
}

Test(helper_module, a_compile_error_names_the_kernel_and_loads_nothing)
{
	memset(&cudrv, 0, sizeof cudrv);
	cudrv.cuModuleLoadData = f_load_ok;
	CUmodule m = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(helper_module_load("this is not CUDA", "bad.cu", 90, "the test kernel", &m,
					&err), -1);
	cr_assert_eq(strncmp(err.msg, "the test kernel did not compile: ", 33), 0, "%s", err.msg);
	cr_assert_eq(loads, 0);
}

Test(helper_module, a_load_error_names_the_kernel)
{
	memset(&cudrv, 0, sizeof cudrv);
	cudrv.cuModuleLoadData = f_load_fails;
	CUmodule m = NULL;
	at_error err = { { 0 } };
	cr_assert_eq(helper_module_load(good, "k.cu", 90, "the test kernel", &m, &err), -1);
	cr_assert_not_null(strstr(err.msg, "loading the test kernel"), "%s", err.msg);
}

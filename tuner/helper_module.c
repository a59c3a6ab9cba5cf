/* Loading the tuner's helper kernels: see helper_module.h. */
#include "tuner/helper_module.h"

#include <stdio.h>

#include "cuda/nvrtc_compile.h"

int helper_module_load(const char *src, const char *file, int cc, const char *what,
		       CUmodule *module, at_error *err)
{
	compiled_kernel k;
	int rc = nvrtc_compile(src, file, cc, &k, err);
	if (rc == COMPILE_FAILED)
		at_error_set(err, "%s did not compile: %s", what, k.log);
	if (rc != COMPILE_OK) {
		compiled_kernel_free(&k);
		return -1;
	}
	CUresult cr = cudrv.cuModuleLoadData(module, k.cubin);
	compiled_kernel_free(&k);
	if (cr == CUDA_SUCCESS)
		return 0;
	char doing[160];
	snprintf(doing, sizeof doing, "loading %s", what);
	return cudrv_error(err, cr, doing);
}

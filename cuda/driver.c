/* Run-time loading of libcuda: see driver.h. */
#include "cuda/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

cudrv_table cudrv;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_message[512];

typedef CUresult (*get_proc_fn)(const char *, void **, int, cuuint64_t,
				CUdriverProcAddressQueryResult *);

static void load_driver(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(load_message, sizeof load_message,
			 "no NVIDIA driver found (cannot load libcuda.so.1: %s); "
			 "this needs a machine with an NVIDIA GPU and its driver",
			 dlerror());
		return;
	}
	get_proc_fn get_proc = (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2");
	if (!get_proc) {
		snprintf(load_message, sizeof load_message,
			 "the NVIDIA driver is too old: libcuda.so.1 has no "
			 "cuGetProcAddress_v2 (a driver for CUDA 12.5 or newer is needed)");
		return;
	}
#define CUDRV_RESOLVE(name, version)                                                    \
	{                                                                      \
		CUdriverProcAddressQueryResult found;                          \
		void *fn = NULL;                                               \
		if (get_proc(#name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT,      \
			     &found) != CUDA_SUCCESS || !fn) {                \
			snprintf(load_message, sizeof load_message,            \
				 "the NVIDIA driver lacks %s for CUDA %d", #name, \
				 version);                                     \
			return;                                                \
		}                                                              \
		memcpy(&cudrv.name, &fn, sizeof fn);                           \
	}
	CUDRV_FUNCTIONS(CUDRV_RESOLVE)
#undef CUDRV_RESOLVE
	load_status = 0;
}

int cudrv_load(at_error *err)
{
	pthread_once(&load_once, load_driver);
	if (load_status != 0)
		return at_error_set(err, "%s", load_message);
	return 0;
}

int cudrv_error(at_error *err, CUresult rc, const char *what)
{
	const char *name = NULL, *text = NULL;
	if (cudrv.cuGetErrorName)
		cudrv.cuGetErrorName(rc, &name);
	if (cudrv.cuGetErrorString)
		cudrv.cuGetErrorString(rc, &text);
	return at_error_set(err, "%s: %s (%s)", what, name ? name : "CUDA error",
			    text ? text : "no description");
}

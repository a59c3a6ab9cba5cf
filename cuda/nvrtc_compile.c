/* NVRTC compilation: see nvrtc_compile.h. */
#include "cuda/nvrtc_compile.h"

#include <cuda.h> /* CUDA_VERSION: the NVRTC major version built against */
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* -Xptxas=-v makes the log carry registers, shared memory and spills, which
 * the tuner stores without needing a GPU to ask (it costs under 1% of the
 * compile time). --minimal leaves out the texture, device-runtime and
 * driver-API declarations that no template uses: 3% less compile time and
 * byte-identical cubins for the seeds benchmark's kernels (docs/NOTES.md). */
#define OPT_STD "--std=c++17"
#define OPT_PTXAS_VERBOSE "-Xptxas=-v"
#define OPT_MINIMAL "--minimal"
static const char *const base_options[] = { OPT_STD, OPT_PTXAS_VERBOSE, OPT_MINIMAL };
#define NBASE (sizeof base_options / sizeof base_options[0])

const char *nvrtc_options_string(void)
{
	return OPT_STD " " OPT_PTXAS_VERBOSE " " OPT_MINIMAL;
}

/* NVRTC is loaded at run time (the file $AUTOTUNE_NVRTC names if set,
 * else libnvrtc.so.13 from the loader's path, then $CUDA_HOME/lib64 and
 * /usr/local/cuda/lib64), so that the programs and the dispatch library
 * start and serve on machines without the CUDA toolkit; only compiling
 * needs it. */
#define NVRTC_FUNCTIONS(X)                                                       \
	X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram)            \
	X(nvrtcCompileProgram) X(nvrtcDestroyProgram) X(nvrtcGetProgramLogSize) \
	X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)             \
	X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetNumSupportedArchs)             \
	X(nvrtcGetSupportedArchs)

#define NVRTC_MEMBER(name) __typeof__(name) *name;
static struct {
	NVRTC_FUNCTIONS(NVRTC_MEMBER)
} nv;
#undef NVRTC_MEMBER

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_message[1024];
static char version_text[32] = "none";

static void *open_nvrtc(void)
{
	const char *named = getenv("AUTOTUNE_NVRTC");
	if (named && *named)
		return dlopen(named, RTLD_NOW | RTLD_LOCAL);
	char soname[64];
	snprintf(soname, sizeof soname, "libnvrtc.so.%d", CUDA_VERSION / 1000);
	void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	const char *home = getenv("CUDA_HOME");
	const char *dirs[] = { home && *home ? home : NULL, "/usr/local/cuda" };
	for (size_t i = 0; !lib && i < sizeof dirs / sizeof dirs[0]; i++) {
		if (!dirs[i])
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/lib64/%s", dirs[i], soname);
		lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
	return lib;
}

static void load_nvrtc(void)
{
	void *lib = open_nvrtc();
	const char *named = getenv("AUTOTUNE_NVRTC");
	if (!lib && named && *named) {
		snprintf(load_message, sizeof load_message,
			 "NVRTC is not available (cannot load $AUTOTUNE_NVRTC, %.900s); compiling "
			 "kernels needs the CUDA toolkit's NVRTC", named);
		return;
	}
	if (!lib) {
		snprintf(load_message, sizeof load_message,
			 "NVRTC is not available (cannot load libnvrtc.so.%d from the library path, "
			 "$CUDA_HOME/lib64 or /usr/local/cuda/lib64); compiling kernels needs the "
			 "CUDA toolkit's NVRTC",
			 CUDA_VERSION / 1000);
		return;
	}
#define NVRTC_RESOLVE(name)                                                            \
	{                                                                              \
		void *fn = dlsym(lib, #name);                                          \
		if (!fn) {                                                             \
			snprintf(load_message, sizeof load_message, "libnvrtc lacks %s", #name); \
			return;                                                        \
		}                                                                      \
		memcpy(&nv.name, &fn, sizeof fn);                                      \
	}
	NVRTC_FUNCTIONS(NVRTC_RESOLVE)
#undef NVRTC_RESOLVE
	int major = 0, minor = 0;
	nv.nvrtcVersion(&major, &minor);
	snprintf(version_text, sizeof version_text, "%d.%d", major, minor);
	load_status = 0;
}

int nvrtc_load(at_error *err)
{
	pthread_once(&load_once, load_nvrtc);
	if (load_status != 0)
		return at_error_set(err, "%s", load_message);
	return 0;
}

const char *nvrtc_version_string(void)
{
	pthread_once(&load_once, load_nvrtc);
	return version_text;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The numbers just before `label` on the lines where label occurs: their
 * sum (want_max 0) or their largest (want_max 1), or 0. */
static int numbers_before(const char *log, const char *label, int want_max)
{
	int total = 0;
	for (const char *p = strstr(log, label); p; p = strstr(p + 1, label)) {
		const char *q = p;
		while (q > log && q[-1] == ' ')
			q--;
		const char *digits = q;
		while (digits > log && digits[-1] >= '0' && digits[-1] <= '9')
			digits--;
		if (digits == q)
			continue;
		int v = (int)strtol(digits, NULL, 10);
		total = want_max ? (v > total ? v : total) : total + v;
	}
	return total;
}

/* Registers and shared memory are a kernel's: of a source with helper
 * kernels beside its row kernel (cross_entropy's prepare and reduce), the
 * largest, the row kernel's. Spills and stack anywhere are summed: any is
 * a defect. */
void nvrtc_parse_resources(const char *log, compiled_kernel *k)
{
	k->registers = numbers_before(log, "registers", 1);
	k->smem_bytes = numbers_before(log, "bytes smem", 1);
	k->spill_bytes = numbers_before(log, "bytes spill stores", 0) +
			 numbers_before(log, "bytes spill loads", 0);
	k->stack_bytes = numbers_before(log, "bytes stack frame", 0);
}

static int nvrtc_fail(at_error *err, nvrtcResult rc, const char *what)
{
	return at_error_set(err, "%s: %s", what, nv.nvrtcGetErrorString(rc));
}

int nvrtc_compile(const char *src, const char *name, int cc, compiled_kernel *out,
		  at_error *err)
{
	memset(out, 0, sizeof *out);
	if (nvrtc_load(err) != 0)
		return COMPILE_ERROR;
	double start = now_ms();
	nvrtcProgram prog;
	nvrtcResult rc = nv.nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
	if (rc != NVRTC_SUCCESS)
		return nvrtc_fail(err, rc, "nvrtcCreateProgram");
	char arch[40];
	snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", cc);
	const char *opts[NBASE + 1];
	opts[0] = arch;
	memcpy(opts + 1, base_options, sizeof base_options);
	nvrtcResult crc = nv.nvrtcCompileProgram(prog, (int)(NBASE + 1), opts);
	out->compile_ms = now_ms() - start;

	size_t log_size = 0;
	nv.nvrtcGetProgramLogSize(prog, &log_size);
	out->log = malloc(log_size + 1);
	if (!out->log) {
		nv.nvrtcDestroyProgram(&prog);
		return at_error_set(err, "out of memory for NVRTC's log");
	}
	out->log[0] = '\0';
	if (log_size)
		nv.nvrtcGetProgramLog(prog, out->log);
	if (crc == NVRTC_ERROR_COMPILATION) {
		nv.nvrtcDestroyProgram(&prog);
		return COMPILE_FAILED;
	}
	int status = COMPILE_OK;
	size_t ptx_size = 0;
	if (crc != NVRTC_SUCCESS) {
		status = nvrtc_fail(err, crc, "nvrtcCompileProgram");
	} else if ((rc = nv.nvrtcGetCUBINSize(prog, &out->cubin_size)) != NVRTC_SUCCESS ||
		   (rc = nv.nvrtcGetPTXSize(prog, &ptx_size)) != NVRTC_SUCCESS) {
		status = nvrtc_fail(err, rc, "nvrtcGetCUBINSize");
	} else {
		out->cubin = malloc(out->cubin_size);
		out->ptx = malloc(ptx_size + 1);
		if (!out->cubin || !out->ptx) {
			status = at_error_set(err, "out of memory for a compiled kernel");
		} else {
			out->ptx[ptx_size] = '\0';
			if ((rc = nv.nvrtcGetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS ||
			    (rc = nv.nvrtcGetPTX(prog, out->ptx)) != NVRTC_SUCCESS)
				status = nvrtc_fail(err, rc, "nvrtcGetCUBIN");
			else
				nvrtc_parse_resources(out->log, out);
		}
	}
	nv.nvrtcDestroyProgram(&prog);
	if (status != COMPILE_OK)
		compiled_kernel_free(out);
	return status;
}

void compiled_kernel_free(compiled_kernel *k)
{
	free(k->cubin);
	free(k->ptx);
	free(k->log);
	memset(k, 0, sizeof *k);
}

int nvrtc_arch_supported(int cc, char *list, size_t cap, at_error *err)
{
	if (nvrtc_load(err) != 0)
		return -1;
	int n = 0;
	if (nv.nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 256)
		return at_error_set(err, "NVRTC does not list its architectures");
	int archs[256];
	if (nv.nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
		return at_error_set(err, "NVRTC does not list its architectures");
	int found = 0;
	size_t used = 0;
	if (cap)
		list[0] = '\0';
	for (int i = 0; i < n; i++) {
		found |= archs[i] == cc;
		if (used < cap) {
			int w = snprintf(list + used, cap - used, "%ssm_%d", i ? " " : "", archs[i]);
			used += w > 0 ? (size_t)w : 0;
		}
	}
	return found;
}

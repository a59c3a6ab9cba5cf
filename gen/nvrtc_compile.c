/* NVRTC compilation: see nvrtc_compile.h. */
#include "gen/nvrtc_compile.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/strbuf.h"

/* -Xptxas=-v makes the log carry registers, shared memory and spills, which
 * the tuner stores without needing a GPU to ask (it costs under 1% of the
 * compile time). --minimal leaves out the texture, device-runtime and
 * driver-API declarations that no template uses: 3% less compile time and
 * byte-identical cubins for the seeds benchmark's kernels (NOTES.md). */
#define OPT_STD "--std=c++17"
#define OPT_PTXAS_VERBOSE "-Xptxas=-v"
#define OPT_MINIMAL "--minimal"
static const char *const base_options[] = { OPT_STD, OPT_PTXAS_VERBOSE, OPT_MINIMAL };
#define NBASE (sizeof base_options / sizeof base_options[0])

const char *nvrtc_options_string(void)
{
	return OPT_STD " " OPT_PTXAS_VERBOSE " " OPT_MINIMAL;
}

const char *nvrtc_version_string(void)
{
	static char text[32];
	int major = 0, minor = 0;
	nvrtcVersion(&major, &minor);
	snprintf(text, sizeof text, "%d.%d", major, minor);
	return text;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The number just before `label` on the line where label occurs, or 0. */
static int number_before(const char *log, const char *label)
{
	int total = 0;
	for (const char *p = strstr(log, label); p; p = strstr(p + 1, label)) {
		const char *q = p;
		while (q > log && q[-1] == ' ')
			q--;
		const char *digits = q;
		while (digits > log && digits[-1] >= '0' && digits[-1] <= '9')
			digits--;
		if (digits < q)
			total += (int)strtol(digits, NULL, 10);
	}
	return total;
}

void nvrtc_parse_resources(const char *log, compiled_kernel *k)
{
	k->registers = number_before(log, "registers");
	k->smem_bytes = number_before(log, "bytes smem");
	k->spill_bytes = number_before(log, "bytes spill stores") +
			 number_before(log, "bytes spill loads");
	k->stack_bytes = number_before(log, "bytes stack frame");
}

static int nvrtc_fail(at_error *err, nvrtcResult rc, const char *what)
{
	return at_error_set(err, "%s: %s", what, nvrtcGetErrorString(rc));
}

int nvrtc_compile(const char *src, const char *name, int cc, compiled_kernel *out,
		  at_error *err)
{
	memset(out, 0, sizeof *out);
	double start = now_ms();
	nvrtcProgram prog;
	nvrtcResult rc = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
	if (rc != NVRTC_SUCCESS)
		return nvrtc_fail(err, rc, "nvrtcCreateProgram");
	char arch[40];
	snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d", cc);
	const char *opts[NBASE + 1];
	opts[0] = arch;
	memcpy(opts + 1, base_options, sizeof base_options);
	nvrtcResult crc = nvrtcCompileProgram(prog, (int)(NBASE + 1), opts);
	out->compile_ms = now_ms() - start;

	size_t log_size = 0;
	nvrtcGetProgramLogSize(prog, &log_size);
	out->log = xmalloc(log_size + 1);
	out->log[0] = '\0';
	if (log_size)
		nvrtcGetProgramLog(prog, out->log);
	if (crc == NVRTC_ERROR_COMPILATION) {
		nvrtcDestroyProgram(&prog);
		return COMPILE_FAILED;
	}
	int status = COMPILE_OK;
	size_t ptx_size = 0;
	if (crc != NVRTC_SUCCESS) {
		status = nvrtc_fail(err, crc, "nvrtcCompileProgram");
	} else if ((rc = nvrtcGetCUBINSize(prog, &out->cubin_size)) != NVRTC_SUCCESS ||
		   (rc = nvrtcGetPTXSize(prog, &ptx_size)) != NVRTC_SUCCESS) {
		status = nvrtc_fail(err, rc, "nvrtcGetCUBINSize");
	} else {
		out->cubin = xmalloc(out->cubin_size);
		out->ptx = xmalloc(ptx_size + 1);
		out->ptx[ptx_size] = '\0';
		if ((rc = nvrtcGetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS ||
		    (rc = nvrtcGetPTX(prog, out->ptx)) != NVRTC_SUCCESS)
			status = nvrtc_fail(err, rc, "nvrtcGetCUBIN");
		else
			nvrtc_parse_resources(out->log, out);
	}
	nvrtcDestroyProgram(&prog);
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

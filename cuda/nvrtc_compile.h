/* Run-time compilation of a specialised source with NVRTC to a cubin (and
 * its PTX) for one GPU architecture, with the resource usage ptxas reports. */
#ifndef AT_CUDA_NVRTC_COMPILE_H
#define AT_CUDA_NVRTC_COMPILE_H

#include <stddef.h>

#include "common/error.h"

typedef struct compiled_kernel {
	void *cubin;
	size_t cubin_size;
	char *ptx;
	char *log;          /* NVRTC's log: ptxas info, or the errors */
	int registers;      /* per thread */
	int smem_bytes;     /* static shared memory per CTA */
	int spill_bytes;    /* spill stores + spill loads */
	int stack_bytes;    /* stack frame per thread */
	double compile_ms;
} compiled_kernel;

enum {
	COMPILE_OK = 0,
	COMPILE_FAILED = 1, /* the source did not compile: see out->log */
	COMPILE_ERROR = -1, /* NVRTC itself failed: see err */
};

/* Loads NVRTC (once; later calls return the first outcome): 0, or -1 with a
 * message saying that NVRTC is not available. nvrtc_compile calls it. */
int nvrtc_load(at_error *err);

/* Whether this NVRTC compiles for sm_<cc>: 1 or 0 (list gets the ones it
 * does, "sm_75 sm_80 ..."), or -1 with err set (no NVRTC). */
int nvrtc_arch_supported(int cc, char *list, size_t cap, at_error *err);

/* The options every kernel is compiled with, for cache keys and messages. */
const char *nvrtc_options_string(void);

/* Compiles src (named `name` in messages) for sm_<cc> (e.g. cc = 90).
 * Thread-safe: NVRTC programs are independent. */
int nvrtc_compile(const char *src, const char *name, int cc, compiled_kernel *out,
		  at_error *err);

void compiled_kernel_free(compiled_kernel *k);

/* "13.0", or "none" when NVRTC cannot be loaded */
const char *nvrtc_version_string(void);

/* Parses ptxas' verbose lines in log into k's resource fields. */
void nvrtc_parse_resources(const char *log, compiled_kernel *k);

#endif

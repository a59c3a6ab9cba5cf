/* L2 flushing before timed launches: see l2_flush.h. */
#include "tuner/timing/l2_flush.h"

#include <stdlib.h>
#include <string.h>

#include "tuner/helper_module.h"

/* flush_l2 reads the buffer (the `read` mode); its store never happens
 * (the buffer holds zeros) but keeps the loads. */
static const char flush_source[] =
	"extern \"C\" __global__ void discard_l2(const char *p, unsigned long long lines)\n"
	"{\n"
	"	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
	"	     i < lines; i += (unsigned long long)gridDim.x * blockDim.x)\n"
	"		asm volatile(\"discard.global.L2 [%0], 128;\" :: \"l\"(p + i * 128) : \"memory\");\n"
	"}\n"
	"extern \"C\" __global__ void flush_l2(const int4 *p, unsigned long long n, int *sink)\n"
	"{\n"
	"	int acc = 0;\n"
	"	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
	"	     i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n"
	"		int4 v = p[i];\n"
	"		acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
	"	}\n"
	"	if (acc == 0x7fffffff)\n"
	"		*sink = acc;\n"
	"}\n";

static int load_kernels(l2_flush *f, const gpu_device *gpu, at_error *err)
{
	if (helper_module_load(flush_source, "flush_l2.cu", gpu->cc, "the L2 flush kernel",
			       &f->module, err))
		return -1;
	CU_TRY(err, cudrv.cuModuleGetFunction(&f->read_fn, f->module, "flush_l2"));
	CU_TRY(err, cudrv.cuModuleGetFunction(&f->discard_fn, f->module, "discard_l2"));
	f->grid = (unsigned)gpu->info.sm_count * 4;
	return 0;
}

static int parse_mode(flush_mode *mode, at_error *err)
{
	static const char *const names[] = { "clean", "write", "read", "none" };
	const char *s = getenv("AUTOTUNE_FLUSH");
	if (!s || !*s) {
		*mode = FLUSH_CLEAN;
		return 0;
	}
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*mode = (flush_mode)i;
			return 0;
		}
	}
	return at_error_set(err, "AUTOTUNE_FLUSH must be clean, write, read or none, "
				 "got \"%s\"", s);
}

int l2_flush_open(l2_flush *f, const gpu_device *gpu, CUstream stream, at_error *err)
{
	memset(f, 0, sizeof *f);
	if (parse_mode(&f->mode, err))
		return -1;
	/* Twice the L2 evicts all of it. `write` keeps do_bench's 256 MB where
	 * that is more, to reproduce its numbers; `clean` needs no more: on the
	 * H100, 100 MB instead of 256 moved full-timing medians by 0-3% (two
	 * runs of 256 MB: 0-1.7%) and took a warm seeds sweep from 57.1 s to
	 * 50.6 s. */
	f->bytes = (size_t)(gpu->l2_bytes > 0 ? gpu->l2_bytes : 64 << 20) * 2;
	if (f->mode == FLUSH_WRITE && f->bytes < (256u << 20))
		f->bytes = 256u << 20;
	CU_TRY(err, cudrv.cuMemAlloc(&f->buffer, f->bytes));
	CU_TRY(err, cudrv.cuMemsetD32Async(f->buffer, 0, f->bytes / 4, stream));
	return load_kernels(f, gpu, err);
}

void l2_flush_close(l2_flush *f)
{
	if (f->buffer)
		cudrv.cuMemFree(f->buffer);
	if (f->module)
		cudrv.cuModuleUnload(f->module);
	memset(f, 0, sizeof *f);
}

/* Writes the buffer, evicting everything, and drops its dirty lines
 * unless keep_dirty. */
static int write_whole(l2_flush *f, CUstream stream, unsigned rep, int keep_dirty,
		       at_error *err)
{
	CU_TRY(err, cudrv.cuMemsetD32Async(f->buffer, rep, f->bytes / 4, stream));
	if (keep_dirty)
		return 0;
	unsigned long long lines = f->bytes / 128;
	void *args[] = { &f->buffer, &lines };
	CU_TRY(err, cudrv.cuLaunchKernel(f->discard_fn, f->grid, 1, 1, 512, 1, 1, 0, stream, args,
					 NULL));
	return 0;
}

static int read_whole(l2_flush *f, CUstream stream, at_error *err)
{
	unsigned long long n = f->bytes / 16;
	CUdeviceptr sink = f->buffer;
	void *args[] = { &f->buffer, &n, &sink };
	CU_TRY(err, cudrv.cuLaunchKernel(f->read_fn, f->grid, 1, 1, 512, 1, 1, 0, stream, args,
					 NULL));
	return 0;
}

int l2_flush_run(l2_flush *f, CUstream stream, unsigned rep, at_error *err)
{
	switch (f->mode) {
	case FLUSH_CLEAN:
		return write_whole(f, stream, rep, 0, err);
	case FLUSH_WRITE:
		return write_whole(f, stream, rep, 1, err);
	case FLUSH_READ:
		return read_whole(f, stream, err);
	case FLUSH_NONE:
		break;
	}
	return 0;
}

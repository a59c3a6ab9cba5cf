/* Instruction-cache eviction before timed launches: see code_flush.h. */
#include "tuner/timing/code_flush.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/helper_module.h"

/* 16 bytes an FFMA with an immediate: 8192 of them are 128 KB, past the
 * multiprocessor's instruction caches. */
#define CODE_FLUSH_INSTRUCTIONS 8192

char *code_flush_source(int instructions)
{
	strbuf s = { 0 };
	strbuf_printf(&s, "extern \"C\" __global__ void evict_code(float *sink)\n"
			  "{\n"
			  "\tfloat a = (float)threadIdx.x;\n");
	for (int i = 0; i < instructions; i++)
		strbuf_printf(&s, "\ta = fmaf(a, 1.0001f, %d.5f);\n", i % 4093);
	strbuf_printf(&s, "\tif (a == 0.25f)\n"
			  "\t\t*sink = a; /* never: keeps the chain */\n"
			  "}\n");
	return s.data;
}

static int code_flush_wanted(int *on, at_error *err)
{
	const char *s = getenv("AUTOTUNE_CODE_FLUSH");
	*on = s && strcmp(s, "1") == 0;
	if (s && *s && strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
		return at_error_set(err, "AUTOTUNE_CODE_FLUSH must be 0 or 1, got \"%s\"", s);
	return 0;
}

int code_flush_open(code_flush *f, const gpu_device *gpu, at_error *err)
{
	memset(f, 0, sizeof *f);
	int on;
	if (code_flush_wanted(&on, err))
		return -1;
	if (!on)
		return 0;
	char *src = code_flush_source(CODE_FLUSH_INSTRUCTIONS);
	int rc = helper_module_load(src, "evict_code.cu", gpu->cc, "the code flush kernel",
				    &f->module, err);
	free(src);
	if (rc)
		return -1;
	CU_TRY(err, cudrv.cuModuleGetFunction(&f->fn, f->module, "evict_code"));
	CU_TRY(err, cudrv.cuMemAlloc(&f->sink, sizeof(float)));
	/* a warp on every multiprocessor, twice over so that none is missed */
	f->grid = (unsigned)gpu->info.sm_count * 2;
	return 0;
}

void code_flush_close(code_flush *f)
{
	if (f->sink)
		cudrv.cuMemFree(f->sink);
	if (f->module)
		cudrv.cuModuleUnload(f->module);
	memset(f, 0, sizeof *f);
}

int code_flush_run(code_flush *f, CUstream stream, at_error *err)
{
	if (!f->module)
		return 0;
	void *args[] = { &f->sink };
	CU_TRY(err, cudrv.cuLaunchKernel(f->fn, f->grid, 1, 1, 32, 1, 1, 0, stream, args, NULL));
	return 0;
}

/* GPU-side comparison with the reference: see gpu_compare.h. */
#include "tuner/check/gpu_compare.h"

#include <math.h>
#include <string.h>

#include "tuner/helper_module.h"

static const char compare_source[] =
	"// autotune: compares an output with the reference (tuner/check/gpu_compare.c)\n"
	"__device__ double load_f32(const void *p, long long i) { return ((const float *)p)[i]; }\n"
	"__device__ double load_f16(const void *p, long long i)\n"
	"{\n"
	"	float f;\n"
	"	asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(((const unsigned short *)p)[i]));\n"
	"	return f;\n"
	"}\n"
	"__device__ double load_bf16(const void *p, long long i)\n"
	"{\n"
	"	return __uint_as_float(((unsigned)((const unsigned short *)p)[i]) << 16);\n"
	"}\n"
	"#define COMPARE(name, load)                                                      \\\n"
	"extern \"C\" __global__ void name(const void *y, const float *ref, long long M,    \\\n"
	"				 long long N, long long ldy, double *sums)            \\\n"
	"{                                                                                \\\n"
	"	double d2 = 0, r2 = 0;                                                   \\\n"
	"	unsigned long long bad = 0, first = ~0ull;                               \\\n"
	"	for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < M * N; \\\n"
	"	     k += (long long)gridDim.x * blockDim.x) {                            \\\n"
	"		/* dense rows skip the 64-bit division (most of the time) */      \\\n"
	"		double want = ref[k], got = load(y, ldy == N ? k : (k / N) * ldy + k % N); \\\n"
	"		if (isnan(want) != isnan(got) ||                                 \\\n"
	"		    ((isinf(want) || isinf(got)) && want != got)) {              \\\n"
	"			bad++;                                                   \\\n"
	"			first = min(first, (unsigned long long)k);               \\\n"
	"		} else if (!isnan(want) && !isinf(want)) {                       \\\n"
	"			d2 += (got - want) * (got - want);                       \\\n"
	"			r2 += want * want;                                       \\\n"
	"		}                                                                \\\n"
	"	}                                                                        \\\n"
	"	for (int o = 16; o > 0; o >>= 1) {                                       \\\n"
	"		d2 += __shfl_xor_sync(0xffffffffu, d2, o);                       \\\n"
	"		r2 += __shfl_xor_sync(0xffffffffu, r2, o);                       \\\n"
	"		bad += __shfl_xor_sync(0xffffffffu, bad, o);                     \\\n"
	"		first = min(first, __shfl_xor_sync(0xffffffffu, first, o));     \\\n"
	"	}                                                                        \\\n"
	"	if (threadIdx.x % 32 == 0) {                                             \\\n"
	"		atomicAdd(&sums[0], d2);                                         \\\n"
	"		atomicAdd(&sums[1], r2);                                         \\\n"
	"		atomicAdd((unsigned long long *)&sums[2], bad);                  \\\n"
	"		atomicMin((unsigned long long *)&sums[3], first);                \\\n"
	"	}                                                                        \\\n"
	"}\n"
	"COMPARE(compare_f32, load_f32)\n"
	"COMPARE(compare_f16, load_f16)\n"
	"COMPARE(compare_bf16, load_bf16)\n";

int gpu_compare_open(gpu_compare *g, int cc, at_error *err)
{
	memset(g, 0, sizeof *g);
	if (helper_module_load(compare_source, "compare.cu", cc, "the comparison kernel",
			       &g->module, err))
		return -1;
	static const char *const names[AT_DTYPE_COUNT] = { "compare_f32", "compare_f16",
							    "compare_bf16" };
	for (int d = 0; d < AT_DTYPE_COUNT; d++)
		CU_TRY(err, cudrv.cuModuleGetFunction(&g->fn[d], g->module, names[d]));
	CU_TRY(err, cudrv.cuMemAlloc(&g->sums, 4 * sizeof(double)));
	return 0;
}

void gpu_compare_close(gpu_compare *g)
{
	if (g->sums)
		cudrv.cuMemFree(g->sums);
	if (g->module)
		cudrv.cuModuleUnload(g->module);
	memset(g, 0, sizeof *g);
}

int gpu_compare_run(gpu_compare *g, at_dtype dt, CUdeviceptr y, CUdeviceptr ref, long long M,
		    long long N, long long ldy, CUstream stream, check_result *out, at_error *err)
{
	/* diff2 = norm2 = 0, mismatches = 0, first_bad = all ones */
	CU_TRY(err, cudrv.cuMemsetD32Async(g->sums, 0, 6, stream));
	CU_TRY(err, cudrv.cuMemsetD32Async(g->sums + 24, 0xffffffffu, 2, stream));
	void *args[] = { &y, &ref, &M, &N, &ldy, &g->sums };
	CU_TRY(err, cudrv.cuLaunchKernel(g->fn[dt], 1024, 1, 1, 256, 1, 1, 0, stream, args, NULL));
	CU_TRY(err, cudrv.cuStreamSynchronize(stream));
	double sums[4];
	CU_TRY(err, cudrv.cuMemcpyDtoH(sums, g->sums, sizeof sums));
	unsigned long long bad, first;
	memcpy(&bad, &sums[2], sizeof bad);
	memcpy(&first, &sums[3], sizeof first);
	out->mismatches = (long long)bad;
	out->first_bad = bad ? (long long)first : -1;
	out->rel_l2 = ref_rel_l2(sums[0], sums[1], M * N, dt);
	return 0;
}

/* The naive and cuDNN baselines: see baselines.h. */
#include "tuner/sweep/baselines.h"

#include <cudnn.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/helper_module.h"

/* The seeds' naive softmax, one kernel per PyTorch op. DTYPE_* selects the
 * element type as in the templates; each kernel is launched with one CTA
 * per row (reductions) or a grid over all elements (element-wise). */
static const char naive_source[] =
	"#if DTYPE_F32\n"
	"typedef float elem_t;\n"
	"__device__ float ld(const elem_t *p) { return *p; }\n"
	"__device__ void st(elem_t *p, float v) { *p = v; }\n"
	"#else\n"
	"typedef unsigned short elem_t;\n"
	"#if DTYPE_F16\n"
	"__device__ float ld(const elem_t *p) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(*p)); return f; }\n"
	"__device__ void st(elem_t *p, float v) { asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(*p) : \"f\"(v)); }\n"
	"#else\n"
	"__device__ float ld(const elem_t *p) { return __uint_as_float(((unsigned)*p) << 16); }\n"
	"__device__ void st(elem_t *p, float v) { asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(*p) : \"f\"(v)); }\n"
	"#endif\n"
	"#endif\n"
	"__device__ float block_reduce(float v, bool is_max)\n"
	"{\n"
	"	__shared__ float part[32];\n"
	"	for (int o = 16; o > 0; o >>= 1) {\n"
	"		float w = __shfl_xor_sync(0xffffffffu, v, o);\n"
	"		v = is_max ? fmaxf(v, w) : v + w;\n"
	"	}\n"
	"	if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;\n"
	"	__syncthreads();\n"
	"	v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : (is_max ? -__int_as_float(0x7f800000) : 0.0f);\n"
	"	for (int o = 16; o > 0; o >>= 1) {\n"
	"		float w = __shfl_xor_sync(0xffffffffu, v, o);\n"
	"		v = is_max ? fmaxf(v, w) : v + w;\n"
	"	}\n"
	"	return v;\n"
	"}\n"
	"extern \"C\" __global__ void row_reduce(elem_t *out, const elem_t *in, long long N, int is_max)\n"
	"{\n"
	"	const elem_t *row = in + blockIdx.x * N;\n"
	"	float v = is_max ? -__int_as_float(0x7f800000) : 0.0f;\n"
	"	for (long long j = threadIdx.x; j < N; j += blockDim.x)\n"
	"		v = is_max ? fmaxf(v, ld(row + j)) : v + ld(row + j);\n"
	"	v = block_reduce(v, is_max);\n"
	"	if (threadIdx.x == 0) st(out + blockIdx.x, v);\n"
	"}\n"
	"// The ceiling at this size: the same bytes read and written by a copy.\n"
	"extern \"C\" __global__ void copy16(int4 *out, const int4 *in, long long n)\n"
	"{\n"
	"	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
	"	     i += (long long)gridDim.x * blockDim.x)\n"
	"		out[i] = in[i];\n"
	"}\n"
	"// op 0: out = a - row_value; 1: out = exp(a); 2: out = a / row_value\n"
	"extern \"C\" __global__ void elementwise(elem_t *out, const elem_t *a, const elem_t *row_value,\n"
	"					long long M, long long N, int op)\n"
	"{\n"
	"	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < M * N;\n"
	"	     i += (long long)gridDim.x * blockDim.x) {\n"
	"		float v = ld(a + i);\n"
	"		if (op == 0) v -= ld(row_value + i / N);\n"
	"		else if (op == 1) v = expf(v);\n"
	"		else v /= ld(row_value + i / N);\n"
	"		st(out + i, v);\n"
	"	}\n"
	"}\n";

typedef struct cudnn_api {
	void *lib;
	__typeof__(cudnnCreate) *create;
	__typeof__(cudnnDestroy) *destroy;
	__typeof__(cudnnSetStream) *set_stream;
	__typeof__(cudnnCreateTensorDescriptor) *create_desc;
	__typeof__(cudnnDestroyTensorDescriptor) *destroy_desc;
	__typeof__(cudnnSetTensor4dDescriptor) *set_desc;
	__typeof__(cudnnSoftmaxForward) *softmax;
	__typeof__(cudnnGetErrorString) *error_string;
	cudnnHandle_t handle;
	cudnnTensorDescriptor_t desc;
} cudnn_api;

struct baselines {
	CUmodule module[AT_DTYPE_COUNT];
	CUfunction reduce[AT_DTYPE_COUNT], elementwise[AT_DTYPE_COUNT], copy16;
	cudnn_api dnn;
	char cudnn_reason[512];
};

static int load_naive(baselines *b, at_dtype dt, int cc, at_error *err)
{
	static const char *const defines[AT_DTYPE_COUNT] = {
		"#define DTYPE_F32 1\n", "#define DTYPE_F16 1\n", "#define DTYPE_BF16 1\n"
	};
	strbuf src = { 0 };
	strbuf_printf(&src, "// The seeds' naive softmax (autotune baseline), dtype %s.\n%s%s",
		      at_dtype_name(dt), defines[dt], naive_source);
	int rc = helper_module_load(src.data, "naive.cu", cc, "the naive baseline", &b->module[dt],
				    err);
	strbuf_free(&src);
	if (rc)
		return -1;
	CU_TRY(err, cudrv.cuModuleGetFunction(&b->reduce[dt], b->module[dt], "row_reduce"));
	CU_TRY(err, cudrv.cuModuleGetFunction(&b->elementwise[dt], b->module[dt], "elementwise"));
	CU_TRY(err, cudrv.cuModuleGetFunction(&b->copy16, b->module[dt], "copy16"));
	return 0;
}

static void *open_cudnn_library(void)
{
	const char *env = getenv("AUTOTUNE_CUDNN");
	if (env && *env)
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	static const char *const candidates[] = {
		"libcudnn.so.9", "/usr/local/cuda/lib/libcudnn.so.9",
		"/usr/local/cuda/lib64/libcudnn.so.9",
	};
	for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
		void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
		if (lib)
			return lib;
	}
	/* PyTorch's wheels bring their own cuDNN */
	glob_t g;
	void *lib = NULL;
	if (glob("/opt/*/.venv/lib/python3*/site-packages/nvidia/cudnn/lib/libcudnn.so.9", 0, NULL,
		 &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !lib; i++)
			lib = dlopen(g.gl_pathv[i], RTLD_NOW | RTLD_LOCAL);
		globfree(&g);
	}
	return lib;
}

static void load_cudnn(baselines *b)
{
	cudnn_api *d = &b->dnn;
	d->lib = open_cudnn_library();
	if (!d->lib) {
		snprintf(b->cudnn_reason, sizeof b->cudnn_reason,
			 "libcudnn.so.9 not found (set AUTOTUNE_CUDNN to its path)");
		return;
	}
#define CUDNN_SYM(field, name) *(void **)&d->field = dlsym(d->lib, #name)
	CUDNN_SYM(create, cudnnCreate);
	CUDNN_SYM(destroy, cudnnDestroy);
	CUDNN_SYM(set_stream, cudnnSetStream);
	CUDNN_SYM(create_desc, cudnnCreateTensorDescriptor);
	CUDNN_SYM(destroy_desc, cudnnDestroyTensorDescriptor);
	CUDNN_SYM(set_desc, cudnnSetTensor4dDescriptor);
	CUDNN_SYM(softmax, cudnnSoftmaxForward);
	CUDNN_SYM(error_string, cudnnGetErrorString);
#undef CUDNN_SYM
	if (!d->create || !d->destroy || !d->set_stream || !d->create_desc || !d->destroy_desc ||
	    !d->set_desc || !d->softmax || !d->error_string) {
		snprintf(b->cudnn_reason, sizeof b->cudnn_reason, "libcudnn lacks the legacy softmax API");
	} else if (d->create(&d->handle) != CUDNN_STATUS_SUCCESS ||
		   d->create_desc(&d->desc) != CUDNN_STATUS_SUCCESS) {
		snprintf(b->cudnn_reason, sizeof b->cudnn_reason, "cudnnCreate failed");
	} else {
		return;
	}
	if (d->handle)
		d->destroy(d->handle);
	dlclose(d->lib);
	memset(d, 0, sizeof *d);
}

int baselines_open(baselines **out, int cc, at_error *err)
{
	baselines *b = xcalloc(1, sizeof *b);
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++) {
		if (load_naive(b, (at_dtype)dt, cc, err)) {
			baselines_close(b);
			return -1;
		}
	}
	load_cudnn(b);
	*out = b;
	return 0;
}

void baselines_close(baselines *b)
{
	if (!b)
		return;
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
		if (b->module[dt])
			cudrv.cuModuleUnload(b->module[dt]);
	if (b->dnn.lib) {
		b->dnn.destroy_desc(b->dnn.desc);
		b->dnn.destroy(b->dnn.handle);
		dlclose(b->dnn.lib);
	}
	free(b);
}

int baselines_cudnn_available(const baselines *b)
{
	return b->dnn.lib != NULL;
}

const char *baselines_cudnn_reason(const baselines *b)
{
	return b->cudnn_reason;
}

int baseline_run_init(baseline_run *r, baselines *b, at_dtype dt, CUdeviceptr y,
		      CUdeviceptr x, long long M, long long N, at_error *err)
{
	memset(r, 0, sizeof *r);
	*r = (baseline_run){ .b = b, .dtype = dt, .y = y, .x = x, .M = M, .N = N };
	size_t elem = at_dtype_size(dt);
	CU_TRY(err, cudrv.cuMemAlloc(&r->scratch, (size_t)(M * N) * elem));
	CU_TRY(err, cudrv.cuMemAlloc(&r->row_stats, (size_t)M * 2 * elem));
	return 0;
}

void baseline_run_free(baseline_run *r)
{
	if (r->scratch)
		cudrv.cuMemFree(r->scratch);
	if (r->row_stats)
		cudrv.cuMemFree(r->row_stats);
	memset(r, 0, sizeof *r);
}

static int launch_reduce(baseline_run *r, CUdeviceptr out, CUdeviceptr in, int is_max,
			 CUstream stream, at_error *err)
{
	void *args[] = { &out, &in, &r->N, &is_max };
	CU_TRY(err, cudrv.cuLaunchKernel(r->b->reduce[r->dtype], (unsigned)r->M, 1, 1, 256, 1, 1, 0,
					 stream, args, NULL));
	return 0;
}

static int launch_elementwise(baseline_run *r, CUdeviceptr out, CUdeviceptr a,
			      CUdeviceptr row_value, int op, CUstream stream, at_error *err)
{
	void *args[] = { &out, &a, &row_value, &r->M, &r->N, &op };
	long long blocks = (r->M * r->N + 255) / 256;
	unsigned grid = blocks > 65536 ? 65536 : (unsigned)blocks;
	CU_TRY(err, cudrv.cuLaunchKernel(r->b->elementwise[r->dtype], grid, 1, 1, 256, 1, 1, 0,
					 stream, args, NULL));
	return 0;
}

int baseline_launch_naive(void *arg, CUstream stream, at_error *err)
{
	baseline_run *r = arg;
	size_t elem = at_dtype_size(r->dtype);
	CUdeviceptr row_max = r->row_stats, row_sum = r->row_stats + (CUdeviceptr)r->M * elem;
	/* x_max = max(x); z = x - x_max; num = exp(z); den = sum(num); y = num / den */
	if (launch_reduce(r, row_max, r->x, 1, stream, err) ||
	    launch_elementwise(r, r->scratch, r->x, row_max, 0, stream, err) ||
	    launch_elementwise(r, r->y, r->scratch, 0, 1, stream, err) ||
	    launch_reduce(r, row_sum, r->y, 0, stream, err) ||
	    launch_elementwise(r, r->y, r->y, row_sum, 2, stream, err))
		return -1;
	return 0;
}

int baseline_launch_copy(void *arg, CUstream stream, at_error *err)
{
	baseline_run *r = arg;
	long long n16 = r->M * r->N * (long long)at_dtype_size(r->dtype) / 16;
	void *args[] = { &r->y, &r->x, &n16 };
	long long blocks = (n16 + 255) / 256;
	unsigned grid = blocks > (1 << 20) ? 1u << 20 : (unsigned)(blocks ? blocks : 1);
	CU_TRY(err, cudrv.cuLaunchKernel(r->b->copy16, grid, 1, 1, 256, 1, 1, 0, stream, args,
					 NULL));
	return 0;
}

int baseline_launch_cudnn(void *arg, CUstream stream, at_error *err)
{
	baseline_run *r = arg;
	cudnn_api *d = &r->b->dnn;
	static const cudnnDataType_t types[AT_DTYPE_COUNT] = { CUDNN_DATA_FLOAT, CUDNN_DATA_HALF,
								CUDNN_DATA_BFLOAT16 };
	if (r->M > 0x7fffffff || r->N > 0x7fffffff)
		return at_error_set(err, "cuDNN takes 32-bit tensor dimensions");
	cudnnStatus_t s = d->set_stream(d->handle, (cudaStream_t)stream);
	if (s == CUDNN_STATUS_SUCCESS)
		s = d->set_desc(d->desc, CUDNN_TENSOR_NCHW, types[r->dtype], (int)r->M, (int)r->N, 1, 1);
	const float one = 1.0f, zero = 0.0f;
	if (s == CUDNN_STATUS_SUCCESS)
		s = d->softmax(d->handle, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
			       d->desc, (const void *)(uintptr_t)r->x, &zero, d->desc,
			       (void *)(uintptr_t)r->y);
	if (s != CUDNN_STATUS_SUCCESS)
		return at_error_set(err, "cudnnSoftmaxForward: %s", d->error_string(s));
	return 0;
}

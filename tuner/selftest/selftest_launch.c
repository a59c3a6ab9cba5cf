/* The selftest's GPU and its launches: see selftest_launch.h. */
#include "tuner/selftest/selftest_launch.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/helper_module.h"
#include "tuner/ops/ops.h"

/* Sums each row of an output in double and counts the rows whose sum is
 * not 1 within tol (a NaN sum counts): the 2^31 case's check of every row. */
static const char rowsum_source[] =
	"// autotune selftest: row sums (tuner/selftest/selftest_launch.c)\n"
	"__device__ double ld_f32(const void *p, long long i) { return ((const float *)p)[i]; }\n"
	"__device__ double ld_f16(const void *p, long long i)\n"
	"{\n"
	"	float f;\n"
	"	asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(((const unsigned short *)p)[i]));\n"
	"	return f;\n"
	"}\n"
	"__device__ double ld_bf16(const void *p, long long i)\n"
	"{\n"
	"	return __uint_as_float(((unsigned)((const unsigned short *)p)[i]) << 16);\n"
	"}\n"
	"#define ROWSUM(name, load)                                                       \\\n"
	"extern \"C\" __global__ void name(const void *y, long long M, long long N,        \\\n"
	"				 double tol, unsigned long long *bad)                 \\\n"
	"{                                                                                \\\n"
	"	__shared__ double part[8];                                               \\\n"
	"	for (long long r = blockIdx.x; r < M; r += gridDim.x) {                  \\\n"
	"		double s = 0;                                                    \\\n"
	"		for (long long j = threadIdx.x; j < N; j += blockDim.x)          \\\n"
	"			s += load(y, r * N + j);                                 \\\n"
	"		for (int o = 16; o > 0; o >>= 1)                                 \\\n"
	"			s += __shfl_xor_sync(0xffffffffu, s, o);                 \\\n"
	"		if (threadIdx.x % 32 == 0)                                       \\\n"
	"			part[threadIdx.x / 32] = s;                              \\\n"
	"		__syncthreads();                                                 \\\n"
	"		if (threadIdx.x == 0) {                                          \\\n"
	"			double t = 0;                                            \\\n"
	"			for (int w = 0; w < 8; w++)                              \\\n"
	"				t += part[w];                                    \\\n"
	"			if (!(fabs(t - 1.0) <= tol)) {                           \\\n"
	"				atomicAdd(&bad[0], 1ull);                        \\\n"
	"				atomicMin(&bad[1], (unsigned long long)r);       \\\n"
	"			}                                                        \\\n"
	"		}                                                                \\\n"
	"		__syncthreads();                                                 \\\n"
	"	}                                                                        \\\n"
	"}\n"
	"ROWSUM(rowsum_f32, ld_f32)\n"
	"ROWSUM(rowsum_f16, ld_f16)\n"
	"ROWSUM(rowsum_bf16, ld_bf16)\n";

static int open_rowsum(st_gpu *g, at_error *err)
{
	if (helper_module_load(rowsum_source, "rowsum.cu", g->gpu.cc, "the row-sum kernel",
			       &g->rowsum_module, err))
		return -1;
	static const char *const names[AT_DTYPE_COUNT] = { "rowsum_f32", "rowsum_f16",
							    "rowsum_bf16" };
	for (int d = 0; d < AT_DTYPE_COUNT; d++)
		CU_TRY(err, cudrv.cuModuleGetFunction(&g->rowsum[d], g->rowsum_module, names[d]));
	CU_TRY(err, cudrv.cuMemAlloc(&g->rowsum_out, 2 * sizeof(unsigned long long)));
	return 0;
}

int st_gpu_open(st_gpu *g, int device, const char *db_path, int threads, at_error *err)
{
	memset(g, 0, sizeof *g);
	if (gpu_open(device, &g->gpu, err))
		return -1;
	if (db_path && tdb_open(db_path, &g->db, err)) {
		gpu_close(&g->gpu);
		return -1;
	}
	if (threads <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		threads = n < 1 ? 1 : n > 64 ? 64 : (int)n;
	}
	kernel_cache_init(&g->cache, g->gpu.cc, threads, g->db);
	CUresult rc = cudrv.cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING);
	if (rc != CUDA_SUCCESS) {
		cudrv_error(err, rc, "cuStreamCreate");
		st_gpu_close(g);
		return -1;
	}
	if (open_rowsum(g, err)) {
		st_gpu_close(g);
		return -1;
	}
	return 0;
}

void st_gpu_close(st_gpu *g)
{
	if (g->gpu.ctx) {
		if (g->rowsum_out)
			cudrv.cuMemFree(g->rowsum_out);
		if (g->rowsum_module)
			cudrv.cuModuleUnload(g->rowsum_module);
		if (g->stream)
			cudrv.cuStreamDestroy(g->stream);
	}
	kernel_cache_free(&g->cache);
	tdb_close(g->db);
	gpu_close(&g->gpu);
	memset(g, 0, sizeof *g);
}

/* Errors after which the context is unusable. */
static int context_is_dead(CUresult rc)
{
	return rc == CUDA_ERROR_ILLEGAL_ADDRESS || rc == CUDA_ERROR_LAUNCH_FAILED ||
	       rc == CUDA_ERROR_MISALIGNED_ADDRESS || rc == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
	       rc == CUDA_ERROR_HARDWARE_STACK_ERROR || rc == CUDA_ERROR_INVALID_PC ||
	       rc == CUDA_ERROR_LAUNCH_TIMEOUT || rc == CUDA_ERROR_INVALID_ADDRESS_SPACE ||
	       rc == CUDA_ERROR_ASSERT || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

void st_gpu_not_run(const st_gpu *g, st_outcome *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[i].status = ST_NOT_RUN;
		snprintf(out[i].reason, sizeof out[i].reason, "%s", g->dead_reason);
	}
}

static void fail(st_outcome *out, const char *fmt, const char *text)
{
	out->status = ST_FAILED;
	snprintf(out->reason, sizeof out->reason, fmt, text);
}

int st_gpu_prepare(st_gpu *g, const st_job *job, kernel_entry *e, long long M,
		   unsigned *grid, st_outcome *out)
{
	at_error lerr = { { 0 } };
	if (e->status != COMPILE_OK) {
		const char *log = e->status == COMPILE_FAILED ? e->k.log : e->error;
		fail(out, "did not compile: %.400s", log ? log : "");
		return -1;
	}
	if (kernel_entry_load(e, job->op->kernel_name, &lerr) ||
	    launch_grid(&job->geom, e->fn, M, g->gpu.info.sm_count, grid, &lerr)) {
		fail(out, "cannot launch: %.900s", lerr.msg);
		return -1;
	}
	return 0;
}

static void mark_dead(st_gpu *g, const char *label, const char *msg)
{
	g->dead = 1;
	snprintf(g->dead_reason, sizeof g->dead_reason,
		 "the GPU context was lost when %.200s failed (%.300s): nothing more can run in "
		 "this process", label, msg);
}

int st_gpu_check(st_gpu *g, CUresult rc, const char *what, const char *label, st_outcome *out)
{
	if (rc == CUDA_SUCCESS)
		return 0;
	at_error cerr = { { 0 } };
	cudrv_error(&cerr, rc, what);
	out->status = ST_FAILED;
	if (context_is_dead(rc)) {
		mark_dead(g, label, cerr.msg);
		snprintf(out->reason, sizeof out->reason, "%.900s (the GPU context is lost; later "
			 "variants cannot run)", cerr.msg);
	} else {
		snprintf(out->reason, sizeof out->reason, "%.1000s", cerr.msg);
	}
	return -1;
}

/* What the watchdog says when a launch hangs (written by the handler). */
static char hang_message[800];
static size_t hang_len;

static void on_hang(int sig)
{
	(void)sig;
	if (write(2, hang_message, hang_len) < 0)
		_exit(1);
	_exit(1);
}

static void arm_watchdog(const st_gpu *g, const char *label)
{
	int timeout = g->launch_timeout_s > 0 ? g->launch_timeout_s : ST_LAUNCH_TIMEOUT_S;
	int len = snprintf(hang_message, sizeof hang_message,
			   "\nautotune selftest: FAILED: %.600s did not finish within %d s (a hang); "
			   "stopping, since nothing more can run in this process\n", label, timeout);
	hang_len = len < 0 ? 0 : (size_t)len < sizeof hang_message ? (size_t)len : sizeof hang_message - 1;
	signal(SIGALRM, on_hang);
	alarm((unsigned)timeout);
}

/* st_gpu_launch's body: x2 is 0 for a kernel of one input. */
static int launch_inputs(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid,
			 CUdeviceptr y, CUdeviceptr x, CUdeviceptr x2, long long M, long long N,
			 long long ldy, long long ldx, unsigned flags, const char *label,
			 st_outcome *out)
{
	at_error lerr = { { 0 } };
	g->launches++;
	arm_watchdog(g, label);
	int refused = x2 ? launch_softmax_backward(e->fn, &job->geom, grid, y, x, x2, M, N, ldy,
						   ldx, ldx, flags, g->stream, &lerr)
			 : launch_softmax(e->fn, &job->geom, grid, y, x, M, N, ldy, ldx, flags,
					  g->stream, &lerr);
	CUresult rc = cudrv.cuStreamSynchronize(g->stream);
	alarm(0);
	if (refused) {
		/* refused at launch (its parameters): the variant fails; the
		 * context is lost only if the stream says so */
		if (rc != CUDA_SUCCESS && context_is_dead(rc))
			return st_gpu_check(g, rc, "the stream after a refused launch", label, out);
		fail(out, "cannot launch: %.900s", lerr.msg);
		return -1;
	}
	return st_gpu_check(g, rc, "running the variant", label, out);
}

int st_gpu_launch(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid, CUdeviceptr y,
		  CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		  unsigned flags, const char *label, st_outcome *out)
{
	return launch_inputs(g, e, job, grid, y, x, 0, M, N, ldy, ldx, flags, label, out);
}

int st_gpu_launch2(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, CUdeviceptr x2, long long M, long long N, long long ldy,
		   long long ldx, unsigned flags, const char *label, st_outcome *out)
{
	return launch_inputs(g, e, job, grid, y, x, x2, M, N, ldy, ldx, flags, label, out);
}

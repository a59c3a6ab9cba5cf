/* The selftest's GPU runner: see selftest_gpu.h. */
#include "tuner/selftest_gpu.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tuner/helper_module.h"
#include "tuner/plan.h"
#include "tuner/reference.h"

/* Sums each row of an output in double and counts the rows whose sum is
 * not 1 within tol (a NaN sum counts): the 2^31 case's check of every row. */
static const char rowsum_source[] =
	"// autotune selftest: row sums (tuner/selftest_gpu.c)\n"
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
	if (kernel_entry_load(e, &lerr) ||
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

int st_gpu_launch(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid, CUdeviceptr y,
		  CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		  const char *label, st_outcome *out)
{
	at_error lerr = { { 0 } };
	g->launches++;
	arm_watchdog(g, label);
	int refused = launch_softmax(e->fn, &job->geom, grid, y, x, M, N, ldy, ldx, g->stream, &lerr);
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

/* ---- the small shapes ---- */

typedef struct small_data {
	size_t x_bytes, y_bytes, front_bytes;
	void *x_host, *y_init, *y_back, *x_back;
	double *ref;
	CUdeviceptr x, y, y_pristine; /* in place: y is x's working copy, from y_pristine */
} small_data;

static uint64_t shape_seed(const st_shape *s, at_dtype dt)
{
	return 0x5e1f7e575e1f7e57ULL ^ ((uint64_t)s->M * 0x9e3779b97f4a7c15ULL) ^
	       ((uint64_t)s->N << 24) ^ ((uint64_t)s->ldx << 40) ^ (uint64_t)dt ^
	       ((uint64_t)s->kind << 56);
}

static void free_small(small_data *d)
{
	if (d->x)
		cudrv.cuMemFree(d->x);
	if (d->y)
		cudrv.cuMemFree(d->y);
	if (d->y_pristine)
		cudrv.cuMemFree(d->y_pristine);
	free(d->x_host);
	free(d->y_init);
	free(d->y_back);
	free(d->x_back);
	free(d->ref);
	memset(d, 0, sizeof *d);
}

static int make_small(st_gpu *g, const st_shape *s, at_dtype dt, small_data *d, at_error *err)
{
	(void)g;
	memset(d, 0, sizeof *d);
	size_t elem = at_dtype_size(dt);
	d->front_bytes = st_front_elems(s, dt) * elem;
	d->x_bytes = st_image_elems(s, dt, s->ldx) * elem;
	d->y_bytes = st_image_elems(s, dt, s->ldy) * elem;
	d->x_host = xmalloc(d->x_bytes);
	st_fill_input(s, dt, d->x_host, shape_seed(s, dt));
	d->ref = xmalloc((size_t)(s->M * s->N) * sizeof *d->ref);
	ref_softmax((const char *)d->x_host + d->front_bytes, dt, s->M, s->N, s->ldx, d->ref);
	d->y_back = xmalloc(d->y_bytes);
	if (s->in_place) {
		/* y is x: the working copy starts as the input image */
		CU_TRY(err, cudrv.cuMemAlloc(&d->y_pristine, d->x_bytes));
		CU_TRY(err, cudrv.cuMemcpyHtoD(d->y_pristine, d->x_host, d->x_bytes));
		CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->y_bytes));
		return 0;
	}
	d->y_init = xmalloc(d->y_bytes);
	st_fill_output(s, dt, d->y_init);
	d->x_back = xmalloc(d->x_bytes);
	CU_TRY(err, cudrv.cuMemAlloc(&d->x, d->x_bytes));
	CU_TRY(err, cudrv.cuMemcpyHtoD(d->x, d->x_host, d->x_bytes));
	CU_TRY(err, cudrv.cuMemAlloc(&d->y_pristine, d->y_bytes));
	CU_TRY(err, cudrv.cuMemcpyHtoD(d->y_pristine, d->y_init, d->y_bytes));
	CU_TRY(err, cudrv.cuMemAlloc(&d->y, d->y_bytes));
	return 0;
}

/* The first byte where a and b differ, as an element index, or -1. */
static long long first_change(const void *a, const void *b, size_t bytes, size_t elem)
{
	if (memcmp(a, b, bytes) == 0)
		return -1;
	const unsigned char *p = a, *q = b;
	size_t i = 0;
	while (p[i] == q[i])
		i++;
	return (long long)(i / elem);
}

static void run_one(st_gpu *g, const st_shape *s, at_dtype dt, small_data *d, const st_job *job,
		    kernel_entry *e, const char *label, st_outcome *out)
{
	unsigned grid;
	if (st_gpu_prepare(g, job, e, s->M, &grid, out))
		return;
	CUdeviceptr y_rows = d->y + d->front_bytes;
	CUdeviceptr x_rows = s->in_place ? y_rows : d->x + d->front_bytes;
	if (st_gpu_check(g, cudrv.cuMemcpyDtoDAsync(d->y, d->y_pristine, d->y_bytes, g->stream),
			 "resetting the output", label, out) ||
	    st_gpu_launch(g, e, job, grid, y_rows, x_rows, s->M, s->N, s->ldy, s->ldx, label, out) ||
	    st_gpu_check(g, cudrv.cuMemcpyDtoH(d->y_back, d->y, d->y_bytes), "copying the output back",
			 label, out) ||
	    (!s->in_place && st_gpu_check(g, cudrv.cuMemcpyDtoH(d->x_back, d->x, d->x_bytes),
					  "copying the input back", label, out)))
		return;
	if (!s->in_place) {
		long long at = first_change(d->x_back, d->x_host, d->x_bytes, at_dtype_size(dt));
		if (at >= 0) {
			char where[64];
			snprintf(where, sizeof where, "%lld", at - (long long)st_front_elems(s, dt));
			fail(out, "modified its input x (element %s from row 0's start)", where);
			return;
		}
	}
	st_verdict v = st_check_output(s, dt, d->y_back, d->ref);
	out->status = v.ok ? ST_PASSED : ST_FAILED;
	snprintf(out->reason, sizeof out->reason, "%s", v.reason);
}

static shape_env env_of(void *ctx, long long M, long long N, at_dtype dt)
{
	st_gpu *g = ctx;
	return gpu_shape_env(&g->gpu, M, N, at_dtype_size(dt));
}

static int run_jobs(void *ctx, const st_shape *s, at_dtype dt, const st_job *jobs, size_t n,
		    st_outcome *out, at_error *err)
{
	st_gpu *g = ctx;
	if (g->dead) {
		st_gpu_not_run(g, out, n);
		return 0;
	}
	variant *vs = xcalloc(n, sizeof *vs);
	for (size_t i = 0; i < n; i++)
		vs[i] = jobs[i].v;
	char **sources = plan_sources(vs, n, err);
	free(vs);
	if (!sources)
		return -1;
	kernel_entry **entries = xcalloc(n, sizeof *entries);
	int rc = kernel_cache_get(&g->cache, sources, n, entries, err);
	plan_free_sources(sources, n);
	if (rc == 0 && s->kind == ST_CASE_BIG) {
		rc = st_gpu_run_big(g, s, dt, jobs, entries, n, out, err);
	} else if (rc == 0) {
		small_data d;
		rc = make_small(g, s, dt, &d, err);
		char shape[160];
		st_shape_label(s, shape, sizeof shape);
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (g->dead) {
				st_gpu_not_run(g, out + i, n - i);
				break;
			}
			char *params = variant_params_str(&jobs[i].v);
			char label[600];
			snprintf(label, sizeof label, "%s %s %s at %s", jobs[i].v.tmpl->name,
				 at_dtype_name(dt), params, shape);
			free(params);
			run_one(g, s, dt, &d, &jobs[i], entries[i], label, &out[i]);
		}
		free_small(&d);
	}
	free(entries);
	return rc;
}

st_runner st_gpu_runner(st_gpu *g)
{
	return (st_runner){ g, env_of, run_jobs };
}

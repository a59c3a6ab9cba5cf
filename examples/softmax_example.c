/*
** softmax_example: an application's use of libautotune-dispatch, built
** against the installed library only (make examples):
**
**   build/examples/softmax_example [--dtype f32|f16|bf16] [-M M] [-N N] [--db FILE]
**
** Makes GPU 0's primary context current, fills x (M x N, random in [-5, 5])
** on the GPU, runs atd_softmax, and checks y against a CPU reference in
** double (relative L2 error at most 1e-5 for f32, 1e-2 for f16 and bf16; no
** NaN). Only then is it timed: the median of 20 calls measured with CUDA
** events after a warm-up (each behind an untimed call, so that launch
** latency is not counted), and the bandwidth 2*M*N*element size / time (x
** read once, y written once). It also prints what served the shape
** (atd_query) and the host time per queued call.
** Exit status: 0 success, 1 a failed check or no GPU, 2 a usage error.
**
** The CUDA driver is reached with dlopen, declaring the few entry points
** used here, so that this builds without the CUDA toolkit.
*/
#define _POSIX_C_SOURCE 200809L

#include <autotune/dispatch.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the CUDA driver API, the part used here ---------------------------- */
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUevent_st *CUevent;
typedef unsigned long long CUdeviceptr;
#define CUDA_SUCCESS 0
#define CU_ATTR_CC_MAJOR 75 /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
#define CU_ATTR_CC_MINOR 76

static struct {
	CUresult (*init)(unsigned);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*device_get_name)(char *, int, CUdevice);
	CUresult (*device_get_attribute)(int *, int, CUdevice);
	CUresult (*primary_retain)(CUcontext *, CUdevice);
	CUresult (*primary_release)(CUdevice);
	CUresult (*ctx_set_current)(CUcontext);
	CUresult (*ctx_synchronize)(void);
	CUresult (*mem_alloc)(CUdeviceptr *, size_t);
	CUresult (*mem_free)(CUdeviceptr);
	CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
	CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
	CUresult (*event_create)(CUevent *, unsigned);
	CUresult (*event_destroy)(CUevent);
	CUresult (*event_record)(CUevent, void *);
	CUresult (*event_synchronize)(CUevent);
	CUresult (*event_elapsed)(float *, CUevent, CUevent);
	CUresult (*get_error_string)(CUresult, const char **);
} cu;

static void *libcuda;

/* The first of the names that libcuda exports (newest ABI first). */
static int resolve(void *slot, const char *name, const char *fallback)
{
	void *p = dlsym(libcuda, name);
	if (!p && fallback)
		p = dlsym(libcuda, fallback);
	memcpy(slot, &p, sizeof p);
	return p ? 0 : -1;
}

static int load_driver(char *why, size_t cap)
{
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!libcuda) {
		snprintf(why, cap, "%s", dlerror());
		return -1;
	}
	int bad = resolve(&cu.init, "cuInit", NULL) | resolve(&cu.device_get, "cuDeviceGet", NULL) |
		  resolve(&cu.device_get_name, "cuDeviceGetName", NULL) |
		  resolve(&cu.device_get_attribute, "cuDeviceGetAttribute", NULL) |
		  resolve(&cu.primary_retain, "cuDevicePrimaryCtxRetain", NULL) |
		  resolve(&cu.primary_release, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease") |
		  resolve(&cu.ctx_set_current, "cuCtxSetCurrent", NULL) |
		  resolve(&cu.ctx_synchronize, "cuCtxSynchronize", NULL) |
		  resolve(&cu.mem_alloc, "cuMemAlloc_v2", NULL) |
		  resolve(&cu.mem_free, "cuMemFree_v2", NULL) |
		  resolve(&cu.memcpy_htod, "cuMemcpyHtoD_v2", NULL) |
		  resolve(&cu.memcpy_dtoh, "cuMemcpyDtoH_v2", NULL) |
		  resolve(&cu.event_create, "cuEventCreate", NULL) |
		  resolve(&cu.event_destroy, "cuEventDestroy_v2", "cuEventDestroy") |
		  resolve(&cu.event_record, "cuEventRecord", NULL) |
		  resolve(&cu.event_synchronize, "cuEventSynchronize", NULL) |
		  resolve(&cu.event_elapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime") |
		  resolve(&cu.get_error_string, "cuGetErrorString", NULL);
	if (bad) {
		snprintf(why, cap, "libcuda.so.1 lacks an entry point this example needs");
		return -1;
	}
	CUresult rc = cu.init(0);
	if (rc != CUDA_SUCCESS) {
		const char *text = NULL;
		cu.get_error_string(rc, &text);
		snprintf(why, cap, "cuInit failed: %s", text ? text : "unknown error");
		return -1;
	}
	return 0;
}

/* Stops with a message if a driver call failed. */
static void check_cu(CUresult rc, const char *what)
{
	if (rc == CUDA_SUCCESS)
		return;
	const char *text = NULL;
	cu.get_error_string(rc, &text);
	fprintf(stderr, "softmax_example: %s failed: %s (%d)\n", what, text ? text : "?", rc);
	exit(1);
}

/* ---- element types on the host ----------------------------------------- */
static uint16_t f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	x &= 0x7fffffffu;
	if (x > 0x7f800000u)
		return sign | 0x7e00u; /* NaN */
	if (x >= 0x477ff000u)
		return sign | 0x7c00u; /* rounds to infinity */
	if (x < 0x38800000u) {  /* below the smallest normal half: units of 2^-24 */
		float a;
		memcpy(&a, &x, sizeof a);
		return sign | (uint16_t)lrintf(a * 16777216.0f);
	}
	uint32_t h = (((x >> 23) - 112u) << 10) | ((x & 0x7fffffu) >> 13);
	uint32_t rest = x & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
		h++; /* round to nearest even; a carry into the exponent is right */
	return sign | (uint16_t)h;
}

static float f16_to_f32(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v = e == 0 ? ldexpf((float)m, -24)
		: e == 31 ? (m ? NAN : INFINITY)
			  : ldexpf((float)(m | 0x400), e - 25);
	return (h & 0x8000u) ? -v : v;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u);
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float bf16_to_f32(uint16_t h)
{
	uint32_t x = (uint32_t)h << 16;
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

static size_t elem_size(atd_dtype dt)
{
	return dt == ATD_F32 ? 4 : 2;
}

/* Stores v as element i of buf; returns the value actually stored. */
static float put(void *buf, atd_dtype dt, size_t i, float v)
{
	switch (dt) {
	case ATD_F32: ((float *)buf)[i] = v; return v;
	case ATD_F16: ((uint16_t *)buf)[i] = f32_to_f16(v); return f16_to_f32(((uint16_t *)buf)[i]);
	default: ((uint16_t *)buf)[i] = f32_to_bf16(v); return bf16_to_f32(((uint16_t *)buf)[i]);
	}
}

static double get(const void *buf, atd_dtype dt, size_t i)
{
	switch (dt) {
	case ATD_F32: return ((const float *)buf)[i];
	case ATD_F16: return f16_to_f32(((const uint16_t *)buf)[i]);
	default: return bf16_to_f32(((const uint16_t *)buf)[i]);
	}
}

/* ---- options ------------------------------------------------------------ */
typedef struct options {
	atd_dtype dtype;
	long long M, N;
	const char *db; /* NULL: $AUTOTUNE_DB or autotune.db */
} options;

static const char usage[] =
	"usage: softmax_example [--dtype f32|f16|bf16] [-M M] [-N N] [--db FILE]\n";

static int parse_count(const char *opt, const char *text, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < 1 || v > (1LL << 31)) {
		fprintf(stderr, "softmax_example: %s needs a positive integer, got \"%s\"\n%s", opt,
			text, usage);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
	*o = (options){ ATD_F32, 4096, 1000, NULL };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage, stdout);
			exit(0);
		}
		if (i + 1 == argc) {
			fprintf(stderr, "softmax_example: %s needs a value\n%s", a, usage);
			return -1;
		}
		const char *v = argv[++i];
		if (strcmp(a, "--dtype") == 0) {
			if (strcmp(v, "f32") == 0)
				o->dtype = ATD_F32;
			else if (strcmp(v, "f16") == 0)
				o->dtype = ATD_F16;
			else if (strcmp(v, "bf16") == 0)
				o->dtype = ATD_BF16;
			else {
				fprintf(stderr, "softmax_example: unknown dtype \"%s\"\n%s", v, usage);
				return -1;
			}
		} else if (strcmp(a, "-M") == 0) {
			if (parse_count("-M", v, &o->M))
				return -1;
		} else if (strcmp(a, "-N") == 0) {
			if (parse_count("-N", v, &o->N))
				return -1;
		} else if (strcmp(a, "--db") == 0) {
			o->db = v;
		} else {
			fprintf(stderr, "softmax_example: unknown option %s\n%s", a, usage);
			return -1;
		}
	}
	return 0;
}

/* ---- the CPU reference and the check ------------------------------------ */
/* Relative L2 error of y against softmax(x) computed in double; counts the
 * elements that are NaN in y. */
static double rel_l2_error(const float *x, const void *y, atd_dtype dt, long long M, long long N,
			   long long *nans)
{
	double num = 0, den = 0;
	*nans = 0;
	for (long long i = 0; i < M; i++) {
		const float *row = x + i * N;
		double mx = -INFINITY, sum = 0;
		for (long long j = 0; j < N; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (long long j = 0; j < N; j++)
			sum += exp((double)row[j] - mx);
		for (long long j = 0; j < N; j++) {
			double ref = exp((double)row[j] - mx) / sum;
			double got = get(y, dt, (size_t)(i * N + j));
			if (isnan(got))
				(*nans)++;
			num += (got - ref) * (got - ref);
			den += ref * ref;
		}
	}
	return sqrt(num / den);
}

/* ---- timing ------------------------------------------------------------- */
static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void on_log(void *user, atd_log_level level, const char *message)
{
	(void)user;
	fprintf(stderr, "atd %s: %s\n", level == ATD_LOG_WARNING ? "warning" : "info", message);
}

static void print_choice(const char *label, const atd_choice *c)
{
	printf("%-10s  %s: %s %s", label, atd_level_name(c->level), c->template_name, c->params);
	if (c->level == ATD_LEVEL_BUILTIN)
		printf(" (the built-in kernel)\n");
	else
		printf(" (tuned on %s at M=%lld N=%lld: %.3f us)\n", c->gpu_name,
		       (long long)c->tuned_M, (long long)c->tuned_N, c->tuned_us);
}

/* Stops with the library's message if a call failed. */
static void check_atd(atd_handle *h, atd_status s, const char *what)
{
	if (s == ATD_OK)
		return;
	fprintf(stderr, "softmax_example: %s: %s: %s\n", what, atd_status_string(s), atd_errmsg(h));
	exit(1);
}

int main(int argc, char **argv)
{
	options o;
	if (parse_options(argc, argv, &o))
		return 2;
	char why[512];
	if (load_driver(why, sizeof why)) {
		fprintf(stderr, "softmax_example: no NVIDIA GPU or driver found (%s)\n", why);
		return 1;
	}
	CUdevice dev;
	CUcontext ctx;
	char name[256];
	int major = 0, minor = 0;
	check_cu(cu.device_get(&dev, 0), "cuDeviceGet(0)");
	check_cu(cu.device_get_name(name, (int)sizeof name, dev), "cuDeviceGetName");
	check_cu(cu.device_get_attribute(&major, CU_ATTR_CC_MAJOR, dev), "cuDeviceGetAttribute");
	check_cu(cu.device_get_attribute(&minor, CU_ATTR_CC_MINOR, dev), "cuDeviceGetAttribute");
	check_cu(cu.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check_cu(cu.ctx_set_current(ctx), "cuCtxSetCurrent");
	printf("library     libautotune-dispatch %s (header %s)\n", atd_version(),
	       ATD_VERSION_STRING);
	printf("device      %s (sm_%d%d)\n", name, major, minor);

	atd_handle *h;
	check_atd(NULL, atd_open(o.db, ATD_OPEN_FALLBACK, &h), "atd_open");
	printf("database    %s\n", *atd_errmsg(h) ? atd_errmsg(h) : (o.db ? o.db : "default"));
	atd_set_log(h, on_log, NULL);
	const char *dt_name = o.dtype == ATD_F32 ? "f32" : o.dtype == ATD_F16 ? "f16" : "bf16";
	printf("shape       %s M=%lld N=%lld\n", dt_name, o.M, o.N);
	atd_choice choice;
	check_atd(h, atd_query(h, o.dtype, o.M, o.N, &choice), "atd_query");
	print_choice("selected", &choice);

	size_t count = (size_t)o.M * (size_t)o.N, bytes = count * elem_size(o.dtype);
	float *x_ref = malloc(count * sizeof *x_ref);
	void *x_host = malloc(bytes), *y_host = malloc(bytes);
	if (!x_ref || !x_host || !y_host) {
		fprintf(stderr, "softmax_example: out of host memory for M=%lld N=%lld\n", o.M, o.N);
		return 1;
	}
	uint64_t state = 0x9e3779b97f4a7c15ULL; /* xorshift64: the same input every run */
	for (size_t i = 0; i < count; i++) {
		state ^= state << 13, state ^= state >> 7, state ^= state << 17;
		float v = (float)((double)(state >> 11) / 9007199254740992.0 * 10.0 - 5.0);
		x_ref[i] = put(x_host, o.dtype, i, v);
	}
	CUdeviceptr x, y;
	check_cu(cu.mem_alloc(&x, bytes), "cuMemAlloc(x)");
	check_cu(cu.mem_alloc(&y, bytes), "cuMemAlloc(y)");
	check_cu(cu.memcpy_htod(x, x_host, bytes), "cuMemcpyHtoD");

	/* Check first: a wrong kernel is never timed. */
	void *xp = (void *)(uintptr_t)x, *yp = (void *)(uintptr_t)y;
	check_atd(h, atd_softmax(h, o.dtype, yp, xp, o.M, o.N, o.N, o.N, NULL), "atd_softmax");
	check_cu(cu.ctx_synchronize(), "running the kernel");
	check_cu(cu.memcpy_dtoh(y_host, y, bytes), "cuMemcpyDtoH");
	check_atd(h, atd_query(h, o.dtype, o.M, o.N, &choice), "atd_query");
	print_choice("ran", &choice);
	long long nans;
	double err = rel_l2_error(x_ref, y_host, o.dtype, o.M, o.N, &nans);
	double limit = o.dtype == ATD_F32 ? 1e-5 : 1e-2;
	int ok = nans == 0 && err <= limit;
	printf("check       relative L2 error %.3g (limit %.0e), %lld NaN: %s\n", err, limit, nans,
	       ok ? "ok" : "FAILED");
	if (!ok) {
		fprintf(stderr, "softmax_example: the result does not match the CPU reference\n");
		return 1;
	}

	enum { WARMUP = 5, REPS = 20, QUEUED = 200 };
	for (int i = 0; i < WARMUP; i++)
		check_atd(h, atd_softmax(h, o.dtype, yp, xp, o.M, o.N, o.N, o.N, NULL), "atd_softmax");
	CUevent start, stop;
	check_cu(cu.event_create(&start, 0), "cuEventCreate");
	check_cu(cu.event_create(&stop, 0), "cuEventCreate");
	float ms[REPS];
	for (int i = 0; i < REPS; i++) {
		/* An untimed call ahead keeps the GPU busy while the timed one is
		 * queued, so that the host's launch latency stays out of the time. */
		check_atd(h, atd_softmax(h, o.dtype, yp, xp, o.M, o.N, o.N, o.N, NULL), "atd_softmax");
		check_cu(cu.event_record(start, NULL), "cuEventRecord");
		check_atd(h, atd_softmax(h, o.dtype, yp, xp, o.M, o.N, o.N, o.N, NULL), "atd_softmax");
		check_cu(cu.event_record(stop, NULL), "cuEventRecord");
		check_cu(cu.event_synchronize(stop), "cuEventSynchronize");
		check_cu(cu.event_elapsed(&ms[i], start, stop), "cuEventElapsedTime");
	}
	qsort(ms, REPS, sizeof ms[0], cmp_float);
	double median_us = (ms[REPS / 2 - 1] + ms[REPS / 2]) / 2 * 1e3;
	/* x is read once and y written once. */
	double gbps = 2.0 * (double)bytes / (median_us * 1e-6) / 1e9;
	printf("time        %.3f us (median of %d; min %.3f, max %.3f), %.1f GB/s\n", median_us,
	       REPS, ms[0] * 1e3, ms[REPS - 1] * 1e3, gbps);

	/* Host cost of a call, launch included, while the GPU drains the queue. */
	check_cu(cu.ctx_synchronize(), "cuCtxSynchronize");
	double t0 = now_us();
	for (int i = 0; i < QUEUED; i++)
		check_atd(h, atd_softmax(h, o.dtype, yp, xp, o.M, o.N, o.N, o.N, NULL), "atd_softmax");
	double host_us = (now_us() - t0) / QUEUED;
	check_cu(cu.ctx_synchronize(), "cuCtxSynchronize");
	printf("host        %.3f us per atd_softmax call (%d calls queued back to back)\n", host_us,
	       QUEUED);

	cu.event_destroy(start);
	cu.event_destroy(stop);
	cu.mem_free(x);
	cu.mem_free(y);
	atd_close(h);
	cu.primary_release(dev);
	free(x_ref);
	free(x_host);
	free(y_host);
	return 0;
}

/* The selftest's GPU (selftest_launch.c): opening it with the kernel cache
 * (NVRTC in parallel, the database's compile cache when one is given), and
 * preparing and launching one variant, shared by the runner of the small
 * shapes (selftest_gpu.c) and of the 2^31 case (selftest_big.c).
 *
 * A launch that kills the context (an illegal address, say) fails its
 * variant with the CUDA error; every later run is reported as not run,
 * since nothing more can run in this process. */
#ifndef AT_TUNER_SELFTEST_LAUNCH_H
#define AT_TUNER_SELFTEST_LAUNCH_H

#include "db/tuning_db.h"
#include "tuner/device.h"
#include "tuner/selftest/selftest.h"
#include "tuner/sweep/kernel_cache.h"

typedef struct st_gpu {
	gpu_device gpu;
	kernel_cache cache;
	tdb *db;               /* the compile cache's database, or NULL */
	CUstream stream;
	CUmodule rowsum_module;
	CUfunction rowsum[AT_DTYPE_COUNT];
	CUdeviceptr rowsum_out; /* bad rows, first bad row (u64) */
	int dead;              /* the context is lost */
	char dead_reason[600];
	long long launches;    /* kernels launched (the sanitizer's count) */
	int launch_timeout_s;  /* a launch not done by then is a hang: the process stops */
} st_gpu;

#define ST_LAUNCH_TIMEOUT_S 120

/* Opens GPU `device`; db_path (NULL: none) holds the compile cache;
 * threads: NVRTC threads (0: one per core). */
int st_gpu_open(st_gpu *g, int device, const char *db_path, int threads, at_error *err);
void st_gpu_close(st_gpu *g);

/* Loads job's kernel and sizes its grid for M rows; 0, or -1 with the
 * reason in out (the variant failed). */
int st_gpu_prepare(st_gpu *g, const st_job *job, kernel_entry *e, long long M,
		   unsigned *grid, st_outcome *out);

/* Launches job's kernel (grid from st_gpu_prepare) on g's stream and waits
 * for it, at most g->launch_timeout_s: a hang cannot be recovered from in
 * this process, so it is reported (naming the variant) and the process
 * exits with status 1. Returns 0 when it ran; else fails out with the CUDA error (the variant
 * failed) and, when the context is lost, marks g dead. label names the
 * variant and shape for the not-run reason. */
int st_gpu_launch(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid, CUdeviceptr y,
		  CUdeviceptr x, long long M, long long N, long long ldy, long long ldx,
		  unsigned flags, const char *label, st_outcome *out);

/* The same for a kernel of two inputs (the backward ops': dx = y, then x
 * and x2 at one stride ldx; launch_softmax_backward). */
int st_gpu_launch2(st_gpu *g, kernel_entry *e, const st_job *job, unsigned grid, CUdeviceptr y,
		   CUdeviceptr x, CUdeviceptr x2, long long M, long long N, long long ldy,
		   long long ldx, unsigned flags, const char *label, st_outcome *out);

/* rc of a driver call made for the variant (what: the call): 0 when it
 * succeeded; else as st_gpu_launch's failure. */
int st_gpu_check(st_gpu *g, CUresult rc, const char *what, const char *label, st_outcome *out);

/* Marks out[0..n) not run with g's reason. */
void st_gpu_not_run(const st_gpu *g, st_outcome *out, size_t n);

#endif

/* The dispatch library's speed benchmark (issue: host overhead, lookup,
 * open). Needs a GPU; run on the device machine:
 *   make bench-dispatch && build/bench_dispatch [tuning.db]
 * 1. open: a database of 1000 tuned shapes is written (with the tuner's
 *    writer, fake cubins) and atd_open timed, median of 20.
 * 2. lookup: the cache probe of a shape seen before (lock, hash, unlock),
 *    median over 1e6 probes, in ns.
 * 3. host overhead: host time per call of atd_softmax against a bare
 *    cuLaunchKernel of the same function, grid and arguments, on a tiny
 *    shape, in batches of 256 launches with a sync between batches (not
 *    timed), median batch. Uses the given database (tuned winner) or the
 *    built-in kernel. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autotune/dispatch.h"
#include "db/tuning_db.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/resolve.h"
#include "tuner/device.h"

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int write_db(const char *path)
{
	at_error err = { { 0 } };
	tdb *db;
	gpu_info gpu = { .cc_major = 9, .cc_minor = 0, .sm_count = 132, .mem_bytes = 85e9 };
	snprintf(gpu.name, sizeof gpu.name, "Bench GPU");
	long long gid, sid;
	sweep_info si = { 0, 13000, "13.0", "bench", "bench.yaml", "", 3000 };
	if (tdb_open(path, &db, &err) || tdb_gpu_id(db, &gpu, &gid, &err))
		goto fail;
	si.gpu_id = gid;
	if (tdb_sweep_begin(db, &si, &sid, &err))
		goto fail;
	static unsigned char cubin[16384];
	for (int i = 0; i < 1000; i++) {
		result_row r = { .template_name = "softmax_block", .params = "threads=256 vec=4",
				 .status = RESULT_OK, .rel_err = 1e-7, .time_us = 10 + i,
				 .time_min_us = 9, .time_max_us = 11, .reps = 25, .gbps = 2000,
				 .pct_copy = 66, .registers = 32, .threads = 256, .rows_per_cta = 1,
				 .max_n = 0, .cubin = cubin, .cubin_size = sizeof cubin, .ptx = "ptx",
				 .arch = 90 };
		shape_key key = { gid, "softmax", (at_dtype)(i % 3), 64 << (i % 10), 128 + 64 * (i / 3) };
		if (tdb_store_shape(db, sid, &key, &r, 1, &err))
			goto fail;
	}
	tdb_close(db);
	return 0;
fail:
	fprintf(stderr, "bench_dispatch: %s\n", err.msg);
	return -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

static void time_open(void)
{
	char path[] = "/tmp/bench_dispatch_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	unlink(path);
	if (write_db(path))
		exit(1);
	double t[20];
	for (int i = 0; i < 20; i++) {
		atd_handle *h;
		double s = now_ns();
		if (atd_open(path, 0, &h) != ATD_OK) {
			fprintf(stderr, "open failed: %s\n", atd_errmsg(NULL));
			exit(1);
		}
		t[i] = (now_ns() - s) / 1e6;
		atd_close(h);
	}
	double med = median(t, 20); /* sorts t */
	printf("open, 1000 tuned shapes: median %.2f ms (min %.2f, max %.2f)\n", med, t[0], t[19]);
	unlink(path);
}

#define BATCH 256
#define BATCHES 200

int main(int argc, char **argv)
{
	time_open();
	at_error err = { { 0 } };
	gpu_device gpu;
	if (gpu_open(0, &gpu, &err)) {
		fprintf(stderr, "bench_dispatch: %s\n", err.msg);
		return 1;
	}
	atd_handle *h;
	if (atd_open(argc > 1 ? argv[1] : "/nonexistent.db", ATD_OPEN_FALLBACK, &h) != ATD_OK)
		return 1;
	const long long M = 1, N = 1024;
	CUdeviceptr x, y;
	cudrv.cuMemAlloc(&x, M * N * 4);
	cudrv.cuMemAlloc(&y, M * N * 4);
	cudrv.cuMemsetD32Async(x, 0, M * N, NULL);
	CUstream stream;
	cudrv.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
	if (atd_softmax(h, ATD_F32, (void *)y, (const void *)x, M, N, N, N, stream) != ATD_OK) {
		fprintf(stderr, "atd_softmax: %s\n", atd_errmsg(h));
		return 1;
	}
	atd_choice c;
	atd_query(h, ATD_F32, M, N, &c);
	printf("kernel: %s %s (%s)\n", c.template_name, c.params, atd_level_name(c.level));

	/* the same function, grid and arguments for the bare launches */
	CUcontext ctx;
	cudrv.cuCtxGetCurrent(&ctx);
	atdi_resolved r;
	if (atdi_resolve(h, ctx, ATDI_SOFTMAX, AT_F32, M, N, &r) != ATD_OK)
		return 1;
	atdi_key key = { ctx, M, N, AT_F32 };
	double probe[BATCHES];
	for (int b = 0; b < BATCHES; b++) {
		atdi_resolved out;
		double s = now_ns();
		for (int i = 0; i < 5000; i++) {
			pthread_mutex_lock(&h->lock);
			atdi_lookup_find(&h->lookup, &key, &out);
			pthread_mutex_unlock(&h->lock);
		}
		probe[b] = (now_ns() - s) / 5000;
	}
	printf("lookup of a shape seen before (lock, probe, unlock): median %.1f ns\n",
	       median(probe, BATCHES));

	double bare[BATCHES], disp[BATCHES];
	for (int round = 0; round < 2; round++) { /* the first round warms up */
		for (int b = 0; b < BATCHES; b++) {
			cudrv.cuStreamSynchronize(stream);
			double s = now_ns();
			for (int i = 0; i < BATCH; i++)
				launch_softmax(r.fn, &r.geom, r.grid, y, x, M, N, N, N, 0, stream, &err);
			bare[b] = (now_ns() - s) / BATCH;
			cudrv.cuStreamSynchronize(stream);
			s = now_ns();
			for (int i = 0; i < BATCH; i++)
				atd_softmax(h, ATD_F32, (void *)y, (const void *)x, M, N, N, N, stream);
			disp[b] = (now_ns() - s) / BATCH;
		}
	}
	cudrv.cuStreamSynchronize(stream);
	double mb = median(bare, BATCHES), md = median(disp, BATCHES);
	printf("host time per launch: bare cuLaunchKernel %.0f ns, atd_softmax %.0f ns: "
	       "overhead %.0f ns\n", mb, md, md - mb);
	atd_close(h);
	gpu_close(&gpu);
	return 0;
}

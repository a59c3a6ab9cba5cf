/* Evicting the multiprocessors' instruction caches before each timed
 * launch, as other kernels do between a program's calls: the L2 flush
 * (l2_flush.h) writes data and leaves the timed kernel's code in the
 * multiprocessors' instruction caches from one repetition to the next. At
 * launch-bound shapes the peer benchmark, which runs other kernels between
 * calls, timed softmax_backward_tiny variants with more (unused) code 0.3-
 * 0.7 us slower where the sweep timed them level (docs/NOTES.md, session
 * 61). $AUTOTUNE_CODE_FLUSH=1 runs, after the L2 flush, a kernel of ~128 KB
 * of straight-line code on every multiprocessor (~20 us a repetition); 0 or
 * unset: none (the default until it is measured to change choices). */
#ifndef AT_TUNER_CODE_FLUSH_H
#define AT_TUNER_CODE_FLUSH_H

#include "common/error.h"
#include "cuda/driver.h"
#include "tuner/device.h"

typedef struct code_flush {
	CUmodule module; /* NULL: off */
	CUfunction fn;
	CUdeviceptr sink;
	unsigned grid;
} code_flush;

/* Reads $AUTOTUNE_CODE_FLUSH and, when on, compiles and loads the kernel. */
int code_flush_open(code_flush *f, const gpu_device *gpu, at_error *err);
void code_flush_close(code_flush *f);

/* Queues the eviction on stream (nothing when off). */
int code_flush_run(code_flush *f, CUstream stream, at_error *err);

/* The kernel's source with `instructions` dependent multiply-adds, each
 * with its own immediate (distinct code, no loop): malloc'd. */
char *code_flush_source(int instructions);

#endif

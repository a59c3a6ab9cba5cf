/* Emptying the GPU's L2 before each timed launch, so that every repetition
 * starts from a cold, clean cache as a kernel called on fresh data does.
 *
 * Modes ($AUTOTUNE_FLUSH):
 * - clean (default): write a buffer of twice the L2, which evicts
 *   everything, then discard (discard.global.L2) its own dirty lines so
 *   that the timed kernel does not pay for writing it back.
 * - write: the write only (of at least 256 MB, as triton.testing.do_bench);
 *   the timed kernel writes the dirty lines back, as under do_bench (the
 *   peers' numbers in ANCHORS.md).
 * - read: read the buffer instead (experiments: the L2 keeps part of a
 *   re-read input through a read-only scan, so it overstates bandwidth).
 * - none: never (timings of data already in L2; not for tuning).
 * Discarding only the timed buffers' own lines (~0.1 ms cheaper a
 * repetition) was tried and measured on the H100: per-variant medians moved
 * by -13% to +10% against `clean`, so it is not a mode (docs/NOTES.md). */
#ifndef AT_TUNER_L2_FLUSH_H
#define AT_TUNER_L2_FLUSH_H

#include <stddef.h>

#include "common/error.h"
#include "cuda/driver.h"
#include "tuner/device.h"

typedef enum flush_mode {
	FLUSH_CLEAN,
	FLUSH_WRITE,
	FLUSH_READ,
	FLUSH_NONE
} flush_mode;

typedef struct l2_flush {
	flush_mode mode;
	CUdeviceptr buffer; /* written to evict everything */
	size_t bytes;
	CUmodule module;
	CUfunction read_fn, discard_fn;
	unsigned grid;
} l2_flush;

/* Reads $AUTOTUNE_FLUSH, allocates the buffer and loads the kernels. */
int l2_flush_open(l2_flush *f, const gpu_device *gpu, CUstream stream, at_error *err);
void l2_flush_close(l2_flush *f);

/* Queues a flush on stream; rep varies what the buffer is written with. */
int l2_flush_run(l2_flush *f, CUstream stream, unsigned rep, at_error *err);

#endif

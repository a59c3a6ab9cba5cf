/* The random input and CPU reference of the shape being tuned, and of the
 * shapes expected next, which a background thread computes in turn while
 * the GPU times the current shape. The buffers are kept and reused from
 * shape to shape: first touching a fresh 300 MB buffer costs as much as
 * filling it. One sweep per process: the state is this module's.
 * Thread-safe. */
#ifndef AT_TUNER_REF_AHEAD_H
#define AT_TUNER_REF_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"
#include "common/op.h"

/* A shape whose input and reference take more is not prepared ahead (it is
 * computed when asked for). 4 GiB takes in the default grid's largest
 * shapes (2^28 elements: 2 GiB in f32, its reference as floats; 3 GiB when
 * it was doubles): at 2 GiB their references were
 * computed while the GPU waited, about 1 s each, 7.5 s of the warm sweep's
 * 68 s on the H100. */
#define REF_AHEAD_MAX_BYTES (4.0 * (1 << 30))
/* Shapes held at once: the one handed out and up to five prepared ahead,
 * within REF_AHEAD_BUDGET. One shape ahead, a 2^28-element shape after a
 * short one still waited (its reference takes longer than the short
 * shape's timing): 1.4 s for f16 32768 x 8192 in the warm sweep, H100.
 * Two ahead, half-precision runs of long rows (f16 4096 x 12288 .. 65536)
 * still waited 1.2 s in all on the H200, where they time faster than their
 * references are computed: further ahead, the thread works through them
 * while the short shapes before them are timed. */
#define REF_AHEAD_SLOTS 6
/* The most bytes the slots' buffers hold together (kept from shape to
 * shape): 16 GiB, or a quarter of the memory where that is less. A shape
 * that would take them past it is not prepared ahead. */
#define REF_AHEAD_BUDGET (16.0 * (1 << 30))

/* The seed of a shape's input in a sweep whose seed is base. */
uint64_t ref_shape_seed(uint64_t base, at_dtype dt, long long M, long long N);

/* Queues (op, dt, M, N, seed) for the background thread, which computes the
 * queued shapes in turn, unless it is ready or queued already, larger than
 * REF_AHEAD_MAX_BYTES, every slot is taken (the handed-out one, and those
 * queued or being computed), or its buffers would take the slots past the
 * budget (buffers of slots holding nothing are let go first). Returns at
 * once. */
void ref_ahead_prepare(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed);

/* The input (M x N elements of dt a tensor the op reads, rows dense, one
 * after another), its reference (M x N floats) and row results (M x
 * op->row_results doubles) of (op, dt, M, N, seed), all by the op
 * (ref_op_check_data_f32): the prepared ones when they match (after
 * waiting for them), else computed now. Valid until the next
 * ref_ahead_acquire, ref_ahead_done or ref_ahead_release; the caller does
 * not free them. */
void ref_ahead_acquire(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		       const void **x, const float **ref, const double **rows);

/* The caller is done with what acquire handed out (it is on the GPU): its
 * slot may take a shape prepared ahead. */
void ref_ahead_done(void);

/* Stops the background thread (after the shape it computes) and frees
 * every buffer. */
void ref_ahead_release(void);

/* How many shapes are prepared ahead or queued (not counting the one
 * handed out). */
int ref_ahead_pending(void);

/* The slots' budget in bytes from now on (0: the default, REF_AHEAD_BUDGET
 * or a quarter of the memory); for tests. */
void ref_ahead_set_budget(size_t bytes);

#endif

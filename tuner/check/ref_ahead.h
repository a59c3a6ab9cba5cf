/* The random input and CPU reference of the shape being tuned, and of the
 * one expected next, which a background thread computes while the GPU
 * times the current shape. The buffers are kept and reused from shape to
 * shape: first touching a fresh 300 MB buffer costs as much as filling it.
 * One sweep per process: the state is this module's. Thread-safe. */
#ifndef AT_TUNER_REF_AHEAD_H
#define AT_TUNER_REF_AHEAD_H

#include <stdint.h>

#include "common/dtype.h"

/* A shape whose input and reference take more is not prepared ahead (it is
 * computed when asked for), so that two such sets are never held at once.
 * 4 GiB takes in the default grid's largest shapes (2^28 elements: 3 GiB in
 * f32): at 2 GiB their references were computed while the GPU waited,
 * about 1 s each, 7.5 s of the warm sweep's 68 s on the H100. */
#define REF_AHEAD_MAX_BYTES (4.0 * (1 << 30))
#define REF_AHEAD_SLACK 4 /* buffers larger than this many times the need shrink */

/* The seed of a shape's input in a sweep whose seed is base. */
uint64_t ref_shape_seed(uint64_t base, at_dtype dt, long long M, long long N);

/* Starts computing the input and reference of (dt, M, N, seed) in a
 * background thread, unless they are ready or being computed or larger than
 * REF_AHEAD_MAX_BYTES. One shape is prepared at a time: a request waits for
 * the previous one to finish. */
void ref_ahead_prepare(at_dtype dt, long long M, long long N, uint64_t seed);

/* The input (M x N elements of dt, rows dense) and its softmax reference
 * (M x N doubles) of (dt, M, N, seed): the prepared ones when they match
 * (after waiting for them), else computed now. Valid until the next
 * ref_ahead_acquire or ref_ahead_release; the caller does not free them. */
void ref_ahead_acquire(at_dtype dt, long long M, long long N, uint64_t seed, const void **x,
		       const double **ref);

/* Waits for a preparation in progress and frees every buffer. */
void ref_ahead_release(void);

#endif

/* The cross_entropy op's hooks for the sweep (tuner/ops/op_gpu.h), over its
 * part of a shape (cross_entropy_shape.h); its description points at them. */
#ifndef AT_TUNER_CROSS_ENTROPY_GPU_H
#define AT_TUNER_CROSS_ENTROPY_GPU_H

#include "tuner/ops/op_gpu.h"

extern const op_gpu cross_entropy_gpu;

#endif

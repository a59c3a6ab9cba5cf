/* The GPU the tuner runs on: driver loaded, primary context current, and
 * the properties that enumeration and the database need. */
#ifndef AT_TUNER_DEVICE_H
#define AT_TUNER_DEVICE_H

#include "common/error.h"
#include "common/template_rules.h"
#include "db/tuning_db.h"
#include "cuda/driver.h"

typedef struct gpu_device {
	CUdevice dev;
	CUcontext ctx;
	gpu_info info;
	int cc;              /* e.g. 90 */
	int driver_version;  /* e.g. 13000 */
	int max_threads;     /* per CTA */
	int max_smem;        /* per CTA, opt-in maximum */
	int regs_per_sm;
	int l2_bytes;
} gpu_device;

/* Loads the driver and opens GPU `ordinal`. Fails with a message saying no
 * NVIDIA driver or GPU was found when that is the case. */
int gpu_open(int ordinal, gpu_device *out, at_error *err);
void gpu_close(gpu_device *gpu);

/* The manifest variables for this device and a shape. */
tr_env gpu_shape_env(const gpu_device *gpu, long long M, long long N, size_t elem_bytes);

/* The same for a device that is not present: an sm_<cc> GPU with the
 * limits of an H100 (for --compile-only). */
tr_env nominal_shape_env(int cc, long long M, long long N, size_t elem_bytes);

#endif

/* The performance models a handle chooses with: the database's models rows
 * (tuned_table.h), each parsed on first use and kept until atd_close. */
#ifndef AT_DISPATCH_RUNTIME_MODELS_H
#define AT_DISPATCH_RUNTIME_MODELS_H

#include "common/perf_model.h"
#include "dispatch/runtime/handle.h"

/* The model fitted on the results of gpu's model (its name, compute
 * capability and SM count), else of another GPU of its compute capability;
 * for op, else for its family's first (whose templates compute the other
 * ops too); *gpu_name the GPU it learned. NULL when there is none, or it
 * does not parse (warned about once, in notes). With slow held. */
const perf_model *atdi_model_for(atd_handle *h, const atd_gpu *gpu, int op,
				 const char **gpu_name, atdi_notes *notes);

/* Frees the parsed models (atd_close). */
void atdi_models_free(atd_handle *h);

#endif

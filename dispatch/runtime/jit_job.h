/* A derived variant to compile (ATD_LEVEL_DERIVED): its template's rules,
 * dtype, params' values and architecture; its key (what the in-memory
 * images and the worker queue are looked up by) and its CUDA source (the
 * template's body, kernel_source.h). */
#ifndef AT_DISPATCH_JIT_JOB_H
#define AT_DISPATCH_JIT_JOB_H

#include <stddef.h>

#include "common/dtype.h"
#include "common/template_rules.h"
#include "dispatch/policy/derive.h" /* ATDI_MAX_PARAMS only */

/* One derived variant: what is compiled, and for which architecture. */
typedef struct atdi_jit_job {
	const tr_template *rules;
	at_dtype dtype;
	long long values[ATDI_MAX_PARAMS];
	int arch;
	int op; /* atdi_op: what the variant computes */
} atdi_jit_job;

/* "template dtype sm_XX params": the job's key, into buf. */
void atdi_jit_key(const atdi_jit_job *job, char *buf, size_t cap);

/* The job's params as text ("name=value ..."), into buf. */
void atdi_jit_job_params(const atdi_jit_job *job, char *buf, size_t cap);

/* The job's CUDA source, malloc'd, or NULL (no memory). */
char *atdi_jit_job_source(const atdi_jit_job *job);

#endif

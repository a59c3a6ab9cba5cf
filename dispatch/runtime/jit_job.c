/* A derived variant's key, params text and source: see jit_job.h. */
#include "dispatch/runtime/jit_job.h"

#include <stdio.h>

#include "common/kernel_source.h"
#include "dispatch/policy/row_ops.h"

void atdi_jit_job_params(const atdi_jit_job *job, char *buf, size_t cap)
{
	const tr_template *t = job->rules;
	const char *names[ATDI_MAX_PARAMS];
	for (int i = 0; i < t->nparams && i < ATDI_MAX_PARAMS; i++)
		names[i] = t->params[i].name;
	kernel_params_text(names, job->values, (size_t)t->nparams, buf, cap);
}

void atdi_jit_key(const atdi_jit_job *job, char *buf, size_t cap)
{
	char params[1024];
	atdi_jit_job_params(job, params, sizeof params);
	/* softmax's keys as they always were; another op's name its op */
	const char *op = tr_source_op(job->rules, atdi_op_name(job->op));
	snprintf(buf, cap, "%s%s%s %s sm_%d %s", op ? op : "", op ? " " : "", job->rules->name,
		 at_dtype_name(job->dtype), job->arch, params);
}

char *atdi_jit_job_source(const atdi_jit_job *job)
{
	const tr_template *t = job->rules;
	const char *names[ATDI_MAX_PARAMS];
	for (int i = 0; i < t->nparams && i < ATDI_MAX_PARAMS; i++)
		names[i] = t->params[i].name;
	return kernel_source(t->name, t->source_file, job->dtype,
			     tr_source_op(t, atdi_op_name(job->op)), names, job->values,
			     (size_t)t->nparams, t->body);
}

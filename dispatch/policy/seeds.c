/* The seed winners and models as a table (seed_winners.h, seed_models.h):
 * what a handle with no database chooses with. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/seed_models.h"
#include "dispatch/policy/seed_winners.h"
#include "dispatch/policy/seeds.h"

/* The seed models as models rows of a second GPU row (seed_models.h), so
 * that a GPU of their compute capability is served their choice as a
 * database's model serves (dispatch/runtime/models.c). */
static atd_status add_seed_models(atdi_table *t)
{
	atdi_gpu_row *g = &t->gpus[t->ngpus];
	*g = (atdi_gpu_row){ .id = -2, .cc_major = ATDI_SEED_MODELS_CC_MAJOR,
			     .cc_minor = ATDI_SEED_MODELS_CC_MINOR,
			     .sm_count = ATDI_SEED_MODELS_SM_COUNT, .seeds = 1 };
	if (!(g->name = strdup(ATDI_SEED_MODELS_GPU " (the library's seed model)")))
		return ATD_ERR_NO_MEMORY;
	t->ngpus++;
	t->models = calloc((size_t)atdi_nseed_models, sizeof *t->models);
	if (!t->models)
		return ATD_ERR_NO_MEMORY;
	for (int i = 0; i < atdi_nseed_models; i++) {
		int op = atdi_op_find(atdi_seed_models[i].op);
		if (op < 0) /* a seed of an op this library does not serve */
			continue;
		atdi_model_row *r = &t->models[t->nmodels];
		*r = (atdi_model_row){ .gpu = t->ngpus - 1, .op = op };
		if (!(r->text = strdup(atdi_seed_models[i].text)))
			return ATD_ERR_NO_MEMORY;
		t->nmodels++;
	}
	return ATD_OK;
}

atd_status atdi_seed_table(atdi_table *t)
{
	memset(t, 0, sizeof *t);
	char name[320];
	snprintf(name, sizeof name, "the library's seed winners (tuned on %s)", atdi_seed_gpu);
	t->gpus = calloc(2, sizeof *t->gpus);
	t->entries = calloc((size_t)atdi_nseeds, sizeof *t->entries);
	if (!t->gpus || !t->entries || !(t->gpus[0].name = strdup(name)))
		goto oom;
	t->gpus[0].seeds = 1;
	t->ngpus = 1;
	for (int i = 0; i < atdi_nseeds; i++) {
		const atdi_seed *s = &atdi_seeds[i];
		atdi_entry *e = &t->entries[i];
		*e = (atdi_entry){ .result_id = -1 - i, .gpu = 0, .dtype = s->dtype, .M = s->M,
				   .N = s->N, .time_us = INFINITY };
		e->template_name = strdup(s->template_name);
		e->params = strdup(s->params);
		t->nentries++;
		if (!e->template_name || !e->params)
			goto oom;
	}
	if (add_seed_models(t) != ATD_OK)
		goto oom;
	return ATD_OK;
oom:
	atdi_table_free(t);
	return ATD_ERR_NO_MEMORY;
}

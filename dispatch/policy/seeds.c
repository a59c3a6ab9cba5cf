/* The seed winners as a table (seed_winners.h): what a handle with no
 * database derives from. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/policy/seed_winners.h"
#include "dispatch/policy/seeds.h"

atd_status atdi_seed_table(atdi_table *t)
{
	memset(t, 0, sizeof *t);
	char name[320];
	snprintf(name, sizeof name, "the library's seed winners (tuned on %s)", atdi_seed_gpu);
	t->gpus = calloc(1, sizeof *t->gpus);
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
	return ATD_OK;
oom:
	atdi_table_free(t);
	return ATD_ERR_NO_MEMORY;
}

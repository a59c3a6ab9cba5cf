/* The handle's parsed models: see models.h. */
#include "dispatch/runtime/models.h"

#include <stdlib.h>

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/select.h"

/* Row i's model, parsing it on first use; NULL if it does not parse. */
static const perf_model *parsed(atd_handle *h, size_t i, atdi_notes *notes)
{
	if (!h->models) {
		h->models = calloc(h->table.nmodels, sizeof *h->models);
		h->model_state = calloc(h->table.nmodels, 1);
		if (!h->models || !h->model_state) {
			free(h->models);
			free(h->model_state);
			h->models = NULL;
			h->model_state = NULL;
			return NULL;
		}
	}
	if (h->model_state[i] == 0) {
		perf_model *m = calloc(1, sizeof *m);
		at_error err = { { 0 } };
		if (m && perf_model_from_text(h->table.models[i].text, m, &err) == 0) {
			h->models[i] = m;
			h->model_state[i] = 1;
		} else {
			free(m);
			h->model_state[i] = -1;
			if (notes) /* a dry run says nothing */
				atdi_note(notes, ATD_LOG_WARNING,
				  "the performance model of %s in the database does not read (%s): "
				  "deriving from the winners instead",
				  h->table.gpus[h->table.models[i].gpu].name,
				  m ? err.msg : "out of memory");
		}
	}
	return h->model_state[i] == 1 ? h->models[i] : NULL;
}

/* How well row r's model fits (gpu, op): 0 not at all; higher is better.
 * Another GPU of the same compute capability comes after the GPU's own
 * model: fitted on the H100's results, the model chooses within 0.97 of
 * the H200's tuned winners at the geometric mean (its own, left one out:
 * 0.973), where rules over the H100's winners do worse. */
static int fit_of(const atd_handle *h, const atdi_model_row *r, const atd_gpu *gpu, int op)
{
	const atdi_gpu_row *g = &h->table.gpus[r->gpu];
	int same_op = r->op == op;
	if (!same_op && r->op != atdi_op_desc_of(op)->family)
		return 0;
	if (atdi_same_model(g, gpu))
		return 3 + same_op;
	if (g->cc_major == gpu->cc_major && g->cc_minor == gpu->cc_minor)
		return 1 + same_op;
	return 0;
}

const perf_model *atdi_model_for(atd_handle *h, const atd_gpu *gpu, int op,
				 const char **gpu_name, atdi_notes *notes)
{
	long best = -1;
	int best_fit = 0;
	for (size_t i = 0; i < h->table.nmodels; i++) {
		int fit = fit_of(h, &h->table.models[i], gpu, op);
		if (fit > best_fit) {
			best_fit = fit;
			best = (long)i;
		}
	}
	if (best < 0)
		return NULL;
	*gpu_name = h->table.gpus[h->table.models[best].gpu].name;
	return parsed(h, (size_t)best, notes);
}

void atdi_models_free(atd_handle *h)
{
	for (size_t i = 0; h->models && i < h->table.nmodels; i++) {
		if (h->models[i])
			perf_model_free(h->models[i]);
		free(h->models[i]);
	}
	free(h->models);
	free(h->model_state);
	h->models = NULL;
	h->model_state = NULL;
}

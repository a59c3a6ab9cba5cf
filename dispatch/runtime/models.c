/* The handle's parsed models: see models.h. */
#include "dispatch/runtime/models.h"

#include <stdlib.h>
#include <string.h>

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

/* How well row r's model's GPU fits gpu, for op or its family: 0 not at
 * all; higher is better. Another GPU of the same compute capability comes
 * after the GPU's own model: fitted on the H100's results, the model
 * chooses within 0.97 of the H200's tuned winners at the geometric mean
 * (its own, left one out: 0.973), where rules over the H100's winners do
 * worse. */
static int gpu_fit(const atd_handle *h, const atdi_model_row *r, const atd_gpu *gpu, int op)
{
	const atdi_gpu_row *g = &h->table.gpus[r->gpu];
	if (r->op != op && r->op != atdi_op_desc_of(op)->family)
		return 0;
	if (atdi_same_model(g, gpu))
		return 2;
	if (g->cc_major == gpu->cc_major && g->cc_minor == gpu->cc_minor)
		return 1;
	return 0;
}

/* The "template NAME" lines that follow a model text's first line: the
 * next one after *p (NULL at the first call), its name and length in
 * *name, *len; NULL after the last. */
static const char *next_template(const char *text, const char *p, const char **name,
				 size_t *len)
{
	p = p ? p + strcspn(p, "\n") : text + strcspn(text, "\n");
	if (*p != '\n' || strncmp(p + 1, "template ", 9) != 0)
		return NULL;
	*name = p + 10;
	*len = strcspn(*name, "\n");
	return p + 1;
}

static int knows_template(const char *text, const char *name, size_t len)
{
	const char *n;
	size_t l;
	for (const char *p = next_template(text, NULL, &n, &l); p; p = next_template(text, p, &n, &l))
		if (l == len && strncmp(n, name, len) == 0)
			return 1;
	return 0;
}

/* How model text a's templates cover b's: -1 when a misses one of b's, 0
 * when they learned the same, 1 when a learned them all and more. */
static int template_cover(const char *a, const char *b)
{
	const char *n;
	size_t l;
	for (const char *p = next_template(b, NULL, &n, &l); p; p = next_template(b, p, &n, &l))
		if (!knows_template(a, n, l))
			return -1;
	for (const char *p = next_template(a, NULL, &n, &l); p; p = next_template(a, p, &n, &l))
		if (!knows_template(b, n, l))
			return 1;
	return 0;
}

/* Whether the family's model f serves op better than op's own model o, of
 * the same GPU fit: when it learned every template o did and more. Its
 * templates compute op too, at the same bytes: log_softmax's model of the
 * long rows it was tuned at knew neither softmax_tiny nor softmax_tile and
 * chose 1.09x slower over drawn shapes than softmax's (results/h200/
 * log-softmax-{own,family}-model-peers-*). With the same templates the
 * op's own serves: at log_softmax's 63 shapes its own model, left one out,
 * chose 0.991 of the winners' time, softmax's 0.984. */
static int family_serves_better(const atdi_model_row *f, const atdi_model_row *o)
{
	return template_cover(f->text, o->text) > 0;
}

/* Whether row i's model serves op better than row j's of the same GPU fit:
 * the op's own, unless its family's serves better. */
static int serves_better(const atd_handle *h, size_t i, size_t j, int op)
{
	const atdi_model_row *a = &h->table.models[i], *b = &h->table.models[j];
	if ((a->op == op) == (b->op == op))
		return 0;
	return a->op == op ? !family_serves_better(b, a) : family_serves_better(a, b);
}

const perf_model *atdi_model_for(atd_handle *h, const atd_gpu *gpu, int op,
				 const char **gpu_name, atdi_notes *notes)
{
	long best = -1;
	int best_fit = 0;
	for (size_t i = 0; i < h->table.nmodels; i++) {
		int fit = gpu_fit(h, &h->table.models[i], gpu, op);
		if (fit > best_fit || (fit > 0 && fit == best_fit &&
				       serves_better(h, i, (size_t)best, op))) {
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

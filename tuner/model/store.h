/* Keeping a database's performance models current: a model refitted on
 * everything the database holds for one GPU and op, stored in its models
 * table, so that the dispatch library serves the shapes nobody tuned by it
 * (level `predicted`). A sweep does it at its end for its ops, `db merge`
 * for every GPU and op of the merged database: no `autotune model fit
 * --store` to remember. */
#ifndef AT_TUNER_MODEL_STORE_H
#define AT_TUNER_MODEL_STORE_H

#include "common/error.h"
#include "common/template_rules.h"

/* The fewest tuned shapes a model is fitted on (fewer: the library derives
 * from the nearest winner; the sweep's pruner falls back likewise). */
#define MODEL_MIN_SHAPES 20

/* Fits op's model of the GPU named gpu over the templates ts and stores
 * it, printing a line that says so, or why not (fewer than
 * MODEL_MIN_SHAPES tuned shapes, no passing results, or the winners'
 * results alone, as `db export` keeps them: a stored model then stays):
 * 0 either way; -1 with a message when it cannot be stored. */
int model_store_fitted(const char *db_path, const char *gpu, const char *op,
		       const tr_template *ts, int nts, at_error *err);

/* model_store_fitted for each (GPU, op) with winners in the database, the
 * templates' manifests read from templates_dir. */
int model_store_all(const char *db_path, const char *templates_dir, at_error *err);

#endif

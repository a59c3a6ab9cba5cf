/* Where a sweep's pruning model of an op comes from (tuner/sweep/prune_shape.h),
 * first found of:
 *   1. fitted on this GPU's results of the op in the database, when it has
 *      at least PRUNE_MIN_SHAPES tuned shapes;
 *   2. fitted on another GPU's of the same compute capability there (the
 *      one with the most tuned shapes, at least PRUNE_MIN_SHAPES);
 *   1-2 again for the results of op's family, the op whose templates
 *      compute op (softmax's for log_softmax, softmax_backward's for
 *      log_softmax_backward: their also_ops);
 *   3. the family's seed model shipped beside the templates (prune_seed_path:
 *      softmax's PRUNE_SEED_FILE, fitted on an exhaustive default sweep;
 *      another family's perf-model-seed-<family>.txt: docs/NOTES.md,
 *      "Pruned sweeps");
 *   4. none: the sweep is exhaustive.
 * Only results of sweeps that began before this one are learnt from, so
 * that every worker, and a worker restarted mid-sweep, prunes alike. */
#ifndef AT_TUNER_SWEEP_PRUNE_MODEL_H
#define AT_TUNER_SWEEP_PRUNE_MODEL_H

#include <stddef.h>

#include "common/perf_model.h"
#include "common/template_rules.h"
#include "tuner/model/store.h"

#define PRUNE_MIN_SHAPES MODEL_MIN_SHAPES
#define PRUNE_SEED_FILE "perf-model-seed.txt"
#define PRUNE_SEED_PREFIX "perf-model-seed-"

/* The seed model's file in templates_dir for the ops whose templates are
 * family's (a manifest's `op:`). */
void prune_seed_path(const char *templates_dir, const char *family, char *path, size_t cap);

/* The first sweep id the model must not learn from: one past the
 * database's last (1 for a database not made yet). */
long long prune_model_cutoff(const char *db_path);

/* Fills m and says where it came from in what ("fitted on 132 shapes of
 * NVIDIA H200"). Returns 1 with a model, 0 without (what says why), -1 on
 * an error (a seed file that does not parse, the database unreadable). */
int prune_model_obtain(const char *db_path, long long before_sweep, const char *gpu_name, int cc,
		       const char *op, const tr_template *ts, int nts, const char *templates_dir,
		       perf_model *m, char *what, size_t cap, at_error *err);

#endif

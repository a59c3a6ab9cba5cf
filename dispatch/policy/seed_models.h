/* The performance models the library carries for a process with no tuning
 * database: the shipped seed models (templates/perf-model-seed.txt for
 * softmax's family, perf-model-seed-<family>.txt for the others), the ones
 * a sweep on a GPU without results prunes with, embedded by the Makefile
 * (build/obj/seed_models.c). A GPU of their compute capability is served
 * their choice; any other derives from the seed winners (seed_winners.h). */
#ifndef AT_DISPATCH_SEED_MODELS_H
#define AT_DISPATCH_SEED_MODELS_H

typedef struct atdi_seed_model {
	const char *op;   /* the op whose results it learned: its family's first */
	const char *text; /* common/perf_model.h's text */
} atdi_seed_model;

/* The GPU whose sweeps they were fitted on (docs/NOTES.md, "The model"). */
#define ATDI_SEED_MODELS_GPU "NVIDIA H200"
#define ATDI_SEED_MODELS_CC_MAJOR 9
#define ATDI_SEED_MODELS_CC_MINOR 0
#define ATDI_SEED_MODELS_SM_COUNT 132

extern const atdi_seed_model atdi_seed_models[];
extern const int atdi_nseed_models;

#endif

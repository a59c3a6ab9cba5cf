/* The per-handle cache of resolved shapes: (CUcontext, dtype, M, N) -> the
 * function, geometry and grid to launch. An open-addressing hash table
 * with linear probing, so that a hit costs a hash and a probe or two and
 * never allocates; it only grows, on the miss path. The caller locks. */
#ifndef AT_DISPATCH_LOOKUP_H
#define AT_DISPATCH_LOOKUP_H

#include <stddef.h>

#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/tuned_table.h"

typedef struct atdi_key {
	void *ctx; /* CUcontext; NULL for keys that are shapes only */
	long long M, N;
	int dtype;
	int op; /* atdi_op (row_ops.h) */
} atdi_key;

/* CUfunction's own type (cuda.h), named without the driver's header: the
 * table holds the function and never calls it. */
struct CUfunc_st;

typedef struct atdi_resolved {
	struct CUfunc_st *fn; /* a CUfunction */
	struct CUfunc_st *aux[ATDI_OP_MAX_AUX]; /* the op's other kernels (row_ops.h), or NULL */
	launch_geometry geom;
	unsigned grid;
	atd_level level;            /* the level that actually runs */
	const atdi_entry *entry;    /* NULL for the built-in kernel; the winner
				       derived from for ATD_LEVEL_DERIVED */
	const char *template_name;  /* ATD_LEVEL_DERIVED, _TUNED, _PREDICTED: the variant's */
	const char *params;         /* ATD_LEVEL_DERIVED, _TUNED, _PREDICTED: kept in the handle */
	const char *model_gpu;      /* ATD_LEVEL_PREDICTED: whose results the model learned */
	double tuned_us;            /* ATD_LEVEL_TUNED: its median when tuned online */
	/* The op's own kernel is a programmatic dependent launch (its code
	 * defines a main_waits marker, row_ops.h; on sm_90+). */
	int dependent_launch;
	/* Bit i: aux[i] is a programmatic dependent launch (its code waits
	 * for the kernel before it: row_ops.h's marker_waits; sm_90+). */
	unsigned aux_dependent;
	/* Served while a derived variant compiles in the background: resolve
	 * again once the compiler's generation is no longer `generation`. */
	int provisional;
	unsigned generation;
} atdi_resolved;

typedef struct atdi_slot {
	atdi_key key;
	atdi_resolved val;
	int used;
} atdi_slot;

typedef struct atdi_lookup {
	atdi_slot *slots; /* capacity is a power of two, or 0 */
	size_t cap, count;
} atdi_lookup;

/* Copies the value for key into *out and returns 1, or returns 0. */
int atdi_lookup_find(const atdi_lookup *l, const atdi_key *key, atdi_resolved *out);

/* Inserts or replaces key's value. Returns 0, or -1 if growing the table
 * failed (the table is then unchanged). */
int atdi_lookup_put(atdi_lookup *l, const atdi_key *key, const atdi_resolved *val);

/* Marks key as seen (an empty value): 1 the first time, 0 after. The
 * handle's sets of shapes already warned about. */
int atdi_lookup_mark(atdi_lookup *l, const atdi_key *key);

void atdi_lookup_free(atdi_lookup *l);

#endif

/* A GPU described by hand, as atd_query_gpu and `autotune show --gpu --cc`
 * take it, completed from the handle's database: one function for both, so
 * that the library and the CLI never answer differently for one
 * description. */
#ifndef AT_DISPATCH_DESCRIBED_GPU_H
#define AT_DISPATCH_DESCRIBED_GPU_H

#include "include/autotune/dispatch.h"

/* gpu with its SM count and memory, where left 0, those of the first GPU
 * of the database (by id) of that name and compute capability (and SM
 * count, when given); as given when there is none. The SM count is part
 * of a model's identity (tuned_table.h), so naming a tuned GPU by name and
 * compute capability alone finds its exact winners. Memory is never
 * matched on: boards report it differently. No lock needed (the table is
 * immutable after atd_open); h may serve no database. */
atd_gpu atdi_described_gpu(const atd_handle *h, const atd_gpu *gpu);

struct atdi_ctx_info;

/* The context that a decision (decide.h) takes for a GPU described by
 * hand: no CUDA context, gpu completed as above, the limits a present GPU
 * of its compute capability has (1024 threads a CTA, 64K registers an SM,
 * the opt-in shared memory of its generation). ci->gpu.name is gpu->name,
 * so that a name longer than ci->name still matches; it lives as long as
 * the caller's. */
void atdi_described_ctx(const atd_handle *h, const atd_gpu *gpu, struct atdi_ctx_info *ci);

#endif

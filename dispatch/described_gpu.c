/* atdi_described_gpu: a described GPU completed from the database's GPUs. */
#include <string.h>

#include "dispatch/described_gpu.h"
#include "dispatch/handle.h"

atd_gpu atdi_described_gpu(const atd_handle *h, const atd_gpu *gpu)
{
	atd_gpu out = *gpu;
	if (!gpu->name || (gpu->sm_count && gpu->mem_bytes))
		return out;
	const atdi_table *t = &h->table;
	for (size_t i = 0; i < t->ngpus; i++) {
		const atdi_gpu_row *g = &t->gpus[i];
		if (g->seeds || strcmp(g->name, gpu->name) != 0 || g->cc_major != gpu->cc_major ||
		    g->cc_minor != gpu->cc_minor || (gpu->sm_count && g->sm_count != gpu->sm_count))
			continue;
		if (!out.sm_count)
			out.sm_count = g->sm_count;
		if (!out.mem_bytes)
			out.mem_bytes = g->mem_bytes;
		break;
	}
	return out;
}

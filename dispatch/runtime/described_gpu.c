/* atdi_described_gpu: a described GPU completed from the database's GPUs;
 * atdi_described_ctx: the context a decision takes for it. */
#include <stdio.h>
#include <string.h>

#include "dispatch/runtime/described_gpu.h"
#include "dispatch/runtime/context.h"
#include "dispatch/runtime/handle.h"

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

/* Shared memory a CTA may opt into, by compute capability, for a GPU
 * described by hand (the driver says it for a present one). */
static int nominal_max_smem(int cc)
{
	switch (cc) {
	case 80: case 87: return 163 * 1024;
	case 86: case 89: return 99 * 1024;
	case 75: return 64 * 1024;
	default: return cc >= 90 ? 227 * 1024 : 48 * 1024;
	}
}

void atdi_described_ctx(const atd_handle *h, const atd_gpu *gpu, atdi_ctx_info *ci)
{
	memset(ci, 0, sizeof *ci);
	ci->gpu = atdi_described_gpu(h, gpu);
	snprintf(ci->name, sizeof ci->name, "%s", gpu->name ? gpu->name : "");
	ci->arch = ci->gpu.cc_major * 10 + ci->gpu.cc_minor;
	ci->max_threads = 1024;
	ci->max_smem = nominal_max_smem(ci->arch);
	ci->regs_per_sm = 65536;
}

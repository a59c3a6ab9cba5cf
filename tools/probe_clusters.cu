// Development probe (not part of the product): how many thread-block
// clusters of each size the GPU runs at once, when a multiprocessor holds 1
// to 4 CTAs (set by dynamic shared memory). Clusters live inside one GPC,
// so a GPC whose CTA slots are not a multiple of the cluster size leaves
// slots idle: this prints the share of the GPU's slots that clusters fill,
// the ceiling of a one-row-per-cluster kernel's bandwidth from occupancy.
//   nvcc -O2 -arch=sm_90 -o build/probe_clusters tools/probe_clusters.cu && build/probe_clusters
#include <cstdio>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
	printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void cluster_kernel(float *p)
{
	extern __shared__ float s[];
	if (p)
		p[blockIdx.x] = s[threadIdx.x];
}

int main()
{
	cudaDeviceProp prop;
	CHECK(cudaGetDeviceProperties(&prop, 0));
	const int sms = prop.multiProcessorCount;
	const size_t smem_sm = prop.sharedMemPerMultiprocessor;
	printf("%s: %d SMs, %zu B shared memory a multiprocessor\n", prop.name, sms, smem_sm);
	CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
	CHECK(cudaFuncSetAttribute(cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
				   (int)prop.sharedMemPerBlockOptin));
	const int sizes[] = {1, 2, 3, 4, 5, 6, 8, 16};
	printf("ctas/sm cluster active_clusters ctas slots_filled\n");
	for (int per_sm = 1; per_sm <= 4; per_sm++) {
		// a little under 1/per_sm of the multiprocessor's shared memory each
		const size_t smem = smem_sm / per_sm - 2048;
		for (int c : sizes) {
			cudaLaunchConfig_t cfg = {};
			cfg.gridDim = dim3(c * 1024);
			cfg.blockDim = dim3(256);
			cfg.dynamicSmemBytes = smem > prop.sharedMemPerBlockOptin ? prop.sharedMemPerBlockOptin : smem;
			cudaLaunchAttribute attr;
			attr.id = cudaLaunchAttributeClusterDimension;
			attr.val.clusterDim.x = c;
			attr.val.clusterDim.y = 1;
			attr.val.clusterDim.z = 1;
			cfg.attrs = &attr;
			cfg.numAttrs = 1;
			int n = 0;
			CHECK(cudaOccupancyMaxActiveClusters(&n, cluster_kernel, &cfg));
			printf("%d %d %d %d %.3f\n", per_sm, c, n, n * c, (double)(n * c) / (sms * per_sm));
		}
	}
	return 0;
}

// Development probe (not part of the product): what the fastest possible
// kernel gets at a given size, timed like the tuner times (events, a
// 256 MB write then discard of L2 before each repetition, median of 25).
// It runs an empty kernel and a float4 copy kernel of M x N f32 (read MN,
// write MN), so a softmax's % of the big-copy bandwidth at that size can be
// compared with the ceiling a copy reaches there.
//   nvcc -O2 -arch=sm_90 -o build/probe_floor tools/probe_floor.cu && build/probe_floor
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
	printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void empty_kernel() {}

__global__ void copy_kernel(float4 *y, const float4 *x, long long n)
{
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x)
		y[i] = x[i];
}

__global__ void discard_l2(const char *p, unsigned long long lines)
{
	for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	     i < lines; i += (unsigned long long)gridDim.x * blockDim.x)
		asm volatile("discard.global.L2 [%0], 128;" ::"l"(p + i * 128) : "memory");
}

template <typename F> static float median_us(F launch, char *flush, size_t flush_bytes)
{
	cudaEvent_t a[25], b[25];
	for (int i = 0; i < 25; i++) { cudaEventCreate(&a[i]); cudaEventCreate(&b[i]); }
	for (int i = 0; i < 5; i++) launch();
	for (int i = 0; i < 25; i++) {
		cudaMemsetAsync(flush, i, flush_bytes);
		discard_l2<<<528, 512>>>(flush, flush_bytes / 128);
		cudaEventRecord(a[i]);
		launch();
		cudaEventRecord(b[i]);
	}
	cudaDeviceSynchronize();
	std::vector<float> t(25);
	for (int i = 0; i < 25; i++) { cudaEventElapsedTime(&t[i], a[i], b[i]); t[i] *= 1e3f; }
	std::sort(t.begin(), t.end());
	return t[12];
}

int main()
{
	size_t flush_bytes = 256u << 20;
	char *flush;
	CHECK(cudaMalloc(&flush, flush_bytes));
	printf("empty kernel: %.2f us\n", median_us([] { empty_kernel<<<1, 32>>>(); }, flush, flush_bytes));
	const long long Ns[] = { 512, 1024, 2048, 4096, 8192 };
	for (long long N : Ns) {
		long long n4 = 4096 * N / 4;
		float4 *x, *y;
		CHECK(cudaMalloc(&x, n4 * 16));
		CHECK(cudaMalloc(&y, n4 * 16));
		cudaMemset(x, 0, n4 * 16);
		for (int grid : { 132 * 16, 132 * 32, (int)std::min<long long>(n4 / 256, 1 << 20) }) {
			float us = median_us([&] { copy_kernel<<<grid, 256>>>(y, x, n4); }, flush, flush_bytes);
			printf("copy 4096 x %lld f32 grid %d: %.2f us, %.0f GB/s\n", N, grid, us,
			       2.0 * n4 * 16 / (us * 1e3));
		}
		cudaFree(x);
		cudaFree(y);
	}
	return 0;
}

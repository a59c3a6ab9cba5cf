// Test template softmax_faulty (see softmax_faulty.yaml): a simple correct
// softmax (one CTA per row, three passes over the row) unless FAULT says
// otherwise. Self-contained: no shared headers, f32 only.
#define WARPS (THREADS / 32)

__device__ float block_reduce(float v, bool is_max)
{
	__shared__ float part[WARPS];
	for (int o = 16; o > 0; o >>= 1) {
		float other = __shfl_xor_sync(0xffffffffu, v, o);
		v = is_max ? fmaxf(v, other) : v + other;
	}
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x / 32] = v;
	__syncthreads();
	v = part[0];
	for (int w = 1; w < WARPS; w++)
		v = is_max ? fmaxf(v, part[w]) : v + part[w];
	__syncthreads();
	return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
softmax_kernel(float *y, const float *x, long long M, long long N, long long ldy, long long ldx,
	       unsigned flags)
{
	long long row = blockIdx.x;
	if (row >= M)
		return;
#if FAULT == 1
	if (row == M / 2 && threadIdx.x == 0)
		*(volatile float *)(y + (1ll << 46)) = 1.0f; // far outside any allocation
#elif FAULT == 2
	for (;;)
		asm volatile("nanosleep.u32 1000;"); // a side effect: the loop stays
#elif FAULT == 3
	if (row == 0 && threadIdx.x == 0)
		asm volatile("trap;");
#endif
	const float *xr = x + row * ldx;
	float *yr = y + row * ldy;
	float m = -__int_as_float(0x7f800000);
	for (long long i = threadIdx.x; i < N; i += THREADS)
		m = fmaxf(m, xr[i]);
	m = block_reduce(m, true);
	float s = 0.0f;
	for (long long i = threadIdx.x; i < N; i += THREADS)
		s += expf(xr[i] - m);
	s = block_reduce(s, false);
	for (long long i = threadIdx.x; i < N; i += THREADS)
		yr[i] = expf(xr[i] - m) / s;
}

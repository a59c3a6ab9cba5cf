// Shared pieces of the softmax templates, inlined into each generated source
// by the generator: the element type chosen by DTYPE_F32 / DTYPE_F16 /
// DTYPE_BF16, conversions to and from f32 (math is always in f32), 16-byte
// vector access with a scalar path for misaligned rows, and warp reductions.
// No CUDA headers are included so that NVRTC needs no include path.
#pragma once

#if DTYPE_F32
typedef float elem_t;
#define ELEM_NEG_INF_BITS 0xff800000u
#else
typedef unsigned short elem_t; // raw f16 / bf16 bits
#if DTYPE_F16
#define ELEM_NEG_INF_BITS 0xfc00u
#else
#define ELEM_NEG_INF_BITS 0xff80u
#endif
#endif

#define LOG2E_F 1.4426950408889634f
#define LN2_F 0.6931471805599453f
#define NEG_INF_F (-__int_as_float(0x7f800000))

// A VEC-element vector that is loaded and stored as one access.
struct alignas(VEC * sizeof(elem_t)) vec_t {
	elem_t v[VEC];
};

__device__ __forceinline__ float to_f32(elem_t v)
{
#if DTYPE_F32
	return v;
#elif DTYPE_F16
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
	return f;
#else
	return __uint_as_float(((unsigned)v) << 16);
#endif
}

__device__ __forceinline__ elem_t from_f32(float f)
{
#if DTYPE_F32
	return f;
#elif DTYPE_F16
	unsigned short h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
#elif __CUDA_ARCH__ >= 800
	unsigned short h;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
#else
	unsigned u = __float_as_uint(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (unsigned short)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (unsigned short)(u >> 16);
#endif
}

#if !DTYPE_F32 && __CUDA_ARCH__ >= 800
// Two f32 as one word of two half-precision elements (lo in the low half,
// the lower address), one instruction.
__device__ __forceinline__ unsigned pack_pair(float lo, float hi)
{
	unsigned packed;
#if DTYPE_F16
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
#else
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
#endif
	return packed;
}
#endif

// Packs two f32 into two adjacent half-precision elements with one
// instruction where the GPU has it (lo goes to the lower address).
__device__ __forceinline__ void store_pair(elem_t *dst, float lo, float hi)
{
#if !DTYPE_F32 && __CUDA_ARCH__ >= 800
	const unsigned packed = pack_pair(lo, hi);
	dst[0] = (elem_t)(packed & 0xffffu);
	dst[1] = (elem_t)(packed >> 16);
#else
	dst[0] = from_f32(lo);
	dst[1] = from_f32(hi);
#endif
}

// The max of c's lanes, as f32. Half-precision lanes are compared in pairs
// (max.f16x2 / max.bf16x2, exact, and like fmaxf they skip a NaN): half the
// instructions, and a row held in registers is converted only once its max
// is taken. On the H100 this made softmax_block's best half-precision
// variant 5-11% faster at N = 4K-16K and 24-34% at 32K-64K (NOTES.md).
__device__ __forceinline__ float vec_max(const vec_t &c)
{
#if !DTYPE_F32 && VEC % 2 == 0 && __CUDA_ARCH__ >= 800
	const unsigned *w = reinterpret_cast<const unsigned *>(&c);
	unsigned p = w[0];
#pragma unroll
	for (int k = 1; k < VEC / 2; k++)
#if DTYPE_F16
		asm("max.f16x2 %0, %0, %1;" : "+r"(p) : "r"(w[k]));
#else
		asm("max.bf16x2 %0, %0, %1;" : "+r"(p) : "r"(w[k]));
#endif
	return fmaxf(to_f32((elem_t)(p & 0xffffu)), to_f32((elem_t)(p >> 16)));
#else
	float m = to_f32(c.v[0]);
#pragma unroll
	for (int j = 1; j < VEC; j++)
		m = fmaxf(m, to_f32(c.v[j]));
	return m;
#endif
}

__device__ __forceinline__ elem_t elem_neg_inf(void)
{
#if DTYPE_F32
	return __int_as_float((int)ELEM_NEG_INF_BITS);
#else
	return (elem_t)ELEM_NEG_INF_BITS;
#endif
}

// 2^x with the hardware approximation (relative error ~2^-22).
__device__ __forceinline__ float fast_exp2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

// e^(x - m) for m the max of x's row (or of the part of it seen so far), as
// 2^((x - m) log2 e). The difference comes first: exact where x is near m,
// and far below the smallest float's exponent where it is not, so the
// result is right at every finite magnitude. The one-instruction form
// 2^(x log2 e - m log2 e) is not: m log2 e rounds by up to half an ulp of
// m, 2^-24 m, so at m = 1e30 the max's own term came out as 2^(+-6e22),
// inf or 0, and the row NaN where torch.softmax gives a distribution; and
// m log2 e overflows past 2.4e38 (f32 and bf16 reach 3.4e38). A masked -inf
// gives 2^-inf = 0; m = -inf (a row of -inf) gives NaN, as torch does.
__device__ __forceinline__ float exp_from_max(float x, float m)
{
	return fast_exp2((x - m) * LOG2E_F);
}

// e^(x - m) / 2^lg (lg = log2 of the row's sum): the division folded into
// the exponent, for templates that compute each exp a second time at the
// write rather than keep the sum's.
__device__ __forceinline__ float exp_from_max_over(float x, float m, float lg)
{
	return fast_exp2(fmaf(x - m, LOG2E_F, -lg));
}

// Bits of every kernel's last argument, `flags` (the public header's
// ATD_FLAG_* values). MASKED_ZERO: a row of all -inf comes out as zeros,
// as PyTorch's SDPA gives fully masked rows, rather than torch.softmax's
// NaN (-inf - -inf).
#define FLAG_MASKED_ZERO 1u

// The row's max as its exps take it: with FLAG_MASKED_ZERO, 0 for a row of
// all -inf, whose exps are then 0 rather than NaN.
__device__ __forceinline__ float masked_max(float m, unsigned flags)
{
	return (flags & FLAG_MASKED_ZERO) && m == NEG_INF_F ? 0.0f : m;
}

// The row's sum as the division takes it: with FLAG_MASKED_ZERO, 1 for a
// sum of 0 (a row of all -inf), so that 0 / 1 is written. Every other
// row's sum is at least 1 (its max's own term), or NaN.
__device__ __forceinline__ float masked_sum(float s, unsigned flags)
{
	return (flags & FLAG_MASKED_ZERO) && s == 0.0f ? 1.0f : s;
}

// The op the source computes. The templates are written for softmax,
// y = e^(x - m) / s (m the row's max, s the sum of e^(x - m)); a source the
// generator made for log_softmax defines OP_LOG_SOFTMAX (common/
// kernel_source.h), and writes y = (x - m) - ln s instead: the difference
// first, so that the result is exact where x is near m at every magnitude
// (x - (m + ln s) loses ln s to m's rounding: 1e-3 at m = 1e4 in f32).
// The reductions are the same; only what a thread keeps between the sum
// and the write, and the write, differ. Those are the five helpers below.
#if defined(OP_LOG_SOFTMAX)
#define LOG_OUTPUT 1
#else
#define LOG_OUTPUT 0
#endif

// 1 / s for a row's sum s (at least 1, at most the row's length, or NaN):
// the hardware's approximation and one Newton step, within an ulp and
// without a branch. `1.0f / s` (rcp.rn) wraps each reciprocal in a test
// and a slow path for operands this never sees, and a thread's reciprocals
// of several rows run one after another: four bf16 rows a thread cost ~0.2
// us of a 4 us launch (H200, bf16 416 x 2, a hand-written kernel: 3.94
// against 3.71 us, results/h200/rows-of-two-variant-bench-h200.log;
// softmax_tiny 4.06 -> 3.82, sum-reciprocal-variant-bench-h200.log).
__device__ __forceinline__ float sum_reciprocal(float s)
{
	float r;
	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
	return fmaf(r, fmaf(-s, r, 1.0f), r);
}

// What the write takes from the row's sum s (masked_sum's): 1 / s, or ln s.
__device__ __forceinline__ float write_scale(float s)
{
	return LOG_OUTPUT ? logf(s) : sum_reciprocal(s);
}

// y from x, the row's max m and write_scale: e^(x - m) * scale, or
// (x - m) - scale.
__device__ __forceinline__ float out_from_max(float x, float m, float scale)
{
	return LOG_OUTPUT ? (x - m) - scale : exp_from_max(x, m) * scale;
}

// y from x, m and lg = log2 s (exp_from_max_over's form).
__device__ __forceinline__ float out_from_max_over(float x, float m, float lg)
{
	return LOG_OUTPUT ? (x - m) - lg * LN2_F : exp_from_max_over(x, m, lg);
}

// What a template that keeps each value in a register between the sum and
// the write keeps, ref being the row's max or a part's: e^(x - ref), which
// is also its term of the sum; or x - ref, whose term is taken apart.
__device__ __forceinline__ float held_from(float x, float ref)
{
	return LOG_OUTPUT ? x - ref : exp_from_max(x, ref);
}

// A held value's term of the sum.
__device__ __forceinline__ float held_term(float h)
{
	return LOG_OUTPUT ? fast_exp2(h * LOG2E_F) : h;
}

// y from a value held relative to the row's own max: h * scale, or h - scale.
__device__ __forceinline__ float out_from_held(float h, float scale)
{
	return LOG_OUTPUT ? h - scale : h * scale;
}

// The factor that takes values held relative to ref (a part's max) to y
// with out_from_part: e^(ref - m) * scale, or (ref - m) - scale. ref =
// -inf (a part of all -inf, held as e^0 = 0s or -infs) gives 0, or +inf,
// whose sum with a held -inf is NaN only where the whole row is -inf.
__device__ __forceinline__ float part_factor(float ref, float m, float scale)
{
	return LOG_OUTPUT ? (ref - m) - scale : exp_from_max(ref, m) * scale;
}

// y from a value held relative to a part's max, and part_factor's factor.
__device__ __forceinline__ float out_from_part(float h, float factor)
{
	return LOG_OUTPUT ? h + factor : h * factor;
}

// Rows of one element: e^(x - x) / e^(x - x) is 1 (log_softmax: 0) for a finite x and NaN
// for an infinite or NaN one (0 for -inf with FLAG_MASKED_ZERO), so such
// rows need no reduction nor exp: a load and a store a row. The general
// path's shuffles, exp and division are a launch-bound shape's whole cost
// over a copy. Row r of one element (r < M):
__device__ __forceinline__ float one_element_out(float v, unsigned flags)
{
	const bool masked = (flags & FLAG_MASKED_ZERO) && v == NEG_INF_F;
	// log_softmax: ln 1 = 0, NaN for an infinite or NaN x, -inf masked
	return LOG_OUTPUT ? (masked ? NEG_INF_F : v - v) : (masked ? 0.0f : (v - v) + 1.0f);
}

__device__ __forceinline__ void one_element_row(elem_t *y, const elem_t *x, long long r,
						long long ldy, long long ldx, unsigned flags)
{
	y[r * ldy] = from_f32(one_element_out(to_f32(x[r * ldx]), flags));
}

// Every row of one element, each thread taking rows of the whole grid in
// turn (any grid covers them).
__device__ __forceinline__ void one_element_rows(elem_t *y, const elem_t *x, long long M,
						 long long ldy, long long ldx, unsigned flags)
{
	const long long step = (long long)gridDim.x * blockDim.x;
#pragma unroll 1 // unrolled, softmax_tile f32 threads=256 lanes=4 rows_per_cta=128 got a stack frame
	for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < M; r += step)
		one_element_row(y, x, r, ldy, ldx, flags);
}

// Hides v's value from the compiler (no instruction): after this, values it
// computed from v before cannot be reused, so what is kept alive is v itself.
// Templates that hold a row packed call it before converting the row a
// second time, or the compiler keeps the first conversion (f32, twice the
// registers) instead.
__device__ __forceinline__ void launder(vec_t &v)
{
	unsigned *w = reinterpret_cast<unsigned *>(&v);
#pragma unroll
	for (int k = 0; k < (int)(sizeof(vec_t) / 4); k++)
		asm volatile("" : "+r"(w[k]));
}

// The CTAs of THREADS threads a multiprocessor (64K registers, 2048
// threads on sm_80 and sm_90; where fewer, the bound only costs registers)
// holds when each thread keeps `held` registers of row data and its own
// 16, or 20 past 16 held (ptxas spilled below that: bf16 256 x 64 at 48
// registers, 326 bytes): what a template holding its row packed asks of
// ptxas (__launch_bounds__'s second argument). Without it ptxas spends the
// registers packing saved, and no more CTAs fit.
#define HELD_REGS(held) ((held) + ((held) > 16 ? 20 : 16))
#define HELD_CTAS(held)                                             \
	(65536 / (THREADS * HELD_REGS(held)) < 1 ? 1                 \
	 : 65536 / (THREADS * HELD_REGS(held)) > 2048 / THREADS      \
		 ? 2048 / THREADS                                    \
		 : 65536 / (THREADS * HELD_REGS(held)))

// Element j of a packed vector as f32, converted by other instructions than
// to_f32's (a prmt for bf16; for f16 a prmt to the low half first): for
// templates that hold a row packed and convert it a second time. ptxas
// would otherwise find to_f32's instruction again on the same register and
// keep its result (f32, twice the registers) alive from the first pass.
__device__ __forceinline__ float to_f32_again(const vec_t &v, int j)
{
#if DTYPE_F32
	return v.v[j];
#else
	const unsigned w = reinterpret_cast<const unsigned *>(&v)[j / 2];
	unsigned r;
#if DTYPE_F16
	if (j % 2)
		asm("prmt.b32 %0, %1, 0, 0x4432;" : "=r"(r) : "r"(w));
	else
		asm("prmt.b32 %0, %1, 0, 0x4410;" : "=r"(r) : "r"(w));
	float f;
	asm("{ .reg .f16 h, g; mov.b32 {h, g}, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "r"(r));
	return f;
#else
	if (j % 2)
		asm("prmt.b32 %0, %1, 0, 0x3244;" : "=r"(r) : "r"(w));
	else
		asm("prmt.b32 %0, %1, 0, 0x1044;" : "=r"(r) : "r"(w));
	return __uint_as_float(r);
#endif
#endif
}

// Elements 2k and 2k + 1 of v as f32. For bf16, from their 32-bit word:
// one instruction each (a shift, a mask), where converting the 16-bit
// elements one by one extracted the upper one first (two).
__device__ __forceinline__ void pair_to_f32(const vec_t &v, int k, float &lo, float &hi)
{
#if DTYPE_BF16
	const unsigned w = reinterpret_cast<const unsigned *>(&v)[k];
	lo = __uint_as_float(w << 16);
	hi = __uint_as_float(w & 0xffff0000u);
#else
	lo = to_f32(v.v[2 * k]);
	hi = to_f32(v.v[2 * k + 1]);
#endif
}

// log2(x) with the hardware approximation (absolute error ~2^-22).
__device__ __forceinline__ float fast_log2(float x)
{
	float y;
	asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

// True when every row of p with stride ld (elements) starts on a VEC-element
// boundary, so whole vectors can be moved; checked once per launch.
__device__ __forceinline__ bool rows_vec_aligned(const void *p, long long ld)
{
	return VEC == 1 ||
	       (((unsigned long long)p % (VEC * sizeof(elem_t))) == 0 && ld % VEC == 0);
}

#ifndef CACHE_HINT
#define CACHE_HINT 0
#endif

// One whole-vector access. With CACHE_HINT, loads are evict-first with a
// 256-byte L2 prefetch and stores are evict-first: every byte is touched
// once, so nothing is worth keeping in the caches.
__device__ __forceinline__ vec_t ld_vec(const elem_t *p)
{
#if CACHE_HINT
	vec_t out;
	unsigned *w = reinterpret_cast<unsigned *>(&out);
	if (sizeof(vec_t) == 16)
		asm("ld.global.cs.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
			     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
	else if (sizeof(vec_t) == 8)
		asm("ld.global.cs.L2::256B.v2.u32 {%0,%1}, [%2];"
			     : "=r"(w[0]), "=r"(w[1]) : "l"(p));
	else
		out = *reinterpret_cast<const vec_t *>(p);
	return out;
#else
	return *reinterpret_cast<const vec_t *>(p);
#endif
}

__device__ __forceinline__ void st_vec(elem_t *p, const vec_t &v)
{
#if CACHE_HINT
	const unsigned *w = reinterpret_cast<const unsigned *>(&v);
	if (sizeof(vec_t) == 16)
		asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};"
			     :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
	else if (sizeof(vec_t) == 8)
		asm volatile("st.global.cs.v2.u32 [%0], {%1,%2};"
			     :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
	else
		*reinterpret_cast<vec_t *>(p) = v;
#else
	*reinterpret_cast<vec_t *>(p) = v;
#endif
}

// Loads the VEC elements at row[col...]; elements at or past n read as -inf
// so that they vanish from the max and the sum.
__device__ __forceinline__ void load_vec(vec_t &out, const elem_t *row, long long col,
					 long long n, bool vec_ok)
{
	if (vec_ok && col + VEC <= n) {
		out = ld_vec(row + col);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			out.v[j] = col + j < n ? row[col + j] : elem_neg_inf();
	}
}

// Converts VEC f32 results into a vector to store whole: half-precision
// elements in pairs (one instruction each, see store_pair), the last one
// alone when VEC is odd.
__device__ __forceinline__ void pack_vec(vec_t &out, const float *vals)
{
#if DTYPE_F32
#pragma unroll
	for (int j = 0; j < VEC; j++)
		out.v[j] = vals[j];
#else
	// the packed word as is where a vector is whole words: through two
	// 16-bit elements, ptxas split it and put it together again (two
	// instructions a pair). An else, not an early return: nvcc warned the
	// loop after the return unreachable.
#if __CUDA_ARCH__ >= 800
	if (VEC % 2 == 0) {
		unsigned *w = reinterpret_cast<unsigned *>(&out);
#pragma unroll
		for (int j = 0; j < VEC; j += 2)
			w[j / 2] = pack_pair(vals[j], vals[j + 1]);
	} else
#endif
	{
#pragma unroll
		for (int j = 0; j + 1 < VEC; j += 2)
			store_pair(&out.v[j], vals[j], vals[j + 1]);
		if (VEC % 2)
			out.v[VEC - 1] = from_f32(vals[VEC - 1]);
	}
#endif
}

// Converts and stores VEC results at row[col...] (masked).
__device__ __forceinline__ void store_vec(elem_t *row, long long col, long long n,
					  bool vec_ok, const float *vals)
{
	vec_t out;
	pack_vec(out, vals);
	if (vec_ok && col + VEC <= n) {
		st_vec(row + col, out);
	} else {
#pragma unroll
		for (int j = 0; j < VEC; j++)
			if (col + j < n)
				row[col + j] = out.v[j];
	}
}

// The largest power of two below w (0 for w <= 1): the first xor offset
// of a butterfly that reaches every lane under w, whatever w.
__host__ __device__ constexpr int pow2_below(int w, int p = 1)
{
	return 2 * p >= w ? (w <= 1 ? 0 : p) : pow2_below(w, 2 * p);
}
static_assert(pow2_below(1) == 0 && pow2_below(2) == 1 && pow2_below(3) == 2 &&
		      pow2_below(5) == 4 && pow2_below(6) == 4 && pow2_below(8) == 4 &&
		      pow2_below(16) == 8 && pow2_below(32) == 16,
	      "pow2_below: the largest power of two below its argument");

// Max and sum over WIDTH consecutive lanes (a power of two <= 32); every
// lane of the group gets the result. WIDTH is a template argument so that
// the loop is unrolled in the function itself: written as a loop over all
// five offsets with `if (o < width)`, a width argument left NVVM a loop
// that ptxas ran through a jump table in constant memory (BRXU), whose
// cold misses cost softmax_tiny ~0.3 us at rows of 2 (H200).
template <int WIDTH> __device__ __forceinline__ float group_max(float v)
{
	static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
		      "xor offsets from WIDTH / 2 reach every lane only of a power of two");
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

template <int WIDTH> __device__ __forceinline__ float group_sum(float v)
{
	static_assert(WIDTH >= 1 && WIDTH <= 32 && (WIDTH & (WIDTH - 1)) == 0,
		      "xor offsets from WIDTH / 2 reach every lane only of a power of two");
#pragma unroll
	for (int o = WIDTH / 2; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

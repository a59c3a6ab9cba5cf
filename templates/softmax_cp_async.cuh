// cp.async (sm_80+) for the staged templates: 16-byte L1-bypassing copies
// into shared memory, commit groups and waits. softmax_smem.cu carries its
// own copy (its source, and so its stored results, left as they are).
#pragma once

#ifndef CACHE_HINT
#define CACHE_HINT 0
#endif

__device__ __forceinline__ unsigned shared_addr(const void *p)
{
	unsigned a;
	asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
	return a;
}

// With CACHE_HINT, copies are evict-first in L2: every byte is read once.
__device__ __forceinline__ unsigned long long copy_policy(void)
{
	unsigned long long pol = 0;
#if CACHE_HINT
	asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
#endif
	return pol;
}

// Copies the 16 bytes at src to dst (both 16-byte aligned).
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src, unsigned long long pol)
{
#if CACHE_HINT
	asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;"
		     :: "r"(dst), "l"(src), "l"(pol) : "memory");
#else
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
#endif
}

__device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most `pending` of this thread's committed groups are in
// flight (a switch where it is not a constant).
__device__ __forceinline__ void cp_async_wait(int pending)
{
	switch (pending) {
	case 0: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
	case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
	case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
	case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
	case 4: asm volatile("cp.async.wait_group 4;" ::: "memory"); break;
	case 5: asm volatile("cp.async.wait_group 5;" ::: "memory"); break;
	case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
	default: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
	}
}

__device__ __forceinline__ unsigned dynamic_smem_bytes(void)
{
	unsigned b;
	asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
	return b;
}

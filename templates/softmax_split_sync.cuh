// The cross-CTA exchange of the split templates (softmax_split,
// softmax_backward_split): a cooperative grid cuts each row into S slices,
// one a CTA, and the S CTAs of a row meet through module-global scratch.
// This header holds what does not depend on the partial's type: the
// arrival counts per row slot and buffer, the ordered memory operations,
// the wait for a row's partials, the stagger of odd row slots (STAGGER)
// and the zeroing as the grid leaves. The layout (which CTA takes which
// slice, which buffer a task uses) is softmax_split_layout.cuh's; each
// template keeps its own partials array beside these counts, indexed as
// split_arrived is.
//
// Counts only grow during a launch: a slot's count at its base reaches S x
// the buffer's uses so far when the S partials of its current row are in;
// the last CTA to leave zeroes them, so that a launch that ended normally
// leaves the scratch ready for the next. Being module-global, the scratch
// is shared by every launch of the module: two launches of one module must
// not run at the same time (e.g. on two streams).
#pragma once
// (after softmax_split_layout.cuh: split_stagger reads the layout; the
// generator inlines each include where it stands)

#ifndef STAGGER
#define STAGGER 0
#endif

// Partial slots per buffer: CTAs past this many idle (a larger grid than any
// GPU holds today at THREADS >= 256).
#define MAX_CTAS 4096

// Buffers: two for the main groups by task parity, one for the tail
// (split_task_exchange).
__device__ unsigned split_arrived[3][MAX_CTAS];
__device__ unsigned split_left; // this launch's CTAs that have left

// ---- memory operations with explicit order (sm_70+) ---------------------------

__device__ __forceinline__ unsigned ld_acquire(const unsigned *p)
{
	unsigned v;
	asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ void st_relaxed(unsigned *p, unsigned v)
{
	asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

// One way: no value comes back, so the arrival costs no round trip.
__device__ __forceinline__ void red_add_release(unsigned *p, unsigned v)
{
	asm volatile("red.release.gpu.global.add.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned *p, unsigned v)
{
	unsigned old;
	asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], %2;"
		     : "=r"(old) : "l"(p), "r"(v) : "memory");
	return old;
}

__device__ __forceinline__ void nap(void)
{
	asm volatile("nanosleep.u32 32;");
}

// Thread 0 of a CTA whose partial is stored: counts the CTA in at its row
// slot's count with a one-way release add (after the partial), then polls
// until the count reaches `complete` (S x the buffer's uses). After the
// last arrival the critical path is the add's way to L2, a poll and the
// partials' loads (a returning atomic, then a generation flag to release
// the waiters, took a round trip more).
__device__ __forceinline__ void split_arrive_and_wait(unsigned *arrived, unsigned complete)
{
	red_add_release(arrived, 1);
	while (ld_acquire(arrived) < complete)
		nap();
}

// Whether this CTA's slot is one that waits (an odd slot with main rows:
// so has the slot before).
__device__ __forceinline__ bool split_staggered(const split_layout &L, unsigned n_main)
{
	return STAGGER && n_main > 0 && blockIdx.x / L.slices % 2 == 1 && L.slices > 1;
}

// The stagger's wait, by one thread: the caller's barrier releases the rest
// of the CTA.
__device__ __forceinline__ void split_stagger_wait(const split_layout &L, unsigned n_main)
{
	if (!split_staggered(L, n_main))
		return;
	const unsigned *const arrived = &split_arrived[0][(blockIdx.x / L.slices - 1) * L.slices];
	while (ld_acquire(arrived) < L.slices)
		nap();
}

// Row slots run in step: every CTA's slice is as long, so every CTA waits
// for its row's partials at the same time, with nothing in flight. With
// STAGGER, an odd slot starts once the slot before has its first row's
// partials in (its count in buffer 0 reaches S, and only grows): it reads
// its first slices while the even slots wait, and the two stay out of
// phase until the tail group, so that one's wait overlaps the other's
// streaming.
__device__ __forceinline__ void split_stagger(const split_layout &L, unsigned n_main)
{
	if (!split_staggered(L, n_main))
		return;
	if (threadIdx.x == 0)
		split_stagger_wait(L, n_main);
	__syncthreads();
}

// Every CTA counts itself out; the last zeroes the arrival counts (warp 0:
// 3 x G words) for the next launch, which starts after this one ends.
__device__ __forceinline__ void split_leave(unsigned G)
{
	if (threadIdx.x >= 32)
		return;
	unsigned last = 0;
	if (threadIdx.x == 0)
		last = atom_add_acq_rel(&split_left, 1) == gridDim.x - 1;
	if (!__shfl_sync(0xffffffffu, last, 0))
		return;
	for (unsigned j = threadIdx.x; j < G; j += 32) {
		st_relaxed(&split_arrived[0][j], 0);
		st_relaxed(&split_arrived[1][j], 0);
		st_relaxed(&split_arrived[2][j], 0);
	}
	if (threadIdx.x == 0)
		st_relaxed(&split_left, 0);
}

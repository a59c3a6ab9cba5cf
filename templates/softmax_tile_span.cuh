// A CTA's rows of a contiguous tensor as one span of memory, for the tile
// templates (softmax_tile, softmax_backward_tile): the span's bounds, its
// store from a shared-memory tile in 16-byte vectors, and the strided
// path's element-by-element copies. Each template loads its spans itself
// (its own cp.async policy and wait). Needs THREADS, VEC, elem_t, vec_t
// and st_vec from the including template.
#pragma once

// A tensor's span for this CTA: elements [a, b), held in a tile from
// element `base` (a rounded down to a chunk), so that tile[i] is t[base + i].
struct span {
	long long a, b, base;
};

// Writes the tile back to t[a, b): whole chunks as 16-byte stores, the
// chunks cut by a or b element by element (their other elements are other
// CTAs' rows).
__device__ __forceinline__ void store_span(elem_t *t, const elem_t *tile, const span &s)
{
	const long long first = s.base / VEC, last = (s.b + VEC - 1) / VEC;
	for (long long c = first + threadIdx.x; c < last; c += THREADS) {
		const long long e = c * VEC;
		const elem_t *src = tile + (e - s.base);
		if (e >= s.a && e + VEC <= s.b) {
			st_vec(t + e, *reinterpret_cast<const vec_t *>(src));
		} else {
#pragma unroll
			for (int j = 0; j < VEC; j++)
				if (e + j >= s.a && e + j < s.b)
					t[e + j] = src[j];
		}
	}
}

// The strided path: row r of a tile at tile[r * n], element by element.
__device__ __forceinline__ void load_rows_strided(elem_t *tile, const elem_t *t, long long r0,
						  int rows, int n, long long ld)
{
	for (int i = threadIdx.x; i < rows * n; i += THREADS) {
		const int r = i / n;
		tile[i] = t[(r0 + r) * ld + (i - r * n)];
	}
}

__device__ __forceinline__ void store_rows_strided(elem_t *t, const elem_t *tile, long long r0,
						   int rows, int n, long long ld)
{
	for (int i = threadIdx.x; i < rows * n; i += THREADS) {
		const int r = i / n;
		t[(r0 + r) * ld + (i - r * n)] = tile[i];
	}
}

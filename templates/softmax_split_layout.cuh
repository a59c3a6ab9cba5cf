// How softmax_split lays rows over its grid: R rows in flight, each cut
// into S slices of slice_len elements, one CTA per slice (R * S <= G, the
// CTAs left over idle). Written in the common subset of C and CUDA so that
// a host test (tests/test_split_template.c) checks the very same code.
//
//   fit 0: R = min(M, G), S = G / R: every CTA busy with one group of rows
//          when M <= G; a slice longer than shared memory re-reads its
//          overflow.
//   fit 1: S at least what makes every slice fit in cap_chunks 16-byte
//          chunks of shared memory.
//
// Rows beyond one group go in groups of R, and the last group may hold
// fewer. Two ways to cut them, the one with less slice length a CTA goes
// through (the time of a group is its slices' length: every CTA works at
// once):
//   balanced: the rows spread evenly over the groups they need, each group
//             cut alike (64 x 1M f32 at 37 slices a row: 10 groups of 7,
//             the last with 1 row on 37 of 264 CTAs, the others idle);
//   tail:     whole groups of R, then the rest (fewer than R rows) in a
//             last group cut into more, shorter slices (that 1 row on all
//             264 CTAs: 9 + 1/7 groups' time instead of 10).
#pragma once

#ifdef __CUDACC__
#define SPLIT_LAYOUT_FN __device__ __forceinline__
#else
#define SPLIT_LAYOUT_FN static inline
#endif

typedef struct split_layout {
	unsigned rows;            /* R: rows in flight, one slot of S CTAs each */
	unsigned slices;          /* S: CTAs per row */
	long long slice_len;      /* elements per slice, a multiple of vec */
	long long main_rows;      /* rows 0 .. main_rows - 1 go in groups of R */
	unsigned tail_rows;       /* the rest, in one last group (0: none) */
	unsigned tail_slices;     /* its CTAs per row (>= S) */
	long long tail_slice_len; /* its elements per slice */
} split_layout;

/* Elements per slice when N is cut into S slices of whole chunks. */
SPLIT_LAYOUT_FN long long split_slice_len(long long N, unsigned S, int vec)
{
	return ((N + S - 1) / S + vec - 1) / vec * vec;
}

/* The chunks a slice may span under fit, given cap_chunks on chip: fit 2
 * plans slices of twice that, the part past the shared memory read from
 * L2 again (fewer rows at a time meet in fewer, longer rounds: the
 * backward's f32 32 x 2000001 went from 0.51 to 0.62 of a copy, H200; at
 * hundreds of rows the second read cost 4-15%). */
SPLIT_LAYOUT_FN long long split_fit_cap(long long cap_chunks, int fit)
{
	return fit >= 2 ? 2 * cap_chunks : cap_chunks;
}

/* For M rows of N elements (M, N >= 1) on G >= 1 CTAs, vec elements per
 * chunk. */
SPLIT_LAYOUT_FN split_layout split_plan_layout(long long M, long long N, unsigned G,
					       long long cap_chunks, int fit, int vec)
{
	unsigned S = G / (M < (long long)G ? (unsigned)M : G);
	if (fit && cap_chunks > 0) {
		const long long need = ((N + vec - 1) / vec + cap_chunks - 1) / cap_chunks;
		if (need > S)
			S = need < (long long)G ? (unsigned)need : G;
	}
	/* the most rows a group holds, the CTAs one slot short of a row spread
	 * over the slots */
	unsigned R = G / S;
	S = G / R;
	R = G / S;
	split_layout l;
	l.rows = R;
	l.slices = S;
	l.slice_len = split_slice_len(N, S, vec);
	l.main_rows = M;
	l.tail_rows = 0;
	l.tail_slices = S;
	l.tail_slice_len = l.slice_len;
	if (M <= R)
		return l; /* one group */

	const long long groups = (M + R - 1) / R;
	const unsigned balanced_rows = (unsigned)((M + groups - 1) / groups);
	const unsigned balanced_slices = G / balanced_rows;
	const long long balanced_cost = groups * split_slice_len(N, balanced_slices, vec);
	const unsigned tail = (unsigned)(M % R);
	const unsigned tail_slices = tail ? G / tail : l.slices;
	const long long tail_cost = M / R * l.slice_len +
				    (tail ? split_slice_len(N, tail_slices, vec) : 0);
	if (tail_cost < balanced_cost) {
		l.main_rows = M - tail;
		l.tail_rows = tail;
		l.tail_slices = tail_slices;
		l.tail_slice_len = split_slice_len(N, tail_slices, vec);
	} else {
		l.slices = balanced_slices;
		l.rows = G / balanced_slices; /* a slot more idles, or takes rows */
		l.slice_len = split_slice_len(N, balanced_slices, vec);
		l.tail_slices = l.slices;
		l.tail_slice_len = l.slice_len;
	}
	return l;
}

/* ---- which rows a CTA takes (the kernel's loop) ------------------------------ */

/* CTA b's rows in the main groups: slot, slot + R, ... below main_rows. */
SPLIT_LAYOUT_FN unsigned split_main_tasks(const split_layout *l, unsigned b)
{
	const unsigned slot = b / l->slices;
	if (slot >= l->rows || slot >= l->main_rows)
		return 0;
	return (unsigned)((l->main_rows - slot + l->rows - 1) / l->rows);
}

/* CTA b's tasks: its main rows, then its row of the tail group if it has one. */
SPLIT_LAYOUT_FN unsigned split_tasks(const split_layout *l, unsigned b)
{
	return split_main_tasks(l, b) + (b / l->tail_slices < l->tail_rows);
}

/* Task i (< split_tasks) of CTA b, which has n_main main tasks: its row,
 * and which of the row's *slices slices it holds (*part). */
SPLIT_LAYOUT_FN long long split_task_row(const split_layout *l, unsigned b, unsigned i,
					 unsigned n_main, unsigned *part, unsigned *slices)
{
	const int tail = i >= n_main;
	*slices = tail ? l->tail_slices : l->slices;
	*part = b % *slices;
	const unsigned slot = b / *slices;
	return tail ? l->main_rows + slot : slot + (long long)i * l->rows;
}

/* ---- where a task's partials meet (the kernel's exchange) -------------------- */

/* The scratch buffers: the main groups' two, taken by task parity, and the
 * tail's. */
#define SPLIT_TAIL_BUFFER 2u

/* Task i (< split_tasks) of CTA b, which has n_main main tasks: its row's S
 * partials are slots *base .. *base + S - 1 of buffer *buffer (it writes
 * slot *base + part), and the slot's arrival count at *base is complete at
 * S x the returned number: this task's use of the buffer's slot in the
 * launch, counting from 1 (the CTAs of a slot share their task numbers; the
 * tail's buffer is used once). */
SPLIT_LAYOUT_FN unsigned split_task_exchange(const split_layout *l, unsigned b, unsigned i,
					     unsigned n_main, unsigned *buffer, unsigned *base)
{
	const int tail = i >= n_main;
	const unsigned S = tail ? l->tail_slices : l->slices;
	*base = b / S * S;
	*buffer = tail ? SPLIT_TAIL_BUFFER : (i & 1u);
	return tail ? 1u : i / 2 + 1;
}

/* The edge cases of `autotune selftest`: the shapes of each case, the input
 * a shape gets (random rows, special rows of -inf, NaN and +inf, guard
 * values in row padding and around the rows), and the check of an output
 * image against the CPU reference. All of it is host code, tested without a
 * GPU; the runner (selftest_gpu.c) only moves the images to and from the GPU.
 *
 * A buffer image holds, in elements: a front guard, the M rows at their
 * stride (the last row without padding, as a view into a larger matrix
 * ends), and a back guard. Guards and padding hold ST guard values (a NaN
 * that no computation produces) that must come back untouched; the input's
 * padding is guard too, so that a kernel reading beyond N gets a NaN row.
 * The output's rows start as poison (all bytes 0xff, another NaN), so an
 * element that is never written fails. Without guards (under the sanitizer)
 * the image is exactly the rows, so that any access outside them is outside
 * the allocation, where memcheck sees it. */
#ifndef AT_TUNER_SELFTEST_CASES_H
#define AT_TUNER_SELFTEST_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtype.h"

typedef enum st_case {
	ST_CASE_SIZES,   /* odd N, N not a multiple of the vector width, N = 1 */
	ST_CASE_SPECIAL, /* rows of -inf, NaN, +inf, one-hot and constant rows */
	ST_CASE_STRIDED, /* ldx != ldy > N, aligned and odd, guards in the padding */
	ST_CASE_INPLACE, /* y == x */
	ST_CASE_EXTREME, /* every row extreme (tuner/check/extreme_rows.h), with
			    and without ATD_MASKED_ZERO */
	ST_CASE_BIG,     /* M * N > 2^31 elements: 64-bit offsets */
	ST_CASE_COUNT
} st_case;

/* Which shapes: every case, every case but BIG, or small shapes for the
 * sanitizer (STRIDED only, aligned and odd strides, a few rows each, no
 * guards). */
typedef enum st_mode { ST_MODE_FULL, ST_MODE_QUICK, ST_MODE_SANITIZE } st_mode;

/* "sizes", "special", "strided", "in-place", "extreme", "2^31". */
const char *st_case_name(st_case c);

/* Adds the cases named in a comma-separated list ("strided,2^31") to *mask
 * (bit 1 << st_case). Returns -1 on an unknown or empty name, or an empty
 * list. */
int st_case_list_parse(const char *text, unsigned *mask);

typedef struct st_shape {
	st_case kind;
	long long M, N;
	long long ldx, ldy; /* row strides in elements; equal when in place */
	int in_place;
	int special_rows;   /* special rows among the random ones */
	int misalign;       /* rows start this many elements past a 16-byte boundary */
	int guards;         /* guard zones before and after the rows */
	int extreme;        /* row r of kind r % EXTREME_COUNT (extreme_rows.h) */
	unsigned flags;     /* the launch's flags (ATD_MASKED_ZERO) */
} st_shape;

#define ST_MAX_SHAPES 32
#define ST_GUARD_BYTES 512

/* The shapes of case c in mode, at most cap; returns how many. */
size_t st_case_shapes(st_case c, st_mode mode, st_shape *out, size_t cap);

/* "M=4099 N=7", with ldx/ldy, "in place" and the misalignment when set. */
void st_shape_label(const st_shape *s, char *buf, size_t cap);

/* ---- images ---- */

/* Elements before row 0 (front guard and misalignment). */
size_t st_front_elems(const st_shape *s, at_dtype dt);

/* Elements of a whole image whose rows have stride ld. */
size_t st_image_elems(const st_shape *s, at_dtype dt, long long ld);

/* The guard value's bits for dt (a NaN no arithmetic produces). */
uint32_t st_guard_bits(at_dtype dt);

/* The input image (stride ldx): random rows in [-8, 8) from seed, the
 * special rows when the shape has them, guard everywhere else. */
void st_fill_input(const st_shape *s, at_dtype dt, void *image, uint64_t seed);

/* The output image before a launch (stride ldy): poison in the rows, guard
 * everywhere else. */
void st_fill_output(const st_shape *s, at_dtype dt, void *image);

typedef enum st_row_kind {
	ST_ROW_RANDOM,
	ST_ROW_ALL_NEG_INF,  /* softmax: NaN (as PyTorch) */
	ST_ROW_NAN,          /* a NaN somewhere: NaN */
	ST_ROW_POS_INF,      /* a +inf somewhere: NaN (inf - inf) */
	ST_ROW_SOME_NEG_INF, /* every third element -inf: 0 there */
	ST_ROW_ONE_HOT,      /* -inf but one element: exactly one 1 */
	ST_ROW_CONSTANT,     /* all equal: 1/N each */
	ST_ROW_KIND_COUNT
} st_row_kind;

st_row_kind st_row_kind_of(const st_shape *s, long long row);
const char *st_row_kind_name(st_row_kind k);

/* What row r of s holds, for messages: its special or extreme kind. */
const char *st_row_name(const st_shape *s, long long row);

/* The verdict on an output image. */
typedef struct st_verdict {
	int ok;
	char reason[400]; /* the first problem found, when not ok */
} st_verdict;

/* Checks the output image (stride ldy) against ref (M x N doubles, the
 * reference of the input rows): guards and padding untouched, every element
 * written, NaN exactly where the reference has NaN, each row's relative L2
 * error within ref_tolerance, and N = 1 rows exactly 1. Rows are checked
 * in parallel. */
st_verdict st_check_output(const st_shape *s, at_dtype dt, const void *image,
			   const double *ref);

/* The same for one row (row r of the shape, its N elements at got, its
 * reference at want): the part shared with the 2^31 case, which checks a
 * few rows only. Returns 1 when good, else 0 with reason. */
int st_check_row(const st_shape *s, at_dtype dt, long long r, const void *got,
		 const double *want, char *reason, size_t cap);

#endif

/* The selftest's cases, inputs and checks: see selftest_cases.h. */
#include "tuner/selftest/selftest_cases.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/autotune/dispatch.h"
#include "common/strbuf.h"
#include "tuner/check/extreme_rows.h"
#include "tuner/check/reference.h"

const char *st_case_name(st_case c)
{
	static const char *const names[ST_CASE_COUNT] = { "sizes",    "special", "strided",
							  "in-place", "extreme", "2^31" };
	return (unsigned)c < ST_CASE_COUNT ? names[c] : "?";
}

int st_case_list_parse(const char *text, unsigned *mask)
{
	unsigned found = 0;
	const char *p = text;
	for (;;) {
		size_t len = strcspn(p, ",");
		int c = 0;
		while (c < ST_CASE_COUNT && !(strlen(st_case_name((st_case)c)) == len &&
					      strncmp(p, st_case_name((st_case)c), len) == 0))
			c++;
		if (c == ST_CASE_COUNT)
			return -1;
		found |= 1u << c;
		if (p[len] == '\0')
			break;
		p += len + 1;
	}
	*mask |= found;
	return 0;
}

/* ---- shapes ---- */

/* Rows (M) per row length: enough rows at short N that persistent CTAs
 * loop over several rows (and several steps of prefetch), few at long N;
 * M = 1 and M = 7 at long rows for the templates that serve few rows.
 * Odd N, off every vector width, but for N = 512: rows of whole vectors
 * that fill a softmax_warp variant exactly, the path that checks nothing
 * per vector (its last CTA, M being odd, the checked one). */
typedef struct mn { long long M, N; } mn;

static const mn sizes_full[] = {
	{ 300007, 1 }, { 300007, 7 }, { 120011, 33 }, { 4099, 512 }, { 4099, 1001 },
	{ 1031, 4097 }, { 1, 4097 }, { 521, 12289 }, { 7, 12289 },   { 263, 70001 },
	{ 7, 262147 },
};
static const mn others_full[] = {
	{ 4099, 1 }, { 4099, 7 }, { 4099, 33 }, { 1031, 512 }, { 1031, 1001 }, { 263, 4097 },
	{ 263, 12289 }, { 7, 12289 }, { 133, 70001 }, { 5, 262147 },
};
/* The sanitizer runs every launch 10-100x slower: a few rows each. */
/* Every extreme kind at each row length (M at least EXTREME_COUNT), in the
 * regimes of every template: short rows many to a CTA, rows in registers,
 * in shared memory, over a cluster, split over CTAs. */
static const mn extreme_full[] = {
	{ 4099, 7 }, { 4099, 33 }, { 1031, 512 }, { 1031, 1001 }, { 263, 4097 },
	{ 27, 12289 }, { 27, 70001 }, { 13, 262147 },
};
static const mn sanitize[] = {
	{ 67, 7 }, { 67, 33 }, { 19, 1001 }, { 5, 4097 }, { 3, 12289 }, { 3, 70001 }, { 2, 262147 },
};
/* Just above 2^31 elements, at a row length of each regime; 1024 is whole
 * rows of softmax_warp's widest variants, which must then leave their
 * 32-bit path; 262147 half-precision rows are the first too long for
 * shared memory, where softmax_split serves many rows. */
static const long long big_n[] = { 1001, 1024, 12289, 65537, 262147 };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static long long round_up(long long v, long long to)
{
	return (v + to - 1) / to * to;
}

static size_t put(st_shape *out, size_t n, size_t cap, st_shape s)
{
	if (n < cap)
		out[n] = s;
	return n + 1;
}

static size_t add_list(st_case c, const mn *list, size_t count, int guards, st_shape *out,
		       size_t n, size_t cap)
{
	for (size_t i = 0; i < count; i++) {
		long long M = list[i].M, N = list[i].N;
		st_shape s = { .kind = c, .M = M, .N = N, .ldx = N, .ldy = N, .guards = guards };
		switch (c) {
		case ST_CASE_SPECIAL:
			s.special_rows = 1;
			n = put(out, n, cap, s);
			break;
		case ST_CASE_STRIDED:
			/* 16-byte aligned rows (the vector path and its tail) ... */
			s.ldx = round_up(N, 8) + 8;
			s.ldy = round_up(N, 8) + 24;
			n = put(out, n, cap, s);
			/* ... and odd strides from a misaligned start (the scalar path) */
			s.ldx = N + 3;
			s.ldy = N + 1;
			s.misalign = 1;
			n = put(out, n, cap, s);
			break;
		case ST_CASE_EXTREME:
			s.extreme = 1;
			n = put(out, n, cap, s);
			s.flags = ATD_MASKED_ZERO;
			n = put(out, n, cap, s);
			break;
		case ST_CASE_INPLACE:
			s.in_place = 1;
			n = put(out, n, cap, s);
			if (N == 33 || N == 4097 || N == 70001) {
				s.ldx = s.ldy = round_up(N, 8) + 8;
				n = put(out, n, cap, s);
			}
			break;
		default:
			n = put(out, n, cap, s);
			break;
		}
	}
	return n;
}

size_t st_case_shapes(st_case c, st_mode mode, st_shape *out, size_t cap)
{
	size_t n = 0;
	if (mode == ST_MODE_SANITIZE) {
		/* both stride kinds: the vector path with its tail, and the
		 * scalar path; each row length's last row ends the allocation */
		if (c == ST_CASE_STRIDED)
			n = add_list(c, sanitize, COUNT(sanitize), 0, out, n, cap);
		return n < cap ? n : cap;
	}
	switch (c) {
	case ST_CASE_SIZES: n = add_list(c, sizes_full, COUNT(sizes_full), 1, out, n, cap); break;
	case ST_CASE_SPECIAL:
	case ST_CASE_STRIDED:
	case ST_CASE_INPLACE: n = add_list(c, others_full, COUNT(others_full), 1, out, n, cap); break;
	case ST_CASE_EXTREME: n = add_list(c, extreme_full, COUNT(extreme_full), 1, out, n, cap); break;
	case ST_CASE_BIG:
		if (mode == ST_MODE_QUICK)
			break;
		for (size_t i = 0; i < COUNT(big_n); i++) {
			/* the last rows lie wholly beyond element 2^31 */
			long long N = big_n[i], M = (1LL << 31) / N + 3;
			n = put(out, n, cap, (st_shape){ .kind = c, .M = M, .N = N, .ldx = N,
							 .ldy = N, .guards = 1 });
		}
		break;
	default: break;
	}
	return n < cap ? n : cap;
}

void st_shape_label(const st_shape *s, char *buf, size_t cap)
{
	int len = snprintf(buf, cap, "M=%lld N=%lld", s->M, s->N);
	if (len < 0 || (size_t)len >= cap)
		return;
	if (s->in_place && s->ldx != s->N)
		len += snprintf(buf + len, cap - (size_t)len, " ld=%lld", s->ldx);
	else if (!s->in_place && (s->ldx != s->N || s->ldy != s->N))
		len += snprintf(buf + len, cap - (size_t)len, " ldx=%lld ldy=%lld", s->ldx, s->ldy);
	if ((size_t)len < cap && s->in_place)
		len += snprintf(buf + len, cap - (size_t)len, " in place");
	if ((size_t)len < cap && s->misalign)
		len += snprintf(buf + len, cap - (size_t)len, " (rows start %d element%s off 16 B)",
				s->misalign, s->misalign == 1 ? "" : "s");
	if ((size_t)len < cap && (s->flags & ATD_MASKED_ZERO))
		snprintf(buf + len, cap - (size_t)len, " masked rows zero");
}

/* ---- images ---- */

static size_t guard_elems(const st_shape *s, at_dtype dt)
{
	return s->guards ? ST_GUARD_BYTES / at_dtype_size(dt) : 0;
}

size_t st_front_elems(const st_shape *s, at_dtype dt)
{
	return guard_elems(s, dt) + (size_t)s->misalign;
}

static size_t rows_elems(const st_shape *s, long long ld)
{
	return (size_t)((s->M - 1) * ld + s->N);
}

size_t st_image_elems(const st_shape *s, at_dtype dt, long long ld)
{
	return st_front_elems(s, dt) + rows_elems(s, ld) + guard_elems(s, dt);
}

uint32_t st_guard_bits(at_dtype dt)
{
	/* quiet NaNs with a payload: arithmetic yields the canonical NaN */
	return dt == AT_F32 ? 0x7fe5a5a5u : dt == AT_F16 ? 0x7e5au : 0x7fdau;
}

static uint32_t poison_bits(at_dtype dt)
{
	return dt == AT_F32 ? 0xffffffffu : 0xffffu;
}

static uint32_t get_bits(const void *buf, at_dtype dt, size_t i)
{
	if (dt == AT_F32) {
		uint32_t u;
		memcpy(&u, (const char *)buf + 4 * i, 4);
		return u;
	}
	return ((const uint16_t *)buf)[i];
}

static void set_bits(void *buf, at_dtype dt, size_t i, uint32_t bits)
{
	if (dt == AT_F32)
		memcpy((char *)buf + 4 * i, &bits, 4);
	else
		((uint16_t *)buf)[i] = (uint16_t)bits;
}

static void fill_bits(void *buf, at_dtype dt, size_t n, uint32_t bits)
{
	for (size_t i = 0; i < n; i++)
		set_bits(buf, dt, i, bits);
}

typedef enum special_value { NEG_INF, POS_INF, QNAN, THREE, HALF } special_value;

static uint32_t special_bits(at_dtype dt, special_value v)
{
	static const uint32_t bits[3][5] = {
		/* -inf, +inf, NaN, 3.0, 0.5 */
		{ 0xff800000u, 0x7f800000u, 0x7fc00000u, 0x40400000u, 0x3f000000u },
		{ 0xfc00u, 0x7c00u, 0x7e00u, 0x4200u, 0x3800u },
		{ 0xff80u, 0x7f80u, 0x7fc0u, 0x4040u, 0x3f00u },
	};
	return bits[dt][v];
}

st_row_kind st_row_kind_of(const st_shape *s, long long row)
{
	if (!s->special_rows)
		return ST_ROW_RANDOM;
	if (row == 0)
		return ST_ROW_ALL_NEG_INF;
	if (row == s->M - 1)
		return ST_ROW_NAN;
	if (row == s->M - 2)
		return ST_ROW_POS_INF;
	/* a fifth of the rows, consecutive in a CTA's loop: no state may leak
	 * from one row into the next */
	if (row % 5 == 2)
		return (st_row_kind)(1 + (row / 5) % (ST_ROW_KIND_COUNT - 1));
	return ST_ROW_RANDOM;
}

const char *st_row_name(const st_shape *s, long long row)
{
	return s->extreme ? extreme_kind_name((extreme_kind)(row % EXTREME_COUNT))
			  : st_row_kind_name(st_row_kind_of(s, row));
}

const char *st_row_kind_name(st_row_kind k)
{
	static const char *const names[ST_ROW_KIND_COUNT] = {
		"random", "all -inf", "a NaN", "a +inf", "some -inf", "one-hot", "constant"
	};
	return (unsigned)k < ST_ROW_KIND_COUNT ? names[k] : "?";
}

/* Where a special row puts its one odd element: the last column (a vector
 * tail), the first, or somewhere inside. */
static long long odd_column(long long row, long long N)
{
	switch ((row / 7) % 3) {
	case 0: return N - 1;
	case 1: return 0;
	default: return (row * 7919) % N;
	}
}

static void make_special(const st_shape *s, at_dtype dt, void *row_start, long long r)
{
	long long N = s->N, c = odd_column(r, N);
	switch (st_row_kind_of(s, r)) {
	case ST_ROW_RANDOM: break;
	case ST_ROW_ALL_NEG_INF: fill_bits(row_start, dt, (size_t)N, special_bits(dt, NEG_INF)); break;
	case ST_ROW_NAN: set_bits(row_start, dt, (size_t)c, special_bits(dt, QNAN)); break;
	case ST_ROW_POS_INF: set_bits(row_start, dt, (size_t)c, special_bits(dt, POS_INF)); break;
	case ST_ROW_SOME_NEG_INF:
		for (long long j = 1; j < N; j += 3)
			set_bits(row_start, dt, (size_t)j, special_bits(dt, NEG_INF));
		break;
	case ST_ROW_ONE_HOT:
		fill_bits(row_start, dt, (size_t)N, special_bits(dt, NEG_INF));
		set_bits(row_start, dt, (size_t)c, special_bits(dt, HALF));
		break;
	case ST_ROW_CONSTANT: fill_bits(row_start, dt, (size_t)N, special_bits(dt, THREE)); break;
	default: break;
	}
}

void st_fill_input(const st_shape *s, at_dtype dt, void *image, uint64_t seed)
{
	size_t elem = at_dtype_size(dt);
	fill_bits(image, dt, st_image_elems(s, dt, s->ldx), st_guard_bits(dt));
	char *rows = (char *)image + st_front_elems(s, dt) * elem;
	size_t row_bytes = (size_t)s->N * elem;
	if (s->ldx == s->N) {
		ref_fill_random(rows, dt, (size_t)(s->M * s->N), seed);
	} else {
		char *tmp = xmalloc((size_t)s->M * row_bytes);
		ref_fill_random(tmp, dt, (size_t)(s->M * s->N), seed);
		for (long long r = 0; r < s->M; r++)
			memcpy(rows + (size_t)(r * s->ldx) * elem, tmp + (size_t)r * row_bytes, row_bytes);
		free(tmp);
	}
	if (s->special_rows)
		for (long long r = 0; r < s->M; r++)
			make_special(s, dt, rows + (size_t)(r * s->ldx) * elem, r);
	if (s->extreme)
		for (long long r = 0; r < s->M; r++)
			extreme_fill_row(rows + (size_t)(r * s->ldx) * elem, dt, s->N,
					 (extreme_kind)(r % EXTREME_COUNT), odd_column(r, s->N));
}

void st_fill_output(const st_shape *s, at_dtype dt, void *image)
{
	size_t elem = at_dtype_size(dt);
	fill_bits(image, dt, st_image_elems(s, dt, s->ldy), st_guard_bits(dt));
	char *rows = (char *)image + st_front_elems(s, dt) * elem;
	for (long long r = 0; r < s->M; r++)
		memset(rows + (size_t)(r * s->ldy) * elem, 0xff, (size_t)s->N * elem);
}

/* ---- checks ---- */

int st_check_row(const st_shape *s, at_dtype dt, long long r, const void *got,
		 const double *want, char *reason, size_t cap)
{
	const char *kind = st_row_name(s, r);
	double d2 = 0, n2 = 0;
	for (long long j = 0; j < s->N; j++) {
		if (get_bits(got, dt, (size_t)j) == poison_bits(dt)) {
			snprintf(reason, cap, "row %lld (%s), column %lld was not written", r, kind, j);
			return 0;
		}
		double g = ref_load(got, dt, (size_t)j), w = want[j];
		if (isnan(g) != isnan(w) || ((isinf(g) || isinf(w)) && g != w)) {
			snprintf(reason, cap, "row %lld (%s), column %lld: got %.6g, want %.6g", r,
				 kind, j, g, w);
			return 0;
		}
		if (isnan(w) || isinf(w))
			continue; /* equal: NaN and NaN, or the same infinity */
		if (s->N == 1 && g != w) { /* softmax's 1, log_softmax's 0 */
			snprintf(reason, cap, "N = 1: row %lld (%s) is %.9g, not exactly %.9g", r,
				 kind, g, w);
			return 0;
		}
		d2 += (g - w) * (g - w);
		n2 += w * w;
	}
	double rel = ref_rel_l2(d2, n2, s->N, dt), tol = ref_tolerance(dt);
	if (!(rel <= tol)) {
		snprintf(reason, cap, "row %lld (%s): relative L2 error %.3g exceeds %.0e", r, kind,
			 rel, tol);
		return 0;
	}
	return 1;
}

/* The first guard element (front, padding, back) that changed, or -1. */
static long long changed_guard(const st_shape *s, at_dtype dt, const void *image,
			       long long *row_out)
{
	uint32_t guard = st_guard_bits(dt);
	size_t front = st_front_elems(s, dt), total = st_image_elems(s, dt, s->ldy);
	size_t end = front + rows_elems(s, s->ldy);
	*row_out = -1;
	for (size_t i = 0; i < front; i++)
		if (get_bits(image, dt, i) != guard)
			return (long long)i;
	for (long long r = 0; r + 1 < s->M; r++)
		for (long long j = s->N; j < s->ldy; j++) {
			size_t i = front + (size_t)(r * s->ldy + j);
			if (get_bits(image, dt, i) != guard) {
				*row_out = r;
				return (long long)i;
			}
		}
	for (size_t i = end; i < total; i++)
		if (get_bits(image, dt, i) != guard)
			return (long long)i;
	return -1;
}

typedef struct row_job {
	const st_shape *s;
	at_dtype dt;
	const char *rows;
	const double *ref;
	long long begin, end;
	long long bad_row; /* the first failing row in [begin, end), or -1 */
	char reason[sizeof(((st_verdict *)0)->reason)];
} row_job;

static void *check_rows(void *arg)
{
	row_job *j = arg;
	size_t elem = at_dtype_size(j->dt);
	j->bad_row = -1;
	for (long long r = j->begin; r < j->end; r++) {
		const char *got = j->rows + (size_t)(r * j->s->ldy) * elem;
		if (!st_check_row(j->s, j->dt, r, got, j->ref + (size_t)(r * j->s->N), j->reason,
				  sizeof j->reason)) {
			j->bad_row = r;
			break;
		}
	}
	return NULL;
}

#define CHECK_THREADS 16

st_verdict st_check_output(const st_shape *s, at_dtype dt, const void *image,
			   const double *ref)
{
	st_verdict v = { 1, "" };
	long long row;
	long long at = changed_guard(s, dt, image, &row);
	if (at >= 0) {
		v.ok = 0;
		size_t front = st_front_elems(s, dt);
		size_t end = front + rows_elems(s, s->ldy);
		uint32_t now = get_bits(image, dt, (size_t)at);
		if (row >= 0)
			snprintf(v.reason, sizeof v.reason, "wrote into the padding of row %lld, "
				 "column %lld (guard 0x%x became 0x%x)", row,
				 at - (long long)front - row * s->ldy, st_guard_bits(dt), now);
		else if (at < (long long)front)
			snprintf(v.reason, sizeof v.reason, "wrote before row 0, %lld elements before "
				 "it (guard 0x%x became 0x%x)", (long long)front - at, st_guard_bits(dt), now);
		else
			snprintf(v.reason, sizeof v.reason, "wrote past the end of the last row, at its "
				 "element N-1+%lld (guard 0x%x became 0x%x)", at - (long long)end + 1,
				 st_guard_bits(dt), now);
		return v;
	}
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = cores < 1 ? 1 : cores > CHECK_THREADS ? CHECK_THREADS : (int)cores;
	if ((long long)nthreads > s->M)
		nthreads = (int)s->M;
	row_job jobs[CHECK_THREADS];
	pthread_t tids[CHECK_THREADS];
	int started[CHECK_THREADS] = { 0 };
	const char *rows = (const char *)image + st_front_elems(s, dt) * at_dtype_size(dt);
	for (int t = 0; t < nthreads; t++) {
		jobs[t] = (row_job){ s, dt, rows, ref, s->M * t / nthreads, s->M * (t + 1) / nthreads,
				     -1, "" };
		if (t > 0)
			started[t] = pthread_create(&tids[t], NULL, check_rows, &jobs[t]) == 0;
	}
	check_rows(&jobs[0]);
	for (int t = 1; t < nthreads; t++) {
		if (started[t])
			pthread_join(tids[t], NULL);
		else
			check_rows(&jobs[t]);
	}
	for (int t = 0; t < nthreads; t++) {
		if (jobs[t].bad_row >= 0) {
			v.ok = 0;
			snprintf(v.reason, sizeof v.reason, "%s", jobs[t].reason);
			break;
		}
	}
	return v;
}

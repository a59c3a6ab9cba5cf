/* Tests for templates/softmax_split.{cu,yaml} and its layout
 * (templates/softmax_split_layout.cuh, compiled here as C: the very code the
 * kernel runs): the manifest and where enumeration offers variants (few rows
 * or rows beyond one CTA's shared memory, cc >= 70, fit only where it
 * changes the layout); the launch geometry (cooperative, every resident CTA
 * whatever M is, a multiprocessor's share of shared memory); the layout's
 * invariants over many shapes and grids; and NVRTC compiles of every
 * distinct variant for sm_90 (no spills, the arrival count's release and
 * acquire operations, cp.async, 16-byte stores, no float atomics) and one for
 * sm_75 (no cp.async there). */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"
#include "templates/softmax_split_layout.cuh"

#define H100_SMEM (227 * 1024)
#define H100_SMS 132
/* The CTA's static shared memory allowance (2 x 2 x 32 floats of slots). */
#define STATIC_SMEM_ALLOWANCE 512

static const tmpl_manifest *split;

static void load_split(void)
{
	tf_load_templates();
	split = tf_template("softmax_split");
}

TestSuite(split_template, .init = load_split, .fini = tf_free_templates);

/* Geometry is asked of an H100 (cc 90). */
static size_t enumerate_at(int cc, at_dtype dt, long long M, long long N, variant **out)
{
	return tf_enumerate(split, cc, dt, M, N, out);
}

static launch_geometry geometry(const variant *v, long long M, long long N)
{
	return tf_geometry(v, 90, M, N);
}

/* ---- the manifest and enumeration ----------------------------------------- */

Test(split_template, manifest_declares_a_cooperative_launch_for_any_n)
{
	cr_assert_str_eq(split->op, "softmax");
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
		cr_assert(split->dtype_mask & (1u << dt), "dtype %s not served",
			  at_dtype_name((at_dtype)dt));
	static const char *const names[] = { "threads", "vec",	   "ctas_per_sm", "fit",
					     "stages",	"reduce_lag", "stagger",     "reg_windows" };
	cr_assert_eq(split->nparams, 8, "softmax_split's params changed: update this test");
	for (size_t i = 0; i < 8; i++)
		cr_assert_str_eq(split->params[i].name, names[i]);
	cr_assert_str_eq(split->launch.cooperative, "1");
	cr_assert_str_eq(split->launch.persistent, "0");
	cr_assert_str_eq(split->launch.ctas_per_row, "1");
	cr_assert_str_eq(split->launch.max_n, "0");
	/* the limitation is said where a template author and a user look */
	FILE *f = fopen(split->manifest_path, "r");
	cr_assert_not_null(f);
	char text[8192];
	size_t len = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[len] = '\0';
	cr_assert_not_null(strstr(text, "must not run at the same time"));
}

Test(split_template, few_long_rows_get_variants_with_a_share_of_shared_memory)
{
	static const at_dtype dts[] = { AT_F32, AT_F16, AT_BF16 };
	for (size_t d = 0; d < 3; d++) {
		variant *vs;
		size_t n = enumerate_at(90, dts[d], 8, 1048576, &vs);
		cr_assert_gt(n, 0, "no variant at %s 8 x 1048576", at_dtype_name(dts[d]));
		int per_sm_seen[5] = { 0 };
		for (size_t i = 0; i < n; i++) {
			launch_geometry g = geometry(&vs[i], 8, 1048576);
			long long per_sm = tf_value(&vs[i], "ctas_per_sm");
			per_sm_seen[per_sm]++;
			cr_assert_eq(tf_value(&vs[i], "vec") * (long long)at_dtype_size(dts[d]),
				     16);
			cr_assert_eq(g.cooperative, 1);
			cr_assert_eq(g.persistent, 0);
			cr_assert_eq(g.ctas_per_row, 1);
			cr_assert_eq(g.max_n, 0);
			cr_assert_eq(g.threads, tf_value(&vs[i], "threads"));
			cr_assert_leq(g.threads * per_sm * 64, 65536, "registers for %lld CTAs", per_sm);
			/* per_sm CTAs (each with its 1 KB reserve and static slots) fit
			 * in a multiprocessor's 228 KB, using nearly all of it */
			long long used = per_sm * (g.dyn_smem + 1024 + STATIC_SMEM_ALLOWANCE);
			cr_assert_leq(used, H100_SMEM + 1024);
			cr_assert_gt(used, H100_SMEM + 1024 - 16 * per_sm);
			cr_assert_eq(g.dyn_smem % 16, 0);
		}
		for (int per_sm = 1; per_sm <= 4; per_sm++)
			cr_assert_gt(per_sm_seen[per_sm], 0, "no variant with %d CTAs a multiprocessor",
				     per_sm);
		free(vs);
	}
}

Test(split_template, none_where_one_cta_per_row_serves_or_for_short_rows)
{
	variant *vs;
	/* as many rows as CTAs, each fitting in one CTA's shared memory */
	cr_assert_eq(enumerate_at(90, AT_F32, 4096, 50257, &vs), 0);
	cr_assert_eq(enumerate_at(90, AT_F32, 528, 32768, &vs), 0); /* 4 a multiprocessor */
	/* rows short enough for registers */
	cr_assert_eq(enumerate_at(90, AT_F32, 8, 8192, &vs), 0);
	/* rows beyond one CTA's shared memory: served at any M */
	size_t n = enumerate_at(90, AT_F32, 4096, 262144, &vs);
	cr_assert_gt(n, 0);
	free(vs);
	/* fewer rows than CTAs: served even when rows fit */
	n = enumerate_at(90, AT_BF16, 32, 50257, &vs);
	cr_assert_gt(n, 0);
	free(vs);
}

Test(split_template, cc_70_and_newer)
{
	variant *vs;
	size_t n = enumerate_at(75, AT_F32, 8, 1048576, &vs);
	cr_assert_gt(n, 0, "no variant for sm_75");
	free(vs);
	n = enumerate_at(70, AT_F32, 8, 1048576, &vs);
	cr_assert_gt(n, 0, "no variant for sm_70");
	free(vs);
	cr_assert_eq(enumerate_at(61, AT_F32, 8, 1048576, &vs), 0, "variants for sm_61");
}

/* The slices a fit-0 layout would give at G = sm_count * ctas_per_sm,
 * against the share of shared memory: what the manifest's fit constraint
 * says, in C. */
static int spread_slices_overflow(long long M, long long N, size_t elem, long long per_sm,
				  long long stages)
{
	long long G = H100_SMS * per_sm;
	long long S = G / (M < G ? M : G);
	long long share = ((H100_SMEM + 1024) / per_sm - 1536) / 16 / stages * 16;
	return (N + S - 1) / S * (long long)elem > share;
}

Test(split_template, fit_only_where_the_spread_slices_overflow)
{
	static const struct {
		at_dtype dt;
		long long M, N;
	} cases[] = {
		{ AT_F32, 8, 262144 },   { AT_F32, 8, 1048576 }, { AT_F32, 64, 524288 },
		{ AT_BF16, 8, 1048576 }, { AT_F16, 32, 262144 }, { AT_F32, 1024, 1048576 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		variant *vs;
		size_t n = enumerate_at(90, cases[c].dt, cases[c].M, cases[c].N, &vs);
		cr_assert_gt(n, 0);
		for (long long per_sm = 1; per_sm <= 4; per_sm++) {
			int fit0 = 0, fit1 = 0;
			for (size_t i = 0; i < n; i++) {
				if (tf_value(&vs[i], "ctas_per_sm") != per_sm ||
				    tf_value(&vs[i], "stages") != 1)
					continue;
				if (tf_value(&vs[i], "fit"))
					fit1++;
				else
					fit0++;
			}
			int want = spread_slices_overflow(cases[c].M, cases[c].N,
							  at_dtype_size(cases[c].dt), per_sm, 1);
			cr_assert_gt(fit0, 0);
			cr_assert_eq(fit1 > 0, want, "%s %lld x %lld, %lld per SM: fit=1 %s",
				     at_dtype_name(cases[c].dt), cases[c].M, cases[c].N, per_sm,
				     want ? "missing" : "offered needlessly");
		}
		free(vs);
	}
	/* 8 x 262144 f32 on 132 SMs: 16 slices of 64 KB fit, so never fit=1 */
	cr_assert_eq(spread_slices_overflow(8, 262144, 4, 1, 1), 0);
	cr_assert_eq(spread_slices_overflow(8, 1048576, 4, 1, 1), 1);
}

/* A second slice buffer only where a CTA holds more than one row in turn:
 * always for more rows than CTAs; with fewer, only with fit=1 where the
 * half buffers make rows take turns (8 x 1M f32: 37 slices a row, 3 rows at
 * a time on one CTA an SM), never where all rows fit at once (8 x 256K). */
Test(split_template, two_buffers_only_where_a_cta_holds_rows_in_turn)
{
	static const struct {
		at_dtype dt;
		long long M, N;
		int stages2, fit1_only;
	} cases[] = {
		{ AT_F32, 8, 262144, 0, 0 },   { AT_F32, 8, 1048576, 1, 1 },
		{ AT_F32, 64, 1048576, 1, 1 }, { AT_BF16, 1024, 524288, 1, 0 },
		{ AT_F32, 4096, 65536, 1, 0 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		variant *vs;
		size_t n = enumerate_at(90, cases[c].dt, cases[c].M, cases[c].N, &vs);
		int two = 0, two_fit0 = 0;
		for (size_t i = 0; i < n; i++) {
			if (tf_value(&vs[i], "stages") != 2)
				continue;
			two++;
			two_fit0 += tf_value(&vs[i], "fit") == 0;
		}
		cr_assert_eq(two > 0, cases[c].stages2, "%lld x %lld: stages=2 %s", cases[c].M,
			     cases[c].N, cases[c].stages2 ? "missing" : "offered needlessly");
		if (cases[c].fit1_only)
			cr_assert_eq(two_fit0, 0, "%lld x %lld: every row in flight at once with fit=0",
				     cases[c].M, cases[c].N);
		free(vs);
	}
}

Test(split_template, the_grid_is_every_resident_cta_whatever_m_is)
{
	variant *vs;
	size_t n = enumerate_at(90, AT_F32, 8, 1048576, &vs);
	cr_assert_gt(n, 0);
	launch_geometry g = geometry(&vs[0], 8, 1048576);
	at_error err = { { 0 } };
	unsigned grid = 0;
	cr_assert_eq(launch_grid_size(&g, 8, 2, H100_SMS, &grid, &err), 0, "%s", err.msg);
	cr_assert_eq(grid, 2 * H100_SMS);
	cr_assert_eq(launch_grid_size(&g, 100000, 1, H100_SMS, &grid, &err), 0, "%s", err.msg);
	cr_assert_eq(grid, H100_SMS);
	cr_assert_eq(launch_grid_size(&g, 1, 1, H100_SMS, &grid, &err), 0, "%s", err.msg);
	cr_assert_eq(grid, H100_SMS);
	cr_assert_eq(launch_grid_size(&g, 8, 0, H100_SMS, &grid, &err), -1);
	cr_assert_not_null(strstr(err.msg, "no CTA fits"), "%s", err.msg);
	free(vs);
}

/* ---- the layout (the kernel's own code, compiled here as C) ------------------ */

/* Checks a cut of N into S slices of len elements. */
static void check_cut(long long N, unsigned S, long long len, int vec, const char *what)
{
	cr_assert_eq(len % vec, 0, "%s: %lld elements a slice", what, len);
	cr_assert_geq(len * S, N, "%s: the slices do not cover the row", what);
	cr_assert_lt((len - vec) * S, N, "%s: a slice could be a chunk shorter", what);
}

/* Every (row, slice) of the M rows is some CTA's task exactly once, each
 * CTA's tasks in row order (a slot's rows go in groups: slot, slot + R,
 * ..., then the tail). */
static void check_tasks(const split_layout *l, long long M, unsigned G)
{
	unsigned char *seen = calloc((size_t)M * G, 1);
	cr_assert_not_null(seen);
	for (unsigned b = 0; b < G; b++) {
		const unsigned n_main = split_main_tasks(l, b), n = split_tasks(l, b);
		long long prev = -1;
		for (unsigned i = 0; i < n; i++) {
			unsigned part, S;
			long long row = split_task_row(l, b, i, n_main, &part, &S);
			cr_assert(row >= 0 && row < M, "CTA %u task %u: row %lld of %lld", b, i, row, M);
			cr_assert_gt(row, prev, "CTA %u: rows out of order", b);
			cr_assert_lt(part, S);
			cr_assert_eq(S, i < n_main ? l->slices : l->tail_slices);
			cr_assert_eq(seen[row * G + part], 0, "row %lld slice %u twice", row, part);
			seen[row * G + part] = 1;
			prev = row;
		}
	}
	for (long long row = 0; row < M; row++) {
		const unsigned S = row < l->main_rows ? l->slices : l->tail_slices;
		for (unsigned p = 0; p < G; p++)
			cr_assert_eq(seen[row * G + p], p < S, "row %lld slice %u of %u: %s", row, p,
				     S, p < S ? "nobody's" : "beyond the row's slices");
	}
	free(seen);
}

/* The exchange: the S partials a task waits for (slots base .. base + S - 1
 * of its buffer, complete when the slot's count reaches S x its uses) are
 * written by the S tasks of the same row with the same buffer, base and use:
 * CTA base + j's (a slot's CTAs are consecutive). A main slot is only ever
 * CTA b's and its buffer's uses go 1, 2, ... every other task (so the count
 * grows by S a use); the tail's buffer is used once. */
static void check_exchange(const split_layout *l, unsigned G)
{
	for (unsigned b = 0; b < G; b++) {
		const unsigned n_main = split_main_tasks(l, b), n = split_tasks(l, b);
		for (unsigned i = 0; i < n; i++) {
			unsigned part, S, buffer, base;
			const long long row = split_task_row(l, b, i, n_main, &part, &S);
			const unsigned use = split_task_exchange(l, b, i, n_main, &buffer, &base);
			cr_assert_eq(base + part, b, "CTA %u task %u writes slot %u", b, i, base + part);
			cr_assert_eq(buffer == SPLIT_TAIL_BUFFER, i >= n_main);
			cr_assert_eq(use, i >= n_main ? 1 : i / 2 + 1, "CTA %u task %u: use %u", b, i,
				     use);
			/* a staggered odd slot waits for the slot before's first
			 * partials (buffer 0, first use, its base): that slot has
			 * main rows too */
			const unsigned slot = b / l->slices;
			if (i == 0 && n_main > 0 && slot % 2 == 1) {
				const unsigned before = (slot - 1) * l->slices;
				unsigned b_buffer, b_base;
				cr_assert_gt(split_main_tasks(l, before), 0);
				cr_assert_eq(split_task_exchange(l, before, 0, split_main_tasks(l, before),
								 &b_buffer, &b_base),
					     1);
				cr_assert(b_buffer == 0 && b_base == before);
			}
			for (unsigned j = 0; j < S; j++) {
				/* the writer's task with this buffer and use */
				const unsigned c = base + j, c_main = split_main_tasks(l, c);
				const unsigned k = buffer == SPLIT_TAIL_BUFFER ? c_main
									       : 2 * (use - 1) + buffer;
				cr_assert_lt(k, split_tasks(l, c),
					     "CTA %u task %u waits on CTA %u, which has no task %u", b, i,
					     c, k);
				unsigned c_part, c_S, c_buffer, c_base;
				const long long c_row = split_task_row(l, c, k, c_main, &c_part, &c_S);
				const unsigned c_use =
					split_task_exchange(l, c, k, c_main, &c_buffer, &c_base);
				cr_assert(c_use == use && c_buffer == buffer && c_base == base &&
						  c_part == j && c_row == row,
					  "CTA %u task %u (row %lld) waits on CTA %u task %u (row %lld)",
					  b, i, row, c, k, c_row);
			}
		}
	}
}

/* Checks one layout's invariants and returns it. */
static split_layout check_layout(long long M, long long N, unsigned G, long long cap, int fit,
				 int vec)
{
	split_layout l = split_plan_layout(M, N, G, cap, fit, vec);
	cr_assert_geq(l.slices, 1);
	cr_assert_geq(l.rows, 1);
	cr_assert_leq((long long)l.rows * l.slices, G, "M=%lld N=%lld G=%u: %u rows x %u slices",
		      M, N, G, l.rows, l.slices);
	/* no slot could take another slice: the leftover is less than a row's */
	cr_assert_lt(G - l.rows * l.slices, l.slices);
	check_cut(N, l.slices, l.slice_len, vec, "main");
	/* the tail: fewer rows than a group, on more (shorter) slices */
	cr_assert_eq(l.main_rows + l.tail_rows, M);
	if (l.tail_rows) {
		cr_assert_eq(l.main_rows % l.rows, 0, "the main rows are whole groups");
		cr_assert_lt(l.tail_rows, l.rows);
		cr_assert_geq(l.tail_slices, l.slices);
		cr_assert_leq((long long)l.tail_rows * l.tail_slices, G);
		cr_assert_eq(l.tail_slices, G / l.tail_rows, "the tail's rows take every CTA");
		check_cut(N, l.tail_slices, l.tail_slice_len, vec, "tail");
	} else {
		cr_assert_eq(l.tail_slices, l.slices);
		cr_assert_eq(l.tail_slice_len, l.slice_len);
	}
	if (M * (long long)G <= 4096 * 264)
		check_tasks(&l, M, G);
	/* the exchange check takes M x S x S steps */
	if (M * (long long)l.tail_slices * l.tail_slices <= 1 << 18)
		check_exchange(&l, G);
	return l;
}

Test(split_template, layout_invariants_over_many_shapes)
{
	static const long long Ms[] = { 1, 2, 7, 8, 32, 64, 131, 132, 133, 264, 1000, 4096 };
	static const long long Ns[] = { 1, 3, 8193, 50257, 262144, 1048576, 1048577 };
	static const unsigned Gs[] = { 1, 7, 132, 264, 4096 };
	static const long long caps[] = { 0, 1, 7200, 14496 };
	for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
		for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
			for (size_t c = 0; c < sizeof Gs / sizeof *Gs; c++)
				for (size_t d = 0; d < sizeof caps / sizeof *caps; d++)
					for (int fit = 0; fit <= 1; fit++)
						for (int vec = 4; vec <= 8; vec += 4)
							check_layout(Ms[a], Ns[b], Gs[c], caps[d], fit, vec);
}

Test(split_template, fit_0_spreads_few_rows_over_every_cta)
{
	/* 8 rows on 132 CTAs: 16 slices each, 4 CTAs left over */
	split_layout l = check_layout(8, 1048576, 132, 14496, 0, 4);
	cr_assert_eq(l.rows, 8);
	cr_assert_eq(l.slices, 16);
	cr_assert_eq(l.slice_len, 65536);
	/* 32 rows on 264 CTAs */
	l = check_layout(32, 262144, 264, 7200, 0, 4);
	cr_assert_eq(l.slices, 8);
	cr_assert_eq(l.rows, 33); /* the 33rd slot has no row: it idles */
	/* more rows than CTAs: one CTA per row, groups of 132 */
	l = check_layout(4096, 1048576, 132, 14496, 0, 4);
	cr_assert_eq(l.slices, 1);
	cr_assert_eq(l.rows, 132);
	/* N = 1: one slice of one chunk, the others empty */
	l = check_layout(1, 1, 132, 14496, 0, 4);
	cr_assert_eq(l.slices, 132);
	cr_assert_eq(l.slice_len, 4);
}

Test(split_template, fit_1_makes_slices_fit_with_balanced_groups_or_a_tail)
{
	const long long cap = 7200; /* 16-byte chunks in 113 KB: two CTAs per SM */
	static const struct {
		long long M, N;
		int vec;
	} cases[] = { { 8, 1048576, 4 },  { 64, 524288, 4 }, { 1024, 1048576, 4 },
		      { 4096, 262144, 4 }, { 64, 1048576, 8 }, { 3, 4194304, 4 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		long long M = cases[c].M, N = cases[c].N;
		split_layout l = check_layout(M, N, 264, cap, 1, cases[c].vec);
		cr_assert_leq(l.slice_len / cases[c].vec, cap, "%lld x %lld: a slice overflows", M, N);
		cr_assert_leq(l.tail_slice_len / cases[c].vec, cap, "%lld x %lld: overflows", M, N);
		/* balanced: the groups' sizes differ by less than the slots */
		long long groups = (M + l.rows - 1) / l.rows;
		if (!l.tail_rows)
			cr_assert_lt(groups * l.rows - M, groups, "%lld x %lld: %u rows per group",
				     M, N, l.rows);
	}
	/* pinned cuts (fit 1, f32), -1 where a case does not pin the field:
	 * 8 x 1M needs 37 slices of 113 KB: 2 groups of 4 rows on 66 slices (a
	 * tail would take 7 rows on 37 and 1 on 264: longer); 64 x 1M: groups
	 * of 7 rows on 37 slices, then 1 row on all 264 CTAs (balanced: 10
	 * groups, the last with 1 row); 32 x 1M: 4 groups of 7, then 4 rows on
	 * 66; 64 x 1M on 132 one-per-SM CTAs (14496 chunks): 10 groups of 6 on
	 * 22 slices, then 4 rows on 33 (balanced: 11 groups of 6) */
	const struct {
		long long M, N;
		unsigned G;
		long long cap;
		long long rows, slices, main_rows, tail_rows, tail_slices, tail_slice_len;
	} cuts[] = {
		{ 8, 1048576, 264, cap, 4, 66, -1, 0, -1, -1 },
		{ 64, 1048576, 264, cap, 7, 37, 63, 1, 264, 3972 },
		{ 32, 1048576, 264, cap, -1, -1, 28, 4, 66, -1 },
		{ 64, 1048576, 132, 14496, 6, 22, -1, 4, 33, -1 },
	};
	for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
		split_layout l = check_layout(cuts[c].M, cuts[c].N, cuts[c].G, cuts[c].cap, 1, 4);
		const long long got[] = { l.rows,      l.slices,      l.main_rows,
					  l.tail_rows, l.tail_slices, l.tail_slice_len };
		const long long want[] = { cuts[c].rows,      cuts[c].slices,
					   cuts[c].main_rows, cuts[c].tail_rows,
					   cuts[c].tail_slices, cuts[c].tail_slice_len };
		static const char *const field[] = { "rows",	  "slices",	 "main_rows",
						     "tail_rows", "tail_slices", "tail_slice_len" };
		for (size_t f = 0; f < sizeof got / sizeof *got; f++)
			if (want[f] >= 0)
				cr_assert_eq(got[f], want[f], "%lld x %lld on %u CTAs: %s %lld, want %lld",
					     cuts[c].M, cuts[c].N, cuts[c].G, field[f], got[f], want[f]);
	}
	split_layout l;
	/* rows too long for the whole grid: every CTA on one row, overflowing */
	l = check_layout(2, 1LL << 32, 264, cap, 1, 4);
	cr_assert_eq(l.slices, 264);
	cr_assert_eq(l.rows, 1);
	/* a layout that already fits is left alone */
	split_layout a = check_layout(8, 262144, 132, cap, 1, 4);
	split_layout b = check_layout(8, 262144, 132, cap, 0, 4);
	cr_assert_eq(a.slices, b.slices);
	cr_assert_eq(a.rows, b.rows);
}

/* ---- NVRTC ------------------------------------------------------------------------ */

/* Whether an instruction of the PTX is an atomic or a reduction on floats
 * (the combination must be deterministic: no float atomics). */
static int has_float_atomic(const char *ptx)
{
	/* one pass over the text, line by line within its known end: string
	 * functions on the rest of 200 KB of PTX per line were quadratic under
	 * ASan's strict string checks (seconds a variant) */
	const char *end = ptx + strlen(ptx);
	for (const char *p = ptx; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		const char *w = p;
		while (w < eol && (*w == ' ' || *w == '\t'))
			w++;
		if (w < eol && *w == '@') { /* a predicate guard */
			while (w < eol && *w != ' ' && *w != '\t')
				w++;
			while (w < eol && (*w == ' ' || *w == '\t'))
				w++;
		}
		const char *we = w;
		while (we < eol && *we != ' ' && *we != '\t')
			we++;
		char op[64];
		size_t len = (size_t)(we - w) < sizeof op - 1 ? (size_t)(we - w) : sizeof op - 1;
		memcpy(op, w, len);
		op[len] = '\0';
		if ((strncmp(op, "atom.", 5) == 0 || strncmp(op, "red.", 4) == 0) && strstr(op, ".f"))
			return 1;
		p = eol + 1;
	}
	return 0;
}

/* The lag overlaps the next row's reduction with this row's write, which
 * only the one-buffer path does; and the default space offers it where a CTA
 * holds rows in turn. */
Test(split_template, reduce_lag_only_with_one_buffer)
{
	variant *vs;
	size_t n = enumerate_at(90, AT_F32, 64, 1048576, &vs);
	int lagged = 0;
	for (size_t i = 0; i < n; i++) {
		if (tf_value(&vs[i], "reduce_lag") == 0)
			continue;
		lagged++;
		cr_assert_eq(tf_value(&vs[i], "stages"), 1, "a lag with two buffers");
	}
	cr_assert_gt(lagged, 0, "no lagged variant at 64 x 1M");
	free(vs);
}

/* Held windows: one buffer only (reloaded as this row's are written), 4
 * registers each on top of the 80 the rest takes (ptxas spilled with less),
 * and only where the spread-out slices overflow shared memory. Staggered
 * starts only where a CTA takes rows in turn. */
Test(split_template, held_windows_and_stagger_only_where_they_can_help)
{
	static const struct {
		at_dtype dt;
		long long M, N;
		int held, stagger;
	} cases[] = {
		{ AT_F32, 64, 1048576, 1, 1 },	{ AT_BF16, 64, 1048576, 1, 1 },
		{ AT_BF16, 32, 1048576, 1, 1 }, { AT_F32, 8, 262144, 0, 0 },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		variant *vs;
		size_t n = enumerate_at(90, cases[c].dt, cases[c].M, cases[c].N, &vs);
		int held = 0, staggered = 0;
		for (size_t i = 0; i < n; i++) {
			const long long rw = tf_value(&vs[i], "reg_windows");
			const long long threads = tf_value(&vs[i], "threads");
			const long long per_sm = tf_value(&vs[i], "ctas_per_sm");
			staggered += tf_value(&vs[i], "stagger") == 1;
			if (rw == 0)
				continue;
			held++;
			cr_assert_eq(tf_value(&vs[i], "stages"), 1, "held windows with two buffers");
			cr_assert_leq(threads * per_sm * (84 + 4 * rw), 65536,
				      "%lld x %lld windows: too few registers", threads, rw);
		}
		cr_assert_eq(held > 0, cases[c].held, "%lld x %lld: held windows %s", cases[c].M,
			     cases[c].N, cases[c].held ? "missing" : "offered needlessly");
		cr_assert_eq(staggered > 0, cases[c].stagger, "%lld x %lld: stagger %s", cases[c].M,
			     cases[c].N, cases[c].stagger ? "missing" : "offered needlessly");
		free(vs);
	}
}

Test(split_template, the_float_atomic_detector_sees_them)
{
	cr_assert(has_float_atomic("\tmov.u32 %r1, 0;\n\tatom.global.add.f32 %f1, [%rd1], %f2;\n"));
	cr_assert(has_float_atomic("\t@%p1 red.relaxed.gpu.global.add.f32 [%rd1], %f2;\n"));
	cr_assert(!has_float_atomic("\tld.shared.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n"
				    "\tatom.add.acq_rel.gpu.global.u32 %r1, [%rd2], 1;\n"));
}

/* A share of the variants at one shape: threads per CTA and threads
 * resident per multiprocessor (threads x ctas_per_sm) in these ranges, and
 * one value of fit. */
typedef struct split_share {
	at_dtype dt;
	long long M, N;
	int threads_lo, threads_hi, resident_lo, resident_hi;
	int fit;
} split_share;

/* Every variant of share g compiles cleanly for sm_90 within its register
 * and shared memory budget, with the exchange's instructions and no float
 * atomics. */
static void compile_share(const split_share *g)
{
	variant *vs;
	size_t n = enumerate_at(90, g->dt, g->M, g->N, &vs);
	cr_assert_gt(n, 0, "no variant at %s %lld x %lld", at_dtype_name(g->dt), g->M, g->N);
	size_t compiled = 0;
	for (size_t i = 0; i < n; i++) {
		long long threads = tf_value(&vs[i], "threads");
		long long resident = threads * tf_value(&vs[i], "ctas_per_sm");
		if (threads < g->threads_lo || threads > g->threads_hi || resident < g->resident_lo ||
		    resident > g->resident_hi || tf_value(&vs[i], "fit") != g->fit)
			continue;
		/* a staggered start is a few instructions before the loop: one
		 * geometry of it suffices (time on two cores) */
		if (tf_value(&vs[i], "stagger") &&
		    (threads != 256 || tf_value(&vs[i], "ctas_per_sm") != 3))
			continue;
		char *params = variant_params_str(&vs[i]);
		char *src = tf_specialize(&vs[i]);
		compiled_kernel k;
		tf_compile_clean(&vs[i], src, 90, &k);
		long long per_thread = 65536 / resident;
		cr_assert_leq(k.registers, per_thread > 255 ? 255 : per_thread, "%s %s: %d registers",
			      at_dtype_name(g->dt), params, k.registers);
		cr_assert_leq(k.smem_bytes, STATIC_SMEM_ALLOWANCE, "%s %s: %d bytes static smem",
			      at_dtype_name(g->dt), params, k.smem_bytes);
		static const char *const wanted[] = {
			"cp.async.cg.shared.global",   /* the slice comes in by cp.async */
			"st.global.v4.b32",            /* and goes out by 16-byte stores */
			/* a one-way arrival, polled with acquire; partials from L2 */
			"red.release.gpu.global.add.u32", "ld.acquire.gpu.global",
			"ld.relaxed.gpu.global.v2.f32",
			"atom.add.acq_rel.gpu.global", /* the last to leave resets */
			"ex2.approx.ftz.f32",
		};
		tf_expect_in_ptx(&vs[i], &k, wanted, sizeof wanted / sizeof *wanted);
		/* a lag waits with that many copy groups still in flight */
		long long lag = tf_value(&vs[i], "reduce_lag");
		if (lag > 0) {
			char wait[64];
			snprintf(wait, sizeof wait, "cp.async.wait_group %lld;", lag);
			cr_assert_not_null(strstr(k.ptx, wait), "%s %s: no %s", at_dtype_name(g->dt),
					   params, wait);
		}
		cr_assert(!has_float_atomic(k.ptx), "%s %s: a float atomic", at_dtype_name(g->dt),
			  params);
		compiled_kernel_free(&k);
		compiled++;
		free(src);
		free(params);
	}
	cr_assert_gt(compiled, 0,
		     "no %s variant at %lld x %lld with %d-%d threads, %d-%d resident, fit %d",
		     at_dtype_name(g->dt), g->M, g->N, g->threads_lo, g->threads_hi,
		     g->resident_lo, g->resident_hi, g->fit);
	free(vs);
}

/* Every variant at f32 8 x 1M and bf16 64 x 512K, in shares of at most 13
 * compiles (about a minute and a half on two cores at a load of five), so
 * that each test keeps its time with margin when nothing is in the compile
 * memo: these five geometries at each shape, each with fit 0 and 1. */
#define SPLIT_SHARES (2 * 5 * 2)
ParameterizedTestParameters(split_template, every_variant_compiles_for_sm_90)
{
	static const struct {
		at_dtype dt;
		long long M, N;
	} shapes[] = { { AT_F32, 8, 1048576 }, { AT_BF16, 64, 524288 } };
	static const int geometry[5][4] = {
		{ 256, 256, 256, 256 },	  { 256, 256, 512, 512 },    { 256, 256, 768, 1024 },
		{ 512, 1024, 512, 512 }, { 512, 1024, 1024, 1024 },
	};
	static split_share shares[SPLIT_SHARES];
	size_t n = 0;
	for (size_t s = 0; s < 2; s++)
		for (size_t g = 0; g < 5; g++)
			for (int fit = 0; fit <= 1; fit++)
				shares[n++] = (split_share){ shapes[s].dt, shapes[s].M, shapes[s].N,
							     geometry[g][0], geometry[g][1],
							     geometry[g][2], geometry[g][3], fit };
	return cr_make_param_array(split_share, shares, n);
}

ParameterizedTest(split_share *g, split_template, every_variant_compiles_for_sm_90,
		  .timeout = 300)
{
	compile_share(g);
}

/* The shares above cover every variant. */
Test(split_template, the_compile_shares_cover_every_variant)
{
	static const struct {
		at_dtype dt;
		long long M, N;
	} shapes[] = { { AT_F32, 8, 1048576 }, { AT_BF16, 64, 524288 } };
	for (size_t c = 0; c < 2; c++) {
		variant *vs;
		size_t n = enumerate_at(90, shapes[c].dt, shapes[c].M, shapes[c].N, &vs);
		for (size_t i = 0; i < n; i++) {
			long long threads = tf_value(&vs[i], "threads");
			long long resident = threads * tf_value(&vs[i], "ctas_per_sm");
			int in = (threads == 256 && (resident == 256 || resident == 512 ||
						     (resident >= 768 && resident <= 1024))) ||
				 (threads >= 512 && threads <= 1024 &&
				  (resident == 512 || resident == 1024));
			cr_assert(in, "threads %lld x ctas_per_sm %lld is in no share", threads,
				  resident / threads);
			long long fit = tf_value(&vs[i], "fit");
			cr_assert(fit == 0 || fit == 1, "fit %lld is in no share", fit);
		}
		free(vs);
	}
}

Test(split_template, compiles_for_sm_75_without_cp_async)
{
	variant v;
	variant_defaults(&v, split, AT_F16);
	at_error err = { { 0 } };
	cr_assert_eq(variant_set(&v, "vec=8", &err), 0, "%s", err.msg);
	char *src = specialize(&v, &err);
	cr_assert_not_null(src, "%s", err.msg);
	compiled_kernel k;
	int rc = nvrtc_compile(src, "softmax_split.cu", 75, &k, &err);
	cr_assert_eq(rc, COMPILE_OK, "rc %d: %s\n%s", rc, err.msg, k.log ? k.log : "");
	cr_assert_null(strstr(k.ptx, "cp.async"));
	cr_assert_not_null(strstr(k.ptx, "red.release.gpu.global.add.u32"));
	cr_assert_eq(k.spill_bytes, 0);
	compiled_kernel_free(&k);
	free(src);
}

/* fit 2 (softmax_backward_split's) plans slices of twice the shared
 * memory: f32 32 x 2000001 on 396 CTAs of 2400 pairs of windows each
 * (y's and dy's: 4800 chunks) takes one row at a time at fit 1, whose
 * slices need 105 CTAs and get all 396, and three rows at fit 2. */
Test(split_template, fit_2_plans_slices_of_twice_the_shared_memory)
{
	cr_assert_eq(split_fit_cap(2400, 0), 2400);
	cr_assert_eq(split_fit_cap(2400, 1), 2400);
	cr_assert_eq(split_fit_cap(2400, 2), 4800);
	const long long N = 2000001 + 3; /* room for a peeled row's head */
	split_layout one = check_layout(32, N, 396, split_fit_cap(2400, 1), 1, 4);
	split_layout two = check_layout(32, N, 396, split_fit_cap(2400, 2), 2, 4);
	cr_assert_eq(one.rows, 1);
	cr_assert_eq(one.slices, 396);
	cr_assert_eq(two.rows, 3);
	cr_assert_eq(two.slices, 132);
	cr_assert_leq(two.slice_len, 2 * 2400 * 4, "within twice the shared memory");
	cr_assert_gt(two.slice_len, 2400 * 4, "past it: the rest read twice");
}

/* The backward ops in the dispatch library (no GPU): the op table's rows,
 * atd_softmax_backward's and atd_log_softmax_backward's argument checks,
 * their winners read from a database and served (exact, or derived within
 * the backward family, never from a forward op's winner nor the reverse),
 * and a built-in kernel per (op, dtype) from a template that computes it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "db/tuning_db.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/select.h"
#include "dispatch/policy/template_table.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "include/autotune/dispatch.h"

#include "tests/test_dispatch_fixture.h"

TestSuite(backward_dispatch, .init = tmp_setup, .fini = tmp_teardown);

#define H100 "NVIDIA H100 80GB HBM3"
#define BLOCK_1024 "threads=256 vec=4 elems_per_thread=4 persistent=0"

Test(backward_dispatch, the_op_table_names_each_ops_kernel_signature_and_flags_parameter)
{
	static const struct {
		int op;
		const char *name, *kernel;
		int ninputs, flags_param, family;
	} want[] = {
		{ ATDI_SOFTMAX, "softmax", "softmax_kernel", 1, 6, ATDI_SOFTMAX },
		{ ATDI_LOG_SOFTMAX, "log_softmax", "softmax_kernel", 1, 6, ATDI_SOFTMAX },
		{ ATDI_SOFTMAX_BACKWARD, "softmax_backward", "softmax_backward_kernel", 2, 8,
		  ATDI_SOFTMAX_BACKWARD },
		{ ATDI_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", "softmax_backward_kernel", 2, 8,
		  ATDI_SOFTMAX_BACKWARD },
		{ ATDI_CROSS_ENTROPY, "cross_entropy", "cross_entropy_kernel", 1, 14,
		  ATDI_CROSS_ENTROPY },
	};
	static const atdi_signature sigs[] = { ATDI_SIG_ROW, ATDI_SIG_ROW, ATDI_SIG_ROW_GRAD,
					       ATDI_SIG_ROW_GRAD, ATDI_SIG_CROSS_ENTROPY };
	cr_assert_eq(sizeof want / sizeof want[0], ATDI_NOPS);
	for (int i = 0; i < ATDI_NOPS; i++) {
		const atdi_op_desc *d = atdi_op_desc_of(want[i].op);
		cr_assert_not_null(d);
		cr_assert_str_eq(d->name, want[i].name);
		cr_assert_str_eq(atdi_op_name(want[i].op), want[i].name);
		cr_assert_eq(atdi_op_find(want[i].name), want[i].op);
		cr_assert_str_eq(d->kernel, want[i].kernel);
		cr_assert_eq(d->ninputs, want[i].ninputs);
		cr_assert_eq(d->flags_param, want[i].flags_param);
		cr_assert_eq(d->family, want[i].family);
		cr_assert_eq(d->signature, sigs[i]);
		cr_assert_eq(!d->aux[0], want[i].op != ATDI_CROSS_ENTROPY);
	}
	const atdi_op_desc *ce = atdi_op_desc_of(ATDI_CROSS_ENTROPY);
	cr_assert_str_eq(ce->aux[0], "cross_entropy_prepare_kernel");
	cr_assert_str_eq(ce->aux[1], "cross_entropy_reduce_kernel");
	cr_assert_null(ce->of_zeros, "cross_entropy is not tuned online");
	cr_assert_null(atdi_op_desc_of(ATDI_NOPS));
	cr_assert_null(atdi_op_desc_of(-1));
	cr_assert_eq(atdi_op_find("cross_entropy_backward"), -1);
	cr_assert_eq((int)ATD_OP_CROSS_ENTROPY, ATDI_CROSS_ENTROPY);
	cr_assert_str_eq(atdi_op_dtype_name(ATDI_SOFTMAX, AT_BF16), "bf16");
	cr_assert_str_eq(atdi_op_dtype_name(ATDI_SOFTMAX_BACKWARD, AT_F16), "softmax_backward f16");
	cr_assert_str_eq(atdi_op_dtype_name(ATDI_LOG_SOFTMAX_BACKWARD, AT_F32),
			 "log_softmax_backward f32");
	/* what a row of zeros gives: online tuning's check */
	cr_assert_float_eq(atdi_op_desc_of(ATDI_SOFTMAX)->of_zeros(8), 0.125, 1e-15);
	cr_assert_float_eq(atdi_op_desc_of(ATDI_LOG_SOFTMAX)->of_zeros(8), -log(8.0), 1e-15);
	cr_assert_eq(atdi_op_desc_of(ATDI_SOFTMAX_BACKWARD)->of_zeros(8), 0.0);
	cr_assert_eq(atdi_op_desc_of(ATDI_LOG_SOFTMAX_BACKWARD)->of_zeros(8), 0.0);
}

Test(backward_dispatch, code_is_shared_within_a_family_never_between_forward_and_backward)
{
	cr_assert(atdi_ops_share_code(ATDI_SOFTMAX, ATDI_LOG_SOFTMAX));
	cr_assert(atdi_ops_share_code(ATDI_SOFTMAX_BACKWARD, ATDI_LOG_SOFTMAX_BACKWARD));
	for (int f = ATDI_SOFTMAX; f <= ATDI_LOG_SOFTMAX; f++)
		for (int b = ATDI_SOFTMAX_BACKWARD; b <= ATDI_LOG_SOFTMAX_BACKWARD; b++) {
			cr_assert_not(atdi_ops_share_code(f, b));
			cr_assert_not(atdi_ops_share_code(b, f));
		}
	cr_assert_not(atdi_ops_share_code(ATDI_SOFTMAX, ATDI_NOPS));
	for (int op = 0; op < ATDI_CROSS_ENTROPY; op++)
		cr_assert_not(atdi_ops_share_code(op, ATDI_CROSS_ENTROPY));
}

Test(backward_dispatch, another_familys_winner_never_ranks_even_for_derivation)
{
	atdi_gpu_row gpu = { 1, H100, 9, 0, 132, 0, 0 };
	atd_gpu sxm = { H100, 9, 0, 132, 0 };
	atdi_entry es[2] = {
		{ .result_id = 1, .op = ATDI_SOFTMAX, .dtype = AT_F32, .M = 4096, .N = 1024,
		  .time_us = 10, .template_name = "softmax_block", .params = "" },
		{ .result_id = 2, .op = ATDI_SOFTMAX_BACKWARD, .dtype = AT_F32, .M = 4096,
		  .N = 8192, .time_us = 20, .template_name = "softmax_backward_block",
		  .params = "" },
	};
	atdi_table t = { .gpus = &gpu, .ngpus = 1, .entries = es, .nentries = 2 };
	atdi_ranked top[2];
	for (int op = 0; op < ATDI_CROSS_ENTROPY; op++) {
		int n = atdi_rank(&t, &sxm, op, AT_F32, 4096, 1024, &atdi_weights_derive, top, 2);
		cr_assert_eq(n, 1, "op %s ranks %d winners", atdi_op_name(op), n);
		cr_assert_eq(top[0].e->result_id, op < ATDI_SOFTMAX_BACKWARD ? 1 : 2);
		cr_assert_eq(top[0].other_op, op != ATDI_SOFTMAX && op != ATDI_SOFTMAX_BACKWARD);
	}
}

/* Whether a template of the library's computes op. */
static int some_template_computes(int op)
{
	for (int i = 0; i < tr_ntemplates; i++)
		if (tr_serves(&tr_templates[i], atdi_op_name(op)))
			return 1;
	return 0;
}

/* Every op that a template computes: cross_entropy's templates come from
 * another branch, and with them this asks for its built-in kernels
 * (builtin_params.h, the Makefile's BUILTIN_OPS). */
Test(backward_dispatch, every_op_and_dtype_has_a_builtin_kernel_whose_template_computes_it)
{
	cr_assert(some_template_computes(ATDI_SOFTMAX_BACKWARD));
	for (int op = 0; op < ATDI_NOPS; op++)
		for (int dt = 0; dt < AT_DTYPE_COUNT && some_template_computes(op); dt++) {
			const builtin_kernel *b = builtin_kernel_for(op, (at_dtype)dt);
			cr_assert_not_null(b);
			cr_assert_not_null(b->fatbin);
			cr_assert_gt(builtin_kernel_size(op, (at_dtype)dt), 0);
			const tr_template *t = tr_find(tr_templates, tr_ntemplates, b->template_name);
			cr_assert_not_null(t, "%s", b->template_name);
			cr_assert(tr_serves(t, atdi_op_name(op)), "%s does not compute %s",
				  b->template_name, atdi_op_name(op));
			cr_assert(t->dtype_mask & (1u << dt));
			cr_assert_str_eq(t->launch[TR_MAX_N], "0", "%s must serve any N",
					 b->template_name);
		}
	cr_assert_null(builtin_kernel_for(ATDI_NOPS, AT_F32));
}

typedef atd_status (*backward_fn)(atd_handle *, atd_dtype, void *, const void *, const void *,
				  int64_t, int64_t, int64_t, int64_t, int64_t, unsigned, void *);

static void check_rejects(backward_fn call)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	char dev[3][16]; /* never dereferenced: every call fails first */
	void *dx = dev[0];
	const void *y = dev[1], *dy = dev[2];
	const struct {
		atd_handle *h;
		int dt;
		void *dx;
		const void *y, *dy;
		int64_t M, N, lddx, ldy, lddy;
		unsigned flags;
		const char *says;
	} bad[] = {
		{ NULL, ATD_F32, dx, y, dy, 4, 8, 8, 8, 8, 0, NULL },
		{ h, ATD_F32, NULL, y, dy, 4, 8, 8, 8, 8, 0, "dx is NULL" },
		{ h, ATD_F32, dx, NULL, dy, 4, 8, 8, 8, 8, 0, "y is NULL" },
		{ h, ATD_F32, dx, y, NULL, 4, 8, 8, 8, 8, 0, "dy is NULL" },
		{ h, ATD_F32, dx, y, dy, 0, 8, 8, 8, 8, 0, "M = 0" },
		{ h, ATD_F32, dx, y, dy, 4, -1, 8, 8, 8, 0, "N = -1" },
		{ h, ATD_F32, dx, y, dy, 4, 8, 7, 8, 8, 0, "lddx = 7" },
		{ h, ATD_F32, dx, y, dy, 4, 8, 8, 7, 8, 0, "ldy = 7" },
		{ h, ATD_F32, dx, y, dy, 4, 8, 8, 8, 7, 0, "lddy = 7" },
		{ h, 3, dx, y, dy, 4, 8, 8, 8, 8, 0, "dtype 3" },
		{ h, ATD_F32, dx, y, dy, 4, 8, 8, 8, 8, 2, "unknown flags 0x2" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		atd_status s = call(bad[i].h, (atd_dtype)bad[i].dt, bad[i].dx, bad[i].y, bad[i].dy,
				    bad[i].M, bad[i].N, bad[i].lddx, bad[i].ldy, bad[i].lddy,
				    bad[i].flags, NULL);
		cr_assert_eq(s, ATD_ERR_INVALID_ARGUMENT, "case %zu: %s", i, atd_status_string(s));
		if (bad[i].says)
			cr_assert(strstr(atd_errmsg(h), bad[i].says) != NULL, "case %zu: %s", i,
				  atd_errmsg(h));
	}
	/* ATD_MASKED_ZERO (the forward's flags passed on) is accepted: past
	 * the checks, a machine without a GPU stops at the driver */
	atd_status s = call(h, ATD_F32, dx, y, dy, 4, 8, 8, 8, 8, ATD_MASKED_ZERO, NULL);
	cr_assert_neq(s, ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	atd_close(h);
}

Test(backward_dispatch, softmax_backward_rejects_each_bad_argument_naming_it)
{
	check_rejects(atd_softmax_backward);
}

Test(backward_dispatch, log_softmax_backward_rejects_each_bad_argument_naming_it)
{
	check_rejects(atd_log_softmax_backward);
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	char dev[16];
	cr_assert_eq(atd_log_softmax_backward(h, ATD_F32, dev, dev, dev, 1, 0, 1, 1, 1, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(atd_errmsg(h), "atd_log_softmax_backward:") == atd_errmsg(h), "%s",
		  atd_errmsg(h));
	atd_close(h);
}

/* A database with a softmax_backward winner (softmax_backward_block at
 * 4096 x 1024) and a softmax winner at another shape. */
static const char *backward_db(void)
{
	tdb *db = td_db_new("bwd.db");
	long long gpu = td_gpu(db, H100, 9, 0, 132, 85520809984LL);
	long long sweep = td_sweep(db, gpu);
	td_shape(db, sweep, gpu, "softmax_backward", AT_F32, 4096, 1024, "softmax_backward_block",
		 BLOCK_1024, 30.0, 1024);
	td_shape(db, sweep, gpu, "softmax", AT_F32, 4096, 2048, "softmax_block",
		 "threads=256 vec=4 elems_per_thread=8 stages=1 persistent=0 cache_hint=0 "
		 "packed=0 peel=0",
		 12.5, 2048);
	tdb_close(db);
	return tmp_path("bwd.db");
}

static atd_choice query(atd_handle *h, atd_op op, long long M, long long N)
{
	atd_gpu gpu = { H100, 9, 0, 0, 0 };
	atd_choice c;
	cr_assert_eq(atd_query_op_gpu(h, op, &gpu, ATD_F32, M, N, &c), ATD_OK, "%s",
		     atd_errmsg(h));
	return c;
}

Test(backward_dispatch, a_backward_winner_is_read_from_the_database_and_served_at_its_shape)
{
	atd_handle *h;
	cr_assert_eq(atd_open(backward_db(), ATD_OPEN_NO_JIT, &h), ATD_OK, "%s", atd_errmsg(NULL));
	atd_choice c = query(h, ATD_OP_SOFTMAX_BACKWARD, 4096, 1024);
	cr_assert_eq(c.level, ATD_LEVEL_EXACT, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_block");
	cr_assert_str_eq(c.params, BLOCK_1024);
	cr_assert_eq(c.tuned_M, 4096);
	cr_assert_float_eq(c.tuned_us, 30.0, 1e-9);
	/* nearest as stored, within its max_n */
	c = query(h, ATD_OP_SOFTMAX_BACKWARD, 2048, 1000);
	cr_assert_eq(c.level, ATD_LEVEL_NEAREST, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_block");
	/* past its max_n: never stored code that cannot hold the row */
	c = query(h, ATD_OP_SOFTMAX_BACKWARD, 4096, 4096);
	cr_assert_eq(c.level, ATD_LEVEL_BUILTIN, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_loop");
	/* log_softmax_backward has no winner of its own and never runs
	 * softmax_backward's code as stored; without compiling: built-in */
	c = query(h, ATD_OP_LOG_SOFTMAX_BACKWARD, 4096, 1024);
	cr_assert_eq(c.level, ATD_LEVEL_BUILTIN, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_loop");
	/* the forward ops are never served by a backward winner, nor the reverse */
	c = query(h, ATD_OP_SOFTMAX, 4096, 1024);
	cr_assert_str_eq(c.template_name, "softmax_block", "softmax's own winner, nearest");
	c = query(h, ATD_OP_SOFTMAX_BACKWARD, 4096, 2048);
	cr_assert_neq(strcmp(c.template_name, "softmax_block"), 0);
	atd_close(h);
}

Test(backward_dispatch, derivation_stays_within_the_backward_family)
{
	atd_handle *h;
	/* deriving needs the templates' rules only (a dry run compiles nothing) */
	cr_assert_eq(atd_open(backward_db(), 0, &h), ATD_OK, "%s", atd_errmsg(NULL));
	atd_choice c = query(h, ATD_OP_LOG_SOFTMAX_BACKWARD, 4096, 1024);
	if (c.level == ATD_LEVEL_BUILTIN)
		cr_skip_test("no NVRTC on this machine: nothing is derived");
	cr_assert_eq(c.level, ATD_LEVEL_DERIVED, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_block");
	/* every param named, the one the stored text predates (peel) at its default */
	cr_assert_str_eq(c.params, BLOCK_1024 " peel=0",
			 "at the winner's very shape, its params as they won");
	cr_assert_str_eq(c.from_params, BLOCK_1024);
	/* re-derived for a longer row: the hold grows to fit it */
	c = query(h, ATD_OP_SOFTMAX_BACKWARD, 4096, 4096);
	cr_assert_eq(c.level, ATD_LEVEL_DERIVED, "%s", atd_level_name(c.level));
	cr_assert_str_eq(c.template_name, "softmax_backward_block");
	/* softmax at the backward winner's shape: its own family's winner */
	c = query(h, ATD_OP_SOFTMAX, 4096, 1024);
	cr_assert_neq(strncmp(c.template_name, "softmax_backward", 16), 0, "%s", c.template_name);
	atd_close(h);
}

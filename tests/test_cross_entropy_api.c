/* atd_cross_entropy's contract without a GPU (docs/cross-entropy.md): the
 * workspace's size, each bad argument refused with a message naming it
 * before the driver is touched, the defaults, the op in the library's
 * table and queries, and whose scale kernel a call launches. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/resolve.h"
#include "include/autotune/dispatch.h"

#include "tests/tmp_folder.h"

TestSuite(cross_entropy_api, .init = tmp_setup, .fini = tmp_teardown);

Test(cross_entropy_api, the_workspace_is_32_bytes_and_a_float_a_row)
{
	cr_assert_eq(atd_cross_entropy_workspace_size(1), 36);
	cr_assert_eq(atd_cross_entropy_workspace_size(4096), 32 + 4 * 4096);
	cr_assert_eq(atd_cross_entropy_workspace_size(0), 32);
	cr_assert_eq(atd_cross_entropy_workspace_size(-5), 32);
}

Test(cross_entropy_api, the_defaults_are_torchs)
{
	atd_cross_entropy_opts o = ATD_CROSS_ENTROPY_DEFAULTS;
	cr_assert_eq(o.ignore_index, -100);
	cr_assert_eq(o.label_smoothing, 0.0f);
	cr_assert_eq(o.z_loss, 0.0f);
	cr_assert_eq(o.softcap, 0.0f);
	cr_assert_eq(o.reduction, ATD_REDUCTION_MEAN);
	cr_assert_eq(o.target_type, ATD_INDEX_I64);
	cr_assert_eq(o.upstream, 1.0f);
	cr_assert_eq(o.flags, 0u);
	cr_assert_eq(atdi_op_find("cross_entropy"), ATD_OP_CROSS_ENTROPY);
	cr_assert_str_eq(atd_status_string(ATD_ERR_TARGET),
			 "a target is outside [0, V) and not ignore_index");
}

/* One call's arguments, the valid ones by default. */
typedef struct ce_call {
	atd_handle *h;
	int dtype;
	const void *logits;
	int64_t ldlogits;
	const void *target;
	int64_t M, V;
	atd_cross_entropy_opts opts;
	int no_opts;
	float *loss, *lse;
	void *dlogits;
	int64_t lddlogits;
	void *workspace;
} ce_call;

static _Alignas(16) char dev[6][64]; /* never dereferenced: every call stops before the GPU */

static ce_call valid(atd_handle *h)
{
	ce_call c = { h, ATD_F32, dev[0], 8, dev[1], 4, 8, ATD_CROSS_ENTROPY_DEFAULTS, 0,
		      (float *)dev[2], (float *)dev[3], dev[4], 8, dev[5] };
	return c;
}

static atd_status run(const ce_call *c)
{
	return atd_cross_entropy(c->h, (atd_dtype)c->dtype, c->logits, c->ldlogits, c->target, c->M,
				 c->V, c->no_opts ? NULL : &c->opts, c->loss, c->lse, c->dlogits,
				 c->lddlogits, c->workspace, NULL);
}

static void expect_refused(atd_handle *h, const ce_call *c, const char *says)
{
	atd_status s = run(c);
	cr_assert_eq(s, ATD_ERR_INVALID_ARGUMENT, "%s: %s", says, atd_status_string(s));
	cr_assert(strstr(atd_errmsg(h), says) != NULL, "wanted \"%s\" in: %s", says, atd_errmsg(h));
	cr_assert(strncmp(atd_errmsg(h), "atd_cross_entropy: ", 19) == 0, "%s", atd_errmsg(h));
}

Test(cross_entropy_api, each_bad_argument_is_refused_naming_it)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	ce_call c = valid(NULL);
	cr_assert_eq(run(&c), ATD_ERR_INVALID_ARGUMENT, "a NULL handle");
	static const char *const says[] = {
		"unknown dtype 3", "logits is NULL", "target is NULL", "loss is NULL",
		"workspace is NULL", "M = 0", "V = 0", "M = -3", "ldlogits = 7", "lddlogits = 7",
		"8-byte aligned", "unknown reduction 3", "unknown reduction -1",
		"unknown target type 2", "label_smoothing must be in [0, 1] (it is -0.25)",
		"label_smoothing must be in [0, 1] (it is 1.5)", "label_smoothing must be in [0, 1]",
		"z_loss must be finite and at least 0", "z_loss must be finite and at least 0",
		"softcap must be 0 (none) or finite and positive",
		"softcap must be 0 (none) or finite and positive", "unknown flags 0x2",
	};
	for (int i = 0; i < (int)(sizeof says / sizeof says[0]); i++) {
		c = valid(h);
		switch (i) { /* case i breaks the argument says[i] names */
		case 0: c.dtype = 3; break;
		case 1: c.logits = NULL; break;
		case 2: c.target = NULL; break;
		case 3: c.loss = NULL; break;
		case 4: c.workspace = NULL; break;
		case 5: c.M = 0; break;
		case 6: c.V = 0; break;
		case 7: c.M = -3; break;
		case 8: c.ldlogits = 7; break;
		case 9: c.lddlogits = 7; break;
		case 10: c.workspace = dev[5] + 4; break;
		case 11: c.opts.reduction = (atd_reduction)3; break;
		case 12: c.opts.reduction = (atd_reduction)-1; break;
		case 13: c.opts.target_type = (atd_index_type)2; break;
		case 14: c.opts.label_smoothing = -0.25f; break;
		case 15: c.opts.label_smoothing = 1.5f; break;
		case 16: c.opts.label_smoothing = NAN; break;
		case 17: c.opts.z_loss = -1e-4f; break;
		case 18: c.opts.z_loss = INFINITY; break;
		case 19: c.opts.softcap = -30.0f; break;
		case 20: c.opts.softcap = NAN; break;
		case 21: c.opts.flags = 2; break;
		}
		expect_refused(h, &c, says[i]);
	}
	atd_close(h);
}

Test(cross_entropy_api, valid_calls_pass_the_checks_and_stop_at_the_driver)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	ce_call c = valid(h);
	cr_assert_neq(run(&c), ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	c.no_opts = 1; /* the defaults */
	cr_assert_neq(run(&c), ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	/* the forward alone: no gradient, its stride not looked at; no lse */
	c = valid(h);
	c.dlogits = NULL;
	c.lddlogits = 0;
	c.lse = NULL;
	cr_assert_neq(run(&c), ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	/* the edges of the options' ranges, every reduction and target type */
	c = valid(h);
	c.opts.label_smoothing = 1.0f;
	c.opts.softcap = 30.0f;
	c.opts.z_loss = 1e-4f;
	c.opts.flags = ATD_TRUST_TARGETS;
	c.opts.target_type = ATD_INDEX_I32;
	for (int r = ATD_REDUCTION_NONE; r <= ATD_REDUCTION_MEAN; r++) {
		c.opts.reduction = (atd_reduction)r;
		cr_assert_neq(run(&c), ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	}
	atd_close(h);
}

Test(cross_entropy_api, the_backward_scale_refuses_bad_arguments_naming_them)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK, &h), ATD_OK);
	void *dx = dev[0];
	const float *g = (const float *)dev[1];
	cr_assert_eq(atd_cross_entropy_scale(NULL, ATD_BF16, dx, 8, 4, 8, g, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert_eq(atd_cross_entropy_scale(h, ATD_BF16, dx, 8, 4, 8, NULL, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(atd_errmsg(h), "g is NULL"), "%s", atd_errmsg(h));
	cr_assert_eq(atd_cross_entropy_scale(h, ATD_BF16, NULL, 8, 4, 8, g, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT);
	cr_assert(strstr(atd_errmsg(h), "dlogits is NULL"), "%s", atd_errmsg(h));
	cr_assert_eq(atd_cross_entropy_scale(h, ATD_BF16, dx, 7, 4, 8, g, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT, "a stride below V");
	cr_assert_eq(atd_cross_entropy_scale(h, ATD_BF16, dx, 8, 0, 8, g, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT, "no rows");
	cr_assert_eq(atd_cross_entropy_scale(h, ATD_BF16, dx, 8, 4, 8, g, 2, NULL),
		     ATD_ERR_INVALID_ARGUMENT, "per_row is 0 or 1");
	cr_assert(strstr(atd_errmsg(h), "per_row 0 or 1 (got 2)"), "%s", atd_errmsg(h));
	cr_assert_eq(atd_cross_entropy_scale(h, (atd_dtype)7, dx, 8, 4, 8, g, 0, NULL),
		     ATD_ERR_INVALID_ARGUMENT, "an unknown dtype");
	/* valid: past the checks, to the driver (none here) */
	cr_assert_neq(atd_cross_entropy_scale(h, ATD_BF16, dx, 8, 4, 8, g, 1, NULL),
		      ATD_ERR_INVALID_ARGUMENT, "%s", atd_errmsg(h));
	atd_close(h);
}

Test(cross_entropy_api, a_query_names_no_kernel_of_another_op)
{
	atd_handle *h;
	cr_assert_eq(atd_open(tmp_path("absent.db"), ATD_OPEN_FALLBACK | ATD_OPEN_NO_JIT, &h),
		     ATD_OK);
	atd_gpu gpu = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 0 };
	atd_choice c;
	atd_status s = atd_query_op_gpu(h, ATD_OP_CROSS_ENTROPY, &gpu, ATD_BF16, 8192, 128256, &c);
	if (s == ATD_OK) /* a built-in cross_entropy kernel (its templates' branch) */
		cr_assert(strncmp(c.template_name, "cross_entropy", 13) == 0, "%s", c.template_name);
	else
		cr_assert_eq(s, ATD_ERR_NO_KERNEL, "%s", atd_errmsg(h));
	atd_close(h);
}

/* Which kernels wait, by the markers the code defines: the row kernel and
 * reduce by cross_entropy_dependent_launch, the scale by its own, the
 * polled reduce by the row kernels' losses marker; none before sm_90. */
Test(cross_entropy_api, the_markers_say_which_kernels_wait)
{
	struct CUfunc_st *const k = (struct CUfunc_st *)0x100;
	struct CUfunc_st *aux[ATDI_OP_MAX_AUX] = { k, k, k, k, NULL, NULL };
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 90), 0u, "no marker");
	aux[ATDI_CE_DEPENDENT] = k;
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 90),
		     ATDI_MAIN_WAITS | 1u << ATDI_CE_REDUCE);
	aux[ATDI_CE_SCALE_WAITS] = k;
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 90),
		     ATDI_MAIN_WAITS | 1u << ATDI_CE_REDUCE | 1u << ATDI_CE_SCALE);
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 80), 0u, "sm_90's");
	aux[ATDI_CE_DEPENDENT] = NULL;
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 100), 1u << ATDI_CE_SCALE);
	aux[ATDI_CE_LOSSES_POLLED] = k;
	cr_assert_eq(atdi_waiting_kernels(ATDI_CROSS_ENTROPY, aux, 90),
		     1u << ATDI_CE_SCALE | 1u << ATDI_CE_REDUCE_POLLED);
	cr_assert_eq(atdi_waiting_kernels(ATDI_SOFTMAX, aux, 90), 0u);
}

/* The polled reduce only where the row kernel's code stores its losses for
 * it (its marker) and the reduce is there (the built-in's, or the
 * variant's own); else the reduce that waits for the row kernel's end. */
Test(cross_entropy_api, the_polled_reduce_takes_the_row_kernels_that_store_for_it)
{
	struct CUfunc_st *const k = (struct CUfunc_st *)0x100;
	atdi_resolved r;
	memset(&r, 0, sizeof r);
	r.aux[ATDI_CE_REDUCE] = k;
	cr_assert_eq(atdi_ce_reduce_of(&r), ATDI_CE_REDUCE, "older code: neither");
	r.aux[ATDI_CE_REDUCE_POLLED] = k;
	cr_assert_eq(atdi_ce_reduce_of(&r), ATDI_CE_REDUCE,
		     "a row kernel of older code would let it start before prepare");
	r.aux[ATDI_CE_LOSSES_POLLED] = k;
	cr_assert_eq(atdi_ce_reduce_of(&r), ATDI_CE_REDUCE_POLLED);
	r.aux[ATDI_CE_REDUCE_POLLED] = NULL;
	cr_assert_eq(atdi_ce_reduce_of(&r), ATDI_CE_REDUCE, "no polled reduce to launch");
}

/* prepare, reduce and the scale are taken from the built-in module (the
 * library's own code, whatever the variant's age), launched dependent
 * where its markers say they wait; the variant's row kernels stay, and
 * whether they wait. */
Test(cross_entropy_api, the_shared_kernels_are_the_built_in_modules)
{
	struct CUfunc_st *const variant = (struct CUfunc_st *)0x100;
	struct CUfunc_st *const builtin = (struct CUfunc_st *)0x200;
	struct CUfunc_st *shared[ATDI_OP_MAX_AUX];
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		shared[i] = builtin;
	atdi_resolved r;
	memset(&r, 0, sizeof r);
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		r.aux[i] = variant;
	r.dependent_launch = 1;
	r.aux_dependent = 1u << ATDI_CE_REDUCE; /* the variant's reduce waits */
	atdi_share_builtin_aux(ATDI_CROSS_ENTROPY, shared, 90, &r);
	for (int i = ATDI_CE_PREPARE; i <= ATDI_CE_SCALE; i++)
		cr_assert_eq(r.aux[i], builtin, "aux %d", i);
	cr_assert_eq(r.aux[ATDI_CE_PLAIN], variant, "the row kernels stay the variant's");
	cr_assert_eq(r.aux[ATDI_CE_REDUCE_POLLED], builtin);
	cr_assert_eq(r.aux[ATDI_CE_LOSSES_POLLED], variant, "the row kernels' marker stays");
	cr_assert_eq(r.dependent_launch, 1);
	cr_assert_eq(r.aux_dependent,
		     1u << ATDI_CE_REDUCE | 1u << ATDI_CE_SCALE | 1u << ATDI_CE_REDUCE_POLLED);

	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		r.aux[i] = variant;
	r.aux_dependent = 1u << ATDI_CE_REDUCE;
	atdi_share_builtin_aux(ATDI_CROSS_ENTROPY, shared, 80, &r);
	cr_assert_eq(r.aux[ATDI_CE_SCALE], builtin);
	cr_assert_eq(r.aux_dependent, 0u, "griddepcontrol is sm_90's");

	for (int i = 0; i < ATDI_OP_MAX_AUX; i++)
		r.aux[i] = variant;
	r.aux_dependent = 1u << ATDI_CE_REDUCE;
	atdi_share_builtin_aux(ATDI_CROSS_ENTROPY, NULL, 90, &r);
	cr_assert_eq(r.aux[ATDI_CE_SCALE], variant, "no built-in module: the variant's own");
	cr_assert_eq(r.aux_dependent, 1u << ATDI_CE_REDUCE, "launched as the variant's code says");

	atdi_share_builtin_aux(ATDI_SOFTMAX, shared, 90, &r);
	cr_assert_eq(r.aux[0], variant, "softmax shares nothing");
}

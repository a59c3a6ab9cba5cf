/* An op with its own launch plugged into the sweep by its description alone
 * (tuner/ops/op_gpu.h, tuner/sweep/op_shape.c), without a GPU: an op
 * registered here with hooks that only log their calls is found by name,
 * and the sweep's steps of a shape (make, prepare, launch, poison, compare,
 * probe, free) reach its hooks with what they were given, their answers
 * coming back; a row op's steps touch no hook and no driver (none is
 * loaded: a call would crash); and no file of the sweep names an op that
 * has hooks. Runs from the repository root. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tmp_folder.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/op_shape.h"

/* ---- a test op whose hooks log their calls --------------------------------- */

static char calls[256];     /* "make prepare launch ...", in order */
static int state_token;     /* the state its make gives: its address */
static const char host_x_token[1]; /* the check input and reference the */
static const double ref_token[1];  /* sweep hands make: their addresses */
static int fail_make;       /* non-zero: make fails after setting *state */
static op_variant launched; /* what launch was given */

static void logged(const char *what)
{
	snprintf(calls + strlen(calls), sizeof calls - strlen(calls), "%s%s", calls[0] ? " " : "",
		 what);
}

static int make(void **state, const at_op *op, at_dtype dt, long long M, long long N,
		const void *host_x, CUdeviceptr x, const double *ref, at_error *err)
{
	logged("make");
	cr_assert_str_eq(op->name, "hooked_rows");
	cr_assert_eq(dt, AT_BF16);
	cr_assert_eq(M, 3);
	cr_assert_eq(N, 5);
	cr_assert_eq(host_x, (const void *)host_x_token);
	cr_assert_eq(x, (CUdeviceptr)0x1000);
	cr_assert_eq(ref, ref_token);
	*state = &state_token;
	return fail_make ? at_error_set(err, "no room for the side input") : 0;
}

static void free_state(void *state)
{
	cr_assert_eq(state, &state_token);
	logged("free");
}

static int prepare(void *state, CUmodule module, CUstream stream, at_error *err)
{
	cr_assert_eq(state, &state_token);
	cr_assert_eq(module, (CUmodule)&calls);
	logged("prepare");
	return 0;
}

static int launch(void *state, const op_variant *v, CUstream stream, at_error *err)
{
	cr_assert_eq(state, &state_token);
	launched = *v;
	logged("launch");
	return 0;
}

static int poison(void *state, CUstream stream, at_error *err)
{
	cr_assert_eq(state, &state_token);
	logged("poison");
	return 0;
}

static int compare(void *state, CUstream stream, double tol, int *ok, char *reason, size_t cap,
		   at_error *err)
{
	cr_assert_eq(state, &state_token);
	cr_assert_eq(tol, 1e-2);
	logged("compare");
	*ok = 0;
	snprintf(reason, cap, "the rows' sums: off");
	return 0;
}

static int probe(void *state, const op_variant *v, CUstream stream, double tol, int *ok,
		 char *reason, size_t cap, at_error *err)
{
	cr_assert_eq(state, &state_token);
	cr_assert_eq(v->grid, launched.grid);
	logged("probe");
	return at_error_set(err, "the probe's launch failed");
}

static const op_gpu hooked_gpu = {
	.make = make,
	.free_state = free_state,
	.prepare = prepare,
	.launch = launch,
	.poison = poison,
	.compare = compare,
	.probe = probe,
};

static const at_op hooked_op = {
	.name = "hooked_rows",
	.summary = "a row sum a row besides y = x: its own launch, for this test",
	.kernel_name = "hooked_rows_kernel",
	.reads_per_elem = 1,
	.writes_per_elem = 1,
	.tolerance = { [AT_F32] = 1e-5, [AT_F16] = 1e-2, [AT_BF16] = 1e-2 },
	.gpu = &hooked_gpu,
};

/* only a launch of its own: the other steps are a row op's, no state */
static int launch_stateless(void *state, const op_variant *v, CUstream stream, at_error *err)
{
	cr_assert_null(state);
	launched = *v;
	logged("launch");
	return 0;
}

static const op_gpu launch_only_gpu = { .launch = launch_stateless };
static const at_op launch_only_op = {
	.name = "launch_only_rows",
	.kernel_name = "launch_only_kernel",
	.gpu = &launch_only_gpu,
};

static void setup(void)
{
	calls[0] = 0;
	fail_make = 0;
	memset(&launched, 0, sizeof launched);
	/* once a process (criterion may run several tests in one) */
	if (!op_find("hooked_rows"))
		cr_assert_eq(op_register(&hooked_op), 0);
	if (!op_find("launch_only_rows"))
		cr_assert_eq(op_register(&launch_only_op), 0);
}

TestSuite(op_shape, .init = setup);

/* The shape of the hooked op, as tune_shape.c's make_data makes it. */
static int make_hooked(op_shape *o, at_error *err)
{
	return op_shape_make(o, op_find("hooked_rows"), AT_BF16, 3, 5, host_x_token, 0x1000,
			     ref_token, err);
}

Test(op_shape, the_sweep_reaches_a_registered_ops_hooks_through_its_name)
{
	op_shape o;
	at_error err = { { 0 } };
	cr_assert_eq(make_hooked(&o, &err), 0, "%s", err.msg);
	cr_assert_eq(o.gpu, &hooked_gpu);
	cr_assert_eq(o.state, &state_token);
	cr_assert_eq(op_shape_prepare(&o, (CUmodule)&calls, 0, &err), 0);
	static const launch_geometry g = { .threads = 128 };
	const op_variant v = { .fn = (CUfunction)&g, .geom = &g, .grid = 7, .y = 0x2000,
			       .x = 0x1000, .M = 3, .N = 5 };
	cr_assert_eq(op_shape_poison(&o, 0, &err), 0);
	cr_assert_eq(op_shape_launch(&o, &v, 0, &err), 0);
	/* the variant as the sweep gave it */
	cr_assert(launched.fn == v.fn && launched.geom == &g && launched.grid == 7 &&
		  launched.y == v.y && launched.x == v.x && launched.x2 == 0 && launched.M == 3 &&
		  launched.N == 5);
	int ok = 1;
	char reason[64] = "";
	cr_assert_eq(op_shape_compare(&o, 0, 1e-2, &ok, reason, sizeof reason, &err), 0);
	cr_assert_eq(ok, 0, "the op's verdict on its other outputs");
	cr_assert_str_eq(reason, "the rows' sums: off");
	cr_assert_eq(op_shape_probe(&o, &v, 0, 1e-2, &ok, reason, sizeof reason, &err), -1);
	cr_assert_str_eq(err.msg, "the probe's launch failed");
	op_shape_free(&o);
	cr_assert_null(o.gpu);
	cr_assert_str_eq(calls, "make prepare poison launch compare probe free");
}

Test(op_shape, a_make_that_fails_leaves_its_state_to_free)
{
	op_shape o;
	at_error err = { { 0 } };
	fail_make = 1;
	cr_assert_eq(make_hooked(&o, &err), -1);
	cr_assert_str_eq(err.msg, "no room for the side input");
	op_shape_free(&o);
	cr_assert_str_eq(calls, "make free");
}

/* softmax, and any op without hooks: nothing to make, prepare, poison,
 * compare or probe, and no driver call (none is loaded here) */
Test(op_shape, a_row_op_has_no_hooks_and_its_steps_do_nothing)
{
	for (size_t i = 0; i < op_count(); i++) {
		const at_op *op = op_at(i);
		if (op->gpu)
			continue;
		op_shape o;
		at_error err = { { 0 } };
		cr_assert_eq(op_shape_make(&o, op, AT_F32, 3, 5, NULL, 0, NULL, &err), 0);
		cr_assert_null(o.gpu, "%s", op->name);
		cr_assert_null(o.state);
		cr_assert_eq(op_shape_prepare(&o, NULL, 0, &err), 0);
		cr_assert_eq(op_shape_poison(&o, 0, &err), 0);
		int ok = 0;
		cr_assert_eq(op_shape_compare(&o, 0, 1e-5, &ok, NULL, 0, &err), 0);
		cr_assert_eq(ok, 1, "nothing but y to compare");
		ok = 0;
		cr_assert_eq(op_shape_probe(&o, NULL, 0, 1e-5, &ok, NULL, 0, &err), 0);
		cr_assert_eq(ok, 1, "nothing to probe");
		op_shape_free(&o);
	}
	cr_assert_null(op_find("softmax")->gpu);
	cr_assert_null(op_find("softmax_backward")->gpu);
	cr_assert_str_eq(calls, "");
}

Test(op_shape, an_op_with_only_a_launch_gets_a_row_ops_other_steps)
{
	op_shape o;
	at_error err = { { 0 } };
	cr_assert_eq(op_shape_make(&o, op_find("launch_only_rows"), AT_F32, 3, 5, NULL, 0, NULL,
				   &err), 0);
	cr_assert_eq(o.gpu, &launch_only_gpu);
	cr_assert_null(o.state);
	int ok = 0;
	cr_assert_eq(op_shape_compare(&o, 0, 1e-5, &ok, NULL, 0, &err), 0);
	cr_assert_eq(ok, 1);
	cr_assert_eq(op_shape_poison(&o, 0, &err), 0);
	const op_variant v = { .grid = 2, .M = 3, .N = 5 };
	cr_assert_eq(op_shape_launch(&o, &v, 0, &err), 0);
	cr_assert_eq(launched.grid, 2);
	op_shape_free(&o);
	cr_assert_str_eq(calls, "launch");
}

/* Adding an op with hooks needs no edit to the sweep: none of its files
 * names such an op (cross_entropy included). */
Test(op_shape, no_file_of_the_sweep_names_an_op_with_hooks)
{
	DIR *dir = opendir("tuner/sweep");
	cr_assert_not_null(dir, "run from the repository root");
	int files = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		size_t len = strlen(e->d_name);
		if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h")))
			continue;
		char path[512];
		snprintf(path, sizeof path, "tuner/sweep/%s", e->d_name);
		char *text = tmp_read(path);
		for (size_t i = 0; i < op_count(); i++)
			if (op_at(i)->gpu)
				cr_assert_null(strstr(text, op_at(i)->name), "%s names the op %s", path,
					       op_at(i)->name);
		free(text);
		files++;
	}
	closedir(dir);
	cr_assert_gt(files, 10);
	cr_assert_not_null(op_find("cross_entropy")->gpu, "an op with hooks is among those checked");
}

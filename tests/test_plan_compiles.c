/* Every variant a sweep tries at f32 64 x 1000 (a row of the default
 * config; the templates that serve it) compiles for sm_90, as
 * `autotune sweep --compile-only` would compile it: the plan's variants and
 * sources, each distinct source through NVRTC (or the compile memo,
 * tests/compile_memo.h). One test per template, so that each keeps its
 * time with margin on two busy cores when the memo is empty. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/compile_memo.h"
#include "tests/tmp_folder.h"
#include "tuner/device.h"
#include "tuner/sweep/plan.h"

TestSuite(plan_compiles, .init = tmp_setup, .fini = tmp_teardown);

typedef struct plan_case {
	char template_name[32];
} plan_case;

ParameterizedTestParameters(plan_compiles, every_variant_at_f32_64_x_1000_compiles_for_sm_90)
{
	static plan_case cases[] = { { "softmax_block" }, { "softmax_warp" }, { "others" } };
	return cr_make_param_array(plan_case, cases, sizeof cases / sizeof *cases);
}

ParameterizedTest(plan_case *c, plan_compiles, every_variant_at_f32_64_x_1000_compiles_for_sm_90,
		  .timeout = 300)
{
	tmp_write("c.yaml", "sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: [64]\n"
			    "    N: [1000]\n");
	sweep_plan p;
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&p, tmp_path("c.yaml"), NULL, &err), 0, "%s", err.msg);
	cr_assert_eq(p.nshapes, 1);
	tr_env env = nominal_shape_env(90, 64, 1000, 4);
	variant *vs;
	size_t n;
	cr_assert_eq(plan_shape_variants(&p, &p.shapes[0], &env, &vs, &n, &err), 0, "%s", err.msg);
	char **src = plan_sources(vs, n, &err);
	cr_assert_not_null(src, "%s", err.msg);
	int others = strcmp(c->template_name, "others") == 0;
	size_t compiled = 0;
	for (size_t i = 0; i < n; i++) {
		int named = strcmp(vs[i].tmpl->name, "softmax_block") == 0 ||
			    strcmp(vs[i].tmpl->name, "softmax_warp") == 0;
		if (others ? named : strcmp(vs[i].tmpl->name, c->template_name) != 0)
			continue;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(src[j], src[i]) == 0;
		if (seen)
			continue;
		compiled_kernel k;
		int rc = memo_compile(src[i], "variant.cu", 90, &k, &err, NULL);
		char *params = variant_params_str(&vs[i]);
		cr_assert_eq(rc, COMPILE_OK, "%s %s did not compile: %s\n%s", vs[i].tmpl->name, params,
			     err.msg, k.log ? k.log : "");
		free(params);
		compiled_kernel_free(&k);
		compiled++;
	}
	/* block and warp serve this shape; nothing else may, today */
	if (!others)
		cr_assert_gt(compiled, 0, "no %s variant at f32 64 x 1000", c->template_name);
	plan_free_sources(src, n);
	free(vs);
	plan_free(&p);
}

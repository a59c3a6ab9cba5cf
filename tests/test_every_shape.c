/* Every shape is served: a sweep over rows of any length has at least one
 * variant to tune at each, whose launch holds the row (max_n). Planned as
 * `autotune sweep` plans it (tuner/sweep/plan.h) with the real templates in
 * templates/, on the nominal devices of sm_75, sm_80 and sm_90; the GPU
 * runs of these shapes are the selftest's. Run from the repository root. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>

#include "tuner/device.h"
#include "tuner/sweep/enumerate.h"
#include "tuner/sweep/plan.h"

#include "tests/tmp_folder.h"

TestSuite(every_shape, .init = tmp_setup, .fini = tmp_teardown);

/* Plans config (YAML text) over templates/ and checks each shape at each
 * compute capability; returns how many shapes it checked. */
static size_t check_every_shape(const char *config)
{
	tmp_write("c.yaml", config);
	sweep_plan p;
	at_error err = { { 0 } };
	cr_assert_eq(plan_load(&p, tmp_path("c.yaml"), "templates", &err), 0, "%s", err.msg);
	static const int ccs[] = { 75, 80, 90 };
	for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++) {
		for (size_t i = 0; i < p.nshapes; i++) {
			const sweep_shape *s = &p.shapes[i];
			tr_env env = nominal_shape_env(ccs[c], s->M, s->N, at_dtype_size(s->dtype));
			variant *vs;
			size_t n;
			cr_assert_eq(plan_shape_variants(&p, s, &env, &vs, &n, &err), 0, "%s", err.msg);
			char label[128];
			sweep_shape_label(s, label, sizeof label);
			cr_assert_gt(n, 0, "sm_%d %s: 0 variants (no template serves this shape)",
				     ccs[c], label);
			for (size_t k = 0; k < n; k++) {
				launch_geometry g;
				cr_assert_eq(variant_geometry(&vs[k], &env, &g, &err), 0, "%s", err.msg);
				cr_assert(g.max_n == 0 || g.max_n >= s->N,
					  "sm_%d %s: %s serves rows up to %lld", ccs[c], label,
					  vs[k].tmpl->name, g.max_n);
			}
			free(vs);
		}
	}
	size_t n = p.nshapes;
	plan_free(&p);
	return n;
}

Test(every_shape, every_row_of_1_to_40_elements_has_a_variant_in_every_dtype)
{
	cr_assert_eq(check_every_shape("sweeps:\n"
				       "  - op: softmax\n"
				       "    dtypes: [f32, f16, bf16]\n"
				       "    M: [1, 3, 4096]\n"
				       "    N: {from: 1, to: 40, step: 1}\n"),
		     3 * 3 * 40);
}

/* Longer rows, at the lengths where one template hands over to the next
 * (powers of two and one either side) and odd lengths between, up to 2^21. */
Test(every_shape, rows_up_to_two_million_elements_have_a_variant_in_every_dtype, .timeout = 120)
{
	char config[4096];
	int used = snprintf(config, sizeof config,
			    "sweeps:\n  - op: softmax\n    dtypes: [f32, f16, bf16]\n"
			    "    M: [1, 4096]\n    N: [");
	for (int k = 6; k <= 21; k++)
		used += snprintf(config + used, sizeof config - (size_t)used, "%s%d, %d, %d, %d",
				 k > 6 ? ", " : "", (1 << k) - 1, 1 << k, (1 << k) + 1,
				 (1 << k) + (1 << (k - 1)) + 7);
	snprintf(config + used, sizeof config - (size_t)used, "]\n");
	cr_assert_eq(check_every_shape(config), 3 * 2 * 16 * 4);
}

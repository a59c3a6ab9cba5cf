/* The tuner and the dispatch library give one answer on every real
 * template: the library's tables (build/emit-rules) are the manifests'
 * rules written out, and at a set of shapes (rows of 1 to 2M elements,
 * aligned or not, one row or many, every dtype, sm_80 and sm_90) the
 * variants the tuner enumerates (tuner/sweep/enumerate.h) are exactly
 * those the library holds valid, with the same launch geometry
 * (dispatch/policy/derive.h); and what the library derives from a winner is one
 * of them, found whenever one is within its reach. No GPU. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/policy/derive.h"
#include "dispatch/policy/template_table.h"
#include "tests/template_fixture.h"

TestSuite(rules_agree, .init = tf_load_templates, .fini = tf_free_templates);

static const long long test_N[] = { 1, 7, 33, 512, 1000, 4097, 12289, 70001, 262147, 2000003 };
static const long long test_M[] = { 1, 4096 };
static const int test_cc[] = { 80, 90 };
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The library's table of the manifest's template; fails without one. */
static const tr_template *library_rules(const tmpl_manifest *m)
{
	const tr_template *t = atdi_rules_find(tr_templates, tr_ntemplates, m->name);
	cr_assert_not_null(t, "%s is not in the library's tables", m->name);
	return t;
}

static void expect_same_strings(const char *const *a, const char *const *b, int n,
				const char *what, const char *name)
{
	for (int i = 0; i < n; i++)
		cr_expect_str_eq(a[i], b[i], "%s: %s[%d]", name, what, i);
}

static void expect_same_ints(const int *a, const int *b, int n, const char *what,
			     const char *name)
{
	for (int i = 0; i < n; i++)
		cr_expect_eq(a[i], b[i], "%s: %s[%d]", name, what, i);
}

Test(rules_agree, the_librarys_tables_are_the_manifests_rules_written_out)
{
	size_t n;
	const tmpl_manifest *ms = tf_templates(&n);
	cr_assert_eq((size_t)tr_ntemplates, n, "a table per manifest in templates/");
	for (size_t k = 0; k < n; k++) {
		manifest_rules view;
		manifest_rules_view(&ms[k], &view);
		const tr_template *a = &view.t, *b = library_rules(&ms[k]);
		cr_expect_str_eq(a->source_file, b->source_file, "%s", a->name);
		cr_expect_eq(a->dtype_mask, b->dtype_mask, "%s", a->name);
		cr_assert_eq(a->nparams, b->nparams, "%s", a->name);
		for (int i = 0; i < a->nparams; i++) {
			cr_expect_str_eq(a->params[i].name, b->params[i].name, "%s", a->name);
			cr_expect_eq(a->params[i].def, b->params[i].def, "%s", a->name);
			cr_assert_eq(a->params[i].nvalues, b->params[i].nvalues, "%s", a->name);
			cr_expect_arr_eq(a->params[i].values, b->params[i].values,
					 (size_t)a->params[i].nvalues * sizeof(long long), "%s %s",
					 a->name, a->params[i].name);
		}
		cr_assert_eq(a->nconstraints, b->nconstraints, "%s", a->name);
		expect_same_strings(a->constraints, b->constraints, a->nconstraints, "constraints",
				    a->name);
		expect_same_strings(a->launch, b->launch, TR_LAUNCH_KEYS, "launch", a->name);
		cr_assert_eq(a->nderive, b->nderive, "%s", a->name);
		expect_same_ints(a->derive, b->derive, a->nderive, "derive", a->name);
		cr_assert_eq(a->nwiden, b->nwiden, "%s", a->name);
		expect_same_ints(a->widen, b->widen, a->nwiden, "widen", a->name);
		cr_assert_eq(a->nprefer, b->nprefer, "%s", a->name);
		expect_same_strings(a->prefer, b->prefer, a->nprefer, "prefer", a->name);
		at_error err = { { 0 } };
		char *body = template_body(&ms[k], &err);
		cr_assert_not_null(body, "%s", err.msg);
		cr_expect_str_eq(body, b->body, "%s: the body NVRTC compiles", a->name);
		free(body);
		manifest_rules_free(&view);
	}
}

/* ---- validity and geometry ------------------------------------------------ */

/* The place of a combination of param values in the odometer of t's
 * params (the last fastest), or -1 when a value is not among its param's. */
static long long odometer_rank(const tmpl_manifest *t, const long long *values)
{
	long long rank = 0;
	for (size_t i = 0; i < t->nparams; i++) {
		const tmpl_param *p = &t->params[i];
		size_t d = 0;
		while (d < p->nvalues && p->values[d] != values[i])
			d++;
		if (d == p->nvalues)
			return -1;
		rank = rank * (long long)p->nvalues + (long long)d;
	}
	return rank;
}

/* The values of the combination of that rank. */
static void odometer_values(const tmpl_manifest *t, long long rank, long long *values)
{
	for (size_t i = t->nparams; i-- > 0;) {
		const tmpl_param *p = &t->params[i];
		values[i] = p->values[rank % (long long)p->nvalues];
		rank /= (long long)p->nvalues;
	}
}

static long long space_size(const tmpl_manifest *t)
{
	long long n = 1;
	for (size_t i = 0; i < t->nparams; i++)
		n *= (long long)t->params[i].nvalues;
	return n;
}

static int enumerated(const long long *ranks, size_t n, long long rank)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ranks[mid] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ranks[lo] == rank;
}

/* One template at one shape: the enumerated variants, and their ranks. */
typedef struct shape_case {
	const tmpl_manifest *m;
	const tr_template *lib;
	at_dtype dt;
	tr_env env;
	char label[160];
	variant *vs;
	long long *ranks;
	size_t n;
} shape_case;

static void case_open(shape_case *c, const tmpl_manifest *m, at_dtype dt, int cc, long long M,
		      long long N)
{
	*c = (shape_case){ .m = m, .lib = library_rules(m), .dt = dt,
			   .env = nominal_shape_env(cc, M, N, at_dtype_size(dt)) };
	snprintf(c->label, sizeof c->label, "%s %s sm_%d %lld x %lld", m->name, at_dtype_name(dt),
		 cc, M, N);
	at_error err = { { 0 } };
	cr_assert_eq(enumerate_variants(m, dt, &c->env, &c->vs, &c->n, &err), 0, "%s: %s",
		     c->label, err.msg);
	c->ranks = malloc((c->n ? c->n : 1) * sizeof *c->ranks);
	for (size_t i = 0; i < c->n; i++) {
		c->ranks[i] = odometer_rank(m, c->vs[i].values);
		cr_assert(i == 0 || c->ranks[i] > c->ranks[i - 1], "%s: variant %zu out of order",
			  c->label, i);
	}
}

static void case_close(shape_case *c)
{
	free(c->vs);
	free(c->ranks);
}

/* The library's validity of values against the enumeration's. */
static void expect_same_validity(const shape_case *c, const long long *values, long long rank)
{
	int lib = atdi_rules_valid(c->lib, values, &c->env);
	if (lib == enumerated(c->ranks, c->n, rank))
		return;
	variant v = { .tmpl = c->m, .dtype = c->dt };
	memcpy(v.values, values, c->m->nparams * sizeof *values);
	char *params = variant_params_str(&v);
	cr_assert_fail("%s: %s is %s by the library, %s by the tuner", c->label, params,
		       lib ? "valid" : "invalid", lib ? "not enumerated" : "enumerated");
	free(params);
}

/* Every enumerated variant: valid for the library, the same geometry. */
static void check_enumerated(const shape_case *c)
{
	for (size_t i = 0; i < c->n; i++) {
		const variant *v = &c->vs[i];
		launch_geometry tuner, library;
		at_error err = { { 0 } };
		expect_same_validity(c, v->values, c->ranks[i]);
		cr_assert_eq(variant_geometry(v, &c->env, &tuner, &err), 0, "%s: %s", c->label,
			     err.msg);
		memset(&library, 0x5a, sizeof library);
		cr_assert_eq(atdi_rules_geometry(c->lib, v->values, &c->env, &library), 0, "%s",
			     c->label);
		cr_assert_eq(memcmp(&tuner, &library, sizeof tuner), 0,
			     "%s variant %zu: threads %d/%d rows %d/%d smem %d/%d persistent %d/%d "
			     "max_n %lld/%lld ctas_per_row %d/%d cooperative %d/%d (tuner/library)",
			     c->label, i, tuner.threads, library.threads, tuner.rows_per_cta,
			     library.rows_per_cta, tuner.dyn_smem, library.dyn_smem, tuner.persistent,
			     library.persistent, tuner.max_n, library.max_n, tuner.ctas_per_row,
			     library.ctas_per_row, tuner.cooperative, library.cooperative);
	}
}

/* Every combination of the template's space when it is small, else a
 * sample of about 5000 spread over it (a stride prime to every param's
 * count of values, so that each digit takes each of its values), plus
 * every combination one param away from an enumerated variant: where the
 * valid set's edge runs. */
static void check_space(const shape_case *c)
{
	long long size = space_size(c->m), stride = 1;
	if (size > 8192) {
		stride = size / 5000 | 1;
		while (size % stride == 0 || stride % 3 == 0 || stride % 5 == 0 || stride % 7 == 0)
			stride += 2;
	}
	long long values[TR_MAX_PARAMS];
	for (long long rank = 0; rank < size; rank += stride) {
		odometer_values(c->m, rank, values);
		expect_same_validity(c, values, rank);
	}
	for (size_t i = 0; i < c->n; i++) {
		for (size_t p = 0; p < c->m->nparams; p++) {
			memcpy(values, c->vs[i].values, c->m->nparams * sizeof *values);
			for (size_t d = 0; d < c->m->params[p].nvalues; d++) {
				values[p] = c->m->params[p].values[d];
				expect_same_validity(c, values, odometer_rank(c->m, values));
			}
		}
	}
}

/* Every template's variants at every shape of the set, for one dtype,
 * calling check on each shape (NULL: only counted); returns how many the
 * shapes hold. */
static size_t walk_shapes(at_dtype dt, void (*check)(const shape_case *))
{
	size_t nt;
	const tmpl_manifest *ms = tf_templates(&nt);
	size_t total = 0;
	for (size_t k = 0; k < nt; k++)
		for (size_t cc = 0; cc < COUNT(test_cc); cc++)
			for (size_t i = 0; i < COUNT(test_M); i++)
				for (size_t j = 0; j < COUNT(test_N); j++) {
					shape_case c;
					case_open(&c, &ms[k], dt, test_cc[cc], test_M[i], test_N[j]);
					/* the library asks dtype_mask first (plan.c) */
					if (!(ms[k].dtype_mask & (1u << dt)))
						cr_assert_eq(c.n, 0, "%s", c.label);
					else if (check)
						check(&c);
					total += c.n;
					case_close(&c);
				}
	return total;
}

static void check_shape(const shape_case *c)
{
	check_enumerated(c);
	check_space(c);
}

ParameterizedTestParameters(rules_agree, the_tuners_variants_are_the_ones_the_library_holds_valid_and_launches_alike)
{
	static at_dtype dtypes[] = { AT_F32, AT_F16, AT_BF16 };
	return cr_make_param_array(at_dtype, dtypes, sizeof dtypes / sizeof *dtypes);
}

/* A dtype at a time: every template in one test took 90 s under ASan
 * alone, past its 120 s on CI's two busy cores. */
ParameterizedTest(at_dtype *dt, rules_agree,
		  the_tuners_variants_are_the_ones_the_library_holds_valid_and_launches_alike,
		  .timeout = 120)
{
	cr_assert_gt(walk_shapes(*dt, check_shape), 0, "%s", at_dtype_name(*dt));
}

Test(rules_agree, the_shapes_hold_many_variants)
{
	size_t total = 0;
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
		total += walk_shapes((at_dtype)dt, NULL);
	cr_assert_gt(total, 10000, "the shapes hold %zu variants in all", total);
}

/* ---- derivation ----------------------------------------------------------- */

/* Whether the library's derivation may change param p (with widen). */
static int searched(const tr_template *t, int p, int widen)
{
	for (int i = 0; i < t->nderive; i++)
		if (t->derive[i] == p)
			return 1;
	for (int i = 0; widen && i < t->nwiden; i++)
		if (t->widen[i] == p)
			return 1;
	return 0;
}

/* Whether a and b agree on every param the derivation keeps. */
static int same_kept(const tr_template *t, const long long *a, const long long *b, int widen)
{
	for (int p = 0; p < t->nparams; p++)
		if (!searched(t, p, widen) && a[p] != b[p])
			return 0;
	return 1;
}

/* winner (a variant the tuner enumerated at another shape) derived for c's
 * shape, with and without widening: what the library derives is one of c's
 * variants that keeps the winner's other params, and it derives one
 * whenever c has such a variant. */
static void check_derived(const shape_case *c, const long long *winner, const char *from)
{
	const tr_template *t = c->lib;
	for (int widen = 0; widen <= 1; widen++) {
		long long out[TR_MAX_PARAMS];
		int rc = atdi_derive(t, winner, &c->env, widen, out);
		size_t reachable = 0;
		for (size_t i = 0; i < c->n; i++)
			reachable += (size_t)same_kept(t, c->vs[i].values, winner, widen);
		cr_assert_eq(rc > 0, reachable > 0,
			     "%s from %s (widen %d): derived %d, the tuner has %zu within reach",
			     c->label, from, widen, rc, reachable);
		if (rc == 0)
			continue;
		cr_assert(enumerated(c->ranks, c->n, odometer_rank(c->m, out)),
			  "%s from %s (widen %d): derived a variant the tuner does not enumerate",
			  c->label, from, widen);
		cr_assert(same_kept(t, out, winner, widen), "%s from %s: a kept param changed",
			  c->label, from);
		cr_assert(rc == 1 || widen, "%s from %s: widened unasked", c->label, from);
		cr_assert_eq(rc == 2, !same_kept(t, out, winner, 0),
			     "%s from %s (widen %d): derived %d", c->label, from, widen, rc);
	}
}

Test(rules_agree, a_derived_variant_is_one_the_tuner_enumerates_and_none_within_reach_is_missed,
     .timeout = 120)
{
	size_t nt;
	const tmpl_manifest *ms = tf_templates(&nt);
	size_t derived = 0;
	for (size_t k = 0; k < nt; k++)
		for (int dt = 0; dt < AT_DTYPE_COUNT; dt++)
			for (size_t i = 0; i < COUNT(test_M); i++) {
				if (!(ms[k].dtype_mask & (1u << dt)) || !library_rules(&ms[k])->nderive)
					continue;
				shape_case cs[COUNT(test_N)];
				for (size_t j = 0; j < COUNT(test_N); j++)
					case_open(&cs[j], &ms[k], (at_dtype)dt, 90, test_M[i], test_N[j]);
				for (size_t a = 0; a < COUNT(test_N); a++) {
					/* the first, middle and last variant as winners */
					for (size_t w = 0; cs[a].n && w < 3; w++) {
						const variant *v = &cs[a].vs[w * (cs[a].n - 1) / 2];
						for (size_t b = 0; b < COUNT(test_N); b++, derived++)
							check_derived(&cs[b], v->values, cs[a].label);
					}
				}
				for (size_t j = 0; j < COUNT(test_N); j++)
					case_close(&cs[j]);
			}
	cr_assert_gt(derived, 1000, "%zu derivations", derived);
}

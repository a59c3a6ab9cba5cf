/* The helpers of tests/template_fixture.h (no tests here). Each test runs in
 * its own process, so the loaded templates are this file's own. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tests/template_fixture.h"
#include "tests/compile_memo.h"

static tmpl_manifest *templates;
static size_t ntemplates;

void tf_load_templates(void)
{
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load_dir("templates", &templates, &ntemplates, &err), 0,
		     "cannot load templates/: %s", err.msg);
}

void tf_free_templates(void)
{
	manifest_free_all(templates, ntemplates);
	templates = NULL;
	ntemplates = 0;
}

const tmpl_manifest *tf_templates(size_t *n)
{
	*n = ntemplates;
	return templates;
}

const tmpl_manifest *tf_template(const char *name)
{
	for (size_t i = 0; i < ntemplates; i++)
		if (strcmp(templates[i].name, name) == 0)
			return &templates[i];
	cr_assert_fail("template %s is not in templates/", name);
	return NULL;
}

long long tf_value(const variant *v, const char *param)
{
	int i = manifest_param_index(v->tmpl, param);
	cr_assert_geq(i, 0, "template %s has no param %s", v->tmpl->name, param);
	return v->values[i];
}

long long tf_rows_a_vector(long long n, size_t size)
{
	return 16 % (n * (long long)size) == 0 ? 16 / (n * (long long)size) : 0;
}

void tf_expect_tiny_rows_per_cta(const tmpl_manifest *t, long long M)
{
	static const at_dtype dtypes[] = { AT_F32, AT_F16, AT_BF16 };
	for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
		for (long long N = 1; N <= 16; N++) {
			const char *dt = at_dtype_name(dtypes[d]);
			variant *vs;
			size_t n = tf_enumerate(t, 90, dtypes[d], M, N, &vs);
			cr_assert_gt(n, 0, "%s: no variant at %s N=%lld", t->name, dt, N);
			long long rows = tf_rows_a_vector(N, at_dtype_size(dtypes[d]));
			for (size_t i = 0; i < n; i++) {
				launch_geometry g = tf_geometry(&vs[i], 90, M, N);
				long long threads = tf_value(&vs[i], "threads");
				long long vectors = manifest_param_index(t, "vectors") < 0
							    ? 1
							    : tf_value(&vs[i], "vectors");
				cr_assert(rows || vectors == 1, "%s N=%lld: several vectors of rows "
					  "that straddle them", dt, N);
				cr_assert_leq(rows * vectors, 16, "%s N=%lld: at most 16 rows a thread",
					      dt, N);
				cr_assert_eq(g.rows_per_cta,
					     rows ? threads * vectors * rows
						  : threads / tf_value(&vs[i], "lanes"),
					     "%s %s N=%lld", t->name, dt, N);
				cr_assert_eq(g.threads, threads);
				cr_assert_eq(g.persistent, 0);
				cr_assert_geq(g.max_n, N);
			}
			free(vs);
		}
}

size_t tf_enumerate(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N,
		    variant **out)
{
	tr_env env = nominal_shape_env(cc, M, N, at_dtype_size(dt));
	size_t n = 0;
	at_error err = { { 0 } };
	cr_assert_eq(enumerate_variants(t, dt, &env, out, &n, &err), 0, "%s: %s", t->name,
		     err.msg);
	return n;
}

size_t tf_count_variants(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N)
{
	variant *vs;
	const size_t n = tf_enumerate(t, cc, dt, M, N, &vs);
	free(vs);
	return n;
}

size_t tf_count_with(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N,
		     const char *param, long long value)
{
	variant *vs;
	const size_t n = tf_enumerate(t, cc, dt, M, N, &vs);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += tf_value(&vs[i], param) == value;
	free(vs);
	return k;
}

launch_geometry tf_geometry(const variant *v, int cc, long long M, long long N)
{
	tr_env env = nominal_shape_env(cc, M, N, at_dtype_size(v->dtype));
	launch_geometry g;
	at_error err = { { 0 } };
	cr_assert_eq(variant_geometry(v, &env, &g, &err), 0, "%s: %s", v->tmpl->name, err.msg);
	return g;
}

char *tf_specialize(const variant *v)
{
	at_error err = { { 0 } };
	char *src = specialize(v, &err);
	if (!src) {
		char *params = variant_params_str(v);
		cr_assert_fail("%s %s: %s", v->tmpl->name, params, err.msg);
	}
	return src;
}

void tf_compile_clean(const variant *v, const char *src, int cc, compiled_kernel *k)
{
	tf_compile_within(v, src, cc, 0, k);
}

void tf_compile_within(const variant *v, const char *src, int cc, int max_spill,
		       compiled_kernel *k)
{
	const char *slash = strrchr(v->tmpl->source_path, '/');
	const char *file = slash ? slash + 1 : v->tmpl->source_path;
	const char *dt = at_dtype_name(v->dtype);
	char *params = variant_params_str(v);
	at_error err = { { 0 } };
	int rc = memo_compile(src, file, cc, k, &err, NULL);
	cr_assert_eq(rc, COMPILE_OK, "%s %s did not compile: rc %d, %s\n%s", dt, params, rc,
		     err.msg, k->log ? k->log : "");
	cr_assert_leq(k->spill_bytes, max_spill, "%s %s spills %d bytes (at most %d allowed)", dt,
		      params, k->spill_bytes, max_spill);
	if (max_spill == 0)
		cr_assert_eq(k->stack_bytes, 0, "%s %s has a %d-byte stack frame", dt, params,
			     k->stack_bytes);
	free(params);
}

void tf_compile_ptx(const variant *v, int cc, compiled_kernel *k)
{
	char *src = tf_specialize(v);
	tf_compile_within(v, src, cc, INT_MAX, k);
	free(src);
}

void tf_expect_in_ptx(const variant *v, const compiled_kernel *k, const char *const *wanted,
		      size_t n)
{
	char *params = variant_params_str(v);
	for (size_t w = 0; w < n; w++)
		cr_assert_not_null(strstr(k->ptx, wanted[w]), "%s %s: no %s",
				   at_dtype_name(v->dtype), params, wanted[w]);
	free(params);
}

void tf_expect_tile_ptx(const variant *v, const compiled_kernel *k, const char *wait)
{
	cr_assert_gt(k->registers, 0);
	const char *const wanted[] = {
		"cp.async.cg.shared.global",
		wait,
		tf_value(v, "cache_hint") ? "st.global.cs.v4.u32" : "st.global.v4",
	};
	tf_expect_in_ptx(v, k, wanted, sizeof wanted / sizeof *wanted);
}

typedef struct {
	const char *const *wanted;
	size_t n;
} ptx_wants;

static void expect_wanted(const variant *v, const compiled_kernel *k, void *ctx)
{
	const ptx_wants *w = ctx;
	tf_expect_in_ptx(v, k, w->wanted, w->n);
}

void tf_expect_vector_rows_in_ptx(const tmpl_manifest *t, long long M, const char *const *wanted,
				  size_t n)
{
	static const at_dtype dtypes[] = { AT_F32, AT_F16, AT_BF16 };
	static const long long lengths[] = { 1, 2, 4, 8 };
	ptx_wants w = { wanted, n };
	for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
		for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
			if (tf_rows_a_vector(lengths[k], at_dtype_size(dtypes[d])) == 0)
				continue;
			variant *vs;
			size_t nv = tf_enumerate(t, 90, dtypes[d], M, lengths[k], &vs);
			cr_assert_gt(nv, 0, "%s: no variant at N=%lld", t->name, lengths[k]);
			tf_for_each_distinct_kernel(vs, nv, 90, expect_wanted, &w);
			free(vs);
		}
}

int tf_seen_add(tf_seen *s, char *src)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->srcs[i], src) == 0)
			return 1;
	char **grown = realloc(s->srcs, (s->n + 1) * sizeof *grown);
	cr_assert_not_null(grown);
	s->srcs = grown;
	s->srcs[s->n++] = src;
	return 0;
}

void tf_seen_free(tf_seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->srcs[i]);
	free(s->srcs);
	s->srcs = NULL;
	s->n = 0;
}

void tf_for_each_distinct_kernel(const variant *vs, size_t n, int cc, tf_kernel_check check,
				 void *ctx)
{
	cr_assert_gt(n, 0, "no variant to compile");
	tf_seen seen = { 0 };
	for (size_t i = 0; i < n; i++) {
		char *src = tf_specialize(&vs[i]);
		if (tf_seen_add(&seen, src)) {
			free(src);
			continue;
		}
		compiled_kernel k;
		tf_compile_clean(&vs[i], src, cc, &k);
		check(&vs[i], &k, ctx);
		compiled_kernel_free(&k);
	}
	tf_seen_free(&seen);
}

/* The selftest driver: see selftest.h. */
#include "tuner/selftest/selftest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/device.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/enumerate.h"
#include "tuner/sweep/plan.h"

/* What to do with each shape's jobs: run them (selftest_run) or count them
 * (selftest_count). */
typedef struct visitor {
	tr_env (*env)(void *ctx, long long M, long long N, at_dtype dt);
	void *env_ctx;
	void (*begin_case)(struct visitor *v, at_dtype dt, st_case c, const char *template_name);
	int (*shape)(struct visitor *v, at_dtype dt, const st_shape *s, const st_job *jobs,
		     size_t n, at_error *err);
} visitor;

static int serves(const at_op *op, const tmpl_manifest *t, at_dtype dt)
{
	sweep_shape s = { op->name, dt, 1, 1, NULL };
	return plan_template_serves(t, &s);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* The distinct row lengths of shapes, ascending. */
static size_t row_lengths(const st_shape *shapes, size_t n, long long *out)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < k && out[j] != shapes[i].N)
			j++;
		if (j == k)
			out[k++] = shapes[i].N;
	}
	qsort(out, k, sizeof *out, cmp_ll);
	return k;
}

/* Appends template t's jobs at shape s: its variants at s, or else those
 * at the next longer row length of the case (Ns) that has some, whose
 * max_n covers s (as the dispatch library would reuse them). */
static int template_jobs(const visitor *vis, const at_op *op, const tmpl_manifest *t, at_dtype dt,
			 const st_shape *s, const long long *Ns, size_t nN, st_job **jobs,
			 size_t *n, size_t *cap, at_error *err)
{
	long long tuned = s->N;
	size_t next = 0;
	for (;;) {
		tr_env env = vis->env(vis->env_ctx, s->M, tuned, dt);
		variant *vs;
		size_t nv;
		if (enumerate_variants(t, dt, &env, &vs, &nv, err))
			return -1;
		size_t kept = 0;
		for (size_t i = 0; i < nv; i++) {
			launch_geometry g;
			if (variant_geometry(&vs[i], &env, &g, err)) {
				free(vs);
				return -1;
			}
			if (g.max_n != 0 && g.max_n < s->N)
				continue;
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 256;
				*jobs = xrealloc(*jobs, *cap * sizeof **jobs);
			}
			vs[i].op = manifest_source_op(t, op->name);
			(*jobs)[(*n)++] = (st_job){ op, vs[i], g, tuned == s->N ? 0 : tuned };
			kept++;
		}
		free(vs);
		if (kept)
			return 0;
		while (next < nN && Ns[next] <= s->N)
			next++;
		if (next == nN)
			return 0; /* no longer row of the case: the template does not serve s */
		tuned = Ns[next++];
	}
}

static int visit_case(const sweep_plan *p, const at_op *op, visitor *vis, at_dtype dt, st_case c,
		      st_mode mode, at_error *err)
{
	st_shape shapes[ST_MAX_SHAPES];
	size_t nshapes = st_case_shapes(c, mode, shapes, ST_MAX_SHAPES);
	if (nshapes == 0)
		return 0;
	for (size_t t = 0; t < p->ntemplates; t++)
		if (serves(op, &p->templates[t], dt))
			vis->begin_case(vis, dt, c, p->templates[t].name);
	long long Ns[ST_MAX_SHAPES];
	size_t nN = row_lengths(shapes, nshapes, Ns);
	st_job *jobs = NULL;
	size_t cap = 0;
	int rc = 0;
	for (size_t i = 0; i < nshapes && rc == 0; i++) {
		size_t n = 0;
		for (size_t t = 0; t < p->ntemplates && rc == 0; t++)
			if (serves(op, &p->templates[t], dt))
				rc = template_jobs(vis, op, &p->templates[t], dt, &shapes[i], Ns, nN,
						   &jobs, &n, &cap, err);
		if (rc == 0)
			rc = vis->shape(vis, dt, &shapes[i], jobs, n, err);
	}
	free(jobs);
	return rc;
}

/* The op to test: o->op, else the one op the config's sweeps name (a
 * config of log_softmax tests log_softmax), else softmax. NULL with err set
 * where the config names several and --op does not choose. */
static const char *op_to_test(const selftest_options *o, const sweep_plan *p, at_error *err)
{
	if (o->op)
		return o->op;
	if (!o->config_path || p->cfg.nspecs == 0)
		return "softmax";
	const char *op = p->cfg.specs[0].op;
	for (size_t i = 1; i < p->cfg.nspecs; i++)
		if (strcmp(p->cfg.specs[i].op, op) != 0) {
			at_error_set(err, "%s sweeps %s and %s: say which op to test with --op",
				     o->config_path, op, p->cfg.specs[i].op);
			return NULL;
		}
	return op;
}

static int visit_all(const selftest_options *o, visitor *vis, at_error *err)
{
	sweep_plan p;
	const char *config = o->config_path ? o->config_path : plan_default_config("softmax.yaml");
	if (plan_load(&p, config, o->templates_dir, err))
		return -1;
	const char *name = op_to_test(o, &p, err);
	const at_op *op = name ? op_find(name) : NULL;
	if (name && !op) {
		char *known = op_names();
		at_error_set(err, "unknown op \"%s\" (known: %s)", name, known);
		free(known);
	} else if (op && op->gpu) { /* its own launch (tuner/ops/op_gpu.h) */
		at_error_set(err, "selftest does not run %s yet (its kernel is not softmax's "
			     "shape); `autotune sweep` checks its variants", op->name);
		op = NULL;
	}
	if (!op) {
		plan_free(&p);
		return -1;
	}
	if (o->progress)
		fprintf(o->progress, "selftest: %s, the templates of %s\n", op->name, config);
	int rc = 0;
	for (int dt = 0; dt < AT_DTYPE_COUNT && rc == 0; dt++) {
		if (o->dtype_mask && !((o->dtype_mask >> dt) & 1))
			continue;
		for (int c = 0; c < ST_CASE_COUNT && rc == 0; c++)
			/* the 2^31 case holds one input (selftest_big.c): an op of
			 * two would need 2 x 8 GiB of f32 and a reference for both */
			if ((!o->case_mask || ((o->case_mask >> c) & 1)) &&
			    !(c == ST_CASE_BIG && at_op_inputs(op) > 1))
				rc = visit_case(&p, op, vis, (at_dtype)dt, (st_case)c, o->mode, err);
	}
	plan_free(&p);
	return rc;
}

/* ---- running ---- */

typedef struct run_visitor {
	visitor base;
	const st_runner *runner;
	st_report *report;
	FILE *progress;
	st_case c;
} run_visitor;

static void run_begin_case(visitor *v, at_dtype dt, st_case c, const char *template_name)
{
	run_visitor *rv = (run_visitor *)v;
	rv->c = c;
	st_report_row(rv->report, dt, c, template_name);
}

static int run_shape(visitor *v, at_dtype dt, const st_shape *s, const st_job *jobs, size_t n,
		     at_error *err)
{
	run_visitor *rv = (run_visitor *)v;
	char label[160];
	st_shape_label(s, label, sizeof label);
	if (n == 0)
		return 0;
	st_outcome *out = xcalloc(n, sizeof *out);
	int rc = rv->runner->run(rv->runner->ctx, s, dt, jobs, n, out, err);
	size_t passed = 0, failed = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char *params = variant_params_str(&jobs[i].v);
		st_report_add(rv->report, dt, s->kind, jobs[i].v.tmpl->name, params, label,
			      jobs[i].tuned_n, &out[i]);
		free(params);
		passed += out[i].status == ST_PASSED;
		failed += out[i].status == ST_FAILED;
	}
	if (rc == 0 && rv->progress)
		fprintf(rv->progress, "selftest: %s %s %s: %zu runs, %zu passed, %zu failed%s\n",
			at_dtype_name(dt), st_case_name(s->kind), label, n, passed, failed,
			passed + failed < n ? ", the rest not run" : "");
	free(out);
	return rc;
}

static tr_env runner_env(void *ctx, long long M, long long N, at_dtype dt)
{
	const st_runner *r = ctx;
	return r->env(r->ctx, M, N, dt);
}

int selftest_run(const selftest_options *o, const st_runner *runner, FILE *out,
		 at_error *err)
{
	run_visitor rv = { { runner_env, (void *)runner, run_begin_case, run_shape }, runner,
			   st_report_new(), o->progress, ST_CASE_SIZES };
	int rc = visit_all(o, &rv.base, err);
	if (rc == 0) {
		st_report_print(rv.report, out);
		rc = st_report_exit_status(rv.report);
	}
	st_report_free(rv.report);
	return rc;
}

/* ---- counting ---- */

typedef struct count_visitor {
	visitor base;
	long long *runs;
	FILE *list;
} count_visitor;

static void count_begin_case(visitor *v, at_dtype dt, st_case c, const char *template_name)
{
	(void)v, (void)dt, (void)c, (void)template_name;
}

static int count_shape(visitor *v, at_dtype dt, const st_shape *s, const st_job *jobs,
		       size_t n, at_error *err)
{
	(void)err;
	count_visitor *cv = (count_visitor *)v;
	cv->runs[s->kind] += (long long)n;
	if (!cv->list)
		return 0;
	size_t borrowed = 0;
	for (size_t i = 0; i < n; i++)
		borrowed += jobs[i].tuned_n != 0;
	char label[160];
	st_shape_label(s, label, sizeof label);
	fprintf(cv->list, "%-5s %-9s %-52s %5zu variants", at_dtype_name(dt), st_case_name(s->kind),
		label, n);
	if (borrowed)
		fprintf(cv->list, " (%zu as tuned at a longer row)", borrowed);
	fputc('\n', cv->list);
	return 0;
}

static tr_env nominal_env(void *ctx, long long M, long long N, at_dtype dt)
{
	(void)ctx;
	return nominal_shape_env(90, M, N, at_dtype_size(dt));
}

int selftest_count(const selftest_options *o, long long runs[ST_CASE_COUNT], FILE *list,
		   at_error *err)
{
	memset(runs, 0, ST_CASE_COUNT * sizeof *runs);
	count_visitor cv = { { nominal_env, NULL, count_begin_case, count_shape }, runs, list };
	return visit_all(o, &cv.base, err);
}

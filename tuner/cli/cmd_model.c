/* `autotune model fit`, `eval` and `choose`: the performance model
 * (common/perf_model.h) fitted to a sweep database, written as text,
 * measured by leave-one-out (tuner/model/loo.h), or asked for its choice
 * at one shape with what the prediction was made from. No GPU. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shape_bound.h"
#include "common/strbuf.h"
#include "gen/manifest.h"
#include "db/models.h"
#include "tuner/cli/cli.h"
#include "tuner/model/loo.h"
#include "tuner/model/prune_eval.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/plan.h"

typedef struct model_options {
	const char *db_path, *gpu, *op, *templates, *out, *dtype, *explore, *model, *compile_weight,
		*rank;
	int threads, worst, trees, depth, keep, store, fits, seed;
	loo_part part;
	long long M, N; /* choose: 0 not given */
} model_options;

static int parse_part(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	loo_part *p = &((model_options *)base)->part;
	char tail;
	if (sscanf(text, "%d/%d%c", &p->index, &p->count, &tail) != 2 || p->count < 1 ||
	    p->index < 1 || p->index > p->count)
		return cli_usage_error(cmd, "--part expects K/N with 1 <= K <= N, got \"%s\"", text);
	return 0;
}

#define O(field) offsetof(model_options, field)
const cli_option cli_model_options[] = {
	CLI_FILE(0, "db", "FILE", O(db_path), "the sweep database (default autotune.db, or $AUTOTUNE_DB)"),
	CLI_STRING(0, "gpu", "NAME", O(gpu), "the GPU whose results to learn (needed when there are several)"),
	CLI_STRING(0, "op", "OP", O(op), "the op whose results to learn (default softmax)"),
	CLI_STRING(0, "templates", "DIR", O(templates),
		   "templates folder (default: beside the program, or\n$AUTOTUNE_TEMPLATES)"),
	CLI_FILE('o', "out", "FILE", O(out), "fit: where to write the model's text (default: stdout)"),
	CLI_FLAG(0, "store", O(store),
		 "fit: store the model in the database (its models table), where\n"
		 "the dispatch library and `db export` take it from"),
	CLI_LLONG('M', NULL, "M", O(M), 1, AT_SHAPE_MAX_DIM, "choose: the number of rows"),
	CLI_LLONG('N', NULL, "N", O(N), 1, AT_SHAPE_MAX_DIM, "choose: the row length"),
	CLI_STRING(0, "dtype", "DTYPE", O(dtype), "choose: f32 (default), f16 or bf16"),
	CLI_INT(0, "threads", "N", O(threads), 1, 16, "eval: fits run at once (default 2)"),
	CLI_INT(0, "worst", "K", O(worst), 0, 1000, "eval: list the K worst shapes (default 10)"),
	CLI_INT(0, "keep", "K", O(keep), 1, 100000,
		"prune-eval: the best-ranked variants kept (default 24)"),
	CLI_STRING(0, "explore", "F", O(explore),
		   "prune-eval: the share of the rest kept at random (default 0.02)"),
	CLI_STRING(0, "compile-weight", "P", O(compile_weight),
		   "prune-eval: a variant weighs (its template's compile time over\n"
		   "the typical one)^P against K (default 1; 0: K counts variants)"),
	CLI_FILE(0, "model", "FILE", O(model),
		 "eval, prune-eval: this model's text for every shape instead of\n"
		 "fitting on the other shapes (eval: shapes it was not fitted on)"),
	CLI_INT(0, "trees", "N", O(trees), 1, 10000, "the variant ensemble's trees (default 300)"),
	CLI_INT(0, "depth", "D", O(depth), 1, 16, "the variant ensemble's tree depth (default 8)"),
	CLI_INT(0, "fits", "K", O(fits), 1, 64,
		"the variant ensemble as the average of K fits, each its own seed\n"
		"(default 1)"),
	CLI_INT(0, "seed", "S", O(seed), 1, 1 << 30, "the variant ensemble's (first) seed (default 11)"),
	CLI_CALLBACK(0, "part", "K/N", parse_part,
		     "eval: hold out only every N-th shape from the K-th (each fit still\n"
		     "on every other shape): N runs apart make one leave-one-out"),
	CLI_STRING(0, "rank", "RULE", O(rank),
		   "how a model of several fits ranks variants: mean (default) or\n"
		   "worst, the slowest of the fits' predictions"),
	CLI_END,
};
#undef O

/* The templates' rules and the database's samples, loaded together. */
typedef struct model_inputs {
	const char *db_path;
	tmpl_manifest *ms;
	size_t nms;
	manifest_rules *rules;
	tr_template *ts;
	const char *op; /* whose results: softmax unless --op */
	model_samples s;
	model_matrix mx;
	model_fit_options fit;
} model_inputs;

static void inputs_free(model_inputs *in)
{
	model_matrix_free(&in->mx);
	model_samples_free(&in->s);
	for (size_t i = 0; in->rules && i < in->nms; i++)
		manifest_rules_free(&in->rules[i]);
	free(in->rules);
	free(in->ts);
	if (in->ms)
		manifest_free_all(in->ms, in->nms);
}

static int inputs_load(const model_options *o, const char *db, model_inputs *in)
{
	memset(in, 0, sizeof *in);
	perf_rank rank;
	if (o->rank && perf_rank_parse(o->rank, &rank))
		return cli_usage_error("model", "--rank %s: expected mean or worst", o->rank);
	in->db_path = db;
	at_error err = { { 0 } };
	if (manifest_load_dir(plan_templates_dir(o->templates), &in->ms, &in->nms, &err))
		return cli_fail(err.msg);
	in->rules = xcalloc(in->nms ? in->nms : 1, sizeof *in->rules);
	in->ts = xcalloc(in->nms ? in->nms : 1, sizeof *in->ts);
	for (size_t i = 0; i < in->nms; i++) {
		manifest_rules_view(&in->ms[i], &in->rules[i]);
		in->ts[i] = in->rules[i].t;
	}
	if (o->op && !op_find(o->op)) {
		char *names = op_names();
		at_error_set(&err, "--op %s: no such op (%s)", o->op, names);
		free(names);
		inputs_free(in);
		return cli_fail(err.msg);
	}
	in->op = o->op ? o->op : "softmax";
	if (model_samples_load(db, o->gpu, in->op, in->ts, (int)in->nms, &in->s, &err)) {
		inputs_free(in);
		return cli_fail(err.msg);
	}
	model_matrix_build(&in->s, in->ts, (int)in->nms, &in->mx);
	model_fit_defaults(&in->fit);
	if (o->trees)
		in->fit.variant.ntrees = o->trees;
	if (o->depth)
		in->fit.variant.depth = o->depth;
	if (o->fits)
		in->fit.fits = o->fits;
	if (o->seed)
		in->fit.variant.seed = (unsigned)o->seed;
	if (o->rank)
		perf_rank_parse(o->rank, &in->fit.rank); /* checked before loading */
	return 0;
}

/* The model whose text is in file path, into m. Returns 0, or non-zero
 * having said why. */
static int load_model_file(const char *path, perf_model *m)
{
	char *t = strbuf_read_file(path);
	if (!t) {
		perror(path);
		return 1;
	}
	at_error err = { { 0 } };
	int rc = perf_model_from_text(t, m, &err);
	free(t);
	return rc ? cli_fail(err.msg) : 0;
}

static int model_fit_cmd(const model_options *o, model_inputs *in)
{
	perf_model m;
	if (model_fit(&in->s, &in->mx, -1, &in->fit, &m))
		return cli_fail("nothing to fit on");
	strbuf text = { 0 };
	perf_model_to_text(&m, &text);
	perf_model_free(&m);
	if (o->store) {
		tdb *db;
		at_error err = { { 0 } };
		int rc = tdb_open(in->db_path, &db, &err);
		if (rc == 0)
			rc = tdb_model_put(db, in->s.gpu, in->op, (long long)in->s.nshapes,
					   (long long)in->s.nsamples, text.data, &err);
		tdb_close(db);
		if (rc == 0)
			fprintf(stderr, "%s model of %s: %zu shapes, %zu results (%zu skipped): stored "
					"in %s, %zu bytes\n",
				in->op, in->s.gpu, in->s.nshapes, in->s.nsamples, in->s.skipped,
				in->db_path, text.len);
		strbuf_free(&text);
		return rc ? cli_fail(err.msg) : 0;
	}
	FILE *f = o->out ? fopen(o->out, "w") : stdout;
	if (!f) {
		strbuf_free(&text);
		perror(o->out);
		return 1;
	}
	int bad = fwrite(text.data, 1, text.len, f) != text.len;
	if (o->out)
		bad |= fclose(f) != 0;
	if (o->out && !bad)
		fprintf(stderr, "model of %s: %zu shapes, %zu results (%zu skipped): %s, %zu bytes\n",
			in->s.gpu, in->s.nshapes, in->s.nsamples, in->s.skipped, o->out, text.len);
	strbuf_free(&text);
	return bad ? cli_fail("could not write the model") : 0;
}

/* winner / chosen, the rules choice's (0: never timed there). */
static double rules_ratio(const model_inputs *in, const loo_outcome *r)
{
	return r->rules_us > 0 ? in->s.shapes[r->shape].winner_us / r->rules_us : 0;
}

static double timed_ratio(const model_inputs *in, const loo_outcome *r)
{
	return in->s.shapes[r->shape].winner_us / r->timed_us;
}

static void print_outcome(const model_inputs *in, const loo_outcome *r)
{
	const model_shape *sh = &in->s.shapes[r->shape];
	const model_sample *tp = &in->s.samples[r->timed_pick];
	char rp[256] = "-", tps[256];
	if (r->rules_t)
		tr_params_text(r->rules_t, r->rules_values, rp, sizeof rp);
	tr_params_text(&in->ts[tp->tmpl], tp->values, tps, sizeof tps);
	printf("%-4s %7lld %7lld  winner %9.2f us  rules %-20s %-60s ", at_dtype_name(sh->dtype),
	       sh->M, sh->N, sh->winner_us, r->rules_t ? r->rules_t->name : "-", rp);
	if (r->rules_us > 0)
		printf("%9.2f us %.3f", r->rules_us, rules_ratio(in, r));
	else
		printf("not timed (predicted %.2f us)", r->predicted_us);
	printf("  timed %-20s %.2f us %.3f", in->ts[tp->tmpl].name, r->timed_us,
	       timed_ratio(in, r));
	if (r->other_rank_us > 0)
		printf("  other ranking %.3f", sh->winner_us / r->other_rank_us);
	printf("\n");
}

/* "geomean G, within 10% W of N (P%), within 5% F" of ratios. */
static void print_summary(const char *what, const double *ratio, size_t n, size_t untimed)
{
	double log_sum = 0;
	size_t w10 = 0, w5 = 0;
	for (size_t i = 0; i < n; i++) {
		log_sum += log(ratio[i]);
		w10 += ratio[i] >= 1 / 1.1;
		w5 += ratio[i] >= 1 / 1.05;
	}
	printf("%s: geomean winner/chosen %.3f, within 10%% %zu of %zu (%.1f%%), within 5%% %zu", what,
	       n ? exp(log_sum / (double)n) : 0, w10, n, n ? 100.0 * (double)w10 / (double)n : 0, w5);
	if (untimed)
		printf("; chosen variant never timed at its shape: %zu more", untimed);
	printf("\n");
}

static int by_rules_ratio_ctx_cmp(const void *a, const void *b, void *ctx)
{
	double x = rules_ratio(ctx, a), y = rules_ratio(ctx, b);
	/* untimed last */
	if (x == 0 || y == 0)
		return (x == 0) - (y == 0);
	return (x > y) - (x < y);
}

static int model_eval_cmd(const model_options *o, model_inputs *in)
{
	perf_model fixed;
	if (o->model && load_model_file(o->model, &fixed))
		return 1;
	loo_outcome *out = xcalloc(in->s.nshapes ? in->s.nshapes : 1, sizeof *out);
	size_t n;
	at_error err = { { 0 } };
	int rc = model_loo(&in->s, &in->mx, in->ts, (int)in->nms, &in->fit, o->model ? &fixed : NULL,
			   o->part, o->threads, out, &n, &err);
	int fits = o->model ? fixed.fits : in->fit.fits;
	perf_rank rank = o->model ? fixed.rank : in->fit.rank;
	if (o->model)
		perf_model_free(&fixed);
	if (rc) {
		free(out);
		return cli_fail(err.msg);
	}
	double *rr = xmalloc((n ? n : 1) * sizeof *rr), *tr = xmalloc((n ? n : 1) * sizeof *tr);
	double *or = xmalloc((n ? n : 1) * sizeof *or);
	size_t nr = 0, untimed = 0, no = 0, other_untimed = 0;
	for (size_t i = 0; i < n; i++) {
		print_outcome(in, &out[i]);
		if (out[i].rules_us > 0)
			rr[nr++] = rules_ratio(in, &out[i]);
		else
			untimed++;
		tr[i] = timed_ratio(in, &out[i]);
		if (out[i].other_rank_us > 0)
			or[no++] = in->s.shapes[out[i].shape].winner_us / out[i].other_rank_us;
		else
			other_untimed++;
	}
	if (o->model)
		printf("\nheld out on %s: %zu tuned shapes, %zu results (%zu skipped), every shape "
		       "chosen by %s\n", in->s.gpu, n, in->s.nsamples, in->s.skipped, o->model);
	else
		printf("\nleave-one-out on %s: %zu tuned shapes held out (part %d of %d), %zu "
		       "results (%zu skipped), %d trees of depth %d, %d fit%s a model ranking by the "
		       "%s\n", in->s.gpu, n, o->part.count > 1 ? o->part.index : 1,
		       o->part.count > 1 ? o->part.count : 1, in->s.nsamples, in->s.skipped,
		       in->fit.variant.ntrees, in->fit.variant.depth, in->fit.fits,
		       in->fit.fits == 1 ? "" : "s", perf_rank_name(in->fit.rank));
	print_summary("rules choice (every valid variant)", rr, nr, untimed);
	print_summary("timed choice (the variants timed there)", tr, n, 0);
	if (fits > 1 && no)
		print_summary(rank == PERF_RANK_MEAN ? "rules choice, the worst fit's ranking"
						     : "rules choice, the fits' mean ranking",
			      or, no, other_untimed);
	qsort_r(out, n, sizeof *out, by_rules_ratio_ctx_cmp, in);
	printf("worst %d of the rules choice:\n", o->worst);
	for (size_t i = 0; i < n && (int)i < o->worst; i++)
		print_outcome(in, &out[i]);
	free(rr);
	free(tr);
	free(or);
	free(out);
	return 0;
}

/* The model fitted on every shape chooses for -M x -N and says why. */
static int model_choose_cmd(const model_options *o, model_inputs *in)
{
	at_dtype dt = AT_F32;
	if (o->dtype && at_dtype_parse(o->dtype, &dt))
		return cli_usage_error("model", "unknown dtype \"%s\" (expected f32, f16 or bf16)",
				       o->dtype);
	if (!o->M || !o->N)
		return cli_usage_error("model", "choose needs -M and -N");
	if (in->s.nshapes == 0)
		return cli_fail("no shapes to learn from");
	perf_model m;
	if (model_fit(&in->s, &in->mx, -1, &in->fit, &m))
		return cli_fail("nothing to fit on");
	/* the GPU's limits and copy rate as at its tuned shapes */
	const model_shape *any = &in->s.shapes[0];
	tr_env env = any->env;
	env.M = o->M;
	env.N = o->N;
	env.elem_bytes = (long long)at_dtype_size(dt);
	perf_choice c;
	perf_prediction p;
	at_error err = { { 0 } };
	int rc = perf_model_choose(&m, in->ts, (int)in->nms, dt, &env, &c, &err);
	if (rc == 0 && !c.t)
		rc = at_error_set(&err, "no template holds a variant valid at %s %lld x %lld",
				  at_dtype_name(dt), o->M, o->N);
	if (rc == 0)
		rc = perf_model_predict(&m, c.t, c.values, &env, any->copy_gbps, &p, &err);
	if (rc) {
		perf_model_free(&m);
		return cli_fail(err.msg);
	}
	char params[512];
	tr_params_text(c.t, c.values, params, sizeof params);
	printf("shape       %s %s M=%lld N=%lld on %s\n", in->op, at_dtype_name(dt), o->M, o->N,
	       in->s.gpu);
	printf("template    %s\nparams      %s\n", c.t->name, params);
	printf("predicted   %.3f us (best at the shape %.3f us, copy of its bytes %.3f us); "
	       "%lld valid variants predicted\n", p.time_us, p.best_us, p.copy_us, c.nvalid);
	strbuf why = { 0 };
	perf_model_explain(&m, c.t, c.values, &env, 8, &why);
	fputs(why.data, stdout);
	strbuf_free(&why);
	perf_model_free(&m);
	return 0;
}

static void print_prune_line(const prune_options *po, const prune_eval_result *r)
{
	printf("keep %3d explore %.2f weight %.1f: within 2%% %3zu of %zu (%5.1f%%), within 5%% %3zu, "
	       "geomean %.4f, worst %.3f; variants %6zu of %6zu (%5.1f%%), kernels %6zu of %6zu "
	       "(%5.1f%%), compile %6.0f s of %6.0f (%5.1f%%)\n",
	       po->keep, po->explore, po->compile_weight, r->within2, r->shapes,
	       r->shapes ? 100.0 * (double)r->within2 / (double)r->shapes : 0, r->within5, r->geomean,
	       r->worst, r->kept, r->all, r->all ? 100.0 * (double)r->kept / (double)r->all : 0,
	       r->kernels_kept, r->kernels_all,
	       r->kernels_all ? 100.0 * (double)r->kernels_kept / (double)r->kernels_all : 0,
	       r->compile_s_kept, r->compile_s_all,
	       r->compile_s_all > 0 ? 100.0 * r->compile_s_kept / r->compile_s_all : 0);
}

/* Offline, the sweep's pruning at every tuned shape (prune_eval.h): a table
 * over K and the exploration share, then the chosen ones' worst shapes. */
static int model_prune_eval_cmd(const model_options *o, model_inputs *in)
{
	prune_options po;
	prune_defaults(&po);
	if (o->keep)
		po.keep = o->keep;
	if (o->explore && cli_parse_double("model", "--explore", "a share", "0.1", o->explore, 0, 1,
					   &po.explore))
		return 2;
	if (o->compile_weight &&
	    cli_parse_double("model", "--compile-weight", "an exponent", "0.5", o->compile_weight,
			     0, 4, &po.compile_weight))
		return 2;
	perf_model fixed;
	at_error err = { { 0 } };
	if (o->model && load_model_file(o->model, &fixed))
		return 1;
	unsigned char *use = xcalloc(in->nms ? in->nms : 1, 1);
	for (size_t i = 0; i < in->nms; i++)
		use[i] = manifest_serves(&in->ms[i], in->op);
	prune_eval e;
	int rc = prune_eval_score(&in->s, &in->mx, in->ts, (int)in->nms, use, &in->fit,
				  o->model ? &fixed : NULL, o->threads, &e, &err);
	free(use);
	if (o->model)
		perf_model_free(&fixed);
	if (rc)
		return cli_fail(err.msg);
	printf("pruning on %s: %zu tuned shapes, %s\n", in->s.gpu, e.nshapes,
	       o->model ? o->model : "each scored by a model fitted on the other shapes");
	/* K against the exploration share, then K against how compile time
	 * counts (the weight's exponent, at the chosen F): a grid of (a, K) each */
	static const int keeps[] = { 4, 8, 12, 16, 24, 32, 48, 64 }, weight_keeps[] = { 24, 32, 48 };
	static const double explores[] = { 0, 0.02, 0.05, 0.1 }, weights[] = { 0, 0.5, 1, 1.5 };
	const struct {
		const double *a;
		size_t na;
		const int *k;
		size_t nk;
	} tables[] = { { explores, 4, keeps, 8 }, { weights, 4, weight_keeps, 3 } };
	prune_eval_result r;
	for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
		printf(t ? "\n" : "");
		for (size_t a = 0; a < tables[t].na; a++)
			for (size_t k = 0; k < tables[t].nk; k++) {
				prune_options grid = po;
				grid.keep = tables[t].k[k];
				*(t == 0 ? &grid.explore : &grid.compile_weight) = tables[t].a[a];
				prune_eval_measure(&e, &in->s, &grid, &r);
				print_prune_line(&grid, &r);
			}
	}
	printf("\nchosen:\n");
	prune_eval_measure(&e, &in->s, &po, &r);
	print_prune_line(&po, &r);
	/* the shapes where the pruned best is furthest from the winner */
	for (int w = 0; w < o->worst && r.worst > 1.02; w++) {
		const model_shape *sh = &in->s.shapes[r.worst_shape];
		printf("  worst: %s %lld x %lld, pruned best %.3f x the winner's %.2f us\n",
		       at_dtype_name(sh->dtype), sh->M, sh->N, r.worst, sh->winner_us);
		/* the next worst: measure again without this shape */
		for (size_t i = 0; i < e.nshapes; i++)
			if (e.shapes[i].shape == r.worst_shape) {
				e.shapes[i] = e.shapes[--e.nshapes];
				e.shapes[e.nshapes] = (prune_eval_shape){ 0 };
				break;
			}
		prune_eval_measure(&e, &in->s, &po, &r);
	}
	prune_eval_free(&e);
	return 0;
}

int cmd_model(int argc, char **argv)
{
	model_options o = { .threads = 2, .worst = 10 };
	int nargs;
	if (cli_parse_options("model", argc, argv, &o, &nargs))
		return 2;
	if (nargs != 1 || (strcmp(argv[1], "fit") != 0 && strcmp(argv[1], "eval") != 0 &&
			   strcmp(argv[1], "choose") != 0 && strcmp(argv[1], "prune-eval") != 0))
		return cli_usage_error("model", "expected one subcommand: fit, eval, choose or "
				       "prune-eval");
	const char *db;
	if (cli_db_path("model", o.db_path, 1, &db))
		return 2;
	model_inputs in;
	int rc = inputs_load(&o, db, &in);
	if (rc)
		return rc;
	rc = strcmp(argv[1], "fit") == 0	  ? model_fit_cmd(&o, &in)
	     : strcmp(argv[1], "eval") == 0	  ? model_eval_cmd(&o, &in)
	     : strcmp(argv[1], "prune-eval") == 0 ? model_prune_eval_cmd(&o, &in)
						  : model_choose_cmd(&o, &in);
	inputs_free(&in);
	return rc;
}

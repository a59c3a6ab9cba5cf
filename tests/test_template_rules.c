/* Tests for common/template_rules.c, the one engine of a template's rules,
 * on a toy template written out here: params texts, constraint checks with
 * variables not known, launch geometry and its ranges, and the walk that
 * enumeration and derivation share (its order, its pruning, its errors).
 * tests/test_rules_agree.c holds the tuner and the library to one answer
 * on the real templates. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "common/template_rules.h"

static const long long threads_v[] = { 32, 64, 128 };
static const long long vec_v[] = { 1, 2, 4 };
static const long long elems_v[] = { 4, 8 };
static const tr_param toy_params[] = {
	{ "threads", threads_v, 3, 64 },
	{ "vec", vec_v, 3, 4 },
	{ "elems", elems_v, 2, 8 },
};
static const char *const toy_constraints[] = {
	"elems % vec == 0",
	"threads * elems >= N",
	"M > 0",
};
static const char *const toy_prefer[] = { "N % vec == 0", "threads == 64" };
static const tr_template toy = {
	"toy", "toy.cu", NULL, 7u, toy_params, 3, toy_constraints, 3,
	{ "threads", "1", "elems * 4", "vec == 4", "threads * elems", "1", "0" },
	NULL, 0, NULL, 0, toy_prefer, 2,
};

static tr_env env_n(long long N)
{
	return (tr_env){ .M = 4096, .N = N, .elem_bytes = 4, .sm_count = 132, .cc = 90,
			 .max_threads = 1024, .max_smem = 232448, .regs_per_sm = 65536 };
}

/* toy with its launch expression i replaced by expr. */
static tr_template toy_launch(int i, const char *expr)
{
	tr_template t = toy;
	t.launch[i] = expr;
	return t;
}

Test(template_rules, a_params_text_parses_back_to_its_values)
{
	const long long v[] = { 128, 2, 8 };
	char text[64];
	cr_assert_eq(tr_params_text(&toy, v, text, sizeof text), strlen("threads=128 vec=2 elems=8"));
	cr_assert_str_eq(text, "threads=128 vec=2 elems=8");
	long long back[3];
	cr_assert_eq(tr_params_parse(&toy, text, back), 0);
	cr_assert_arr_eq(back, v, sizeof v);
	/* too small a buffer: cut, NUL-terminated, the whole length returned */
	char small[8];
	cr_assert_eq(tr_params_text(&toy, v, small, sizeof small), 25);
	cr_assert_str_eq(small, "threads");
	cr_assert_eq(tr_params_text(&toy, v, NULL, 0), 25);
}

Test(template_rules, a_param_the_text_leaves_out_takes_its_default)
{
	long long v[3];
	cr_assert_eq(tr_params_parse(&toy, "vec=1", v), 0);
	cr_assert_eq(v[0], 64);
	cr_assert_eq(v[1], 1);
	cr_assert_eq(v[2], 8);
	cr_assert_eq(tr_params_parse(&toy, "lanes=4", v), -1, "toy has no lanes");
	cr_assert_eq(tr_params_parse(&toy, "vec=x", v), -1);
	cr_assert_eq(tr_params_parse(&toy, "", v), -1, "a text naming no param");
	cr_assert_eq(tr_param_index(&toy, "elems", 5), 2);
	cr_assert_eq(tr_param_index(&toy, "elemsX", 5), 2, "the first len bytes are the name");
	cr_assert_eq(tr_param_index(&toy, "elem", 4), -1);
}

Test(template_rules, the_first_failing_constraint_is_named)
{
	const long long ok[] = { 64, 2, 8 }, odd[] = { 64, 4, 4 }, short_row[] = { 32, 1, 4 };
	tr_env env = env_n(256);
	at_error err = { { 0 } };
	int failed = -1;
	cr_assert_eq(tr_check(&toy, ok, &env, &failed, &err), 1, "%s", err.msg);
	cr_assert_eq(tr_check(&toy, odd, &env, &failed, &err), 1, "4 %% 4 == 0, 64 x 4 >= 256");
	cr_assert_eq(tr_check(&toy, short_row, &env, &failed, &err), 0);
	cr_assert_eq(failed, 1, "32 x 4 < 256");
	const long long bad_vec[] = { 64, 4, 2 };
	cr_assert_eq(tr_check(&toy, bad_vec, &env, &failed, &err), 0);
	cr_assert_eq(failed, 0);
}

Test(template_rules, a_constraint_naming_a_variable_not_known_is_skipped)
{
	const long long short_row[] = { 32, 1, 4 };
	tr_env env = env_n(-1); /* N not known: `threads * elems >= N` skipped */
	at_error err = { { 0 } };
	int failed = -1;
	cr_assert_eq(tr_check(&toy, short_row, &env, &failed, &err), 1, "%s", err.msg);
	env = env_n(256);
	env.M = -1;
	cr_assert_eq(tr_check(&toy, short_row, &env, &failed, &err), 0, "N is known again");
	cr_assert_eq(tr_check(&toy, short_row, NULL, &failed, &err), 1, "no shape at all");
	long long v;
	cr_assert_eq(tr_eval(&toy, "threads + N", short_row, NULL, &v, &err), EXPR_UNKNOWN);
	cr_assert_str_eq(err.msg, "in \"threads + N\": unknown name \"N\" at column 11");
	env = env_n(-1);
	cr_assert_eq(tr_eval(&toy, "threads + M", short_row, &env, &v, &err), EXPR_OK);
	cr_assert_eq(v, 32 + 4096);
	/* a walk skips them the same way */
	tr_rules *r;
	cr_assert_eq(tr_rules_new(&toy, &env, &r, &err), 0, "%s", err.msg);
	tr_rules_free(r);
}

Test(template_rules, a_constraint_that_cannot_be_evaluated_is_an_error)
{
	static const char *const divide[] = { "N / (vec - vec) > 0" };
	tr_template t = toy;
	t.constraints = divide;
	t.nconstraints = 1;
	const long long v[] = { 64, 2, 8 };
	tr_env env = env_n(256);
	at_error err = { { 0 } };
	cr_assert_eq(tr_check(&t, v, &env, NULL, &err), -1);
	cr_assert_str_eq(err.msg, "in \"N / (vec - vec) > 0\": division by zero at column 3");
}

Test(template_rules, the_geometry_is_the_launch_expressions_at_the_shape)
{
	const long long v[] = { 128, 4, 8 };
	tr_env env = env_n(1000);
	launch_geometry g;
	at_error err = { { 0 } };
	cr_assert_eq(tr_geometry(&toy, v, &env, &g, &err), 0, "%s", err.msg);
	cr_assert_eq(g.threads, 128);
	cr_assert_eq(g.rows_per_cta, 1);
	cr_assert_eq(g.dyn_smem, 32);
	cr_assert_eq(g.persistent, 1, "vec == 4");
	cr_assert_eq(g.max_n, 1024);
	cr_assert_eq(g.ctas_per_row, 1);
	cr_assert_eq(g.cooperative, 0);
}

Test(template_rules, persistent_and_cooperative_are_flags)
{
	const long long v[] = { 128, 4, 8 };
	tr_env env = env_n(1000);
	launch_geometry g;
	at_error err = { { 0 } };
	tr_template t = toy_launch(TR_PERSISTENT, "vec");
	t.launch[TR_COOPERATIVE] = "threads";
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), 0, "%s", err.msg);
	cr_assert_eq(g.persistent, 1);
	cr_assert_eq(g.cooperative, 1);
}

Test(template_rules, launch_values_out_of_an_ints_range_are_refused)
{
	const long long v[] = { 128, 4, 8 };
	tr_env env = env_n(1000);
	launch_geometry g;
	at_error err = { { 0 } };
	tr_template t = toy_launch(TR_SMEM_BYTES, "0 - 1");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	cr_assert_str_eq(err.msg, "template toy: launch value `0 - 1` = -1 is out of range");
	t = toy_launch(TR_THREADS, "2147483648");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	cr_assert_str_eq(err.msg,
			 "template toy: launch value `2147483648` = 2147483648 is out of range");
	t = toy_launch(TR_THREADS, "2147483647");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), 0, "the largest int is in range");
	t = toy_launch(TR_MAX_N, "N * N");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), 0, "max_n is a long long");
	cr_assert_eq(g.max_n, 1000000);
	t = toy_launch(TR_MAX_N, "0 - N");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "cannot be negative"), "%s", err.msg);
	t = toy_launch(TR_THREADS, "threads - threads");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "threads and rows_per_cta >= 1"), "%s", err.msg);
	t = toy_launch(TR_CTAS_PER_ROW, "2");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1, "a persistent cluster");
	cr_assert_not_null(strstr(err.msg, "cannot also be persistent"), "%s", err.msg);
	t = toy_launch(TR_THREADS, "N / (vec - 4)");
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	cr_assert_not_null(strstr(err.msg, "division by zero"), "%s", err.msg);
}

typedef struct visits {
	long long v[64][3];
	int n;
} visits;

static void record(void *ctx, const long long *values)
{
	visits *s = ctx;
	cr_assert_lt(s->n, 64);
	memcpy(s->v[s->n++], values, sizeof s->v[0]);
}

Test(template_rules, a_walk_over_every_param_is_the_odometer_of_the_valid_variants)
{
	tr_env env = env_n(300);
	at_error err = { { 0 } };
	tr_rules *r;
	cr_assert_eq(tr_rules_new(&toy, &env, &r, &err), 0, "%s", err.msg);
	const int idx[] = { 2, 1, 0 }; /* elems fastest, threads slowest */
	const long long start[] = { 64, 4, 8 };
	visits s = { .n = 0 };
	cr_assert_eq(tr_walk(r, start, idx, 3, record, &s, &err), 0, "%s", err.msg);
	/* threads * elems >= 300: 64 x 8, then 128 x 4 and 128 x 8, each with
	 * the vectors that divide elems */
	static const long long want[][3] = {
		{ 64, 1, 8 },  { 64, 2, 8 },  { 64, 4, 8 },  { 128, 1, 4 }, { 128, 1, 8 },
		{ 128, 2, 4 }, { 128, 2, 8 }, { 128, 4, 4 }, { 128, 4, 8 },
	};
	cr_assert_eq(s.n, 9);
	for (int i = 0; i < s.n; i++)
		cr_assert_arr_eq(s.v[i], want[i], sizeof want[i], "variant %d", i);
	for (int i = 0; i < s.n; i++)
		cr_assert_eq(tr_check(&toy, s.v[i], &env, NULL, &err), 1, "variant %d", i);
	cr_assert_eq(tr_prefer_holds(r, 0, want[0]), 1, "300 %% 1 == 0");
	cr_assert_eq(tr_prefer_holds(r, 0, want[8]), 1, "300 %% 4 == 0");
	cr_assert_eq(tr_prefer_holds(r, 1, want[8]), 0, "threads is 128");
	cr_assert_eq(tr_prefer_holds(r, 2, want[8]), 0, "toy has two preferences");
	tr_rules_free(r);
}

Test(template_rules, a_walk_over_some_params_keeps_the_others)
{
	tr_env env = env_n(300);
	at_error err = { { 0 } };
	tr_rules *r;
	cr_assert_eq(tr_rules_new(&toy, &env, &r, &err), 0, "%s", err.msg);
	const int idx[] = { 1 }; /* vec only */
	const long long start[] = { 32, 4, 8 }; /* 32 x 8 < 300: nothing to walk */
	visits s = { .n = 0 };
	cr_assert_eq(tr_walk(r, start, idx, 1, record, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 0);
	const long long longer[] = { 64, 4, 8 };
	cr_assert_eq(tr_walk(r, longer, idx, 1, record, &s, &err), 0, "%s", err.msg);
	cr_assert_eq(s.n, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(s.v[i][0], 64);
		cr_assert_eq(s.v[i][1], vec_v[i]);
		cr_assert_eq(s.v[i][2], 8);
	}
	tr_rules_free(r);
}

/* A constraint that divides by zero for vec = 2 only: the walk reports it
 * and still visits the variants where it can be evaluated. */
Test(template_rules, a_walk_reports_the_first_evaluation_error_and_goes_on)
{
	static const char *const cs[] = { "elems % (vec - 2) == 0" };
	tr_template t = toy;
	t.constraints = cs;
	t.nconstraints = 1;
	tr_env env = env_n(300);
	at_error err = { { 0 } };
	tr_rules *r;
	cr_assert_eq(tr_rules_new(&t, &env, &r, &err), 0, "%s", err.msg);
	const int idx[] = { 1 };
	const long long start[] = { 64, 4, 8 };
	visits s = { .n = 0 };
	cr_assert_eq(tr_walk(r, start, idx, 1, record, &s, &err), -1);
	cr_assert_str_eq(err.msg, "in \"elems % (vec - 2) == 0\": division by zero at column 7");
	cr_assert_eq(s.n, 2, "vec 1 and 4 divide 8 after the subtraction");
	cr_assert_eq(s.v[0][1], 1);
	cr_assert_eq(s.v[1][1], 4);
	tr_rules_free(r);
}

static void count(void *ctx, const long long *values)
{
	cr_assert_eq(values[0], 7);
	cr_assert_eq(values[1], 7);
	cr_assert_eq(values[2], 7);
	(*(int *)ctx)++;
}

/* 10^12 combinations, of which a constraint on the slowest param leaves
 * one value: a walk that tried every combination would not end within the
 * timeout; pruning there visits a few thousand. */
Test(template_rules, a_failing_prefix_prunes_every_assignment_below_it, .timeout = 10)
{
	long long values[1000];
	for (int i = 0; i < 1000; i++)
		values[i] = i;
	const tr_param ps[] = {
		{ "a", values, 1000, 0 }, { "b", values, 1000, 0 },
		{ "c", values, 1000, 0 }, { "d", values, 1000, 0 },
	};
	static const char *const cs[] = { "d < 4", "c == b", "b == a", "a == 7" };
	tr_template t = toy;
	t.params = ps;
	t.nparams = 4;
	t.constraints = cs;
	t.nconstraints = 4;
	tr_env env = env_n(300);
	at_error err = { { 0 } };
	tr_rules *r;
	cr_assert_eq(tr_rules_new(&t, &env, &r, &err), 0, "%s", err.msg);
	const int idx[] = { 3, 2, 1, 0 };
	const long long start[] = { 0, 0, 0, 0 };
	int n = 0;
	cr_assert_eq(tr_walk(r, start, idx, 4, count, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 4, "a = b = c = 7, d in 0..3");
	tr_rules_free(r);
}

Test(template_rules, more_params_than_the_bound_are_refused)
{
	long long one[] = { 1 };
	tr_param ps[TR_MAX_PARAMS + 1];
	char names[TR_MAX_PARAMS + 1][8];
	for (int i = 0; i <= TR_MAX_PARAMS; i++) {
		snprintf(names[i], sizeof names[i], "p%d", i);
		ps[i] = (tr_param){ names[i], one, 1, 1 };
	}
	tr_template t = toy;
	t.params = ps;
	t.nparams = TR_MAX_PARAMS + 1;
	t.nconstraints = 0;
	long long v[TR_MAX_PARAMS + 1] = { 0 };
	tr_env env = env_n(300);
	at_error err = { { 0 } };
	cr_assert_eq(tr_check(&t, v, &env, NULL, &err), -1);
	cr_assert_str_eq(err.msg, "template toy has more than 16 params");
	launch_geometry g;
	cr_assert_eq(tr_geometry(&t, v, &env, &g, &err), -1);
	tr_rules *r = (tr_rules *)1;
	cr_assert_eq(tr_rules_new(&t, &env, &r, &err), -1);
	cr_assert_null(r);
	cr_assert_eq(tr_params_parse(&t, "p0=1", v), -1);
}

/* Tests for gen/manifest.c: a good manifest loads with exact values, every
 * kind of mistake is reported at the exact file:line:column, and constraints
 * and launch expressions evaluate as documented. Each test works in its own
 * temporary folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/manifest.h"

#include "tests/tmp_folder.h"

/* The manifest every error test starts from; tests swap one piece of it so
 * that expected line numbers can be read off this listing. */
static const char good_yaml[] =
	"template: good\n"                    /*  1 */
	"op: softmax\n"                       /*  2 */
	"source: good.cu\n"                   /*  3 */
	"summary: One CTA per row.\n"         /*  4 */
	"dtypes: [f32, bf16]\n"               /*  5 */
	"params:\n"                           /*  6 */
	"  - name: threads\n"                 /*  7 */
	"    values: [128, 256, 512]\n"       /*  8 */
	"    default: 256\n"                  /*  9 */
	"    doc: threads per CTA\n"          /* 10 */
	"  - name: vec\n"                     /* 11 */
	"    values: [1, 2, 4]\n"             /* 12 */
	"    default: 4\n"                    /* 13 */
	"constraints:\n"                      /* 14 */
	"  - expr: \"threads % 32 == 0\"\n"   /* 15 */
	"    why: whole warps\n"              /* 16 */
	"  - expr: \"threads * vec <= N\"\n"  /* 17 */
	"launch:\n"                           /* 18 */
	"  threads: \"threads\"\n"            /* 19 */
	"  rows_per_cta: 1\n"                 /* 20 */
	"  smem_bytes: \"0\"\n"               /* 21 */
	"  persistent: \"0\"\n"               /* 22 */
	"  max_n: \"threads * vec * 8\"\n";   /* 23 */

TestSuite(manifest, .init = tmp_setup, .fini = tmp_teardown);

/* good_yaml with the one occurrence of `from` replaced by `to`. */
static void write_variant(const char *name, const char *from, const char *to)
{
	const char *at = strstr(good_yaml, from);
	cr_assert_not_null(at, "\"%s\" is not in the good manifest", from);
	cr_assert_null(strstr(at + 1, from), "\"%s\" is not unique", from);
	char text[4096];
	snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good_yaml), good_yaml,
		 to, at + strlen(from));
	tmp_write(name, text);
}

static int is_zeroed(const tmpl_manifest *m)
{
	static const tmpl_manifest zero;
	return memcmp(m, &zero, sizeof zero) == 0;
}

/* Loads `name` and checks that it fails with a message that starts with
 * "<dir>/<name>" followed by `msg` (which begins with ":line:col: "). */
static void expect_load_error(const char *name, const char *msg)
{
	char want[1024];
	const char *path = tmp_path(name);
	snprintf(want, sizeof want, "%s%s", path, msg);
	tmpl_manifest m;
	memset(&m, 0x5a, sizeof m);
	at_error err = { { 0 } };
	cr_expect_eq(manifest_load(path, &m, &err), -1);
	cr_expect_str_eq(err.msg, want);
	cr_expect(is_zeroed(&m), "*out not zeroed after a failed load");
	manifest_free(&m);
}

static void expect_variant_error(const char *from, const char *to,
				 const char *msg)
{
	tmp_write("good.cu", "// kernel\n");
	write_variant("good.yaml", from, to);
	expect_load_error("good.yaml", msg);
}

static void load_good(tmpl_manifest *m)
{
	at_error err = { { 0 } };
	tmp_write("good.cu", "// kernel\n");
	tmp_write("good.yaml", good_yaml);
	cr_assert_eq(manifest_load(tmp_path("good.yaml"), m, &err), 0, "%s", err.msg);
}

Test(manifest, good_loads_exactly)
{
	tmpl_manifest m;
	load_good(&m);
	cr_expect_str_eq(m.name, "good");
	cr_expect_str_eq(m.op, "softmax");
	cr_expect_str_eq(m.summary, "One CTA per row.");
	cr_expect_str_eq(m.manifest_path, tmp_path("good.yaml"));
	cr_expect_str_eq(m.source_path, tmp_path("good.cu"));
	cr_expect_eq(m.dtype_mask, (1u << AT_F32) | (1u << AT_BF16));

	cr_assert_eq(m.nparams, 2);
	cr_expect_str_eq(m.params[0].name, "threads");
	cr_assert_eq(m.params[0].nvalues, 3);
	cr_expect_eq(m.params[0].values[0], 128);
	cr_expect_eq(m.params[0].values[1], 256);
	cr_expect_eq(m.params[0].values[2], 512);
	cr_expect_eq(m.params[0].def, 256);
	cr_expect_str_eq(m.params[0].doc, "threads per CTA");
	cr_expect_str_eq(m.params[1].name, "vec");
	cr_assert_eq(m.params[1].nvalues, 3);
	cr_expect_eq(m.params[1].values[2], 4);
	cr_expect_eq(m.params[1].def, 4);
	cr_expect_str_eq(m.params[1].doc, "");

	cr_assert_eq(m.nconstraints, 2);
	cr_expect_str_eq(m.constraints[0].expr, "threads % 32 == 0");
	cr_expect_str_eq(m.constraints[0].why, "whole warps");
	cr_expect_str_eq(m.constraints[1].expr, "threads * vec <= N");
	cr_expect_null(m.constraints[1].why);

	cr_expect_str_eq(m.launch.threads, "threads");
	cr_expect_str_eq(m.launch.rows_per_cta, "1");
	cr_expect_str_eq(m.launch.smem_bytes, "0");
	cr_expect_str_eq(m.launch.persistent, "0");
	cr_expect_str_eq(m.launch.max_n, "threads * vec * 8");

	cr_expect_eq(manifest_param_index(&m, "threads"), 0);
	cr_expect_eq(manifest_param_index(&m, "vec"), 1);
	cr_expect_eq(manifest_param_index(&m, "N"), -1);
	manifest_free(&m);
	cr_expect(is_zeroed(&m));
	manifest_free(&m); /* twice is harmless */
}

Test(manifest, optional_keys_may_be_left_out)
{
	tmp_write("min.cu", "");
	tmp_write("min.yaml",
		  "template: min\n"
		  "op: softmax\n"
		  "source: min.cu\n"
		  "dtypes: [f16]\n"
		  "params:\n"
		  "  - {name: x, values: [-3], default: -3}\n"
		  "launch: {threads: 32, rows_per_cta: x, smem_bytes: 0,\n"
		  "         persistent: 1, max_n: 0}\n");
	const char *path = tmp_path("min.yaml");
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(path, &m, &err), 0, "%s", err.msg);
	cr_expect_str_eq(m.summary, "");
	cr_expect_eq(m.dtype_mask, 1u << AT_F16);
	cr_expect_eq(m.nconstraints, 0);
	cr_expect_null(m.constraints);
	cr_expect_eq(m.params[0].values[0], -3);
	cr_expect_str_eq(m.launch.rows_per_cta, "x");
	/* launches of manifests older than the cluster and cooperative keys */
	cr_expect_str_eq(m.launch.ctas_per_row, "1");
	cr_expect_str_eq(m.launch.cooperative, "0");
	manifest_free(&m);
}

Test(manifest, cluster_and_cooperative_launch_keys)
{
	tmp_write("cl.cu", "");
	tmp_write("cl.yaml",
		  "template: cl\n"
		  "op: softmax\n"
		  "source: cl.cu\n"
		  "dtypes: [f32]\n"
		  "params:\n"
		  "  - {name: cluster, values: [2, 4], default: 4}\n"
		  "launch: {threads: 32, rows_per_cta: 1, smem_bytes: 0, persistent: 0,\n"
		  "         max_n: 0, ctas_per_row: cluster * 1, cooperative: \"cc >= 70\"}\n");
	const char *path = tmp_path("cl.yaml");
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(path, &m, &err), 0, "%s", err.msg);
	cr_expect_str_eq(m.launch.ctas_per_row, "cluster * 1");
	cr_expect_str_eq(m.launch.cooperative, "cc >= 70");
	manifest_free(&m);

	tmp_write("cl.yaml",
		  "template: cl\n"
		  "op: softmax\n"
		  "source: cl.cu\n"
		  "dtypes: [f32]\n"
		  "params:\n"
		  "  - {name: cluster, values: [2, 4], default: 4}\n"
		  "launch: {threads: 32, rows_per_cta: 1, smem_bytes: 0, persistent: 0,\n"
		  "         max_n: 0, ctas_per_row: clusters}\n");
	cr_assert_eq(manifest_load(path, &m, &err), -1);
	cr_expect(strstr(err.msg, "cl.yaml:8:34: expected a valid expression in launch.ctas_per_row"),
		  "%s", err.msg);
	cr_expect(is_zeroed(&m));
}

Test(manifest, manifest_free_on_zeroed)
{
	tmpl_manifest m;
	memset(&m, 0, sizeof m);
	manifest_free(&m);
	manifest_free(NULL);
	manifest_free_all(NULL, 0);
	cr_expect(is_zeroed(&m));
}

Test(manifest, missing_keys)
{
	expect_variant_error("op: softmax\n", "",
			     ":1:1: missing key \"op\" in the manifest");
	expect_variant_error("    default: 4\n", "",
			     ":11:5: missing key \"default\" in param \"vec\"");
	expect_variant_error("  max_n: \"threads * vec * 8\"\n", "",
			     ":19:3: missing key \"max_n\" in launch");
	expect_variant_error("  - expr: \"threads * vec <= N\"\n",
			     "  - why: nothing\n",
			     ":17:5: missing key \"expr\" in constraints[1]");
}

Test(manifest, unknown_keys)
{
	expect_variant_error("summary:", "summery:",
			     ":4:1: unknown key \"summery\" in the manifest (expected one of: template, op, also_ops, source, summary, dtypes, params, constraints, launch, derive)");
	expect_variant_error("    doc: threads per CTA\n",
			     "    docs: threads per CTA\n",
			     ":10:5: unknown key \"docs\" in params[0] (expected one of: name, values, default, doc)");
	expect_variant_error("  persistent:", "  persist:",
			     ":22:3: unknown key \"persist\" in launch (expected one of: threads, rows_per_cta, smem_bytes, persistent, max_n, ctas_per_row, cooperative)");
	expect_variant_error("    why: whole warps\n", "    reason: whole warps\n",
			     ":16:5: unknown key \"reason\" in constraints[0] (expected one of: expr, why)");
	expect_variant_error("op: softmax\n", "op: softmax\nop: softmax\n",
			     ":3:1: duplicate key \"op\" in the manifest");
}

Test(manifest, bad_integers)
{
	expect_variant_error("[128, 256, 512]", "[128, abc, 512]",
			     ":8:19: expected an integer in values of param \"threads\", got \"abc\"");
	expect_variant_error("[128, 256, 512]", "[128, 2.5, 512]",
			     ":8:19: expected an integer in values of param \"threads\", got \"2.5\"");
	expect_variant_error("[128, 256, 512]",
			     "[128, 99999999999999999999, 512]",
			     ":8:19: expected an integer in values of param \"threads\", got \"99999999999999999999\"");
	expect_variant_error("[128, 256, 512]", "[128, \" 256\", 512]",
			     ":8:19: expected an integer in values of param \"threads\", got \" 256\"");
	expect_variant_error("[128, 256, 512]", "[128, [256], 512]",
			     ":8:19: expected an integer in values of param \"threads\", got a sequence");
	expect_variant_error("default: 4", "default: four",
			     ":13:14: expected an integer in default of param \"vec\", got \"four\"");
}

Test(manifest, values_and_default)
{
	expect_variant_error("    default: 256\n", "    default: 300\n",
			     ":9:14: expected the default of param \"threads\" to be one of its values, got 300");
	expect_variant_error("[128, 256, 512]", "[128, 256, 128]",
			     ":8:24: expected distinct values of param \"threads\", got 128 twice");
	expect_variant_error("[128, 256, 512]", "[]",
			     ":8:13: expected at least one integer in values of param \"threads\"");
	expect_variant_error("[128, 256, 512]", "128",
			     ":8:13: expected a sequence of integers for values, got \"128\"");
}

Test(manifest, param_names)
{
	expect_variant_error("name: vec", "name: Vec",
			     ":11:11: expected a param name matching [a-z][a-z0-9_]*, got \"Vec\"");
	expect_variant_error("name: vec", "name: 2vec",
			     ":11:11: expected a param name matching [a-z][a-z0-9_]*, got \"2vec\"");
	expect_variant_error("name: vec", "name: threads",
			     ":11:11: duplicate param name \"threads\"");
	expect_variant_error("name: vec", "name: sm_count",
			     ":11:11: param name \"sm_count\" clashes with the shape variable of that name");
}

Test(manifest, empty_params)
{
	tmp_write("e.cu", "");
	tmp_write("e.yaml",
		  "template: e\nop: softmax\nsource: e.cu\ndtypes: [f32]\n"
		  "params: []\n"
		  "launch: {threads: 1, rows_per_cta: 1, smem_bytes: 0, persistent: 0, max_n: 0}\n");
	expect_load_error("e.yaml", ":5:9: expected at least one param in params");
}

/* TR_MAX_PARAMS (common/template_rules.h): the bound of every variant's
 * values, checked where the manifest is read rather than in a sweep. */
Test(manifest, at_most_16_params)
{
	char text[2048] = "template: e\nop: softmax\nsource: e.cu\ndtypes: [f32]\nparams:\n";
	for (int i = 0; i < 17; i++)
		snprintf(text + strlen(text), sizeof text - strlen(text),
			 "  - {name: p%d, values: [1], default: 1}\n", i);
	strcat(text, "launch: {threads: 1, rows_per_cta: 1, smem_bytes: 0, persistent: 0, max_n: 0}\n");
	tmp_write("e.cu", "");
	tmp_write("e.yaml", text);
	expect_load_error("e.yaml", ":6:3: expected at most 16 params, got 17");
	/* 16 load */
	char *last = strstr(text, "  - {name: p16");
	memmove(last, strstr(last, "launch:"), strlen(strstr(last, "launch:")) + 1);
	tmp_write("e.yaml", text);
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(tmp_path("e.yaml"), &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.nparams, 16);
	manifest_free(&m);
}

Test(manifest, dtypes)
{
	expect_variant_error("[f32, bf16]", "[f32, f64]",
			     ":5:15: expected a dtype (f32, f16, bf16) in dtypes, got \"f64\"");
	expect_variant_error("[f32, bf16]", "[f32, f32]",
			     ":5:15: duplicate dtype \"f32\" in dtypes");
	expect_variant_error("[f32, bf16]", "[]",
			     ":5:9: expected at least one dtype in dtypes");
	expect_variant_error("[f32, bf16]", "f32",
			     ":5:9: expected a sequence of dtypes (f32, f16, bf16), got \"f32\"");
}

Test(manifest, bad_expressions)
{
	expect_variant_error("\"threads * vec <= N\"", "\"threads * lanes <= N\"",
			     ":17:11: expected a valid expression in expr of constraints[1]: in \"threads * lanes <= N\": unknown name \"lanes\" at column 11");
	expect_variant_error("\"threads * vec * 8\"", "\"threads * vec *\"",
			     ":23:10: expected a valid expression in launch.max_n: in \"threads * vec *\": expected a number, a name or '(', got end of expression at column 16");
	expect_variant_error("rows_per_cta: 1", "rows_per_cta: {a: 1}",
			     ":20:17: expected a string for launch.rows_per_cta, got a mapping");
}

Test(manifest, shape_variables_are_known)
{
	/* Every shape variable may appear in an expression. */
	tmp_write("good.cu", "");
	write_variant("good.yaml", "rows_per_cta: 1",
		      "rows_per_cta: \"M + N + elem_bytes + sm_count + cc + max_threads + max_smem + regs_per_sm\"");
	const char *path = tmp_path("good.yaml");
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(path, &m, &err), 0, "%s", err.msg);
	manifest_free(&m);
}

Test(manifest, yaml_syntax_error)
{
	expect_variant_error("    default: 256\n", "    default: [256\n",
			     ":10:8: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at 9:14)");
	expect_variant_error("    doc: threads per CTA\n", "     doc: threads per CTA\n",
			     ":10:9: invalid YAML: mapping values are not allowed in this context");
}

Test(manifest, not_a_mapping)
{
	tmp_write("good.cu", "");
	tmp_write("good.yaml", "- just\n- a list\n");
	expect_load_error("good.yaml",
			  ":1:1: expected a mapping of manifest keys, got a sequence");
	tmp_write("good.yaml", "# nothing here\n");
	expect_load_error("good.yaml",
			  ":1:1: expected a mapping of manifest keys, got an empty document");
	char text[4096];
	snprintf(text, sizeof text, "%s---\nfoo: 1\n", good_yaml);
	tmp_write("good.yaml", text);
	expect_load_error("good.yaml",
			  ":24:1: expected a single YAML document, found another");
}

Test(manifest, source_file)
{
	char msg[1024];
	write_variant("good.yaml", "source: good.cu", "source: gone.cu");
	snprintf(msg, sizeof msg,
		 ":3:9: expected a readable source file, cannot open \"%s/gone.cu\": No such file or directory",
		 tmp_folder());
	expect_load_error("good.yaml", msg);
	expect_variant_error("source: good.cu", "source: /abs/good.cu",
			     ":3:9: expected a source path relative to the manifest's folder");
}

Test(manifest, stem_must_match)
{
	tmp_write("good.cu", "");
	tmp_write("other.yaml", good_yaml);
	expect_load_error("other.yaml",
			  ":1:11: expected template \"other\" (the file's name), got \"good\"");
}

Test(manifest, missing_file)
{
	tmpl_manifest m;
	at_error err = { { 0 } };
	char want[600];
	const char *path = tmp_path("absent.yaml");
	cr_expect_eq(manifest_load(path, &m, &err), -1);
	snprintf(want, sizeof want, "%s: cannot open: No such file or directory",
		 path);
	cr_expect_str_eq(err.msg, want);
	cr_expect(is_zeroed(&m));
}

static const long long vals_ok[] = { 256, 4 };      /* threads, vec */
static const long long vals_odd[] = { 100, 4 };     /* not whole warps */
static const tr_env env_big = { .M = 64, .N = 4096, .elem_bytes = 4,
				.sm_count = 132, .cc = 90,
				.max_threads = 1024, .max_smem = 232448,
				.regs_per_sm = 65536 };
static const tr_env env_small = { .M = 64, .N = 512, .elem_bytes = 2 };

Test(manifest, check_pass_fail_skip)
{
	tmpl_manifest m;
	at_error err = { { 0 } };
	load_good(&m);
	cr_expect_eq(manifest_check(&m, vals_ok, &env_big, &err), 1, "%s", err.msg);
	/* Without shape variables the N constraint is skipped, so it passes. */
	cr_expect_eq(manifest_check(&m, vals_ok, NULL, &err), 1, "%s", err.msg);
	/* 256 * 4 > 512: fails, and has no `why`. */
	cr_expect_eq(manifest_check(&m, vals_ok, &env_small, &err), 0);
	cr_expect_str_eq(err.msg, "constraint `threads * vec <= N` fails");
	cr_expect_eq(manifest_check(&m, vals_odd, NULL, &err), 0);
	cr_expect_str_eq(err.msg, "constraint `threads % 32 == 0` fails: whole warps");
	manifest_free(&m);
}

Test(manifest, check_skip_goes_on_to_later_constraints)
{
	tmp_write("good.cu", "");
	/* The constraint needing N comes first; skipping it must not end the
	 * check. */
	write_variant("good.yaml",
		      "  - expr: \"threads % 32 == 0\"\n    why: whole warps\n"
		      "  - expr: \"threads * vec <= N\"\n",
		      "  - expr: \"threads * vec <= N\"\n"
		      "  - expr: \"threads % 32 == 0\"\n    why: whole warps\n");
	const char *path = tmp_path("good.yaml");
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(path, &m, &err), 0, "%s", err.msg);
	cr_expect_eq(manifest_check(&m, vals_odd, NULL, &err), 0);
	cr_expect_str_eq(err.msg, "constraint `threads % 32 == 0` fails: whole warps");
	cr_expect_eq(manifest_check(&m, vals_ok, NULL, &err), 1, "%s", err.msg);
	manifest_free(&m);
}

Test(manifest, check_evaluation_error)
{
	tmp_write("good.cu", "");
	write_variant("good.yaml", "\"threads % 32 == 0\"", "\"threads % (vec - 4) == 0\"");
	const char *path = tmp_path("good.yaml");
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(path, &m, &err), 0, "%s", err.msg);
	cr_expect_eq(manifest_check(&m, vals_ok, &env_big, &err), -1);
	cr_expect_str_eq(err.msg,
			 "in \"threads % (vec - 4) == 0\": division by zero at column 9");
	manifest_free(&m);
}

Test(manifest, eval_launch)
{
	tmpl_manifest m;
	at_error err = { { 0 } };
	long long v = 0;
	load_good(&m);
	cr_expect_eq(manifest_eval(&m, m.launch.max_n, vals_ok, NULL, &v, &err),
		     EXPR_OK, "%s", err.msg);
	cr_expect_eq(v, 256 * 4 * 8);
	cr_expect_eq(manifest_eval(&m, m.launch.threads, vals_odd, &env_big, &v,
				   &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(v, 100);
	cr_expect_eq(manifest_eval(&m, "ceil_div(N, sm_count) + cc", vals_ok,
				   &env_big, &v, &err), EXPR_OK, "%s", err.msg);
	cr_expect_eq(v, 32 + 90);
	cr_expect_eq(manifest_eval(&m, "N", vals_ok, NULL, &v, &err), EXPR_UNKNOWN);
	cr_expect_str_eq(err.msg, "in \"N\": unknown name \"N\" at column 1");
	manifest_free(&m);
}

Test(manifest, vars_order)
{
	tmpl_manifest m;
	expr_var vars[2 + TR_SHAPE_VARS];
	static const char *const names[] = {
		"threads", "vec", "M", "N", "elem_bytes", "sm_count",
		"cc", "max_threads", "max_smem", "regs_per_sm",
	};
	const long long want[] = { 256, 4, 64, 4096, 4, 132, 90, 1024, 232448, 65536 };
	load_good(&m);
	cr_assert_eq(manifest_vars(&m, vals_ok, &env_big, vars), 10);
	for (size_t i = 0; i < 10; i++) {
		cr_expect_str_eq(vars[i].name, names[i]);
		cr_expect_eq(vars[i].value, want[i], "%s", names[i]);
	}
	cr_expect_eq(manifest_vars(&m, vals_odd, NULL, vars), 2);
	cr_expect_eq(vars[0].value, 100);
	manifest_free(&m);
}

static void write_named(const char *stem)
{
	char text[512], name[64];
	snprintf(text, sizeof text,
		 "template: %s\nop: softmax\nsource: k.cu\ndtypes: [f32]\n"
		 "params:\n  - {name: t, values: [1], default: 1}\n"
		 "launch: {threads: t, rows_per_cta: 1, smem_bytes: 0, persistent: 0, max_n: 0}\n",
		 stem);
	snprintf(name, sizeof name, "%s.yaml", stem);
	tmp_write(name, text);
}

Test(manifest, load_dir_sorted)
{
	tmpl_manifest *ms = NULL;
	size_t n = 99;
	at_error err = { { 0 } };
	tmp_write("k.cu", "");
	write_named("b_two");
	write_named("a_one");
	write_named("c_three");
	write_named("B_upper"); /* strcmp order: upper case first */
	tmp_write("notes.txt", "not a manifest");
	tmp_write("x.yml", "not: [matched");
	tmp_write(".hidden.yaml", "not: [matched");
	cr_assert_eq(manifest_load_dir(tmp_folder(), &ms, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 4);
	cr_expect_str_eq(ms[0].name, "B_upper");
	cr_expect_str_eq(ms[1].name, "a_one");
	cr_expect_str_eq(ms[2].name, "b_two");
	cr_expect_str_eq(ms[3].name, "c_three");
	manifest_free_all(ms, n);
}

Test(manifest, load_dir_empty_and_missing)
{
	tmpl_manifest *ms = (tmpl_manifest *)&ms;
	size_t n = 99;
	at_error err = { { 0 } };
	cr_expect_eq(manifest_load_dir(tmp_folder(), &ms, &n, &err), 0, "%s", err.msg);
	cr_expect_eq(n, 0);
	cr_expect_null(ms);

	char want[600];
	const char *path = tmp_path("nope");
	cr_expect_eq(manifest_load_dir(path, &ms, &n, &err), -1);
	snprintf(want, sizeof want, "%s: cannot open folder: No such file or directory",
		 path);
	cr_expect_str_eq(err.msg, want);
}

Test(manifest, load_dir_fails_on_bad_one)
{
	tmpl_manifest *ms = (tmpl_manifest *)&ms;
	size_t n = 99;
	at_error err = { { 0 } };
	tmp_write("k.cu", "");
	write_named("a_one");
	write_named("b_two");
	tmp_write("c_bad.yaml", "template: c_bad\nop: [\n");
	cr_expect_eq(manifest_load_dir(tmp_folder(), &ms, &n, &err), -1);
	cr_expect_null(ms);
	cr_expect_eq(n, 0);
	char want[600];
	snprintf(want, sizeof want, "%s/c_bad.yaml:3:1:", tmp_folder());
	cr_expect(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
}

Test(manifest, the_derive_rules_load_as_param_indices_and_preferences)
{
	char text[4096];
	snprintf(text, sizeof text, "%sderive:\n  params: [vec]\n  widen: [threads]\n"
		 "  prefer:\n    - expr: \"N %% vec == 0\"\n      why: aligned rows\n", good_yaml);
	tmp_write("good.yaml", text);
	tmp_write("good.cu", "// kernel\n");
	tmpl_manifest m;
	at_error err;
	cr_assert_eq(manifest_load(tmp_path("good.yaml"), &m, &err), 0, "%s", err.msg);
	cr_assert_eq(m.derive.nparams, 1);
	cr_assert_eq(m.derive.params[0], 1, "vec is the second param");
	cr_assert_eq(m.derive.nwiden, 1);
	cr_assert_eq(m.derive.widen[0], 0);
	cr_assert_eq(m.derive.nprefer, 1);
	cr_assert_str_eq(m.derive.prefer[0].expr, "N % vec == 0");
	cr_assert_str_eq(m.derive.prefer[0].why, "aligned rows");
	manifest_free(&m);
}

Test(manifest, derive_rules_name_only_params_and_valid_expressions)
{
	char text[4096];
	snprintf(text, sizeof text, "%sderive:\n  params: [lanes]\n", good_yaml);
	tmp_write("good.yaml", text);
	tmp_write("good.cu", "// kernel\n");
	tmpl_manifest m;
	at_error err;
	cr_assert_eq(manifest_load(tmp_path("good.yaml"), &m, &err), -1);
	cr_assert(strstr(err.msg, ":25:12: expected the name of a param in derive.params, got \"lanes\""),
		  "%s", err.msg);
	snprintf(text, sizeof text, "%sderive:\n  params: [vec]\n  prefer:\n    - expr: \"N %% warps\"\n",
		 good_yaml);
	tmp_write("good.yaml", text);
	cr_assert_eq(manifest_load(tmp_path("good.yaml"), &m, &err), -1);
	cr_assert(strstr(err.msg, ":27:13: expected a valid expression in expr of derive.prefer[0]"),
		  "%s", err.msg);
	snprintf(text, sizeof text, "%sderive:\n  widen: [vec]\n", good_yaml);
	tmp_write("good.yaml", text);
	cr_assert_eq(manifest_load(tmp_path("good.yaml"), &m, &err), -1);
	cr_assert(strstr(err.msg, ":25:3: missing key \"params\" in derive"), "%s", err.msg);
}

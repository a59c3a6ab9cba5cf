/* Tests for the sweep config reader (tuner/config.c): exact parse results,
 * exact error messages with their line:column, shape expansion, and the
 * shipped configs in configs/ (the tests run from the repository root). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/config.h"

static int is_zeroed(const sweep_config *cfg)
{
	static const sweep_config zero;
	return memcmp(cfg, &zero, sizeof zero) == 0;
}

static void parse_ok(const char *yaml, sweep_config *cfg)
{
	at_error err = { { 0 } };
	int rc = config_parse(yaml, strlen(yaml), "x.yaml", cfg, &err);
	cr_assert_eq(rc, 0, "config_parse failed: %s\n--- input:\n%s", err.msg,
		     yaml);
}

static void expect_error(const char *yaml, const char *msg)
{
	sweep_config cfg;
	at_error err = { { 0 } };
	memset(&cfg, 0xab, sizeof cfg); /* so that zeroing is visible */
	int rc = config_parse(yaml, strlen(yaml), "x.yaml", &cfg, &err);
	cr_assert_eq(rc, -1, "config_parse accepted:\n%s", yaml);
	cr_assert_str_eq(err.msg, msg, "\n got: %s\nwant: %s\n--- input:\n%s",
			 err.msg, msg, yaml);
	cr_assert(is_zeroed(&cfg), "*out not zeroed after failure");
}

/* A sweep entry that is valid except for the lines the test appends. */
#define ENTRY "sweeps:\n  - op: softmax\n    dtypes: f32\n"

static void assert_ll(const long long *got, size_t n, const long long *want,
		      size_t nwant)
{
	cr_assert_eq(n, nwant, "got %zu values, want %zu", n, nwant);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "value %zu: got %lld, want %lld",
			     i, got[i], want[i]);
}

Test(config, full_config_every_form)
{
	const char *yaml =
		"warmup: 3\n"
		"repetitions: 100\n"
		"sweeps:\n"
		"  - op: softmax\n"
		"    dtypes: [f32, bf16]\n"
		"    M: 4096\n"
		"    N: [128, 1000]\n"
		"    templates: [softmax_block, softmax_warp2]\n"
		"  - op: softmax\n"
		"    dtypes: f16\n"
		"    M: [1, 2]\n"
		"    N: {from: 256, to: 1000, step: 256}\n"
		"  - {op: layer_norm, dtypes: [bf16], N: 34359738368,\n"
		"     M: {from: 7, to: 7, step: 5}}\n";
	sweep_config cfg;
	parse_ok(yaml, &cfg);
	cr_assert_str_eq(cfg.path, "x.yaml");
	cr_assert_str_eq(cfg.text, yaml);
	cr_assert_eq(cfg.warmup, 3);
	cr_assert_eq(cfg.repetitions, 100);
	cr_assert_eq(cfg.nspecs, 3);

	const sweep_spec *s = &cfg.specs[0];
	cr_assert_str_eq(s->op, "softmax");
	cr_assert_eq(s->line, 4);
	cr_assert_eq(s->ndtypes, 2);
	cr_assert_eq(s->dtypes[0], AT_F32);
	cr_assert_eq(s->dtypes[1], AT_BF16);
	assert_ll(s->Ms, s->nM, (const long long[]){ 4096 }, 1);
	assert_ll(s->Ns, s->nN, (const long long[]){ 128, 1000 }, 2);
	cr_assert_eq(s->ntemplates, 2);
	cr_assert_str_eq(s->templates[0], "softmax_block");
	cr_assert_str_eq(s->templates[1], "softmax_warp2");

	s = &cfg.specs[1];
	cr_assert_str_eq(s->op, "softmax");
	cr_assert_eq(s->line, 9);
	cr_assert_eq(s->ndtypes, 1);
	cr_assert_eq(s->dtypes[0], AT_F16);
	assert_ll(s->Ms, s->nM, (const long long[]){ 1, 2 }, 2);
	/* The range is inclusive but stops at the last step not past "to". */
	assert_ll(s->Ns, s->nN, (const long long[]){ 256, 512, 768 }, 3);
	cr_assert_null(s->templates);
	cr_assert_eq(s->ntemplates, 0);

	s = &cfg.specs[2];
	cr_assert_str_eq(s->op, "layer_norm");
	cr_assert_eq(s->line, 13);
	cr_assert_eq(s->ndtypes, 1);
	cr_assert_eq(s->dtypes[0], AT_BF16);
	assert_ll(s->Ms, s->nM, (const long long[]){ 7 }, 1);
	assert_ll(s->Ns, s->nN, (const long long[]){ 1LL << 35 }, 1); /* within a shape's bytes */
	config_free(&cfg);
	cr_assert(is_zeroed(&cfg));
}

Test(config, defaults)
{
	sweep_config cfg;
	parse_ok("sweeps:\n- op: softmax\n  dtypes: [f16]\n  M: 1\n  N: 2\n",
		 &cfg);
	cr_assert_eq(cfg.warmup, 5);
	cr_assert_eq(cfg.repetitions, 100);
	cr_assert_eq(cfg.min_repetitions, 10);
	cr_assert_float_eq(cfg.tolerance, 0.01, 1e-15);
	cr_assert_float_eq(cfg.time_budget_ms, 5.0, 1e-15);
	cr_assert_eq(cfg.nspecs, 1);
	cr_assert_eq(cfg.specs[0].line, 2);
	cr_assert_null(cfg.specs[0].templates);
	config_free(&cfg);
}

Test(config, warmup_and_repetitions_bounds)
{
	sweep_config cfg;
	parse_ok("warmup: 0\nrepetitions: 10000\n" ENTRY "    M: 1\n    N: 1\n",
		 &cfg);
	cr_assert_eq(cfg.warmup, 0);
	cr_assert_eq(cfg.repetitions, 10000);
	config_free(&cfg);
	parse_ok("warmup: 1000\nrepetitions: 1\n" ENTRY "    M: 1\n    N: 1\n",
		 &cfg);
	cr_assert_eq(cfg.warmup, 1000);
	cr_assert_eq(cfg.repetitions, 1);
	config_free(&cfg);

	expect_error("warmup: 1001\n" ENTRY,
		     "x.yaml:1:9: expected an integer from 0 to 1000 for warmup, "
		     "got \"1001\"");
	expect_error("warmup: -1\n" ENTRY,
		     "x.yaml:1:9: expected an integer from 0 to 1000 for warmup, "
		     "got \"-1\"");
	expect_error("warmup: five\n" ENTRY,
		     "x.yaml:1:9: expected an integer from 0 to 1000 for warmup, "
		     "got \"five\"");
	expect_error("warmup: [5]\n" ENTRY,
		     "x.yaml:1:9: expected an integer from 0 to 1000 for warmup, "
		     "got a sequence");
	expect_error("repetitions: 0\n" ENTRY,
		     "x.yaml:1:14: expected an integer from 1 to 10000 for "
		     "repetitions, got \"0\"");
	expect_error("repetitions: 10001\n" ENTRY,
		     "x.yaml:1:14: expected an integer from 1 to 10000 for "
		     "repetitions, got \"10001\"");
	expect_error("repetitions:\n" ENTRY,
		     "x.yaml:1:13: expected an integer from 1 to 10000 for "
		     "repetitions, got an empty value");
}

Test(config, adaptive_repetition_keys)
{
	sweep_config cfg;
	parse_ok("repetitions: 50\nmin_repetitions: 20\ntolerance: 0.005\n"
		 "time_budget_ms: 2.5\n" ENTRY "    M: 1\n    N: 1\n", &cfg);
	cr_assert_eq(cfg.repetitions, 50);
	cr_assert_eq(cfg.min_repetitions, 20);
	cr_assert_float_eq(cfg.tolerance, 0.005, 1e-15);
	cr_assert_float_eq(cfg.time_budget_ms, 2.5, 1e-15);
	config_free(&cfg);
	/* a fixed count, no early stop, no budget */
	parse_ok("repetitions: 25\nmin_repetitions: 25\ntolerance: 0\ntime_budget_ms: 0\n"
		 ENTRY "    M: 1\n    N: 1\n", &cfg);
	cr_assert_eq(cfg.min_repetitions, 25);
	cr_assert_float_eq(cfg.tolerance, 0, 1e-15);
	cr_assert_float_eq(cfg.time_budget_ms, 0, 1e-15);
	config_free(&cfg);
	/* fewer repetitions than the default fewest lower the fewest */
	parse_ok("repetitions: 3\n" ENTRY "    M: 1\n    N: 1\n", &cfg);
	cr_assert_eq(cfg.min_repetitions, 3);
	config_free(&cfg);
	parse_ok("tolerance: 1e-3\n" ENTRY "    M: 1\n    N: 1\n", &cfg);
	cr_assert_float_eq(cfg.tolerance, 0.001, 1e-15);
	config_free(&cfg);

	expect_error("repetitions: 20\nmin_repetitions: 30\n" ENTRY,
		     "x.yaml:2:18: expected an integer from 1 to 20 for min_repetitions "
		     "(at most repetitions, 20), got \"30\"");
	expect_error("min_repetitions: 0\n" ENTRY,
		     "x.yaml:1:18: expected an integer from 1 to 100 for min_repetitions "
		     "(at most repetitions, 100), got \"0\"");
	expect_error("tolerance: 1.5\n" ENTRY,
		     "x.yaml:1:12: expected a number from 0 to 1 for tolerance, got \"1.5\"");
	expect_error("tolerance: -0.01\n" ENTRY,
		     "x.yaml:1:12: expected a number from 0 to 1 for tolerance, got \"-0.01\"");
	expect_error("tolerance: nan\n" ENTRY,
		     "x.yaml:1:12: expected a number from 0 to 1 for tolerance, got \"nan\"");
	expect_error("tolerance: 1%\n" ENTRY,
		     "x.yaml:1:12: expected a number from 0 to 1 for tolerance, got \"1%\"");
	expect_error("tolerance: [0.01]\n" ENTRY,
		     "x.yaml:1:12: expected a number from 0 to 1 for tolerance, got a sequence");
	expect_error("time_budget_ms: fast\n" ENTRY,
		     "x.yaml:1:17: expected a number from 0 to 60000 for time_budget_ms, "
		     "got \"fast\"");
	expect_error("time_budget_ms: 1e9\n" ENTRY,
		     "x.yaml:1:17: expected a number from 0 to 60000 for time_budget_ms, "
		     "got \"1e9\"");
	expect_error("time_budget_ms:\n" ENTRY,
		     "x.yaml:1:16: expected a number from 0 to 60000 for time_budget_ms, "
		     "got an empty value");
}

Test(config, missing_keys)
{
	expect_error("warmup: 5\n",
		     "x.yaml:1:1: missing key \"sweeps\" at the top level");
	expect_error("sweeps:\n  - dtypes: f32\n    M: 1\n    N: 1\n",
		     "x.yaml:2:5: missing key \"op\" in sweep entry");
	expect_error("sweeps:\n  - op: softmax\n    M: 1\n    N: 1\n",
		     "x.yaml:2:5: missing key \"dtypes\" in sweep entry");
	expect_error(ENTRY "    N: 1\n",
		     "x.yaml:2:5: missing key \"M\" in sweep entry");
	expect_error(ENTRY "    M: 1\n",
		     "x.yaml:2:5: missing key \"N\" in sweep entry");
	expect_error(ENTRY "    M: 1\n    N: {from: 1, to: 4}\n",
		     "x.yaml:5:8: missing key \"step\" in the range for N");
}

Test(config, unknown_keys)
{
	expect_error("sweeps:\n- dtype: f32\n",
		     "x.yaml:2:3: unknown key \"dtype\" in sweep entry (expected "
		     "one of: op, dtypes, M, N, templates)");
	expect_error("sweep: []\n",
		     "x.yaml:1:1: unknown key \"sweep\" at the top level (expected "
		     "one of: sweeps, warmup, repetitions, min_repetitions, tolerance, "
		     "time_budget_ms)");
	expect_error(ENTRY "    m: 1\n",
		     "x.yaml:4:5: unknown key \"m\" in sweep entry (expected one of: "
		     "op, dtypes, M, N, templates)");
	expect_error(ENTRY "    M: 1\n    N: {from: 1, until: 4, step: 1}\n",
		     "x.yaml:5:18: unknown key \"until\" in the range for N "
		     "(expected one of: from, to, step)");
	expect_error(ENTRY "    op: softmax\n",
		     "x.yaml:4:5: duplicate key \"op\" in sweep entry");
	expect_error("? [a]\n: b\n",
		     "x.yaml:1:3: expected a key (a string) at the top level, got a sequence");
}

Test(config, bad_dtypes)
{
	expect_error("sweeps:\n  - op: softmax\n    dtypes: [f16, fp32]\n",
		     "x.yaml:3:19: unknown dtype \"fp32\" (expected f32, f16 or "
		     "bf16)");
	expect_error("sweeps:\n  - op: softmax\n    dtypes: F32\n",
		     "x.yaml:3:13: unknown dtype \"F32\" (expected f32, f16 or "
		     "bf16)");
	expect_error("sweeps:\n  - op: softmax\n    dtypes: [f32, bf16, f32]\n",
		     "x.yaml:3:25: duplicate dtype \"f32\" in dtypes");
	expect_error("sweeps:\n  - op: softmax\n    dtypes: []\n",
		     "x.yaml:3:13: expected at least one dtype in dtypes, got an "
		     "empty sequence");
	expect_error("sweeps:\n  - op: softmax\n    dtypes: {f32: 1}\n",
		     "x.yaml:3:13: expected a dtype or a sequence of dtypes for "
		     "dtypes, got a mapping");
	expect_error("sweeps:\n  - op: softmax\n    dtypes: [[f32]]\n",
		     "x.yaml:3:14: expected a dtype (f32, f16 or bf16), got a "
		     "sequence");
}

Test(config, bad_numbers)
{
	expect_error(ENTRY "    M: -3\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got \"-3\"");
	expect_error(ENTRY "    M: 1\n    N: 0\n",
		     "x.yaml:5:8: expected a positive integer for N, got \"0\"");
	expect_error(ENTRY "    M: 12abc\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got "
		     "\"12abc\"");
	expect_error(ENTRY "    M: [1, 1e3]\n    N: 1\n",
		     "x.yaml:4:12: expected a positive integer for M, got "
		     "\"1e3\"");
	expect_error(ENTRY "    M: 0x10\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got "
		     "\"0x10\"");
	expect_error(ENTRY "    M: 1.5\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got "
		     "\"1.5\"");
	expect_error(ENTRY "    M: +5\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got \"+5\"");
	expect_error(ENTRY "    M: 012\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got \"012\"");
	expect_error(ENTRY "    M: \" 12\"\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got \" 12\"");
	expect_error(ENTRY "    M:\n    N: 1\n",
		     "x.yaml:4:7: expected a positive integer for M, got an "
		     "empty value");
	expect_error(ENTRY "    M: 1\n    N: [4, [8]]\n",
		     "x.yaml:5:12: expected a positive integer for N, got a "
		     "sequence");
	expect_error(ENTRY "    M: []\n    N: 1\n",
		     "x.yaml:4:8: expected at least one value for M, got an "
		     "empty sequence");
}

Test(config, number_limits)
{
	expect_error(ENTRY "    M: 1\n    N: 1099511627777\n",
		     "x.yaml:5:8: expected a positive integer of at most "
		     "1099511627776 for N, got \"1099511627777\"");
	/* Past LLONG_MAX strtoll overflows; it is still "too large". */
	expect_error(ENTRY "    M: 99999999999999999999999\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer of at most "
		     "1099511627776 for M, got \"99999999999999999999999\"");
	expect_error(ENTRY "    M: -99999999999999999999999\n    N: 1\n",
		     "x.yaml:4:8: expected a positive integer for M, got "
		     "\"-99999999999999999999999\"");
	/* An inner NUL must not let "12" through. */
	static const char nul[] = ENTRY "    M: \"12\\0\"\n    N: 1\n";
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_parse(nul, strlen(nul), "x.yaml", &cfg, &err), -1);
}

Test(config, bad_ranges)
{
	expect_error(ENTRY "    M: 1\n    N: {from: 512, to: 256, step: 1}\n",
		     "x.yaml:5:24: expected N.to at least N.from (512), got "
		     "\"256\"");
	expect_error(ENTRY "    M: 1\n    N: {from: 1, to: 256, step: 0}\n",
		     "x.yaml:5:33: expected a positive integer for N.step, got "
		     "\"0\"");
	expect_error(ENTRY "    M: {from: 0, to: 8, step: 1}\n    N: 1\n",
		     "x.yaml:4:15: expected a positive integer for M.from, got "
		     "\"0\"");
	expect_error(ENTRY "    M: {from: 1, to: x, step: 1}\n    N: 1\n",
		     "x.yaml:4:22: expected a positive integer for M.to, got "
		     "\"x\"");
	expect_error(ENTRY "    M: 1\n    N: {}\n",
		     "x.yaml:5:8: missing key \"from\" in the range for N");
}

Test(config, too_many_shapes)
{
	expect_error(ENTRY "    M: 1\n"
		     "    N: {from: 1, to: 1099511627776, step: 1}\n",
		     "x.yaml:5:8: the range for N has 1099511627776 values, more "
		     "than the 1000000 shapes allowed in total");
	/* 1000 x 1000 is exactly the limit; a second entry goes over. */
	const char *big = ENTRY "    M: {from: 1, to: 1000, step: 1}\n"
			  "    N: {from: 1, to: 1000, step: 1}\n";
	sweep_config cfg;
	parse_ok(big, &cfg);
	sweep_shape *shapes;
	size_t n;
	at_error err;
	cr_assert_eq(config_shapes(&cfg, &shapes, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 1000000);
	cr_assert_eq(shapes[n - 1].M, 1000);
	cr_assert_eq(shapes[n - 1].N, 1000);
	free(shapes);
	config_free(&cfg);

	char over[512];
	snprintf(over, sizeof over,
		 "%s  - {op: softmax, dtypes: f32, M: 1, N: 1}\n", big);
	expect_error(over, "x.yaml:6:5: too many shapes: the sweeps up to this "
		     "entry expand to more than 1000000 (is a range too wide?)");
}

Test(config, bad_names_and_templates)
{
	expect_error("sweeps:\n  - op: Softmax\n    dtypes: f32\n    M: 1\n    N: 1\n",
		     "x.yaml:2:9: expected an op name matching [a-z][a-z0-9_]* "
		     "for op, got \"Softmax\"");
	expect_error("sweeps:\n  - op: [softmax]\n    dtypes: f32\n    M: 1\n    N: 1\n",
		     "x.yaml:2:9: expected an op name matching [a-z][a-z0-9_]* "
		     "for op, got a sequence");
	expect_error("sweeps:\n  - op:\n    dtypes: f32\n    M: 1\n    N: 1\n",
		     "x.yaml:2:8: expected an op name matching [a-z][a-z0-9_]* "
		     "for op, got an empty value");
	expect_error(ENTRY "    M: 1\n    N: 1\n    templates: softmax_block\n",
		     "x.yaml:6:16: expected a non-empty sequence of template "
		     "names for templates, got \"softmax_block\"");
	expect_error(ENTRY "    M: 1\n    N: 1\n    templates: []\n",
		     "x.yaml:6:16: expected a non-empty sequence of template "
		     "names for templates, got an empty sequence");
	expect_error(ENTRY "    M: 1\n    N: 1\n    templates: [a, b-c]\n",
		     "x.yaml:6:20: expected a template name matching "
		     "[a-z][a-z0-9_]* in templates, got \"b-c\"");
	expect_error(ENTRY "    M: 1\n    N: 1\n    templates: [a, b, a]\n",
		     "x.yaml:6:23: duplicate template \"a\" in templates");
}

Test(config, wrong_node_types)
{
	expect_error("sweeps: {op: softmax}\n",
		     "x.yaml:1:9: expected a non-empty sequence of sweep entries "
		     "for sweeps, got a mapping");
	expect_error("sweeps: []\n",
		     "x.yaml:1:9: expected a non-empty sequence of sweep entries "
		     "for sweeps, got an empty sequence");
	expect_error("sweeps:\n  - softmax\n",
		     "x.yaml:2:5: expected a sweep entry (a mapping with op, "
		     "dtypes, M and N), got \"softmax\"");
	expect_error("- sweeps\n",
		     "x.yaml:1:1: expected a mapping with sweeps at the top "
		     "level, got a sequence");
	expect_error("sweeps\n",
		     "x.yaml:1:1: expected a mapping with sweeps at the top "
		     "level, got \"sweeps\"");
	/* An alias back to its own sequence must not loop. */
	expect_error("sweeps: &a [*a]\n",
		     "x.yaml:1:9: expected a sweep entry (a mapping with op, "
		     "dtypes, M and N), got a sequence");
}

Test(config, long_values_are_cut)
{
	char yaml[512], want[512];
	char op[101];
	memset(op, 'A', 100);
	op[100] = '\0';
	snprintf(yaml, sizeof yaml, "sweeps:\n- op: %s\n", op);
	snprintf(want, sizeof want, "x.yaml:2:7: expected an op name matching "
		 "[a-z][a-z0-9_]* for op, got \"%.80s...\"", op);
	expect_error(yaml, want);
}

Test(config, yaml_syntax_errors)
{
	expect_error("sweeps:\n  - op: softmax\n    dtypes: [f32\n",
		     "x.yaml:4:1: invalid YAML: did not find expected ',' or ']' (while parsing "
		     "a flow sequence at 3:13)");
	expect_error("sweeps:\n  - op: softmax\n   dtypes: [f32]\n",
		     "x.yaml:3:4: invalid YAML: did not find expected '-' indicator (while "
		     "parsing a block collection at 2:3)");
	expect_error("a: b: c\n",
		     "x.yaml:1:5: invalid YAML: mapping values are not allowed in this context");
	expect_error("a: \"x\n",
		     "x.yaml:2:1: invalid YAML: found unexpected end of stream (while scanning "
		     "a quoted scalar at 1:4)");
	expect_error("\t- a\n",
		     "x.yaml:1:1: invalid YAML: found character that cannot start any token "
		     "(while scanning for the next token at 1:1)");
	expect_error("warmup: 5\nsweeps: \xff\n",
		     "x.yaml:2:9: invalid YAML: invalid leading UTF-8 octet");
	expect_error(ENTRY "    M: 1\n    N: 1\n---\nfoo: [\n",
		     "x.yaml:8:1: invalid YAML: did not find expected node content (while "
		     "parsing a flow node at 8:1)");
}

Test(config, several_documents)
{
	expect_error(ENTRY "    M: 1\n    N: 1\n---\nsweeps: []\n",
		     "x.yaml:6:1: expected a single YAML document, found another");
}

Test(config, empty_input)
{
	expect_error("", "x.yaml:1:1: the file is empty (expected a mapping "
		     "with sweeps)");
	expect_error("# nothing yet\n\n",
		     "x.yaml:1:1: the file is empty (expected a mapping with "
		     "sweeps)");
	expect_error("---\n", "x.yaml:1:1: the file is empty (expected a "
		     "mapping with sweeps)");
}

Test(config, parse_uses_only_len_bytes)
{
	const char *yaml = ENTRY "    M: 1\n    N: 1\ngarbage: [";
	size_t len = strlen(yaml) - strlen("garbage: [");
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_parse(yaml, len, "x.yaml", &cfg, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(strlen(cfg.text), len);
	config_free(&cfg);
}

Test(config, free_is_safe_on_zeroed)
{
	sweep_config cfg = { 0 };
	config_free(&cfg);
	config_free(&cfg);
	config_free(NULL);
	cr_assert(is_zeroed(&cfg));
}

Test(config, load_missing_file)
{
	sweep_config cfg;
	at_error err;
	memset(&cfg, 0xab, sizeof cfg);
	cr_assert_eq(config_load("configs/no-such-file.yaml", &cfg, &err), -1);
	cr_assert_str_eq(err.msg, "configs/no-such-file.yaml: cannot open: No "
			 "such file or directory");
	cr_assert(is_zeroed(&cfg));
}

Test(config, load_directory)
{
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_load("configs", &cfg, &err), -1);
	cr_assert_str_eq(err.msg, "configs: cannot read: Is a directory");
	cr_assert(is_zeroed(&cfg));
}

/* Writes text to a fresh temporary file; returns its malloc'd path. */
static char *write_temp(const char *text)
{
	char *path = strdup("/tmp/test_config_XXXXXX");
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

Test(config, load_stores_path_and_text_and_names_the_file)
{
	/* Over 4 KiB so that reading takes more than one chunk. */
	char yaml[8192];
	int n = snprintf(yaml, sizeof yaml, "%s", ENTRY "    M: 1\n    N: 1\n");
	memset(yaml + n, '#', 6000);
	yaml[n + 6000] = '\n';
	yaml[n + 6001] = '\0';
	char *path = write_temp(yaml);
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_load(path, &cfg, &err), 0, "%s", err.msg);
	cr_assert_str_eq(cfg.path, path);
	cr_assert_str_eq(cfg.text, yaml);
	cr_assert_eq(cfg.nspecs, 1);
	config_free(&cfg);
	unlink(path);
	free(path);

	path = write_temp("sweeps:\n  - op: softmax\n    dtypes: fp32\n");
	char want[256];
	snprintf(want, sizeof want, "%s:3:13: unknown dtype \"fp32\" (expected "
		 "f32, f16 or bf16)", path);
	cr_assert_eq(config_load(path, &cfg, &err), -1);
	cr_assert_str_eq(err.msg, want);
	cr_assert(is_zeroed(&cfg));
	unlink(path);
	free(path);
}

static void assert_shape(const sweep_shape *s, const char *op, at_dtype dt,
			 long long M, long long N, const sweep_spec *spec)
{
	cr_assert_str_eq(s->op, op);
	cr_assert_eq(s->dtype, dt, "dtype %d, want %d", s->dtype, dt);
	cr_assert_eq(s->M, M, "M %lld, want %lld", s->M, M);
	cr_assert_eq(s->N, N, "N %lld, want %lld", s->N, N);
	cr_assert_eq(s->spec, spec);
}

Test(config, shapes_order_and_duplicates)
{
	sweep_config cfg;
	parse_ok("sweeps:\n"
		 "  - op: softmax\n"
		 "    dtypes: [f16, f32]\n"
		 "    M: [2, 1, 2]\n"
		 "    N: [8, 4]\n"
		 "  - op: softmax\n"
		 "    dtypes: f32\n"
		 "    M: 1\n"
		 "    N: [4, 16]\n"
		 "  - op: other\n"
		 "    dtypes: f32\n"
		 "    M: 1\n"
		 "    N: 4\n", &cfg);
	sweep_shape *s;
	size_t n;
	at_error err;
	cr_assert_eq(config_shapes(&cfg, &s, &n, &err), 0, "%s", err.msg);
	const sweep_spec *a = &cfg.specs[0], *b = &cfg.specs[1], *c = &cfg.specs[2];
	cr_assert_eq(n, 10);
	assert_shape(&s[0], "softmax", AT_F16, 2, 8, a);
	assert_shape(&s[1], "softmax", AT_F16, 2, 4, a);
	assert_shape(&s[2], "softmax", AT_F16, 1, 8, a);
	assert_shape(&s[3], "softmax", AT_F16, 1, 4, a);
	assert_shape(&s[4], "softmax", AT_F32, 2, 8, a);
	assert_shape(&s[5], "softmax", AT_F32, 2, 4, a);
	assert_shape(&s[6], "softmax", AT_F32, 1, 8, a);
	assert_shape(&s[7], "softmax", AT_F32, 1, 4, a);
	assert_shape(&s[8], "softmax", AT_F32, 1, 16, b);
	assert_shape(&s[9], "other", AT_F32, 1, 4, c);
	free(s);
	config_free(&cfg);
}

Test(config, shapes_of_empty_config)
{
	sweep_config cfg = { 0 };
	sweep_shape *s;
	size_t n = 99;
	at_error err;
	cr_assert_eq(config_shapes(&cfg, &s, &n, &err), 0);
	cr_assert_eq(n, 0);
	free(s);
}

Test(config, shipped_softmax_config)
{
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_load("configs/softmax.yaml", &cfg, &err), 0, "%s",
		     err.msg);
	cr_assert_eq(cfg.warmup, 5);
	cr_assert_eq(cfg.repetitions, 25);
	sweep_shape *s;
	size_t n;
	cr_assert_eq(config_shapes(&cfg, &s, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 189, "a grid: 63 shapes in each of three dtypes");
	assert_shape(&s[0], "softmax", AT_F32, 1, 32, &cfg.specs[0]);
	assert_shape(&s[4], "softmax", AT_F32, 1, 1048576, &cfg.specs[0]);
	assert_shape(&s[5], "softmax", AT_F16, 1, 32, &cfg.specs[0]);
	assert_shape(&s[57], "softmax", AT_F32, 4096, 32, &cfg.specs[4]);
	assert_shape(&s[62], "softmax", AT_F32, 4096, 1001, &cfg.specs[4]);
	assert_shape(&s[130], "softmax", AT_BF16, 65536, 77, &cfg.specs[6]);
	assert_shape(&s[132], "softmax", AT_F32, 4099, 1, &cfg.specs[7]);
	assert_shape(&s[140], "softmax", AT_BF16, 4000001, 1, &cfg.specs[7]);
	assert_shape(&s[141], "softmax", AT_F32, 4096, 3, &cfg.specs[8]);
	assert_shape(&s[176], "softmax", AT_BF16, 16, 400, &cfg.specs[9]);
	assert_shape(&s[188], "softmax", AT_BF16, 16, 6000, &cfg.specs[10]);
	assert_shape(&s[131], "softmax", AT_BF16, 65536, 1000, &cfg.specs[6]);
	free(s);
	config_free(&cfg);
}

Test(config, shipped_seeds_benchmark_config)
{
	sweep_config cfg;
	at_error err;
	cr_assert_eq(config_load("configs/seeds-benchmark.yaml", &cfg, &err), 0,
		     "%s", err.msg);
	sweep_shape *s;
	size_t n;
	cr_assert_eq(config_shapes(&cfg, &s, &n, &err), 0, "%s", err.msg);
	cr_assert_eq(n, 196);
	const sweep_spec *sp = &cfg.specs[0];
	assert_shape(&s[0], "softmax", AT_F32, 4096, 256, sp);
	assert_shape(&s[1], "softmax", AT_F32, 4096, 384, sp);
	assert_shape(&s[97], "softmax", AT_F32, 4096, 12672, sp);
	assert_shape(&s[98], "softmax", AT_BF16, 4096, 256, sp);
	assert_shape(&s[195], "softmax", AT_BF16, 4096, 12672, sp);
	free(s);
	config_free(&cfg);
}

Test(config, a_shape_no_gpu_can_hold_is_refused_at_its_line)
{
	expect_error("sweeps:\n"
		     "  - op: softmax\n"
		     "    dtypes: [f32, bf16]\n"
		     "    M: [4096]\n"
		     "    N: [1024, 1000000000000]\n",
		     "x.yaml:5:8: shape M=4096 x N=1000000000000 needs 3.28e+07 GB for its input and "
		     "output; no GPU holds that (at most 1099 GB a shape)");
	/* 2^36 f32 elements: 512 GiB for input and output, within the bound */
	sweep_config cfg;
	parse_ok("sweeps:\n  - op: softmax\n    dtypes: [f32]\n    M: [65536]\n    N: [1048576]\n",
		 &cfg);
	config_free(&cfg);
}

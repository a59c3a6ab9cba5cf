/* Tests for gen/specialize.c and cuda/nvrtc_compile.c on the real templates in
 * templates/ (the tests run from the repository root): parameter defaults and
 * assignment with their exact messages, the params string and its round
 * trip, the generated source (header, #defines, expanded includes), and
 * NVRTC compiling specialised sources for sm_90 (no GPU needed). */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/template_fixture.h"
#include "tests/tmp_folder.h"

static void setup(void)
{
	tf_load_templates();
	tmp_setup();
}

static void teardown(void)
{
	tf_free_templates();
	tmp_teardown();
}

TestSuite(specialize, .init = setup, .fini = teardown);

static void set_ok(variant *v, const char *assignment)
{
	at_error err = { { 0 } };
	cr_assert_eq(variant_set(v, assignment, &err), 0, "variant_set(\"%s\"): %s",
		     assignment, err.msg);
}

/* variant_set fails, leaves v unchanged, and the message contains each of
 * the NULL-terminated substrings. */
static void set_fails(variant *v, const char *assignment, const char *const *want)
{
	variant before = *v;
	at_error err = { { 0 } };
	cr_assert_eq(variant_set(v, assignment, &err), -1, "variant_set(\"%s\") accepted",
		     assignment);
	cr_assert_eq(memcmp(&before, v, sizeof before), 0,
		     "variant_set(\"%s\") changed the variant on failure", assignment);
	for (; *want; want++)
		cr_assert_not_null(strstr(err.msg, *want), "variant_set(\"%s\"): \"%s\" not in \"%s\"",
				   assignment, *want, err.msg);
}

static int count_occurrences(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static char *read_whole(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *text = malloc((size_t)size + 1);
	cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
	text[size] = '\0';
	fclose(f);
	return text;
}

static char *specialize_ok(const variant *v)
{
	at_error err = { { 0 } };
	char *src = specialize(v, &err);
	cr_assert_not_null(src, "specialize(%s) failed: %s", v->tmpl->name, err.msg);
	return src;
}

/* ---- variant_defaults -------------------------------------------------- */

Test(specialize, defaults_are_the_manifest_defaults)
{
	size_t ntemplates;
	const tmpl_manifest *templates = tf_templates(&ntemplates);
	for (size_t t = 0; t < ntemplates; t++) {
		variant v;
		memset(&v, 0x5a, sizeof v);
		variant_defaults(&v, &templates[t], AT_F16);
		cr_assert_eq(v.tmpl, &templates[t]);
		cr_assert_eq(v.dtype, AT_F16);
		for (size_t i = 0; i < templates[t].nparams; i++)
			cr_assert_eq(v.values[i], templates[t].params[i].def, "%s.%s: %lld, want %lld",
				     templates[t].name, templates[t].params[i].name, v.values[i],
				     templates[t].params[i].def);
		for (size_t i = templates[t].nparams; i < VARIANT_MAX_PARAMS; i++)
			cr_assert_eq(v.values[i], 0, "%s: unused slot %zu not zeroed",
				     templates[t].name, i);
	}
}

Test(specialize, defaults_of_softmax_block_and_softmax_warp)
{
	variant b, w;
	variant_defaults(&b, tf_template("softmax_block"), AT_F32);
	cr_assert_eq(tf_value(&b, "threads"), 256);
	cr_assert_eq(tf_value(&b, "vec"), 4);
	cr_assert_eq(tf_value(&b, "elems_per_thread"), 16);
	cr_assert_eq(tf_value(&b, "stages"), 1);
	cr_assert_eq(tf_value(&b, "persistent"), 0);
	cr_assert_eq(tf_value(&b, "cache_hint"), 0);
	variant_defaults(&w, tf_template("softmax_warp"), AT_F32);
	cr_assert_eq(tf_value(&w, "threads"), 128);
	cr_assert_eq(tf_value(&w, "lanes"), 32);
	cr_assert_eq(tf_value(&w, "rows_per_cta"), 4);
	cr_assert_eq(tf_value(&w, "vec"), 4);
	cr_assert_eq(tf_value(&w, "elems_per_thread"), 8);
}

/* ---- variant_set -------------------------------------------------------- */

Test(specialize, set_accepts_a_listed_value_and_changes_only_that_param)
{
	variant v, before;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	before = v;
	set_ok(&v, "threads=128");
	int ti = manifest_param_index(v.tmpl, "threads");
	cr_assert_eq(v.values[ti], 128);
	for (int i = 0; i < VARIANT_MAX_PARAMS; i++)
		if (i != ti)
			cr_assert_eq(v.values[i], before.values[i], "param %d changed", i);
	set_ok(&v, "elems_per_thread=64");
	cr_assert_eq(tf_value(&v, "elems_per_thread"), 64);
	set_ok(&v, "persistent=1");
	cr_assert_eq(tf_value(&v, "persistent"), 1);
	set_ok(&v, "threads=1024"); /* the last listed value */
	cr_assert_eq(tf_value(&v, "threads"), 1024);
	set_ok(&v, "threads=64"); /* the first */
	cr_assert_eq(tf_value(&v, "threads"), 64);
}

Test(specialize, set_rejects_an_unknown_name)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	set_fails(&v, "bogus=1",
		  (const char *const[]){ "template softmax_block has no parameter \"bogus\"", NULL });
	/* names are case-sensitive: the template sees THREADS, the user writes threads */
	set_fails(&v, "THREADS=128", (const char *const[]){ "no parameter \"THREADS\"", NULL });
	/* lanes is softmax_warp's, not softmax_block's */
	set_fails(&v, "lanes=32", (const char *const[]){ "no parameter \"lanes\"", NULL });
}

Test(specialize, set_rejects_a_value_not_listed)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	set_fails(&v, "threads=3",
		  (const char *const[]){ "parameter threads=3 is not allowed by template softmax_block",
					 "(values: 64, 128, 256, 512, 1024)", NULL });
	set_fails(&v, "elems_per_thread=65",
		  (const char *const[]){ "elems_per_thread=65 is not allowed", NULL });
	set_fails(&v, "vec=-4", (const char *const[]){ "vec=-4 is not allowed",
						       "(values: 1, 2, 4, 8)", NULL });
}

Test(specialize, set_rejects_malformed_assignments)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	set_fails(&v, "threads", (const char *const[]){ "bad parameter \"threads\"",
							"expected NAME=VALUE", NULL });
	set_fails(&v, "=128", (const char *const[]){ "expected NAME=VALUE", NULL });
	set_fails(&v, "threads=", (const char *const[]){ "parameter threads: \"\" is not an integer",
							 NULL });
	set_fails(&v, "threads=abc", (const char *const[]){ "\"abc\" is not an integer", NULL });
	set_fails(&v, "threads=128x", (const char *const[]){ "\"128x\" is not an integer", NULL });
	set_fails(&v, "threads=99999999999999999999",
		  (const char *const[]){ "is not an integer", NULL });
}

/* ---- variant_params_str ------------------------------------------------- */

Test(specialize, params_str_of_softmax_block_defaults)
{
	/* the manifest's order: threads, vec, elems_per_thread, stages, persistent,
	 * cache_hint, packed, peel */
	const tmpl_manifest *t = tf_template("softmax_block");
	static const char *const order[] = { "threads", "vec", "elems_per_thread", "stages",
					     "persistent", "cache_hint", "packed", "peel" };
	cr_assert_eq(t->nparams, 8);
	for (size_t i = 0; i < 8; i++)
		cr_assert_str_eq(t->params[i].name, order[i]);
	variant v;
	variant_defaults(&v, t, AT_F32);
	char *s = variant_params_str(&v);
	cr_assert_str_eq(s, "threads=256 vec=4 elems_per_thread=16 stages=1 persistent=0 cache_hint=0 "
			    "packed=0 peel=0");
	free(s);
}

static void assert_round_trip(const variant *v)
{
	char *s = variant_params_str(v);
	variant back;
	variant_defaults(&back, v->tmpl, v->dtype);
	/* start from values that differ from v's where possible */
	for (size_t i = 0; i < v->tmpl->nparams; i++) {
		const tmpl_param *p = &v->tmpl->params[i];
		back.values[i] = p->values[0] == v->values[i] ? p->values[p->nvalues - 1]
							      : p->values[0];
	}
	char *copy = strdup(s);
	size_t fields = 0;
	for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " ")) {
		set_ok(&back, tok);
		fields++;
	}
	cr_assert_eq(fields, v->tmpl->nparams, "\"%s\" has %zu fields", s, fields);
	for (size_t i = 0; i < v->tmpl->nparams; i++)
		cr_assert_eq(back.values[i], v->values[i], "%s: %s did not round-trip through \"%s\"",
			     v->tmpl->name, v->tmpl->params[i].name, s);
	free(copy);
	free(s);
}

Test(specialize, params_str_round_trips_through_variant_set)
{
	size_t ntemplates;
	const tmpl_manifest *templates = tf_templates(&ntemplates);
	for (size_t t = 0; t < ntemplates; t++) {
		variant v;
		variant_defaults(&v, &templates[t], AT_F32);
		assert_round_trip(&v);
		/* every param at its last value, then at its first */
		for (size_t i = 0; i < templates[t].nparams; i++)
			v.values[i] = templates[t].params[i].values[templates[t].params[i].nvalues - 1];
		assert_round_trip(&v);
		for (size_t i = 0; i < templates[t].nparams; i++)
			v.values[i] = templates[t].params[i].values[0];
		assert_round_trip(&v);
	}
}

Test(specialize, params_str_after_set)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	set_ok(&v, "threads=1024");
	set_ok(&v, "cache_hint=1");
	char *s = variant_params_str(&v);
	cr_assert_str_eq(s, "threads=1024 vec=4 elems_per_thread=16 stages=1 persistent=0 cache_hint=1 "
			    "packed=0 peel=0");
	free(s);
}

/* ---- specialize ---------------------------------------------------------- */

Test(specialize, header_names_template_dtype_and_params)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	char *src = specialize_ok(&v);
	static const char header[] =
		"// Generated by autotune from template softmax_block (softmax_block.cu)\n"
		"// with dtype=f32 threads=256 vec=4 elems_per_thread=16 stages=1 persistent=0 "
		"cache_hint=0 packed=0 peel=0.\n";
	cr_assert_eq(strncmp(src, header, strlen(header)), 0, "source starts:\n%.300s", src);
	free(src);

	variant_defaults(&v, tf_template("softmax_warp"), AT_BF16);
	src = specialize_ok(&v);
	static const char warp[] = "// Generated by autotune from template softmax_warp (softmax_warp.cu)\n"
				   "// with dtype=bf16 threads=128 lanes=32 ";
	cr_assert_eq(strncmp(src, warp, strlen(warp)), 0, "source starts:\n%.300s", src);
	free(src);
}

Test(specialize, defines_one_dtype_macro)
{
	static const struct {
		at_dtype dt;
		const char *want, *not1, *not2;
	} cases[] = {
		{ AT_F32, "\n#define DTYPE_F32 1\n", "#define DTYPE_F16", "#define DTYPE_BF16" },
		{ AT_F16, "\n#define DTYPE_F16 1\n", "#define DTYPE_F32", "#define DTYPE_BF16" },
		{ AT_BF16, "\n#define DTYPE_BF16 1\n", "#define DTYPE_F32", "#define DTYPE_F16" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		variant v;
		variant_defaults(&v, tf_template("softmax_block"), cases[i].dt);
		char *src = specialize_ok(&v);
		cr_assert_not_null(strstr(src, cases[i].want), "no \"%s\"", cases[i].want + 1);
		cr_assert_eq(count_occurrences(src, "#define DTYPE_"), 1, "dtype %s",
			     at_dtype_name(cases[i].dt));
		cr_assert_null(strstr(src, cases[i].not1));
		cr_assert_null(strstr(src, cases[i].not2));
		free(src);
	}
}

Test(specialize, defines_every_param_in_upper_case)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	set_ok(&v, "threads=128");
	set_ok(&v, "elems_per_thread=8");
	char *src = specialize_ok(&v);
	static const char *const want[] = {
		"\n#define THREADS 128\n", "\n#define VEC 4\n", "\n#define ELEMS_PER_THREAD 8\n",
		"\n#define STAGES 1\n", "\n#define PERSISTENT 0\n", "\n#define CACHE_HINT 0\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert_not_null(strstr(src, want[i]), "no \"%s\" in\n%.600s", want[i] + 1, src);
	cr_assert_eq(count_occurrences(src, "#define THREADS "), 1);
	cr_assert_null(strstr(src, "#define THREADS 256"));
	/* the defines come before the template's code that uses them */
	const char *def = strstr(src, "#define THREADS 128");
	const char *use = strstr(src, "softmax_kernel(");
	cr_assert_not_null(use);
	cr_assert_lt(def, use);
	free(src);
}

Test(specialize, includes_are_expanded_in_place)
{
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	char *src = specialize_ok(&v);
	/* no quoted include is left for NVRTC to resolve */
	for (const char *line = src; line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		cr_assert_neq(strncmp(p, "#include \"", 10), 0, "include left: %.60s", p);
	}
	/* the common header's text is there, once */
	cr_assert_eq(count_occurrences(src, "__device__ __forceinline__ bool rows_vec_aligned("), 1);
	cr_assert_eq(count_occurrences(src, "// ---- begin softmax_common.cuh ----\n"), 1);
	cr_assert_eq(count_occurrences(src, "// ---- end softmax_common.cuh ----\n"), 1);
	cr_assert_null(strstr(src, "#pragma once"));
	/* and the header's definition comes before the kernel that calls it */
	cr_assert_lt(strstr(src, "bool rows_vec_aligned("), strstr(src, "softmax_kernel("));
	free(src);
}

Test(specialize, template_text_follows_verbatim)
{
	/* Everything in softmax_block.cu after its last include line is copied as is. */
	variant v;
	variant_defaults(&v, tf_template("softmax_block"), AT_F32);
	char *src = specialize_ok(&v);
	char *file = read_whole(v.tmpl->source_path);
	const char *inc = strstr(file, "#include \"softmax_cta_reduce.cuh\"\n");
	cr_assert_not_null(inc);
	const char *rest = strchr(inc, '\n') + 1;
	cr_assert_gt(strlen(rest), 100);
	const char *at = strstr(src, "// ---- end softmax_cta_reduce.cuh ----\n");
	cr_assert_not_null(at);
	at += strlen("// ---- end softmax_cta_reduce.cuh ----\n");
	cr_assert_str_eq(at, rest);
	free(file);
	free(src);
}

/* A copy of softmax_block's manifest whose source is `name` in a temporary
 * folder (its other pointers still belong to the loaded manifest). */
static tmpl_manifest manifest_in_tmp(const char *name, char *path, size_t cap)
{
	snprintf(path, cap, "%s", tmp_path(name));
	tmpl_manifest m = *tf_template("softmax_block");
	m.source_path = path;
	return m;
}

Test(specialize, nested_includes_and_pragma_once)
{
	char path[512];
	tmpl_manifest m = manifest_in_tmp("k.cu", path, sizeof path);
	tmp_write("k.cu", "// top\n  #include \"a.cuh\"\n#include <cuda_fp16.h>\nint k;\n");
	tmp_write("a.cuh", "#pragma once\nint a;\n#include \"b.cuh\"\n");
	tmp_write("b.cuh", "#pragma once\nint b;");
	variant v;
	variant_defaults(&v, &m, AT_F32);
	char *src = specialize_ok(&v);
	const char *body = strstr(src, "// top\n");
	cr_assert_not_null(body);
	cr_assert_str_eq(body, "// top\n"
			       "// ---- begin a.cuh ----\n"
			       "int a;\n"
			       "// ---- begin b.cuh ----\n"
			       "int b;\n"
			       "// ---- end b.cuh ----\n"
			       "// ---- end a.cuh ----\n"
			       "#include <cuda_fp16.h>\n" /* angle includes are left to NVRTC */
			       "int k;\n");
	free(src);
}

Test(specialize, missing_source_or_include_fails)
{
	char path[512];
	tmpl_manifest m = manifest_in_tmp("absent.cu", path, sizeof path);
	variant v;
	variant_defaults(&v, &m, AT_F32);
	at_error err = { { 0 } };
	cr_assert_null(specialize(&v, &err));
	cr_assert_not_null(strstr(err.msg, "absent.cu: cannot open"), "%s", err.msg);

	m = manifest_in_tmp("k.cu", path, sizeof path);
	tmp_write("k.cu", "#include \"nothere.cuh\"\n");
	variant_defaults(&v, &m, AT_F32);
	err.msg[0] = '\0';
	cr_assert_null(specialize(&v, &err));
	cr_assert_not_null(strstr(err.msg, "nothere.cuh: cannot open"), "%s", err.msg);
}

Test(specialize, include_cycle_is_stopped)
{
	char path[512];
	tmpl_manifest m = manifest_in_tmp("k.cu", path, sizeof path);
	tmp_write("k.cu", "#include \"loop.cuh\"\n");
	tmp_write("loop.cuh", "#include \"loop.cuh\"\n");
	variant v;
	variant_defaults(&v, &m, AT_F32);
	at_error err = { { 0 } };
	cr_assert_null(specialize(&v, &err));
	cr_assert_not_null(strstr(err.msg, "includes nested too deeply"), "%s", err.msg);
}

/* ---- NVRTC --------------------------------------------------------------- */

static void compile_default(const char *name, at_dtype dt, const char *const *assign)
{
	variant v;
	variant_defaults(&v, tf_template(name), dt);
	for (; assign && *assign; assign++)
		set_ok(&v, *assign);
	char *src = specialize_ok(&v);
	compiled_kernel k;
	at_error err = { { 0 } };
	int rc = nvrtc_compile(src, "variant.cu", 90, &k, &err);
	cr_assert_eq(rc, COMPILE_OK, "%s (%s) did not compile: rc %d, %s\n%s", name,
		     at_dtype_name(dt), rc, err.msg, k.log ? k.log : "");
	cr_assert_not_null(k.cubin);
	cr_assert_gt(k.cubin_size, 4);
	cr_assert_eq(memcmp(k.cubin, "\x7f" "ELF", 4), 0, "the cubin is not an ELF file");
	cr_assert_not_null(k.ptx);
	cr_assert_not_null(strstr(k.ptx, ".entry softmax_kernel"), "no entry in the PTX");
	/* the launch's signature (dispatch/runtime/launch_geometry.h): flags last */
	cr_assert_not_null(strstr(k.ptx, ".param .u32 softmax_kernel_param_6"),
			   "%s takes no flags argument (the seventh)", name);
	cr_assert_null(strstr(k.ptx, "softmax_kernel_param_7"), "%s takes an eighth argument", name);
	cr_assert_not_null(strstr(k.ptx, ".target sm_90"), "PTX not for sm_90");
	cr_assert_gt(k.registers, 0);
	cr_assert_leq(k.registers, 255);
	cr_assert_geq(k.spill_bytes, 0);
	cr_assert_gt(k.compile_ms, 0);
	cr_assert_not_null(k.log);
	cr_assert_not_null(strstr(k.log, "registers"), "no ptxas info in the log:\n%s", k.log);
	compiled_kernel_free(&k);
	cr_assert_null(k.cubin);
	cr_assert_null(k.ptx);
	cr_assert_null(k.log);
	free(src);
}

Test(specialize, nvrtc_compiles_softmax_warp_for_sm_90)
{
	compile_default("softmax_warp", AT_F32, NULL);
}

Test(specialize, nvrtc_compiles_softmax_block_for_sm_90)
{
	compile_default("softmax_block", AT_F32, NULL);
	compile_default("softmax_block", AT_BF16,
			(const char *const[]){ "vec=8", "threads=128", NULL });
}

Test(specialize, nvrtc_reports_a_broken_source)
{
	compiled_kernel k;
	at_error err = { { 0 } };
	int rc = nvrtc_compile("extern \"C\" __global__ void softmax_kernel()\n"
			       "{\n"
			       "\tundefined_thing_xyz();\n"
			       "}\n",
			       "broken.cu", 90, &k, &err);
	cr_assert_eq(rc, COMPILE_FAILED);
	cr_assert_not_null(k.log);
	cr_assert_not_null(strstr(k.log, "undefined_thing_xyz"), "log:\n%s", k.log);
	cr_assert_not_null(strstr(k.log, "error"), "log:\n%s", k.log);
	cr_assert_not_null(strstr(k.log, "broken.cu(3)"), "log does not name the line:\n%s", k.log);
	cr_assert_null(k.cubin);
	cr_assert_eq(k.cubin_size, 0);
	cr_assert_null(k.ptx);
	compiled_kernel_free(&k);
}

Test(specialize, nvrtc_parse_resources_exact_numbers)
{
	static const char log[] =
		"ptxas info    : 0 bytes gmem\n"
		"ptxas info    : Compiling entry function 'softmax_kernel' for 'sm_90'\n"
		"ptxas info    : Function properties for softmax_kernel\n"
		"ptxas         .     40 bytes stack frame, 24 bytes spill stores, 16 bytes spill loads\n"
		"ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n"
		"ptxas info    : Compile time = 39.542 ms\n";
	compiled_kernel k;
	memset(&k, 0x5a, sizeof k);
	nvrtc_parse_resources(log, &k);
	cr_assert_eq(k.registers, 168);
	cr_assert_eq(k.smem_bytes, 1024);
	cr_assert_eq(k.spill_bytes, 40);
	cr_assert_eq(k.stack_bytes, 40);

	/* what NVRTC prints for softmax_warp: no smem field, nothing spilled */
	static const char plain[] =
		"ptxas info    : 0 bytes gmem\n"
		"ptxas info    : Function properties for softmax_kernel\n"
		"ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
		"ptxas info    : Used 28 registers, used 0 barriers\n";
	memset(&k, 0x5a, sizeof k);
	nvrtc_parse_resources(plain, &k);
	cr_assert_eq(k.registers, 28);
	cr_assert_eq(k.smem_bytes, 0);
	cr_assert_eq(k.spill_bytes, 0);
	cr_assert_eq(k.stack_bytes, 0);

	memset(&k, 0x5a, sizeof k);
	nvrtc_parse_resources("", &k);
	cr_assert_eq(k.registers, 0);
	cr_assert_eq(k.smem_bytes, 0);
	cr_assert_eq(k.spill_bytes, 0);
	cr_assert_eq(k.stack_bytes, 0);
}

Test(specialize, nvrtc_options_and_version)
{
	cr_assert_str_eq(nvrtc_options_string(), "--std=c++17 -Xptxas=-v --minimal");
	int major = -1, minor = -1;
	char tail = 0;
	cr_assert_eq(sscanf(nvrtc_version_string(), "%d.%d%c", &major, &minor, &tail), 2,
		     "\"%s\"", nvrtc_version_string());
	cr_assert_geq(major, 11);
	cr_assert_geq(minor, 0);
}

/* ---- the template body, read once per file version ------------------------ */

/* specialize keeps the last bodies read; a template rewritten in place (as
 * an engineer editing one between two runs of a long-lived process would)
 * is read again. */
Test(specialize, a_template_rewritten_in_place_is_read_again)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "cp templates/softmax_block.yaml templates/softmax_block.cu "
		 "templates/*.cuh '%s'", tmp_folder());
	cr_assert_eq(system(cmd), 0);
	tmpl_manifest m;
	at_error err = { { 0 } };
	cr_assert_eq(manifest_load(tmp_path("softmax_block.yaml"), &m, &err), 0, "%s", err.msg);
	variant v;
	variant_defaults(&v, &m, AT_F32);
	char *before = specialize_ok(&v), *again = specialize_ok(&v);
	cr_assert_str_eq(again, before, "the same file, the same source");
	char *text = read_whole(tmp_path("softmax_block.cu"));
	size_t len = strlen(text);
	char *edited = malloc(len + 64);
	snprintf(edited, len + 64, "%s// edited in place\n", text);
	tmp_write("softmax_block.cu", edited);
	char *after = specialize_ok(&v);
	cr_assert_not_null(strstr(after, "// edited in place"), "the new text is specialised");
	cr_assert_null(strstr(before, "// edited in place"));
	free(before);
	free(again);
	free(after);
	free(text);
	free(edited);
	manifest_free(&m);
}

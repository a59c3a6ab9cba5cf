/* `autotune gen`: one variant's specialised source, optionally compiled. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shape_bound.h"
#include "common/strbuf.h"
#include "gen/manifest.h"
#include "cuda/nvrtc_compile.h"
#include "gen/specialize.h"
#include "tuner/cli/cli.h"
#include "tuner/device.h"
#include "tuner/sweep/enumerate.h"
#include "tuner/sweep/plan.h"

#define MAX_ASSIGNMENTS 64

typedef struct gen_options {
	const char *template_name, *templates_dir;
	const char *op; /* --op: NULL for the template's own */
	const char *cubin_path; /* --cubin: where the compiled cubin goes */
	const char *params[MAX_ASSIGNMENTS];
	int nparams;
	at_dtype dtype;
	long long M, N; /* 0: not given */
	int compile, arch;
} gen_options;

static int parse_param(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	gen_options *o = base;
	if (o->nparams == MAX_ASSIGNMENTS)
		return cli_usage_error(cmd, "too many --param options");
	size_t len = strcspn(text, "=");
	for (int i = 0; i < o->nparams; i++)
		if (strncmp(o->params[i], text, len) == 0 && o->params[i][len] == '=')
			return cli_usage_error(cmd, "--param %.*s is given twice", (int)len, text);
	o->params[o->nparams++] = text;
	return 0;
}

static int parse_dtype(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (at_dtype_parse(text, &((gen_options *)base)->dtype))
		return cli_usage_error(cmd, "unknown dtype \"%s\" (expected f32, f16 or bf16)", text);
	return 0;
}

static int parse_arch(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	return cli_parse_arch(cmd, text, &((gen_options *)base)->arch);
}

static int parse_cubin(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)cmd;
	(void)opt;
	gen_options *o = base;
	o->cubin_path = text;
	o->compile = 1;
	return 0;
}

#define O(field) offsetof(gen_options, field)
const cli_option cli_gen_options[] = {
	CLI_STRING(0, "template", "T", O(template_name), "the template (required)"),
	CLI_CALLBACK(0, "param", "NAME=VALUE", parse_param,
		     "a parameter's value (repeated; the others take their defaults)"),
	CLI_CALLBACK(0, "dtype", "DTYPE", parse_dtype, "f32 (default), f16 or bf16"),
	CLI_STRING(0, "op", "NAME", O(op),
		   "the op the variant computes (default: the template's own;\n"
		   "another of its manifest's also_ops defines OP_<NAME>)"),
	CLI_LLONG('M', NULL, "M", O(M), 1, AT_SHAPE_MAX_DIM,
		  "check the shape constraints at M rows too"),
	CLI_LLONG('N', NULL, "N", O(N), 1, AT_SHAPE_MAX_DIM,
		  "check the shape constraints at row length N too"),
	CLI_FLAG(0, "compile", O(compile),
		 "compile it with NVRTC and print the cubin's registers,\n"
		 "shared memory and spills"),
	CLI_CALLBACK(0, "cubin", "FILE", parse_cubin, "compile it and write the cubin to FILE"),
	CLI_CALLBACK(0, "arch", "sm_XX", parse_arch, "the architecture to compile for (default sm_90)"),
	CLI_STRING(0, "templates", "DIR", O(templates_dir),
		   "templates folder (default: beside the program, or\n$AUTOTUNE_TEMPLATES)"),
	CLI_END,
};
#undef O

static int parse_gen(int argc, char **argv, gen_options *o)
{
	int nargs;
	if (cli_parse_options("gen", argc, argv, o, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("gen", "unexpected argument \"%s\"", argv[1]);
	if (!o->template_name)
		return cli_usage_error("gen", "--template is required");
	char why[256]; /* one of -M and -N alone: the other taken as 1 */
	if ((o->M || o->N) && at_shape_check(o->dtype, o->M ? o->M : 1, o->N ? o->N : 1, why,
					      sizeof why))
		return cli_usage_error("gen", "%s", why);
	return 0;
}

static const tmpl_manifest *find_template(const tmpl_manifest *ts, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ts[i].name, name) == 0)
			return &ts[i];
	return NULL;
}

/* Builds the variant and checks it; 0, or an exit status: what the
 * options ask for that the templates do not have is a usage error. */
static int make_variant(const gen_options *o, const tmpl_manifest *ts, size_t n, variant *v)
{
	const tmpl_manifest *t = find_template(ts, n, o->template_name);
	if (!t) {
		strbuf known = { 0 };
		for (size_t i = 0; i < n; i++)
			strbuf_printf(&known, "%s%s", i ? ", " : "", ts[i].name);
		cli_usage_error("gen", "unknown template \"%s\" (known: %s)", o->template_name,
				known.data ? known.data : "none");
		strbuf_free(&known);
		return 2;
	}
	if (!(t->dtype_mask & (1u << o->dtype)))
		return cli_usage_error("gen", "template %s does not serve dtype %s", t->name,
				       at_dtype_name(o->dtype));
	if (o->op && !manifest_serves(t, o->op))
		return cli_usage_error("gen", "template %s does not compute op \"%s\"", t->name,
				       o->op);
	at_error err = { { 0 } };
	variant_defaults(v, t, o->dtype);
	v->op = o->op ? manifest_source_op(t, o->op) : NULL;
	for (int i = 0; i < o->nparams; i++)
		if (variant_set(v, o->params[i], &err))
			return cli_usage_error("gen", "%s", err.msg);
	int arch = o->arch ? o->arch : 90;
	/* Without -M/-N only the constraints on them are left unchecked: the
	 * dtype's and the architecture's still hold (vec=8 is no f32 variant). */
	long long M = o->M ? o->M : (o->N ? 1 : -1);
	tr_env env = nominal_shape_env(arch, M, o->N ? o->N : -1, at_dtype_size(o->dtype));
	int ok = manifest_check(t, v->values, &env, &err);
	if (ok < 0)
		return cli_fail(err.msg);
	if (ok == 0) {
		char *params = variant_params_str(v);
		cli_usage_error("gen", "%s %s is not a valid variant%s: %s", t->name, params,
				o->N ? " for this shape" : "", err.msg);
		free(params);
		return 2;
	}
	return 0;
}

/* With -M and -N, how the tuner and the library launch the variant at that
 * shape: what a hand-written launch of a --cubin image needs. */
static void print_launch(const gen_options *o, const variant *v)
{
	if (!o->M || !o->N)
		return;
	tr_env env = nominal_shape_env(o->arch ? o->arch : 90, o->M, o->N,
				       at_dtype_size(o->dtype));
	launch_geometry g;
	at_error err = { { 0 } };
	if (variant_geometry(v, &env, &g, &err) == 0)
		printf("// launch at M=%lld N=%lld: threads=%d rows_per_cta=%d dyn_smem=%d "
		       "persistent=%d ctas_per_row=%d cooperative=%d\n",
		       o->M, o->N, g.threads, g.rows_per_cta, g.dyn_smem, g.persistent,
		       g.ctas_per_row ? g.ctas_per_row : 1, g.cooperative);
}

/* Writes k's cubin to path; 0, or 1 (the exit status) after saying why. */
static int write_cubin(const char *path, const compiled_kernel *k)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(k->cubin, 1, k->cubin_size, f) == k->cubin_size;
	if (f && fclose(f) != 0)
		ok = 0;
	if (ok)
		return 0;
	fprintf(stderr, "autotune: cannot write the cubin to %s: %s\n", path, strerror(errno));
	return 1;
}

int cmd_gen(int argc, char **argv)
{
	gen_options o = { .dtype = AT_F32 };
	int rc = parse_gen(argc, argv, &o);
	if (rc)
		return rc;
	at_error err = { { 0 } };
	tmpl_manifest *ts;
	size_t n;
	if (manifest_load_dir(plan_templates_dir(o.templates_dir), &ts, &n, &err))
		return cli_fail(err.msg);
	variant v;
	rc = make_variant(&o, ts, n, &v);
	char *src = rc ? NULL : specialize(&v, &err);
	if (!rc && !src)
		rc = cli_fail(err.msg);
	if (src) {
		fputs(src, stdout);
		if (o.compile) {
			compiled_kernel k;
			int arch = o.arch ? o.arch : 90;
			int crc = nvrtc_compile(src, "variant.cu", arch, &k, &err);
			if (crc == COMPILE_OK && o.cubin_path && write_cubin(o.cubin_path, &k))
				crc = COMPILE_FAILED; /* said why; the exit status is 1 */
			else if (crc == COMPILE_OK) {
				printf("// compiled for sm_%d in %.0f ms: %d registers, %d bytes shared "
				       "memory, %d bytes spilled, %d bytes stack, cubin %zu bytes\n",
				       arch, k.compile_ms, k.registers, k.smem_bytes, k.spill_bytes,
				       k.stack_bytes, k.cubin_size);
				print_launch(&o, &v);
			}
			else if (crc == COMPILE_FAILED)
				fprintf(stderr, "autotune: the variant did not compile:\n%s\n", k.log);
			else
				cli_fail(err.msg);
			rc = crc == COMPILE_OK ? 0 : 1;
			compiled_kernel_free(&k);
		}
		free(src);
	}
	manifest_free_all(ts, n);
	return rc;
}

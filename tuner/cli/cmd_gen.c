/* `autotune gen`: one variant's specialised source, optionally compiled. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	const char *cubin_path; /* --cubin: where the compiled cubin goes */
	const char *params[MAX_ASSIGNMENTS];
	int nparams;
	at_dtype dtype;
	long long M, N; /* 0: not given */
	int compile, arch;
} gen_options;

static int parse_gen(int argc, char **argv, gen_options *o)
{
	enum { OPT_TEMPLATE = 256, OPT_PARAM, OPT_DTYPE, OPT_COMPILE, OPT_ARCH, OPT_TEMPLATES,
	       OPT_CUBIN };
	static const struct option opts[] = {
		{ "template", required_argument, NULL, OPT_TEMPLATE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "compile", no_argument, NULL, OPT_COMPILE },
		{ "arch", required_argument, NULL, OPT_ARCH },
		{ "templates", required_argument, NULL, OPT_TEMPLATES },
		{ "cubin", required_argument, NULL, OPT_CUBIN },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":M:N:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_TEMPLATE: o->template_name = optarg; break;
		case OPT_PARAM:
			if (o->nparams == MAX_ASSIGNMENTS)
				return cli_usage_error("gen", "too many --param options");
			for (int i = 0; i < o->nparams; i++) {
				size_t len = strcspn(optarg, "=");
				if (strncmp(o->params[i], optarg, len) == 0 && o->params[i][len] == '=')
					return cli_usage_error("gen", "--param %.*s is given twice",
							       (int)len, optarg);
			}
			o->params[o->nparams++] = optarg;
			break;
		case OPT_DTYPE:
			if (at_dtype_parse(optarg, &o->dtype))
				return cli_usage_error("gen", "unknown dtype \"%s\" (expected f32, f16 or bf16)",
						       optarg);
			break;
		case 'M':
			if (cli_parse_long("gen", "-M", optarg, 1, 1LL << 40, &o->M))
				return 2;
			break;
		case 'N':
			if (cli_parse_long("gen", "-N", optarg, 1, 1LL << 40, &o->N))
				return 2;
			break;
		case OPT_COMPILE: o->compile = 1; break;
		case OPT_ARCH:
			if (cli_parse_arch("gen", optarg, &o->arch))
				return 2;
			break;
		case OPT_TEMPLATES: o->templates_dir = optarg; break;
		case OPT_CUBIN:
			o->cubin_path = optarg;
			o->compile = 1;
			break;
		case ':': return cli_usage_error("gen", "%s needs a value", argv[optind - 1]);
		default: return cli_usage_error("gen", "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("gen", "unexpected argument \"%s\"", argv[optind]);
	if (!o->template_name)
		return cli_usage_error("gen", "--template is required");
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
	at_error err = { { 0 } };
	variant_defaults(v, t, o->dtype);
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

/* `autotune templates`: every template's parameter space and constraints. */
#include <stdio.h>

#include "common/dtype.h"
#include "gen/manifest.h"
#include "tuner/cli/cli.h"
#include "tuner/ops/ops.h"
#include "tuner/sweep/plan.h"

/* The op's description (tuner/ops), as the sweep uses it. */
static void print_op(const char *name)
{
	const at_op *op = op_find(name);
	if (!op) {
		printf("  op: %s is not described (tuner/ops/ops.c): the sweep refuses it\n", name);
		return;
	}
	printf("  op: %s: %s; kernel %s%s; bytes moved (%d read + %d written) x M x N x "
	       "element size; check tolerance", op->name, op->summary, op->kernel_name,
	       op->kernel_signature, op->reads_per_elem, op->writes_per_elem);
	for (int d = 0; d < AT_DTYPE_COUNT; d++)
		printf(" %s %.0e", at_dtype_name((at_dtype)d), at_op_tolerance(op, (at_dtype)d));
	printf("\n");
}

static void print_template(const tmpl_manifest *t)
{
	printf("%s (op %s", t->name, t->op);
	for (size_t i = 0; i < t->nalso_ops; i++)
		printf(", %s", t->also_ops[i]);
	printf("): %s\n  source: %s\n  dtypes:", t->summary ? t->summary : "", t->source_path);
	for (int d = 0; d < AT_DTYPE_COUNT; d++)
		if (t->dtype_mask & (1u << d))
			printf(" %s", at_dtype_name((at_dtype)d));
	printf("\n");
	print_op(t->op);
	for (size_t i = 0; i < t->nalso_ops; i++)
		print_op(t->also_ops[i]);
	printf("  params:\n");
	for (size_t i = 0; i < t->nparams; i++) {
		const tmpl_param *p = &t->params[i];
		printf("    %-18s default %-5lld values", p->name, p->def);
		for (size_t k = 0; k < p->nvalues; k++)
			printf("%s%lld", k ? "," : " ", p->values[k]);
		printf("%s%s\n", p->doc ? "  -- " : "", p->doc ? p->doc : "");
	}
	printf("  constraints:\n");
	for (size_t i = 0; i < t->nconstraints; i++)
		printf("    %s%s%s\n", t->constraints[i].expr, t->constraints[i].why ? "  -- " : "",
		       t->constraints[i].why ? t->constraints[i].why : "");
	printf("  launch: threads=%s rows_per_cta=%s smem_bytes=%s persistent=%s max_n=%s "
	       "ctas_per_row=%s cooperative=%s\n\n",
	       t->launch.threads, t->launch.rows_per_cta, t->launch.smem_bytes,
	       t->launch.persistent, t->launch.max_n, t->launch.ctas_per_row, t->launch.cooperative);
}

const cli_option cli_templates_options[] = {
	CLI_STRING(0, "templates", "DIR", 0,
		   "templates folder (default: beside the program, or\n$AUTOTUNE_TEMPLATES)"),
	CLI_END,
};

int cmd_templates(int argc, char **argv)
{
	const char *dir = NULL; /* the table's one field, at offset 0 */
	int nargs;
	if (cli_parse_options("templates", argc, argv, &dir, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("templates", "unexpected argument \"%s\"", argv[1]);
	at_error err = { { 0 } };
	tmpl_manifest *ts;
	size_t n;
	if (manifest_load_dir(plan_templates_dir(dir), &ts, &n, &err))
		return cli_fail(err.msg);
	for (size_t i = 0; i < n; i++)
		print_template(&ts[i]);
	manifest_free_all(ts, n);
	return 0;
}

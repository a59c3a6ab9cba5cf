/* `autotune show`: which variant an application would get for a shape,
 * asked of the dispatch library itself (atd_query on this machine's GPU, or
 * atd_query_gpu for a GPU described with --gpu/--cc), so that it can never
 * disagree with what atd_softmax runs. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/dtype.h"
#include "common/shape_bound.h"
#include "db/tuning_db.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/runtime/described_gpu.h"
#include "include/autotune/dispatch.h"
#include "tuner/cli/cli.h"
#include "tuner/device.h"

typedef struct show_options {
	const char *op, *db_path, *gpu_name;
	at_dtype dtype;
	long long M, N; /* 0: not given */
	int arch;       /* from --cc; 0: not given */
	long long sm_count, mem_bytes; /* -1: not given */
	int no_db; /* --no-db: what a process without a database is served */
} show_options;

static int parse_dtype(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (at_dtype_parse(text, &((show_options *)base)->dtype))
		return cli_usage_error(cmd, "unknown dtype \"%s\" (expected f32, f16 or bf16)", text);
	return 0;
}

static int parse_gpu(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	if (!*text)
		return cli_usage_error(cmd, "--gpu needs a GPU name");
	((show_options *)base)->gpu_name = text;
	return 0;
}

static int parse_cc(const char *cmd, const cli_option *opt, const char *text, void *base)
{
	(void)opt;
	return cli_parse_cc(cmd, "--cc", text, &((show_options *)base)->arch);
}

#define O(field) offsetof(show_options, field)
const cli_option cli_show_options[] = {
	CLI_LLONG('M', NULL, "M", O(M), 1, AT_SHAPE_MAX_DIM, "the number of rows (required)"),
	CLI_LLONG('N', NULL, "N", O(N), 1, AT_SHAPE_MAX_DIM, "the row length (required)"),
	CLI_STRING(0, "op", "OP", O(op), "the op: softmax (default), log_softmax, softmax_backward, log_softmax_backward or cross_entropy (N: V)"),
	CLI_CALLBACK(0, "dtype", "DTYPE", parse_dtype, "f32 (default), f16 or bf16"),
	CLI_STRING(0, "db", "FILE", O(db_path),
		   "the tuning database (default autotune.db, or $AUTOTUNE_DB)"),
	CLI_FLAG(0, "no-db", O(no_db),
		 "no database: what the library serves a process that has none (its seeds)"),
	CLI_CALLBACK(0, "gpu", "NAME", parse_gpu,
		     "describe a GPU instead of asking GPU 0 of this machine:\n"
		     "its name (as the database has it); needs --cc"),
	CLI_CALLBACK(0, "cc", "X.Y", parse_cc, "the described GPU's compute capability"),
	CLI_LLONG(0, "sm-count", "N", O(sm_count), 1, 100000,
		  "the described GPU's SM count (default: the database's)"),
	CLI_LLONG(0, "mem-bytes", "B", O(mem_bytes), 1, 1LL << 60,
		  "the described GPU's memory size (default: the database's)"),
	CLI_END,
};
#undef O

static int parse_show(int argc, char **argv, show_options *o)
{
	int nargs;
	if (cli_parse_options("show", argc, argv, o, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("show", "unexpected argument \"%s\"", argv[1]);
	if (!o->M || !o->N)
		return cli_usage_error("show", "-M and -N are required");
	char why[256];
	if (at_shape_check(o->dtype, o->M, o->N, why, sizeof why))
		return cli_usage_error("show", "%s", why);
	if (o->no_db && o->db_path)
		return cli_usage_error("show", "--db and --no-db exclude each other");
	if (o->no_db && o->gpu_name && o->sm_count < 0)
		return cli_usage_error("show", "--no-db with --gpu needs --sm-count (there is no "
					       "database to take it from)");
	if (!o->gpu_name != !o->arch)
		return cli_usage_error("show", "--gpu and --cc go together");
	if (!o->gpu_name && (o->sm_count >= 0 || o->mem_bytes >= 0))
		return cli_usage_error("show", "--sm-count and --mem-bytes describe a GPU given "
					       "with --gpu and --cc");
	return 0;
}

/* the library's own table of ops (atd_op and its indices agree) */
static atd_op op_of(const show_options *o)
{
	return (atd_op)atdi_op_find(o->op);
}

static void print_choice(const show_options *o, const char *gpu_line, const atd_choice *c)
{
	printf("shape       %s %s M=%lld N=%lld\n", o->op, at_dtype_name(o->dtype), o->M, o->N);
	printf("gpu         %s\n", gpu_line);
	printf("level       %s\n", atd_level_name(c->level));
	printf("template    %s\n", c->template_name);
	printf("params      %s\n", c->params);
	if (c->level == ATD_LEVEL_BUILTIN) {
		printf("tuned on    - (the built-in kernel serves every shape)\n");
		printf("tuned time  -\n");
	} else if (c->level == ATD_LEVEL_TUNED) {
		printf("tuned on    this GPU, online, at this shape: %.3f us (the library's cache)\n",
		       c->tuned_us);
	} else if (c->level == ATD_LEVEL_PREDICTED) {
		printf("predicted   the fastest of every valid variant by the performance model "
		       "fitted on %s's results; compiled with NVRTC on first use\n",
		       c->gpu_name);
	} else if (c->level == ATD_LEVEL_DERIVED) {
		printf("derived from %s %s\n", c->template_name, c->from_params);
		printf("tuned on    %s at M=%lld N=%lld (%.3f us); compiled with NVRTC on first use\n",
		       c->gpu_name, (long long)c->tuned_M, (long long)c->tuned_N, c->tuned_us);
	} else {
		printf("tuned on    %s at M=%lld N=%lld\n", c->gpu_name, (long long)c->tuned_M,
		       (long long)c->tuned_N);
		printf("tuned time  %.3f us\n", c->tuned_us);
	}
}

static int show_described(atd_handle *h, const show_options *o, atd_choice *c)
{
	/* an omitted --sm-count or --mem-bytes is the database's GPU's, as
	 * atd_query_gpu takes it (the same function), so that naming a tuned
	 * GPU is enough */
	atd_gpu gpu = atdi_described_gpu(
		h, &(atd_gpu){ .name = o->gpu_name, .cc_major = o->arch / 10, .cc_minor = o->arch % 10,
			       .sm_count = o->sm_count < 0 ? 0 : (int)o->sm_count,
			       .mem_bytes = o->mem_bytes < 0 ? 0 : o->mem_bytes });
	if (atd_query_op_gpu(h, op_of(o), &gpu, (atd_dtype)o->dtype, o->M, o->N, c) != ATD_OK)
		return cli_fail(atd_errmsg(h));
	char line[512];
	snprintf(line, sizeof line, "%s (sm_%d, %d SMs, %lld bytes; described)", gpu.name, o->arch,
		 gpu.sm_count, (long long)gpu.mem_bytes);
	print_choice(o, line, c);
	return 0;
}

static int show_present(atd_handle *h, show_options *o, atd_choice *c)
{
	gpu_device dev;
	at_error err;
	if (gpu_open(0, &dev, &err) != 0) {
		char msg[sizeof err.msg + 128];
		snprintf(msg, sizeof msg, "%s\n(to ask about a GPU that is not here, describe it: "
			 "--gpu NAME --cc X.Y [--sm-count N --mem-bytes B])", err.msg);
		return cli_fail(msg);
	}
	atd_status s = atd_query_op(h, op_of(o), (atd_dtype)o->dtype, o->M, o->N, c);
	char line[512];
	snprintf(line, sizeof line, "%s (sm_%d, %d SMs, %lld bytes; GPU 0 of this machine)",
		 dev.info.name, dev.cc, dev.info.sm_count, dev.info.mem_bytes);
	int rc = 0;
	if (s != ATD_OK)
		rc = cli_fail(atd_errmsg(h));
	else
		print_choice(o, line, c);
	gpu_close(&dev);
	return rc;
}

int cmd_show(int argc, char **argv)
{
	show_options o = { .op = "softmax", .dtype = AT_F32, .sm_count = -1, .mem_bytes = -1 };
	int rc = parse_show(argc, argv, &o);
	if (rc)
		return rc;
	if (atdi_op_find(o.op) < 0) {
		char ops[256] = "";
		for (int i = 0, n = 0; i < ATDI_NOPS; i++)
			n += snprintf(ops + n, sizeof ops - (size_t)n, "%s%s", i ? ", " : "",
				      atdi_op_name(i));
		return cli_usage_error("show", "no op \"%.100s\": the dispatch library serves %s",
				       o.op, ops);
	}
	const char *path = NULL;
	if (!o.no_db && cli_db_path("show", o.db_path, 1, &path))
		return 2;
	atd_handle *h;
	if (atd_open(path, o.no_db ? ATD_OPEN_NO_DB : 0, &h) != ATD_OK)
		return cli_fail(atd_errmsg(NULL));
	atd_choice c;
	rc = o.gpu_name ? show_described(h, &o, &c) : show_present(h, &o, &c);
	atd_close(h);
	return rc;
}

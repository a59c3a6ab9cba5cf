/* The subcommand table and helpers shared by the subcommands. */
#include "tuner/cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/nvrtc_compile.h"
#include "db/tuning_db.h"
#include "tuner/version.h"

const cli_command cli_commands[] = {
	{ "sweep", cmd_sweep, "tune every shape of a config and store the winners",
	  "usage: autotune sweep [-c CONFIG] [--db FILE] [--compile-only] [--arch sm_XX]\n"
	  "                      [--device N | --devices N,N...] [--templates DIR]\n"
	  "                      [--threads N] [--shard K/N] [--full-timing] [--audit]\n"
	  "                      [--watchdog S] [--exhaustive | --keep K --explore F]\n"
	  "\n"
	  "For each (op, dtype, M, N) in CONFIG (default configs/softmax.yaml), compiles\n"
	  "the variants of the templates that can serve the shape with NVRTC for the\n"
	  "GPU, checks them against a CPU reference on fresh random input, times the\n"
	  "variants that pass, and stores every result and the winner in the database\n"
	  "(default autotune.db, or $AUTOTUNE_DB). Shapes already in the database are\n"
	  "skipped, so an interrupted sweep resumes where it stopped. Ctrl-C (or\n"
	  "SIGTERM) stops it, keeping every kernel compiled so far in the database's\n"
	  "compile cache, and exits 130 (143); a second Ctrl-C stops it at once.\n"
	  "\n"
	  "Which variants: a performance model ranks a shape's variants and the sweep\n"
	  "keeps the best K (--keep, default 24; a variant of a template that compiles\n"
	  "slower than the typical one counts as that many times one: --compile-weight),\n"
	  "a share F of the rest drawn at random with a fixed seed (--explore, default\n"
	  "0.02) and the best-ranked of each template. The model is fitted on this GPU's results in the database (20\n"
	  "tuned shapes or more), else on another GPU's of the same compute capability,\n"
	  "else read from the templates folder's perf-model-seed.txt; without one, or\n"
	  "with --exhaustive, every variant is compiled and timed. --compile-only\n"
	  "compiles every variant.\n"
	  "\n"
	  "Each GPU is driven by a worker process. A variant that faults (its CUDA\n"
	  "context is lost), crashes the worker or hangs the GPU is stored as failed\n"
	  "with the reason, and a new worker goes on with the rest of the shape.\n",
	  cli_sweep_options },
	{ "list", cmd_list, "print the winners stored in a database",
	  "usage: autotune list [--db FILE] [--format table|csv|json]\n"
	  "\n"
	  "Prints the winner of every tuned shape: GPU, op, dtype, M, N, template,\n"
	  "params, median time, GB/s and percentage of the copy bandwidth.\n",
	  cli_list_options },
	{ "show", cmd_show, "show which tuned variant serves a shape",
	  "usage: autotune show -M M -N N [--op softmax] [--dtype f32|f16|bf16] [--db FILE]\n"
	  "                     [--gpu NAME --cc X.Y [--sm-count N] [--mem-bytes B]]\n"
	  "\n"
	  "Prints what an application would run for the shape (template, params,\n"
	  "selection level, where and at what shape it was tuned, its tuned time),\n"
	  "for GPU 0 of this machine, or for a GPU described with --gpu and --cc\n"
	  "(no GPU needed; an omitted SM count or memory size is taken from the\n"
	  "database's GPU of that name).\n",
	  cli_show_options },
	{ "report", cmd_report, "write an HTML report of a tuning database",
	  "usage: autotune report [--db FILE] [-o FILE] [--heatmap MxN] [--peers FILE.csv]\n"
	  "\n"
	  "Writes one self-contained HTML page (inline CSS and SVG, no network) about\n"
	  "the database (default autotune.db, or $AUTOTUNE_DB): for each GPU, op and\n"
	  "dtype, GB/s against N at each M for the tuned winner, the naive and cuDNN\n"
	  "baselines and the sweep's copy bandwidth; a heat map of median time over\n"
	  "two parameters of the winner's template; every variant per shape sorted by\n"
	  "time, with the winner, its ties (within timing noise) and the failures\n"
	  "marked; and the sweeps (GPU, driver, NVRTC, config, times). The file is\n"
	  "written whole or not at all.\n",
	  cli_report_options },
	{ "db", cmd_db, "merge, export or migrate tuning databases",
	  "usage: autotune db merge OUT IN...\n"
	  "       autotune db export IN OUT\n"
	  "       autotune db migrate FILE\n"
	  "\n"
	  "merge copies every GPU, sweep, result and stored kernel of the IN databases\n"
	  "into OUT (created if missing) and chooses the winner of every shape again,\n"
	  "by the sweep's rule, among the sweeps' own winners (the results with a\n"
	  "stored kernel), so that every winner keeps its kernel. A sweep already in\n"
	  "OUT is skipped, so merging twice changes nothing. Inputs of another schema\n"
	  "version, or with a winner that has no stored kernel, are refused. Their\n"
	  "performance models come along (of a GPU and op in both, the newer); then\n"
	  "each is fitted again on the merged results (20 tuned shapes or more, and\n"
	  "more than the winners' results), as a sweep's is at its end.\n"
	  "\n"
	  "export writes a new OUT with what libautotune-dispatch reads: the GPUs, the\n"
	  "winners, their results and stored kernels, their sweeps and the models; not\n"
	  "the compile cache, the other variants or the baselines. That is the file to\n"
	  "ship; a winner without its stored kernel is refused, naming its shape.\n"
	  "\n"
	  "migrate brings FILE, written by an older autotune (an older schema version),\n"
	  "to this program's schema in one transaction. Readers (list, show, report,\n"
	  "the library) read older versions as they are; merge and export need this\n"
	  "one. A newer version is refused: use a newer autotune.\n",
	  NULL },
	{ "bench", cmd_bench, "tune the benchmark shapes and report them against the goals",
	  "usage: autotune bench [-c CONFIG] [--db FILE] [--csv FILE] [--dtype f32,f16,bf16]\n"
	  "                      [--device N] [--templates DIR] [--threads N] [--report-only]\n"
	  "\n"
	  "Tunes every shape of CONFIG (default configs/bench.yaml) with the normal sweep\n"
	  "(shapes already in the database are skipped), then prints per shape and dtype\n"
	  "the winner (template and params), its GB/s, its % of the copy bandwidth of the\n"
	  "sweep that tuned it, its % of a copy of the same bytes, the naive and cuDNN\n"
	  "baselines, and the goals: a shape moving >= 256 MiB reaches 95% of the copy\n"
	  "bandwidth (85% for N > 262144); f32 8 x 1048576 reaches 900 GB/s; no winner is\n"
	  "slower than naive or cuDNN. Ends with how many goals were met, and writes the\n"
	  "same table as CSV. Exits 0 when it ran, whatever the goals.\n",
	  cli_bench_options },
	{ "selftest", cmd_selftest, "run every variant at edge cases on the GPU and check them",
	  "usage: autotune selftest [-c CONFIG] [--templates DIR] [--dtype f32,f16,bf16]\n"
	  "                         [--device N] [--db FILE] [--threads N]\n"
	  "                         [--quick | --small] [--sanitize] [--case LIST] [--dry-run]\n"
	  "\n"
	  "Runs every variant of every template serving the ops of CONFIG (default\n"
	  "configs/softmax.yaml), in every dtype, on the GPU at edge cases and checks each\n"
	  "output against the CPU reference (double precision):\n"
	  "  sizes     N = 1 (exactly 1.0), odd N and N not a multiple of the vector\n"
	  "            width, from 1 to 262147, many rows (persistent loops) and few;\n"
	  "            N = 512, rows of whole vectors\n"
	  "  special   rows of -inf (NaN out), with a NaN or a +inf (NaN out), some -inf,\n"
	  "            one-hot and constant rows among random rows\n"
	  "  strided   ldx != ldy > N, 16-byte aligned and odd from a misaligned start\n"
	  "  in-place  y == x\n"
	  "  extreme   every row extreme, with and without ATD_MASKED_ZERO: huge\n"
	  "            logits, a spike at the dtype's max, +-max, all max, huge\n"
	  "            negative, offsets of +-1e4, subnormals, masks, all -inf (NaN,\n"
	  "            or zeros masked), a +inf, a NaN: torch.softmax's answers\n"
	  "  2^31      M x N just above 2^31 elements (64-bit offsets); --quick skips it\n"
	  "Guard values around the rows and in the row padding must stay untouched, an\n"
	  "unwritten element fails, and the input must not change. A template with no\n"
	  "variant at a row length also runs there with the variants tuned at the next\n"
	  "longer one (as the dispatch library would reuse them). Prints one line per\n"
	  "dtype, case and template (variants, runs, passed, failed, not run), then each\n"
	  "failing variant's params, shape and reason. A variant that kills the GPU\n"
	  "context fails with the CUDA error and the rest are reported as not run.\n"
	  "Exits 0 only when every run passed.\n",
	  cli_selftest_options },
	{ "templates", cmd_templates, "list the templates and their parameter spaces",
	  "usage: autotune templates [--templates DIR]\n"
	  "\n"
	  "Lists every template with its op, dtypes, parameters (values and default)\n"
	  "and constraints.\n",
	  cli_templates_options },
	{ "gen", cmd_gen, "print the specialised source of one variant",
	  "usage: autotune gen --template T [--param NAME=VALUE]... [--dtype f32|f16|bf16]\n"
	  "                    [-M M] [-N N] [--compile] [--cubin FILE] [--arch sm_XX]\n"
	  "                    [--templates DIR]\n"
	  "\n"
	  "Prints the exact CUDA source of template T specialised for the params (those\n"
	  "not given take their defaults) and the dtype (default f32). With -M/-N the\n"
	  "shape constraints are checked too. --compile compiles it with NVRTC (sm_90\n"
	  "unless --arch) and adds the cubin's registers, shared memory and spills;\n"
	  "--cubin FILE compiles it and writes the cubin to FILE (its entry is\n"
	  "softmax_kernel(y, x, M, N, ldy, ldx)), for loading it by hand.\n",
	  cli_gen_options },
	{ "model", cmd_model, "fit a performance model to a sweep and measure it",
	  "usage: autotune model fit [--db FILE] [--gpu NAME] [-o FILE | --store] [--templates DIR]\n"
	  "       autotune model eval [--db FILE] [--gpu NAME] [--model FILE] [--threads N]\n"
	  "                           [--worst K] [--templates DIR]\n"
	  "       autotune model choose -M M -N N [--dtype DTYPE] [--db FILE] [--gpu NAME]\n"
	  "       autotune model prune-eval [--db FILE] [--gpu NAME] [--keep K] [--explore F]\n"
	  "                                 [--model FILE] [--threads N] [--worst K]\n"
	  "\n"
	  "A performance model learned from every passing variant result of one GPU in\n"
	  "the database (common/perf_model.h): boosted regression trees over features\n"
	  "the template rules give (launch geometry, waves, how full the held row is,\n"
	  "vector bytes, params), predicting a variant's time from the shape's copy\n"
	  "time. No GPU is needed.\n"
	  "\n"
	  "fit writes the model fitted on every shape as text. eval measures it by\n"
	  "leave-one-out: for each tuned shape, the model is fitted on the other shapes\n"
	  "and chooses, among every variant the rules hold valid at that shape, the one\n"
	  "of the smallest predicted time; its time is looked up among the shape's\n"
	  "results (a variant never timed there is counted apart). The choice among\n"
	  "only the variants timed there is reported too (ranking alone). Prints a line\n"
	  "per shape, the geometric mean of winner / chosen time, the shapes within 10%\n"
	  "and the worst shapes. eval --model FILE has that model choose at every shape\n"
	  "instead: a held-out measurement, on an exhaustive sweep of shapes it was\n"
	  "not fitted on (a draw's). --fits K makes the variant ensemble the average\n"
	  "of K fits, each with its own seed (--seed, the first): variants predicted\n"
	  "nearly equal stop trading places with the seed; --rank worst has a choice\n"
	  "rank each variant by the slowest of the fits' predictions, so that one\n"
	  "fit's artefact does not win (eval then reports the other ranking too).\n"
	  "choose fits on every shape and prints the model's\n"
	  "choice for one shape, its predicted time and what the prediction was made\n"
	  "from (the features, and the largest of what each added). prune-eval\n"
	  "measures the sweep's pruning (sweep --keep, --explore) on an exhaustive\n"
	  "sweep: at each tuned shape, a model fitted on the other shapes (or\n"
	  "--model's) ranks every variant the rules enumerate, the pruning keeps\n"
	  "some, and the best stored time among the kept is set against the winner;\n"
	  "prints a table over K and F, the variants and distinct kernels kept, then\n"
	  "the chosen K and F and their worst shapes.\n",
	  cli_model_options },
	{ "help", cmd_help, "show help for a command", "usage: autotune help [COMMAND]\n", NULL },
	{ "version", cmd_version, "print the version", "usage: autotune version\n", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

const cli_command *cli_find(const char *name)
{
	for (const cli_command *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

int cli_fail(const char *msg)
{
	fprintf(stderr, "autotune: %s\n", msg);
	return 1;
}

int cli_db_path(const char *cmd, const char *given, int use_env, const char **path)
{
	if (given && !*given)
		return cli_usage_error(cmd, "--db needs a file name, got an empty one");
	const char *env = use_env && !given ? getenv(TDB_PATH_ENV) : NULL;
	if (env && !*env)
		return cli_usage_error(cmd, "$%s is set but empty: set it to a database file, or "
				       "unset it to use %s", TDB_PATH_ENV, TDB_DEFAULT_PATH);
	*path = use_env ? tdb_default_path(given) : given;
	return 0;
}

const cli_option *cli_options_of(const char *cmd)
{
	const cli_command *c = cli_find(cmd);
	return c ? c->options : NULL;
}

const char *cli_help_of(const char *cmd)
{
	const cli_command *c = cli_find(cmd);
	return c ? c->help : NULL;
}

int cli_help(const char *name)
{
	const cli_command *c = cli_find(name);
	if (!c)
		return cli_usage_error("help", "no command \"%s\"", name);
	fputs(c->help, stdout);
	if (c->options && c->options->type != CLI_OPT_END) {
		fputc('\n', stdout);
		cli_print_options(stdout, c->options);
	}
	return 0;
}

/* "sm_90", "90", "9.0" into 90 ("sm_120", "12.0" into 120); -1 if it is
 * none of those. */
static int parse_cc(const char *text)
{
	const char *p = strncmp(text, "sm_", 3) == 0 ? text + 3 : text;
	int value = 0, digits = 0, dot = -1;
	for (; *p; p++) {
		if (*p == '.' && dot < 0 && p != text && (digits == 1 || digits == 2)) {
			dot = digits; /* "9.0", "12.0": one digit must follow */
			continue;
		}
		if (*p < '0' || *p > '9' || ++digits > 3)
			break;
		value = value * 10 + (*p - '0');
	}
	if (*p || digits < 2 || value < 50 || (dot >= 0 && digits != dot + 1))
		return -1;
	return value;
}

int cli_parse_cc(const char *cmd, const char *opt, const char *text, int *out)
{
	int value = parse_cc(text);
	if (value < 0)
		return cli_usage_error(cmd, "%s expects a compute capability X.Y (e.g. 9.0), got \"%s\"",
				       opt, text);
	*out = value;
	return 0;
}

int cli_parse_arch(const char *cmd, const char *text, int *out)
{
	int value = parse_cc(text);
	if (value < 0)
		return cli_usage_error(cmd, "--arch expects sm_XX (e.g. sm_90), got \"%s\"", text);
	char list[1024];
	at_error err;
	/* Without NVRTC nothing compiles anyway; that error comes later. */
	if (nvrtc_arch_supported(value, list, sizeof list, &err) == 0)
		return cli_usage_error(cmd, "--arch sm_%d: NVRTC %s compiles for %s", value,
				       nvrtc_version_string(), list);
	*out = value;
	return 0;
}

static void print_overview(FILE *out)
{
	fprintf(out, "usage: autotune COMMAND [OPTIONS]\n\n"
		     "A code-generating autotuner for GPU softmax kernels.\n\ncommands:\n");
	for (const cli_command *c = cli_commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n'autotune help COMMAND' or 'autotune COMMAND --help' for details.\n");
}

int cmd_help(int argc, char **argv)
{
	/* `help db merge` is `db merge --help`: one page for db's subcommands */
	if (argc == 3 && strcmp(argv[1], "db") == 0 &&
	    (strcmp(argv[2], "merge") == 0 || strcmp(argv[2], "export") == 0 ||
	     strcmp(argv[2], "migrate") == 0))
		return cli_help(argv[1]);
	int nargs;
	if (cli_parse_options("help", argc, argv, NULL, &nargs))
		return 2;
	if (nargs > 1)
		return cli_usage_error("help", "expected at most one command name");
	if (nargs == 1)
		return cli_help(argv[1]);
	print_overview(stdout);
	return 0;
}

int cmd_version(int argc, char **argv)
{
	int nargs;
	if (cli_parse_options("version", argc, argv, NULL, &nargs))
		return 2;
	if (nargs)
		return cli_usage_error("version", "takes no arguments");
	printf("autotune %s\n", AUTOTUNE_VERSION);
	return 0;
}

int cli_main(int argc, char **argv)
{
	if (argc < 2) {
		print_overview(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_help(1, argv);
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(1, argv);
	const cli_command *c = cli_find(argv[1]);
	if (!c) {
		fprintf(stderr, "autotune: unknown command \"%s\"\nsee 'autotune help'\n", argv[1]);
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return cli_help(c->name);
	return c->run(argc - 1, argv + 1);
}

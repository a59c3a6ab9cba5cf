/* The command line's shared pieces: each subcommand is a function taking
 * argc/argv (argv[0] is the subcommand's name) and returning the exit
 * status: 0 success, 1 failure, 2 usage error. Help goes to stdout. */
#ifndef AT_TUNER_CLI_H
#define AT_TUNER_CLI_H

#include "tuner/cli/options.h"

typedef struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	/* The help page for `autotune help NAME` before its option lines: the
	 * usage lines, a blank line and the description. The usage lines (up
	 * to the first blank line) are also printed for an unknown option. */
	const char *help;
	const cli_option *options; /* the option lines, from cmd_NAME.c; NULL: none */
} cli_command;

extern const cli_command cli_commands[];

/* Runs `autotune ARGS...` and returns the exit status. */
int cli_main(int argc, char **argv);

const cli_command *cli_find(const char *name);

/* The database a command opens: given (--db FILE; NULL: not given), else
 * $AUTOTUNE_DB when use_env, else autotune.db (NULL when not use_env).
 * An empty --db or $AUTOTUNE_DB is a usage error (returns 2): taken for
 * "not given" it would quietly open ./autotune.db. Returns 0 and sets
 * *path otherwise. */
int cli_db_path(const char *cmd, const char *given, int use_env, const char **path);

/* Prints "autotune: message" to stderr; returns 1. */
int cli_fail(const char *msg);

/* Prints the command's help page to stdout (help, then the option lines
 * of its table); returns 0. */
int cli_help(const char *name);

/* Parses --arch's "sm_90", "90" or "9.0" into 90: an architecture to
 * compile for, so one that this NVRTC cannot compile for is refused too. */
int cli_parse_arch(const char *cmd, const char *text, int *out);

/* Parses a GPU's compute capability given as option opt ("9.0", also
 * "90" or "sm_90") into 90; nothing is compiled for it. */
int cli_parse_cc(const char *cmd, const char *opt, const char *text, int *out);

/* Each command's option table (options.h), defined beside the command. */
extern const cli_option cli_sweep_options[], cli_list_options[], cli_show_options[],
	cli_report_options[], cli_bench_options[], cli_selftest_options[],
	cli_templates_options[], cli_gen_options[], cli_model_options[];

int cmd_sweep(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_templates(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif

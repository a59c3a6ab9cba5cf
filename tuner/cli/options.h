/* The subcommands' options, declared once per command (git's parse-options
 * is the model): a table of cli_option gives each option's long and short
 * name, its argument's name and help line, and where its value goes (a
 * field of the command's options struct, at an offset) or a callback. The
 * same table parses argv and prints the option lines of the command's help
 * page and of the usage printed for an unknown option.
 *
 * Tables are static: the values go into a struct the command passes to
 * cli_parse_options as base, so that `autotune help NAME` can print the
 * table without running the command. */
#ifndef AT_TUNER_CLI_OPTIONS_H
#define AT_TUNER_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum cli_option_type {
	CLI_OPT_END = 0,  /* ends a table */
	CLI_OPT_FLAG,     /* no value; sets the int at offset to 1 */
	CLI_OPT_STRING,   /* the value, as given, into the const char * at offset */
	CLI_OPT_INT,      /* an integer from min to max into the int at offset */
	CLI_OPT_LLONG,    /* an integer from min to max into the long long at offset */
	CLI_OPT_CALLBACK, /* callback(cmd, opt, value, base); no value when argh is NULL */
} cli_option_type;

typedef struct cli_option cli_option;

/* Checks and stores value (NULL for an option without one); returns 0, or
 * the exit status of a usage error it reported (cli_usage_error: 2). */
typedef int (*cli_option_cb)(const char *cmd, const cli_option *opt, const char *value,
			     void *base);

struct cli_option {
	cli_option_type type;
	char short_name;       /* 0: none */
	const char *long_name; /* NULL: none */
	const char *argh;      /* the value's name in the help ("FILE"); NULL: takes none */
	const char *help;      /* one line; a '\n' continues it on the next, indented */
	size_t offset;         /* where FLAG, STRING, INT and LLONG store into base */
	long long min, max;    /* INT and LLONG */
	cli_option_cb callback;
};

#define CLI_FLAG(s, l, field_offset, h) \
	{ .type = CLI_OPT_FLAG, .short_name = (s), .long_name = (l), .help = (h), \
	  .offset = (field_offset) }
#define CLI_STRING(s, l, a, field_offset, h) \
	{ .type = CLI_OPT_STRING, .short_name = (s), .long_name = (l), .argh = (a), .help = (h), \
	  .offset = (field_offset) }
#define CLI_INT(s, l, a, field_offset, lo, hi, h) \
	{ .type = CLI_OPT_INT, .short_name = (s), .long_name = (l), .argh = (a), .help = (h), \
	  .offset = (field_offset), .min = (lo), .max = (hi) }
#define CLI_LLONG(s, l, a, field_offset, lo, hi, h) \
	{ .type = CLI_OPT_LLONG, .short_name = (s), .long_name = (l), .argh = (a), .help = (h), \
	  .offset = (field_offset), .min = (lo), .max = (hi) }
#define CLI_CALLBACK(s, l, a, cb, h) \
	{ .type = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), .argh = (a), \
	  .help = (h), .callback = (cb) }
/* A file name that must not be empty, into the const char * at offset. */
#define CLI_FILE(s, l, a, field_offset, h) \
	{ .type = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), .argh = (a), \
	  .help = (h), .offset = (field_offset), .callback = cli_nonempty_file }
#define CLI_END { .type = CLI_OPT_END }

/* Parses the options of command cmd (argv[0] is its name) by its table in
 * cli_commands, storing into base. GNU getopt_long's syntax: --name VALUE,
 * --name=VALUE, a unique prefix of a long name, -c VALUE, -cVALUE, and "--"
 * ending the options; the arguments that are not options are moved, in
 * order, to argv[1..*nargs]. Returns 0, or 2 after a usage error on stderr
 * (an unknown option also prints the usage and the option lines). */
int cli_parse_options(const char *cmd, int argc, char **argv, void *base, int *nargs);

/* Prints "autotune NAME: message" and a hint to stderr; returns 2. */
int cli_usage_error(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parses a number option value from min to max: 0, or a usage error that
 * says "OPT expects WHAT from MIN to MAX (e.g. EXAMPLE)". */
int cli_parse_double(const char *cmd, const char *opt, const char *what, const char *example,
		     const char *text, double min, double max, double *out);

/* Parses a positive integer option value; returns 0 or a usage error. */
int cli_parse_long(const char *cmd, const char *opt, const char *text, long long min,
		   long long max, long long *out);

/* A command's option table and help page (NULL: no such command), from the
 * command table (cli.c): the parser prints them with an unknown option. */
const cli_option *cli_options_of(const char *cmd);
const char *cli_help_of(const char *cmd);

/* Prints the option lines of a table: "  -c, --config FILE   help". */
void cli_print_options(FILE *out, const cli_option *opts);

/* "--name" or "-c": how messages and the help name an option. */
const char *cli_option_name(const cli_option *opt, char *buf, size_t cap);

/* CLI_FILE's callback: "--csv needs a file name" for an empty value (an
 * empty name would quietly mean something else), else stores it into the
 * const char * at opt->offset. */
int cli_nonempty_file(const char *cmd, const cli_option *opt, const char *value, void *base);

#endif

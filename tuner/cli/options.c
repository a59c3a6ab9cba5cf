/* The option parser and the option lines of the help (options.h). */
#include "tuner/cli/options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Where the option lines' help starts; a longer left part puts it on the
 * next line. */
#define HELP_COLUMN 22

static const cli_option no_options[] = { CLI_END };

const char *cli_option_name(const cli_option *opt, char *buf, size_t cap)
{
	if (opt->long_name)
		snprintf(buf, cap, "--%s", opt->long_name);
	else
		snprintf(buf, cap, "-%c", opt->short_name);
	return buf;
}

void cli_print_options(FILE *out, const cli_option *opts)
{
	for (const cli_option *o = opts; o->type != CLI_OPT_END; o++) {
		char left[128];
		int n = snprintf(left, sizeof left, "  %c%c%s%s%s%s%s", o->short_name ? '-' : ' ',
				 o->short_name ? o->short_name : ' ',
				 o->short_name && o->long_name ? ", " : o->long_name ? "  " : "",
				 o->long_name ? "--" : "", o->long_name ? o->long_name : "",
				 o->argh ? " " : "", o->argh ? o->argh : "");
		if (n < HELP_COLUMN)
			fprintf(out, "%-*s", HELP_COLUMN, left);
		else
			fprintf(out, "%s\n%*s", left, HELP_COLUMN, "");
		for (const char *h = o->help ? o->help : ""; *h;) {
			size_t len = strcspn(h, "\n");
			fprintf(out, "%.*s\n", (int)len, h);
			h += len;
			if (*h == '\n' && *++h)
				fprintf(out, "%*s", HELP_COLUMN, "");
		}
		if (!o->help || !*o->help)
			fputc('\n', out);
	}
}

static const cli_option *table_of(const char *cmd)
{
	const cli_option *opts = cli_options_of(cmd);
	return opts ? opts : no_options;
}

/* "autotune CMD: unknown option WHAT", the usage lines of the help page and the option
 * lines, then the hint; returns 2. */
static int unknown_option(const char *cmd, const char *what)
{
	fprintf(stderr, "autotune %s: unknown option %s\n", cmd, what);
	const char *help = cli_help_of(cmd);
	const cli_option *opts = cli_options_of(cmd);
	if (help) {
		const char *end = strstr(help, "\n\n");
		fprintf(stderr, "%.*s\n", end ? (int)(end - help) : (int)strlen(help) - 1, help);
		if (opts && opts->type != CLI_OPT_END) {
			fputc('\n', stderr);
			cli_print_options(stderr, opts);
		}
	}
	fprintf(stderr, "see 'autotune help %s'\n", cmd);
	return 2;
}

static int apply(const char *cmd, const cli_option *o, const char *value, void *base)
{
	char name[80];
	char *field = (char *)base + o->offset;
	long long v;
	switch (o->type) {
	case CLI_OPT_FLAG: *(int *)field = 1; return 0;
	case CLI_OPT_STRING: *(const char **)field = value; return 0;
	case CLI_OPT_INT:
	case CLI_OPT_LLONG:
		if (cli_parse_long(cmd, cli_option_name(o, name, sizeof name), value, o->min, o->max,
				   &v))
			return 2;
		if (o->type == CLI_OPT_INT)
			*(int *)field = (int)v;
		else
			*(long long *)field = v;
		return 0;
	case CLI_OPT_CALLBACK: return o->callback(cmd, o, value, base);
	case CLI_OPT_END: break;
	}
	return cli_usage_error(cmd, "internal error: option %s has no type",
			       cli_option_name(o, name, sizeof name));
}

/* The long option arg names (up to '=' or its end): an exact name, else the
 * only one it is a prefix of. NULL with *ambiguous set when several are. */
static const cli_option *find_long(const cli_option *opts, const char *arg, size_t len,
				   int *ambiguous)
{
	const cli_option *prefix = NULL;
	int nprefix = 0;
	*ambiguous = 0;
	for (const cli_option *o = opts; o->type != CLI_OPT_END; o++) {
		if (!o->long_name || strncmp(o->long_name, arg, len) != 0)
			continue;
		if (o->long_name[len] == '\0')
			return o;
		prefix = o;
		nprefix++;
	}
	*ambiguous = nprefix > 1;
	return nprefix == 1 ? prefix : NULL;
}

static const cli_option *find_short(const cli_option *opts, char c)
{
	for (const cli_option *o = opts; o->type != CLI_OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

/* One "--name[=value]" at argv[*i]; 0 or an exit status. */
static int parse_long(const char *cmd, const cli_option *opts, int argc, char **argv, int *i,
		      void *base)
{
	const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	int ambiguous;
	const cli_option *o = find_long(opts, name, len, &ambiguous);
	if (ambiguous)
		return cli_usage_error(cmd, "option %.*s is ambiguous", (int)(len + 2), arg);
	if (!o)
		return unknown_option(cmd, arg);
	if (!o->argh) {
		if (eq)
			return cli_usage_error(cmd, "--%s takes no value", o->long_name);
		return apply(cmd, o, NULL, base);
	}
	if (eq)
		return apply(cmd, o, eq + 1, base);
	if (*i + 1 >= argc)
		return cli_usage_error(cmd, "%s needs a value", arg);
	return apply(cmd, o, argv[++*i], base);
}

/* One "-c", "-cVALUE" or "-c VALUE" (short options without a value may
 * share a dash) at argv[*i]; 0 or an exit status. */
static int parse_short(const char *cmd, const cli_option *opts, int argc, char **argv, int *i,
		       void *base)
{
	for (const char *p = argv[*i] + 1; *p; p++) {
		const cli_option *o = find_short(opts, *p);
		char name[3] = { '-', *p, 0 };
		if (!o)
			return unknown_option(cmd, p == argv[*i] + 1 ? argv[*i] : name);
		if (!o->argh) {
			int rc = apply(cmd, o, NULL, base);
			if (rc)
				return rc;
			continue;
		}
		if (p[1])
			return apply(cmd, o, p + 1, base);
		if (*i + 1 >= argc)
			return cli_usage_error(cmd, "%s needs a value", name);
		return apply(cmd, o, argv[++*i], base);
	}
	return 0;
}

int cli_parse_options(const char *cmd, int argc, char **argv, void *base, int *nargs)
{
	const cli_option *opts = table_of(cmd);
	char **args = malloc(sizeof *args * (size_t)(argc > 0 ? argc : 1));
	if (!args) {
		fprintf(stderr, "autotune: out of memory\n");
		return 1;
	}
	int n = 0, rc = 0;
	for (int i = 1; i < argc && rc == 0; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			while (++i < argc)
				args[n++] = argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			args[n++] = argv[i];
		else if (a[1] == '-')
			rc = parse_long(cmd, opts, argc, argv, &i, base);
		else
			rc = parse_short(cmd, opts, argc, argv, &i, base);
	}
	if (rc == 0) {
		memcpy(argv + 1, args, sizeof *args * (size_t)n);
		*nargs = n;
	}
	free(args);
	return rc;
}

int cli_nonempty_file(const char *cmd, const cli_option *opt, const char *value, void *base)
{
	char name[80];
	if (!*value)
		return cli_usage_error(cmd, "%s needs a file name", cli_option_name(opt, name, sizeof name));
	*(const char **)((char *)base + opt->offset) = value;
	return 0;
}

int cli_usage_error(const char *name, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "autotune %s: ", name);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee 'autotune help %s'\n", name);
	return 2;
}

int cli_parse_double(const char *cmd, const char *opt, const char *what, const char *example,
		     const char *text, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end || errno || !(v >= min && v <= max))
		return cli_usage_error(cmd, "%s expects %s from %g to %g (e.g. %s), got \"%s\"", opt,
				       what, min, max, example, text);
	*out = v;
	return 0;
}

int cli_parse_long(const char *cmd, const char *opt, const char *text, long long min,
		   long long max, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max)
		return cli_usage_error(cmd, "%s needs an integer from %lld to %lld, got \"%s\"",
				       opt, min, max, text);
	*out = v;
	return 0;
}

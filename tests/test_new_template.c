/* A new template added by following docs/ARCHITECTURE.md alone: the
 * worked example's files are written from the page itself (each "`PATH`:"
 * line and the code block under it) into a temporary folder, and the
 * page's commands run there as written ($AUTOTUNE_TEMPLATES pointing at the
 * new folder; `build/` is this repository's build). The template is listed,
 * generated and compiled for every shape of its config by `sweep
 * --compile-only`, with no C code touched; and the page's expected output
 * is what the sweep says. Needs NVRTC, no GPU; runs from the repository
 * root. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/sql_probe.h"
#include "tests/tmp_folder.h"

TestSuite(new_template, .init = tmp_setup, .fini = tmp_teardown);

#define SECTION "## Worked example"

/* The fenced block that starts at or after *at (its body, malloc'd), with
 * *at moved past it; NULL when there is none before end. lang gets the
 * fence's language. */
static char *next_block(const char **at, const char *end, char *lang, size_t cap)
{
	const char *open = strstr(*at, "\n```");
	if (!open || open >= end)
		return NULL;
	const char *body = strchr(open + 1, '\n');
	cr_assert_not_null(body);
	snprintf(lang, cap, "%.*s", (int)(body - open - 4), open + 4);
	body++;
	const char *close = strstr(body, "\n```\n");
	cr_assert(close && close < end, "an unclosed code block in " SECTION);
	*at = close + 4;
	return strndup(body, (size_t)(close - body) + 1);
}

/* The "`PATH`:" line, then a blank line, just before the fence at fence;
 * PATH into path, or "". */
static void block_path(const char *section, const char *fence, char *path, size_t cap)
{
	path[0] = '\0';
	const char *blank_end = fence - 1; /* the '\n' that ends the blank line */
	if (blank_end - 1 <= section || blank_end[-1] != '\n')
		return;
	const char *line_end = blank_end - 1, *start = line_end;
	while (start > section && start[-1] != '\n')
		start--;
	size_t len = (size_t)(line_end - start);
	if (len > 3 && start[0] == '`' && start[len - 2] == '`' && start[len - 1] == ':')
		snprintf(path, cap, "%.*s", (int)len - 3, start + 1);
}

static void write_file(const char *rel, const char *text)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", tmp_path(rel));
	cr_assert_eq(system(cmd), 0);
	tmp_write(rel, text);
}

Test(new_template, the_worked_example_of_architecture_md_compiles_as_written, .timeout = 300)
{
	char *doc = tmp_read("docs/ARCHITECTURE.md");
	const char *section = strstr(doc, "\n" SECTION);
	cr_assert_not_null(section, "docs/ARCHITECTURE.md has no \"" SECTION "\" section");
	const char *end = strstr(section + 1, "\n## ");
	if (!end)
		end = section + strlen(section);

	int files = 0;
	char *commands = NULL, *expected = NULL;
	const char *at = section;
	char lang[32], path[256];
	for (;;) {
		const char *open = strstr(at, "\n```");
		char *body = next_block(&at, end, lang, sizeof lang);
		if (!body)
			break;
		block_path(section, open + 1, path, sizeof path);
		if (path[0]) {
			write_file(path, body);
			files++;
			free(body);
		} else if (strcmp(lang, "sh") == 0 && !commands) {
			commands = body;
		} else if (lang[0] == '\0' && !expected) {
			expected = body;
		} else {
			free(body);
		}
	}
	cr_assert_eq(files, 3, "the example's two template files and its config");
	cr_assert_not_null(commands, "no ```sh block of commands");
	cr_assert_not_null(expected, "no block of the expected output");
	write_file("commands.sh", commands);

	char cwd[1024], cmd[4096];
	cr_assert_not_null(getcwd(cwd, sizeof cwd));
	snprintf(cmd, sizeof cmd, "%s/build", cwd);
	cr_assert_eq(symlink(cmd, tmp_path("build")), 0);
	snprintf(cmd, sizeof cmd, "cd '%s' && unset AUTOTUNE_TEMPLATES AUTOTUNE_DB && "
		 "sh -e commands.sh > out.txt 2>&1", tmp_folder());
	int st = system(cmd);
	char *out = tmp_read(tmp_path("out.txt"));
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the commands failed:\n%s\n%s", commands,
		  out);

	cr_assert(strstr(out, "softmax_rowloop (op softmax): ") != NULL, "%s", out);
	cr_assert(strstr(out, "#define DTYPE_F32 1\n#define THREADS 64\n") != NULL, "%s", out);
	/* the page's expected line, up to its elision */
	char *dots = strstr(expected, "...");
	cr_assert_not_null(dots);
	*dots = '\0';
	cr_assert(strstr(out, expected) != NULL, "expected \"%s\" in:\n%s", expected, out);
	cr_assert_eq(sql_int(tmp_path("rowloop.db"),
			     "SELECT count(*) FROM compile_cache WHERE status = 0"),
		     2);
	free(out);
	free(commands);
	free(expected);
	free(doc);
}

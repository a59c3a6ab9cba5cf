/* tools/room_graph.py (run by `make test` over this tree) on small trees
 * made here: it prints each room's lines and includes, and exits 1 naming
 * the problem when a room holds more than a third of the lines, when rooms
 * or modules include each other in a loop, when the dispatch library
 * reaches the tuner, or when its policy room reaches its runtime room or
 * the driver. Run from the repository root. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tests/tmp_folder.h"

TestSuite(room_graph, .init = tmp_setup, .fini = tmp_teardown);

/* Writes a file of `lines` lines under the temporary folder, starting with
 * the given includes (a NULL-terminated list of paths). */
static void source(const char *path, int lines, const char *const *includes)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s", tmp_path(path));
	*strrchr(dir, '/') = '\0';
	char cmd[600];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	FILE *f = fopen(tmp_path(path), "w");
	cr_assert_not_null(f, "%s", path);
	int n = 0;
	for (; includes && includes[n]; n++)
		fprintf(f, "#include \"%s\"\n", includes[n]);
	for (; n < lines; n++)
		fprintf(f, "int %c%d;\n", 'a' + (int)(strlen(path) % 26), n);
	fclose(f);
}

#define INC(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Runs the script over the temporary folder: its exit status, and its
 * stdout and stderr in out. */
static int room_graph(char *out, size_t cap)
{
	char cmd[700];
	snprintf(cmd, sizeof cmd, "python3 tools/room_graph.py --root %s 2>&1", tmp_folder());
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Three rooms of 10 lines: common, tuner/sweep including common, and
 * dispatch including common. */
static void balanced_tree(void)
{
	source("common/util.h", 10, NULL);
	source("tuner/sweep/plan.c", 10, INC("common/util.h"));
	source("dispatch/lookup.c", 10, INC("common/util.h"));
}

Test(room_graph, prints_each_room_with_its_lines_and_includes)
{
	balanced_tree();
	source("tests/test_plan.c", 500, INC("tuner/sweep/plan.c")); /* not a room */
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "30 lines in 3 rooms") != NULL, "%s", out);
	cr_assert(strstr(out, "  tuner/sweep            10  33.3%  -> common (1)\n") != NULL, "%s",
		  out);
	cr_assert(strstr(out, "  common                 10  33.3%  -> -\n") != NULL, "%s", out);
	cr_assert(strstr(out, "tests") == NULL, "the tests are no room:\n%s", out);
}

Test(room_graph, a_room_above_a_third_of_the_lines_fails)
{
	balanced_tree();
	source("tuner/sweep/tune.c", 2, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "room_graph: room tuner/sweep holds 12 of 32 lines, more than a "
			      "third\n") != NULL, "%s", out);
}

Test(room_graph, rooms_that_include_each_other_fail)
{
	source("gen/a.c", 10, INC("db/b.h"));
	source("db/b.h", 10, NULL);
	source("db/c.c", 10, INC("common/x.h"));
	source("common/x.h", 10, INC("gen/a.h"));
	source("gen/a.h", 10, NULL);
	source("tools/t.c", 10, NULL);
	source("reports/r.c", 10, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "room_graph: rooms include each other in a loop: common, db, gen\n"),
		  "%s", out);
}

Test(room_graph, modules_that_include_each_other_in_one_room_fail)
{
	balanced_tree();
	source("gen/x.c", 4, INC("gen/y.h"));
	source("gen/x.h", 1, NULL);
	source("gen/y.c", 4, INC("gen/x.h"));
	source("gen/y.h", 1, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "room_graph: modules include each other in a loop: gen/x, gen/y\n"),
		  "%s", out);
}

Test(room_graph, the_dispatch_library_reaching_the_tuner_fails)
{
	balanced_tree();
	source("common/more.h", 4, INC("tuner/sweep/plan.h"));
	source("tuner/sweep/plan.h", 1, NULL);
	source("dispatch/more.c", 4, INC("common/more.h"));
	source("reports/r.c", 10, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "room_graph: the dispatch library's room dispatch reaches "
			      "tuner/sweep\n"), "%s", out);
}

/* The policy (dispatch/policy/) needs no GPU: reaching the runtime room
 * (here through common/) fails, though no loop is made. */
Test(room_graph, the_dispatch_policy_reaching_the_runtime_fails)
{
	balanced_tree();
	source("common/more.h", 4, INC("dispatch/runtime/handle.h"));
	source("dispatch/runtime/handle.h", 4, NULL);
	source("dispatch/policy/select.c", 4, INC("common/more.h"));
	source("reports/r.c", 10, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 1, "%s", out);
	cr_assert(strstr(out, "room_graph: the dispatch policy room dispatch/policy reaches "
			      "dispatch/runtime\n"), "%s", out);
}

/* The runtime room including the policy room is the way down: it passes. */
Test(room_graph, the_dispatch_runtime_including_the_policy_passes)
{
	balanced_tree();
	source("dispatch/policy/select.h", 4, NULL);
	source("dispatch/runtime/resolve.c", 4, INC("dispatch/policy/select.h"));
	source("reports/r.c", 10, NULL);
	char out[4096];
	cr_assert_eq(room_graph(out, sizeof out), 0, "%s", out);
}

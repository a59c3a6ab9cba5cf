/* Tests of how the dispatch library ships: `make install` lays out the
 * header, the static and shared libraries (soname, symlinks) and the
 * pkg-config file with the header's version; the shared library exports
 * the public API and nothing else; the installed `autotune` finds its
 * default config and templates; and the built-in kernels' committed
 * sources are exactly what the generator makes of the params in
 * dispatch/builtin_kernels.c. Run from the repository root (as `make test`
 * does); needs make, readelf, nm and pkg-config, but no GPU. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dispatch/builtin_kernels.h"
#include "include/autotune/dispatch.h"

#include "tests/tmp_folder.h"

TestSuite(dispatch_install, .init = tmp_setup, .fini = tmp_teardown);

#define LIB "libautotune-dispatch"

/* Runs cmd with sh; returns its exit status, its stdout and stderr in out. */
static int run(const char *cmd, char *out, size_t cap)
{
	char full[4096];
	snprintf(full, sizeof full, "( %s ) 2>&1", cmd);
	FILE *p = popen(full, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	size_t n = fread(out, 1, cap - 1, p);
	out[n] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void assert_repo_root(void)
{
	cr_assert_eq(access("include/autotune/dispatch.h", R_OK), 0,
		     "run the tests from the repository root");
}

static void assert_symlink(const char *dir, const char *name, const char *target)
{
	char path[1024], buf[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	ssize_t n = readlink(path, buf, sizeof buf - 1);
	cr_assert_gt(n, 0, "%s is not a symlink", path);
	buf[n] = '\0';
	cr_assert_str_eq(buf, target, "%s -> %s", path, buf);
}

static void assert_regular(const char *dir, const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct stat sb;
	cr_assert_eq(lstat(path, &sb), 0, "%s missing", path);
	cr_assert(S_ISREG(sb.st_mode), "%s is not a regular file", path);
}

Test(dispatch_install, install_lays_out_header_libraries_and_pkgconfig, .timeout = 300)
{
	assert_repo_root();
	static char out[1 << 16];
	const char *root = tmp_path("root");
	char cmd[2048];
	/* MAKEFLAGS from an outer `make test` would hand this make a jobserver
	 * it cannot reach. */
	snprintf(cmd, sizeof cmd,
		 "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s --no-print-directory install "
		 "DESTDIR=%s PREFIX=/usr", root);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);

	char inc[1024], lib[1024], pc[1100];
	snprintf(inc, sizeof inc, "%s/usr/include/autotune", root);
	snprintf(lib, sizeof lib, "%s/usr/lib", root);
	snprintf(pc, sizeof pc, "%s/pkgconfig", lib);
	assert_regular(inc, "dispatch.h");
	snprintf(cmd, sizeof cmd, "cmp include/autotune/dispatch.h %s/dispatch.h", inc);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);

	assert_regular(lib, LIB ".a");
	assert_regular(lib, LIB ".so." ATD_VERSION_STRING);
	char so_major[64];
	snprintf(so_major, sizeof so_major, LIB ".so.%d", ATD_VERSION_MAJOR);
	assert_symlink(lib, so_major, LIB ".so." ATD_VERSION_STRING);
	assert_symlink(lib, LIB ".so", so_major);

	snprintf(cmd, sizeof cmd, "readelf -d %s/" LIB ".so." ATD_VERSION_STRING, lib);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
	char soname[128];
	snprintf(soname, sizeof soname, "Library soname: [%s]", so_major);
	cr_assert(strstr(out, soname) != NULL, "no %s in:\n%s", soname, out);

	assert_regular(pc, "autotune-dispatch.pc");
	snprintf(cmd, sizeof cmd, "pkg-config --modversion %s/autotune-dispatch.pc", pc);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
	cr_assert_str_eq(out, ATD_VERSION_STRING "\n");
	snprintf(cmd, sizeof cmd, "PKG_CONFIG_LIBDIR=%s pkg-config --libs autotune-dispatch", pc);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
	cr_assert(strstr(out, "-lautotune-dispatch") != NULL, "%s", out);
	/* The .pc describes this install's PREFIX, so that an application
	 * finds the header through it (as make examples does). */
	snprintf(cmd, sizeof cmd, "pkg-config --variable=prefix %s/autotune-dispatch.pc", pc);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
	cr_assert_str_eq(out, "/usr\n", "the installed .pc has prefix=%s", out);
	snprintf(cmd, sizeof cmd,
		 "PKG_CONFIG_SYSROOT_DIR=%s PKG_CONFIG_LIBDIR=%s pkg-config --cflags autotune-dispatch",
		 root, pc);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
	char want[1200];
	snprintf(want, sizeof want, "-I%s/usr/include", root);
	cr_assert(strncmp(out, want, strlen(want)) == 0, "cflags %s, expected %s", out, want);

	/* The installed program finds its default config and templates away
	 * from the source tree. */
	snprintf(cmd, sizeof cmd, "cd %s && %s/usr/bin/autotune selftest --dry-run", tmp_folder(),
		 root);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
	cr_assert(strstr(out, "runs per case") != NULL, "%s", out);
	snprintf(cmd, sizeof cmd, "test -r %s/usr/share/autotune/configs/softmax.yaml", root);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "the default config is installed");
}

Test(dispatch_install, the_shared_library_exports_exactly_the_api)
{
	assert_repo_root();
	static const char *const api[] = {
		"atd_close", "atd_errmsg", "atd_level_name", "atd_open", "atd_query",
		"atd_query_gpu", "atd_set_log", "atd_softmax", "atd_status_string",
		"atd_version", "atd_version_number",
	};
	enum { NAPI = sizeof api / sizeof api[0] };
	static char out[1 << 16];
	cr_assert_eq(run("nm -D --defined-only build/lib/" LIB ".so." ATD_VERSION_STRING, out,
			 sizeof out),
		     0, "%s", out);
	int seen[NAPI] = { 0 };
	int exported = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		char addr[64], type[8], name[256];
		if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
			continue;
		exported++;
		cr_assert(strncmp(name, "atd_", 4) == 0, "exports %s", name);
		int known = 0;
		for (int i = 0; i < NAPI; i++)
			if (strcmp(name, api[i]) == 0)
				seen[i] = known = 1;
		cr_assert(known, "exports %s, which is not in the header's API", name);
	}
	for (int i = 0; i < NAPI; i++)
		cr_assert(seen[i], "%s is not exported", api[i]);
	cr_assert_eq(exported, NAPI);
	/* Each listed name is a function of the header. */
	FILE *f = fopen("include/autotune/dispatch.h", "r");
	cr_assert_not_null(f);
	static char header[1 << 16];
	header[fread(header, 1, sizeof header - 1, f)] = '\0';
	fclose(f);
	for (int i = 0; i < NAPI; i++) {
		char decl[64];
		snprintf(decl, sizeof decl, "%s(", api[i]);
		const char *at = header;
		while ((at = strstr(at + 1, decl)) && at[-1] != ' ' && at[-1] != '*')
			;
		cr_assert_not_null(at, "%s is not declared in dispatch.h", api[i]);
	}
}

/* An application that links the library must not pull in the tuner, the
 * generator or the report code: no symbol the library defines or needs is
 * one that their objects define (tools/room_graph.py checks the includes). */
Test(dispatch_install, the_library_holds_and_needs_no_tuner_generator_or_report_code)
{
	assert_repo_root();
	static char out[1 << 16];
	const char *objs = tmp_path("foreign.syms"), *lib = tmp_path("lib.syms");
	char cmd[2048];
	snprintf(cmd, sizeof cmd,
		 "set -e; find build/obj/tuner build/obj/gen build/obj/reports -name '*.o' | "
		 "xargs nm -g --defined-only | awk 'NF == 3 { print $3 }' | sort -u > %s; "
		 "test -s %s; nm -g build/lib/" LIB ".a | awk 'NF >= 2 { print $NF }' | sort -u > %s; "
		 "grep -qx atd_open %s; comm -12 %s %s",
		 objs, objs, lib, lib, objs, lib);
	cr_assert_eq(run(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
	cr_assert_str_eq(out, "", "the library defines or needs these symbols of the tuner, "
		 "the generator or the reports:\n%s", out);
}

Test(dispatch_install, builtin_sources_are_what_the_generator_makes_of_their_params)
{
	assert_repo_root();
	cr_assert_eq(access("build/autotune", X_OK), 0, "build build/autotune first (make)");
	static const char *const dtypes[] = { "f32", "f16", "bf16" };
	for (int dt = 0; dt < 3; dt++) {
		const builtin_kernel *b = builtin_kernel_for((at_dtype)dt);
		cr_assert_not_null(b);
		char cmd[2048];
		int n = snprintf(cmd, sizeof cmd,
				 "build/autotune gen --template %s --dtype %s", b->template_name,
				 dtypes[dt]);
		char params[512];
		snprintf(params, sizeof params, "%s", b->params);
		for (char *p = strtok(params, " "); p; p = strtok(NULL, " "))
			n += snprintf(cmd + n, sizeof cmd - (size_t)n, " --param %s", p);
		const char *generated = tmp_path("gen.cu");
		snprintf(cmd + n, sizeof cmd - (size_t)n,
			 " > %s && cmp %s dispatch/builtin/softmax_online_%s.cu", generated, generated,
			 dtypes[dt]);
		static char out[1 << 16];
		cr_assert_eq(run(cmd, out, sizeof out), 0, "%s\n%s", cmd, out);
	}
}

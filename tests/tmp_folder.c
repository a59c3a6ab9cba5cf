/* The temporary folder of tests/tmp_folder.h (no tests here). Each test runs
 * in its own process, so one folder at a time is enough. */
#include <criterion/criterion.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/tmp_folder.h"

static char dir[256];

void tmp_setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/autotune_test.XXXXXX");
	cr_assert_not_null(mkdtemp(dir), "cannot make a temporary folder");
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(path);
}

void tmp_teardown(void)
{
	if (dir[0])
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

const char *tmp_folder(void)
{
	return dir;
}

const char *tmp_path(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];
	snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
	return b;
}

char *tmp_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot read %s", path);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	cr_assert_not_null(m);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

void tmp_write(const char *name, const char *text)
{
	FILE *f = fopen(tmp_path(name), "w");
	cr_assert_not_null(f, "cannot write %s", tmp_path(name));
	fputs(text, f);
	fclose(f);
}

/* Whole-or-nothing file output: see outfile.h. */
#include "reports/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strbuf.h"

static int cannot_write(const char *path, int errnum, at_error *err)
{
	return at_error_set(err, "%s: cannot write: %s", path, strerror(errnum));
}

/* Writes all of data to fd; returns 0 or an errno value. */
static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : EIO;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* A device, pipe or socket: there is no file to replace. */
static int write_in_place(const char *path, const void *data, size_t len, at_error *err)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return cannot_write(path, errno, err);
	int e = write_all(fd, data, len);
	if (close(fd) != 0 && e == 0)
		e = errno;
	return e ? cannot_write(path, e, err) : 0;
}

static int replace_file(const char *path, const char *target, mode_t mode, const void *data,
			size_t len, at_error *err)
{
	/* the temporary name is the target's plus a suffix: the same folder */
	size_t n = strlen(target) + 16;
	char *tmp = xmalloc(n);
	snprintf(tmp, n, "%s.tmp.XXXXXX", target);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		free(tmp);
		return cannot_write(path, e, err);
	}
	int e = fchmod(fd, mode) != 0 ? errno : 0;
	if (e == 0)
		e = write_all(fd, data, len);
	if (e == 0 && fsync(fd) != 0)
		e = errno;
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename(tmp, target) != 0)
		e = errno;
	if (e)
		unlink(tmp);
	free(tmp);
	return e ? cannot_write(path, e, err) : 0;
}

int outfile_write(const char *path, const void *data, size_t len, at_error *err)
{
	mode_t mask = umask(0);
	umask(mask);
	mode_t mode = 0666 & ~mask;
	struct stat st;
	if (stat(path, &st) != 0)
		return replace_file(path, path, mode, data, len, err);
	if (S_ISDIR(st.st_mode))
		return cannot_write(path, EISDIR, err);
	if (!S_ISREG(st.st_mode))
		return write_in_place(path, data, len, err);
	mode = st.st_mode & 07777;
	/* replace the file a link names, not the link */
	char *target = realpath(path, NULL);
	if (!target)
		return cannot_write(path, errno, err);
	int rc = replace_file(path, target, mode, data, len, err);
	free(target);
	return rc;
}

/* Reading and writing supervisor/worker records: see worker_msg.h. */
#include "tuner/sweep/worker_msg.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

int worker_msg_write(int fd, const worker_msg *m)
{
	const char *p = (const char *)m;
	size_t left = sizeof *m;
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		left -= (size_t)w;
	}
	return 0;
}

int worker_msg_read(int fd, worker_msg *m)
{
	char *p = (char *)m;
	size_t left = sizeof *m;
	while (left) {
		ssize_t r = read(fd, p, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		left -= (size_t)r;
	}
	return 0;
}

worker_msg worker_msg_make(int type)
{
	worker_msg m;
	memset(&m, 0, sizeof m);
	m.type = type;
	m.variant = -1;
	return m;
}

#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int at_error_set(at_error *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int at_error_prefix(at_error *err, const char *fmt, ...)
{
	if (!err)
		return -1;
	char prefix[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	/* Shift the message right to make room, keeping it NUL-terminated. */
	size_t plen = strlen(prefix) + 2, cap = sizeof err->msg;
	if (plen >= cap)
		plen = cap - 1;
	size_t mlen = strnlen(err->msg, cap - 1);
	if (plen + mlen >= cap)
		mlen = cap - 1 - plen;
	memmove(err->msg + plen, err->msg, mlen);
	err->msg[plen + mlen] = '\0';
	memcpy(err->msg, prefix, plen - 2);
	memcpy(err->msg + plen - 2, ": ", 2);
	return -1;
}

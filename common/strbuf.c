#include "common/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(void)
{
	fputs("autotune: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static void reserve(strbuf *s, size_t extra)
{
	if (s->len + extra + 1 <= s->cap)
		return;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < s->len + extra + 1)
		cap *= 2;
	s->data = xrealloc(s->data, cap);
	s->cap = cap;
}

void strbuf_append(strbuf *s, const char *text, size_t len)
{
	reserve(s, len);
	memcpy(s->data + s->len, text, len);
	s->len += len;
	s->data[s->len] = '\0';
}

void strbuf_puts(strbuf *s, const char *text)
{
	strbuf_append(s, text, strlen(text));
}

void strbuf_printf(strbuf *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	reserve(s, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	s->len += (size_t)n;
}

char *strbuf_take(strbuf *s)
{
	char *out = s->data ? s->data : xstrdup("");
	s->data = NULL;
	s->len = s->cap = 0;
	return out;
}

void strbuf_free(strbuf *s)
{
	free(s->data);
	s->data = NULL;
	s->len = s->cap = 0;
}

char *strbuf_read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	strbuf s = { 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		strbuf_append(&s, chunk, n);
	fclose(f);
	return strbuf_take(&s);
}

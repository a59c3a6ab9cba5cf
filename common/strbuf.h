/* A growable, always NUL-terminated string for building text. Out of memory
 * aborts: every caller would have no better recovery. */
#ifndef AT_COMMON_STRBUF_H
#define AT_COMMON_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
	char *data; /* NULL until something is appended */
	size_t len;
	size_t cap;
} strbuf;

void strbuf_append(strbuf *s, const char *text, size_t len);
void strbuf_puts(strbuf *s, const char *text);
void strbuf_printf(strbuf *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Returns the malloc'd string (an empty one if nothing was appended) and
 * resets s. */
char *strbuf_take(strbuf *s);
void strbuf_free(strbuf *s);

/* The whole file at path as a malloc'd NUL-terminated string; NULL when
 * it cannot be opened (errno says why). */
char *strbuf_read_file(const char *path);

/* malloc that aborts on failure, and strdup likewise. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

#endif

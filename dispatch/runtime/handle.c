/* The handle's message, log and kept strings: see handle.h. */
#include "dispatch/runtime/handle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atd_status atdi_fail(atd_handle *h, atd_status s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&h->lock);
	vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
	pthread_mutex_unlock(&h->lock);
	va_end(ap);
	return s;
}

atd_status atdi_cuda_fail(atd_handle *h, atd_status s, CUresult rc, const char *what)
{
	at_error err;
	cudrv_error(&err, rc, what);
	return atdi_fail(h, s, "%s", err.msg);
}

void atdi_note(atdi_notes *notes, atd_log_level level, const char *fmt, ...)
{
	if (notes->n == (int)(sizeof notes->level / sizeof notes->level[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(notes->text[notes->n], sizeof notes->text[0], fmt, ap);
	va_end(ap);
	notes->level[notes->n++] = level;
}

void atdi_notes_emit(atd_handle *h, const atdi_notes *notes)
{
	for (int i = 0; i < notes->n; i++) {
		if (notes->level[i] == ATD_LOG_WARNING)
			atdi_fail(h, ATD_OK, "%s", notes->text[i]);
		pthread_mutex_lock(&h->log_lock);
		if (h->log_fn)
			h->log_fn(h->log_user, notes->level[i], notes->text[i]);
		pthread_mutex_unlock(&h->log_lock);
	}
}

const char *atdi_keep_string(atd_handle *h, const char *text)
{
	for (size_t i = 0; i < h->nstrings; i++)
		if (strcmp(h->strings[i], text) == 0)
			return h->strings[i];
	if (h->nstrings == h->string_cap) {
		size_t n = h->string_cap ? 2 * h->string_cap : 8;
		char **v = realloc(h->strings, n * sizeof *v);
		if (!v)
			return NULL;
		h->strings = v;
		h->string_cap = n;
	}
	char *copy = strdup(text);
	if (copy)
		h->strings[h->nstrings++] = copy;
	return copy;
}

ATD_API void atd_set_log(atd_handle *h, atd_log_fn fn, void *user)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->log_lock);
	h->log_fn = fn;
	h->log_user = fn ? user : NULL;
	char *pending = fn ? h->pending : NULL;
	if (pending) {
		h->pending = NULL;
		fn(user, ATD_LOG_WARNING, pending);
	}
	pthread_mutex_unlock(&h->log_lock);
	free(pending);
}

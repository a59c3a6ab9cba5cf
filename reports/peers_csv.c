/* Reading the peers CSV: see peers_csv.h. The whole file is checked before
 * anything is drawn: a report never shows half of a file it could not
 * read. */
#include "reports/peers_csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"

#define MAX_FIELDS 64
#define MAX_FILE_BYTES (256L << 20)

enum { COL_DTYPE, COL_M, COL_N, COL_FLUSH, COL_METHOD, COL_STATUS, COL_US, COL_GPU, N_COLS };
static const char *const col_names[N_COLS] = { "dtype", "M", "N", "flush", "method", "status",
					       "us", "gpu" };

/* One line split into fields (unquoted, owned by the caller's buffer). */
typedef struct fields {
	char *v[MAX_FIELDS];
	size_t n;
} fields;

/* Splits the line [p, end) into f, unquoting into buf (as long as the
 * line). Returns 0, or -1 with err set. */
static int split(const char *path, int line, const char *p, const char *end, char *buf, fields *f,
		 at_error *err)
{
	f->n = 0;
	for (;;) {
		if (f->n == MAX_FIELDS)
			return at_error_set(err, "%s:%d: more than %d fields", path, line, MAX_FIELDS);
		f->v[f->n++] = buf;
		if (p < end && *p == '"') {
			p++;
			for (;;) {
				if (p == end)
					return at_error_set(err, "%s:%d: a quoted field is not closed on its "
							    "line", path, line);
				if (*p == '"' && p + 1 < end && p[1] == '"') {
					*buf++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*buf++ = *p++;
				}
			}
			if (p < end && *p != ',')
				return at_error_set(err, "%s:%d: text after a quoted field (field %zu)",
						    path, line, f->n);
		} else {
			while (p < end && *p != ',')
				*buf++ = *p++;
		}
		*buf++ = '\0';
		if (p == end)
			return 0;
		p++; /* the comma */
	}
}

static int parse_count(const char *path, int line, const char *name, const char *text,
		       long long *out, at_error *err)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (end == text || *end || errno || v < 1)
		return at_error_set(err, "%s:%d: %s is \"%s\", expected a positive integer", path, line,
				    name, text);
	*out = v;
	return 0;
}

/* The column index of each name in the header, -1 when absent. */
static int read_header(const char *path, const fields *f, int cols[N_COLS], at_error *err)
{
	for (int c = 0; c < N_COLS; c++) {
		cols[c] = -1;
		for (size_t i = 0; i < f->n; i++)
			if (strcmp(f->v[i], col_names[c]) == 0) {
				if (cols[c] >= 0)
					return at_error_set(err, "%s:1: the column \"%s\" appears twice",
							    path, col_names[c]);
				cols[c] = (int)i;
			}
		if (cols[c] < 0 && c != COL_GPU)
			return at_error_set(err, "%s:1: no column \"%s\" (the header must name dtype, M, "
					    "N, flush, method, status and us, as python -m "
					    "autotune_dispatch.peers writes them)",
					    path, col_names[c]);
	}
	return 0;
}

static int read_row(const char *path, int line, const fields *f, size_t n_header,
		    const int cols[N_COLS], peer_row *r, at_error *err)
{
	if (f->n != n_header)
		return at_error_set(err, "%s:%d: %zu fields, but the header has %zu", path, line, f->n,
				    n_header);
	const char *dtype = f->v[cols[COL_DTYPE]], *flush = f->v[cols[COL_FLUSH]];
	const char *method = f->v[cols[COL_METHOD]], *status = f->v[cols[COL_STATUS]];
	const char *us = f->v[cols[COL_US]];
	if (strcmp(dtype, "f32") && strcmp(dtype, "f16") && strcmp(dtype, "bf16"))
		return at_error_set(err, "%s:%d: dtype is \"%s\", expected f32, f16 or bf16", path, line,
				    dtype);
	if (strcmp(flush, "clean") && strcmp(flush, "dirty"))
		return at_error_set(err, "%s:%d: flush is \"%s\", expected clean or dirty", path, line,
				    flush);
	if (!*method)
		return at_error_set(err, "%s:%d: the method is empty", path, line);
	*r = (peer_row){ .clean = strcmp(flush, "clean") == 0, .ok = strcmp(status, "ok") == 0,
			 .us = NAN, .line = line };
	if (parse_count(path, line, "M", f->v[cols[COL_M]], &r->M, err) ||
	    parse_count(path, line, "N", f->v[cols[COL_N]], &r->N, err))
		return -1;
	if (r->ok) {
		char *end;
		r->us = strtod(us, &end);
		if (end == us || *end || !isfinite(r->us) || r->us <= 0)
			return at_error_set(err, "%s:%d: us is \"%s\", expected a time in microseconds "
					    "(the status is ok)", path, line, us);
	}
	r->dtype = xstrdup(dtype);
	r->method = xstrdup(method);
	r->gpu = cols[COL_GPU] >= 0 ? xstrdup(f->v[cols[COL_GPU]]) : NULL;
	return 0;
}

static int same_key(const peer_row *a, const peer_row *b)
{
	return a->M == b->M && a->N == b->N && a->clean == b->clean &&
	       strcmp(a->dtype, b->dtype) == 0 && strcmp(a->method, b->method) == 0 &&
	       (!a->gpu || strcmp(a->gpu, b->gpu) == 0);
}

int peers_parse(const char *path, const char *text, size_t len, peer_set *out, at_error *err)
{
	*out = (peer_set){ .path = xstrdup(path) };
	char *buf = xmalloc(len + 1);
	const char *p = text, *end = text + len;
	int line = 0, cols[N_COLS];
	size_t n_header = 0, cap = 0;
	int rc = 0;
	while (p < end && rc == 0) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *stop = eol ? eol : end;
		line++;
		if (stop > p && stop[-1] == '\r')
			stop--;
		fields f;
		if (memchr(p, '\0', (size_t)(stop - p)))
			rc = at_error_set(err, "%s:%d: a NUL byte: not a text file", path, line);
		else if (stop == p && line > 1)
			; /* a blank line */
		else if (split(path, line, p, stop, buf, &f, err))
			rc = -1;
		else if (line == 1) {
			rc = read_header(path, &f, cols, err);
			n_header = f.n;
			out->has_gpu = cols[COL_GPU] >= 0;
		} else {
			if (out->n_rows == cap) {
				cap = cap ? 2 * cap : 256;
				out->rows = xrealloc(out->rows, cap * sizeof *out->rows);
			}
			peer_row *r = &out->rows[out->n_rows];
			if (read_row(path, line, &f, n_header, cols, r, err) == 0) {
				out->n_rows++;
				for (size_t i = 0; i + 1 < out->n_rows && rc == 0; i++)
					if (same_key(&out->rows[i], r))
						rc = at_error_set(err, "%s:%d: a second row for %s %lldx%lld "
								  "%s %s (the first is line %d)", path,
								  line, r->dtype, r->M, r->N,
								  r->clean ? "clean" : "dirty", r->method,
								  out->rows[i].line);
			} else {
				rc = -1;
			}
		}
		p = eol ? eol + 1 : end;
	}
	free(buf);
	if (rc == 0 && line == 0)
		rc = at_error_set(err, "%s: empty, expected a header line (dtype,M,N,flush,method,"
				  "status,us,...)", path);
	else if (rc == 0 && out->n_rows == 0)
		rc = at_error_set(err, "%s: no rows after the header", path);
	if (rc)
		peers_free(out);
	return rc;
}

int peers_load(const char *path, peer_set *out, at_error *err)
{
	*out = (peer_set){ 0 };
	FILE *f = fopen(path, "rb");
	if (!f)
		return at_error_set(err, "%s: cannot read: %s", path, strerror(errno));
	strbuf text = { 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && text.len <= MAX_FILE_BYTES)
		strbuf_append(&text, chunk, n);
	int failed = ferror(f);
	fclose(f);
	int rc;
	if (failed)
		rc = at_error_set(err, "%s: cannot read: %s", path, strerror(errno));
	else if (text.len > MAX_FILE_BYTES)
		rc = at_error_set(err, "%s: larger than %ld MiB: not a peers CSV", path,
				  MAX_FILE_BYTES >> 20);
	else
		rc = peers_parse(path, text.data ? text.data : "", text.len, out, err);
	strbuf_free(&text);
	return rc;
}

void peers_free(peer_set *p)
{
	for (size_t i = 0; i < p->n_rows; i++) {
		free(p->rows[i].gpu);
		free(p->rows[i].dtype);
		free(p->rows[i].method);
	}
	free(p->rows);
	free(p->path);
	*p = (peer_set){ 0 };
}

int peers_is_peer(const char *method)
{
	return strncmp(method, "lib", 3) != 0 && strcmp(method, "copy") != 0;
}

const char *peers_label(const char *method)
{
	return strcmp(method, "torch") == 0	? "torch.softmax"
	       : strcmp(method, "triton") == 0	? "Triton tutorial"
	       : strcmp(method, "compile") == 0 ? "torch.compile"
						: method;
}

int peers_row_on(const peer_row *r, const char *gpu)
{
	return !r->gpu || strcmp(r->gpu, gpu) == 0;
}

static int timed_peer_at(const peer_row *r, const char *gpu, const char *dtype, long long M)
{
	return r->clean && r->ok && r->M == M && peers_is_peer(r->method) && peers_row_on(r, gpu) &&
	       strcmp(r->dtype, dtype) == 0;
}

const peer_row *peers_find(const peer_set *p, const char *gpu, const char *dtype, long long M,
			   long long N, const char *method)
{
	for (size_t i = 0; p && i < p->n_rows; i++) {
		const peer_row *r = &p->rows[i];
		if (r->N == N && timed_peer_at(r, gpu, dtype, M) && strcmp(r->method, method) == 0)
			return r;
	}
	return NULL;
}

const peer_row *peers_best(const peer_set *p, const char *gpu, const char *dtype, long long M,
			   long long N)
{
	const peer_row *best = NULL;
	for (size_t i = 0; p && i < p->n_rows; i++) {
		const peer_row *r = &p->rows[i];
		if (r->N == N && timed_peer_at(r, gpu, dtype, M) && (!best || r->us < best->us))
			best = r;
	}
	return best;
}

static int method_rank(const char *m)
{
	return strcmp(m, "torch") == 0 ? 0 : strcmp(m, "triton") == 0 ? 1
					 : strcmp(m, "compile") == 0 ? 2 : 3;
}

size_t peers_methods(const peer_set *p, const char *gpu, const char *dtype, long long M,
		     const char **names, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; p && i < p->n_rows; i++) {
		const peer_row *r = &p->rows[i];
		if (!timed_peer_at(r, gpu, dtype, M))
			continue;
		size_t k = 0;
		while (k < n && strcmp(names[k], r->method) != 0)
			k++;
		if (k < n || n == cap)
			continue;
		/* insertion in rank, then name, order */
		size_t at = n;
		while (at > 0 && (method_rank(names[at - 1]) > method_rank(r->method) ||
				  (method_rank(names[at - 1]) == method_rank(r->method) &&
				   strcmp(names[at - 1], r->method) > 0))) {
			names[at] = names[at - 1];
			at--;
		}
		names[at] = r->method;
		n++;
	}
	return n;
}

/* Template specialisation: parameter assignment and source generation. */
#include "gen/specialize.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/kernel_source.h"
#include "common/strbuf.h"

void variant_defaults(variant *v, const tmpl_manifest *t, at_dtype dt)
{
	memset(v, 0, sizeof *v);
	v->tmpl = t;
	v->dtype = dt;
	for (size_t i = 0; i < t->nparams && i < VARIANT_MAX_PARAMS; i++)
		v->values[i] = t->params[i].def;
}

int variant_set(variant *v, const char *assignment, at_error *err)
{
	const char *eq = strchr(assignment, '=');
	if (!eq || eq == assignment)
		return at_error_set(err, "bad parameter \"%s\": expected NAME=VALUE",
				    assignment);
	char name[64];
	size_t len = (size_t)(eq - assignment);
	if (len >= sizeof name)
		len = sizeof name - 1;
	memcpy(name, assignment, len);
	name[len] = '\0';
	int idx = manifest_param_index(v->tmpl, name);
	if (idx < 0)
		return at_error_set(err, "template %s has no parameter \"%s\"",
				    v->tmpl->name, name);
	char *end;
	errno = 0;
	long long value = strtoll(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end)
		return at_error_set(err, "parameter %s: \"%s\" is not an integer",
				    name, eq + 1);
	const tmpl_param *p = &v->tmpl->params[idx];
	for (size_t i = 0; i < p->nvalues; i++) {
		if (p->values[i] == value) {
			v->values[idx] = value;
			return 0;
		}
	}
	strbuf allowed = { 0 };
	for (size_t i = 0; i < p->nvalues; i++)
		strbuf_printf(&allowed, "%s%lld", i ? ", " : "", p->values[i]);
	at_error_set(err, "parameter %s=%lld is not allowed by template %s (values: %s)",
		     name, value, v->tmpl->name, allowed.data ? allowed.data : "");
	strbuf_free(&allowed);
	return -1;
}

char *variant_params_str(const variant *v)
{
	manifest_rules r;
	manifest_rules_view(v->tmpl, &r);
	size_t len = tr_params_text(&r.t, v->values, NULL, 0);
	char *text = xmalloc(len + 1);
	tr_params_text(&r.t, v->values, text, len + 1);
	manifest_rules_free(&r);
	return text;
}

static char *read_file(const char *path, at_error *err)
{
	char *text = strbuf_read_file(path);
	if (!text)
		at_error_set(err, "%s: cannot open: %s", path, strerror(errno));
	return text;
}

/* If line is `#include "name"`, copies name into out and returns 1. */
static int quoted_include(const char *line, size_t len, char *out, size_t cap)
{
	const char *p = line, *end = line + len;
	while (p < end && isspace((unsigned char)*p))
		p++;
	static const char directive[] = "#include";
	if ((size_t)(end - p) < sizeof directive - 1 ||
	    strncmp(p, directive, sizeof directive - 1) != 0)
		return 0;
	p += sizeof directive - 1;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p >= end || *p != '"')
		return 0;
	const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
	if (!q || (size_t)(q - p - 1) >= cap)
		return 0;
	memcpy(out, p + 1, (size_t)(q - p - 1));
	out[q - p - 1] = '\0';
	return 1;
}

static int is_pragma_once(const char *line, size_t len)
{
	static const char text[] = "#pragma once";
	return len >= sizeof text - 1 && strncmp(line, text, sizeof text - 1) == 0;
}

/* Appends the file at path to out with quoted includes expanded (files
 * beside the template only; a depth limit stops include cycles). */
static int append_expanded(strbuf *out, const char *dir, const char *path, int depth,
			   at_error *err)
{
	if (depth > 8)
		return at_error_set(err, "%s: includes nested too deeply", path);
	char *text = read_file(path, err);
	if (!text)
		return -1;
	int rc = 0;
	for (const char *line = text; *line && rc == 0;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char name[256];
		if (quoted_include(line, len, name, sizeof name)) {
			char sub[4096];
			snprintf(sub, sizeof sub, "%s/%s", dir, name);
			strbuf_printf(out, "// ---- begin %s ----\n", name);
			rc = append_expanded(out, dir, sub, depth + 1, err);
			strbuf_printf(out, "// ---- end %s ----\n", name);
		} else if (!is_pragma_once(line, len)) {
			strbuf_append(out, line, len);
			strbuf_append(out, "\n", 1);
		}
		line += len + (nl ? 1 : 0);
	}
	free(text);
	return rc;
}

char *template_body(const tmpl_manifest *t, at_error *err)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", t->source_path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof dir, ".");
	strbuf s = { 0 };
	if (append_expanded(&s, dir, t->source_path, 0, err) != 0) {
		strbuf_free(&s);
		return NULL;
	}
	return strbuf_take(&s);
}

/* The last template bodies read, by path, size and modification time: a
 * sweep specialises thousands of variants of a few templates, and reading
 * and expanding the files for each was a tenth of a warm sweep's host
 * time. The main file's stat catches a template rewritten in place (tests
 * do); its includes are read with it. */
#define BODY_MEMO 16
static struct body_memo {
	char *path;
	off_t size;
	struct timespec mtime;
	char *body;
} body_memo[BODY_MEMO];
static size_t body_memo_next;
static pthread_mutex_t body_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static char *memoised_body(const tmpl_manifest *t, at_error *err)
{
	struct stat st;
	if (stat(t->source_path, &st) != 0)
		return template_body(t, err); /* which reports why */
	char *copy = NULL;
	pthread_mutex_lock(&body_memo_lock);
	for (size_t i = 0; i < BODY_MEMO && !copy; i++) {
		struct body_memo *m = &body_memo[i];
		if (m->path && strcmp(m->path, t->source_path) == 0 && m->size == st.st_size &&
		    m->mtime.tv_sec == st.st_mtim.tv_sec && m->mtime.tv_nsec == st.st_mtim.tv_nsec)
			copy = xstrdup(m->body);
	}
	pthread_mutex_unlock(&body_memo_lock);
	if (copy)
		return copy;
	char *body = template_body(t, err);
	if (!body)
		return NULL;
	pthread_mutex_lock(&body_memo_lock);
	struct body_memo *m = &body_memo[body_memo_next++ % BODY_MEMO];
	free(m->path);
	free(m->body);
	*m = (struct body_memo){ xstrdup(t->source_path), st.st_size, st.st_mtim, xstrdup(body) };
	pthread_mutex_unlock(&body_memo_lock);
	return body;
}

char *specialize(const variant *v, at_error *err)
{
	const tmpl_manifest *t = v->tmpl;
	char *body = memoised_body(t, err);
	if (!body)
		return NULL;
	const char *names[VARIANT_MAX_PARAMS];
	for (size_t i = 0; i < t->nparams && i < VARIANT_MAX_PARAMS; i++)
		names[i] = t->params[i].name;
	const char *base = strrchr(t->source_path, '/');
	char *src = kernel_source(t->name, base ? base + 1 : t->source_path, v->dtype, v->op,
				  names, v->values, t->nparams, body);
	free(body);
	if (!src)
		at_error_set(err, "template %s: out of memory building its source", t->name);
	return src;
}

/* The page's list of variants: see variant_dict.h. */
#include "reports/variant_dict.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html.h"

void vdict_init(vdict *v)
{
	memset(v, 0, sizeof *v);
}

void vdict_free(vdict *v)
{
	for (size_t i = 0; i < v->n_legends; i++) {
		free(v->legends[i].template_name);
		free(v->legends[i].names);
	}
	for (size_t i = 0; i < v->cap; i++)
		free(v->keys[i]);
	free(v->keys);
	free(v->ids);
	strbuf_free(&v->lines);
	memset(v, 0, sizeof *v);
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static int plain_template(const char *t)
{
	if (!*t || strlen(t) > 64)
		return 0;
	for (; *t; t++)
		if (!is_name_char(*t) && *t != '.' && *t != '-')
			return 0;
	return 1;
}

/* Splits params into names and values (both space-separated, appended to
 * the two buffers); 0 when they are not plain (variant_dict.h). Every
 * token must be name=value with single spaces between, so that joining
 * them back gives the very string. */
static int split_params(const char *p, strbuf *names, strbuf *values)
{
	size_t count = 0;
	while (*p) {
		const char *name = p;
		while (is_name_char(*p))
			p++;
		if (p == name || *p != '=')
			return 0;
		const char *value = ++p;
		while (is_name_char(*p) || *p == '.' || *p == '+' || *p == '-')
			p++;
		if (p == value || (*p && *p != ' ') || (*p == ' ' && !p[1]) || ++count > VDICT_MAX_PARAMS)
			return 0;
		strbuf_printf(names, "%s%.*s", count > 1 ? " " : "", (int)(value - 1 - name), name);
		strbuf_printf(values, " %.*s", (int)(p - value), value);
		if (*p)
			p++;
	}
	return 1;
}

/* The legend of (template, names), added if new; -1 when all keys are taken. */
static long legend_of(vdict *v, const char *template_name, const char *names)
{
	for (size_t i = 0; i < v->n_legends; i++)
		if (strcmp(v->legends[i].template_name, template_name) == 0 &&
		    strcmp(v->legends[i].names, names) == 0)
			return (long)i;
	if (v->n_legends == VDICT_MAX_LEGENDS)
		return -1;
	v->legends[v->n_legends] = (vdict_legend){ xstrdup(template_name), xstrdup(names) };
	return (long)v->n_legends++;
}

static char legend_key(size_t i)
{
	return i < 26 ? (char)('a' + i) : (char)('A' + (i - 26));
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* The slot of key: where it is, or the free one where it would go. */
static size_t slot_of(const vdict *v, const char *key)
{
	size_t i = (size_t)hash(key) & (v->cap - 1);
	while (v->keys[i] && strcmp(v->keys[i], key) != 0)
		i = (i + 1) & (v->cap - 1);
	return i;
}

static void grow(vdict *v)
{
	vdict old = *v;
	v->cap = old.cap ? old.cap * 2 : 1024;
	v->keys = xcalloc(v->cap, sizeof *v->keys);
	v->ids = xcalloc(v->cap, sizeof *v->ids);
	for (size_t i = 0; i < old.cap; i++) {
		if (!old.keys[i])
			continue;
		size_t j = slot_of(v, old.keys[i]);
		v->keys[j] = old.keys[i];
		v->ids[j] = old.ids[i];
	}
	free(old.keys);
	free(old.ids);
}

long vdict_id(vdict *v, const char *template_name, const char *params)
{
	if (!template_name || !params || !plain_template(template_name))
		return -1;
	strbuf key = { 0 };
	strbuf_printf(&key, "%s\n%s", template_name, params);
	if (v->cap && v->keys[slot_of(v, key.data)]) {
		long id = v->ids[slot_of(v, key.data)];
		strbuf_free(&key);
		return id;
	}
	strbuf names = { 0 }, values = { 0 };
	long legend = -1;
	if (split_params(params, &names, &values))
		legend = legend_of(v, template_name, names.data ? names.data : "");
	if (legend >= 0) {
		if (2 * (size_t)(v->n + 1) > v->cap)
			grow(v);
		size_t slot = slot_of(v, key.data);
		v->keys[slot] = strbuf_take(&key);
		v->ids[slot] = v->n;
		strbuf_printf(&v->lines, "%c%s\n", legend_key((size_t)legend),
			      values.data ? values.data : "");
	}
	strbuf_free(&key);
	strbuf_free(&names);
	strbuf_free(&values);
	return legend >= 0 ? v->n++ : -1;
}

const char *vdict_base36(char *buf, long id)
{
	char tmp[16];
	size_t n = 0;
	unsigned long u = id < 0 ? 0 : (unsigned long)id;
	do {
		tmp[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[u % 36];
		u /= 36;
	} while (u && n < sizeof tmp);
	for (size_t i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

void vdict_write(strbuf *out, const vdict *v)
{
	if (v->n == 0)
		return;
	strbuf_printf(out,
		      "<details id=\"variants-list\" class=\"variants\"><summary>The page's %ld "
		      "variants, as text</summary>\n<p class=\"note\">A shape's table holds its fastest "
		      "variants; the others are the lines of text below it, one a variant: its "
		      "line here in base 36 (the first line after the blank one is 0), its "
		      "median, min and max \xc2\xb5s, registers, then smem and spill bytes "
		      "where not both 0. Here, first a legend per template (a key, the template, "
		      "its params' names), then a variant a line: its template's key and its "
		      "params' values in that "
		      "order.</p>\n<pre id=\"variants\">",
		      v->n);
	for (size_t i = 0; i < v->n_legends; i++) {
		strbuf_printf(out, "%c ", legend_key(i));
		html_escape(out, v->legends[i].template_name);
		strbuf_puts(out, ":");
		if (*v->legends[i].names)
			strbuf_puts(out, " ");
		html_escape(out, v->legends[i].names);
		strbuf_puts(out, "\n");
	}
	strbuf_puts(out, "\n");
	html_escape(out, v->lines.data);
	strbuf_puts(out, "</pre></details>\n");
}

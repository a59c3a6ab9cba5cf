/* One checked YAML document: see yaml_doc.h. */
#include "common/yaml_doc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Long scalars are cut in messages so that the message stays readable. */
#define MAX_SHOWN 80

static int vfail_at(const ydoc *d, yaml_mark_t mark, const char *fmt, va_list ap)
{
	char what[1536];
	vsnprintf(what, sizeof what, fmt, ap);
	return at_error_set(d->err, "%s:%zu:%zu: %s", d->name, mark.line + 1, mark.column + 1,
			    what);
}

int ydoc_fail_at(const ydoc *d, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail_at(d, mark, fmt, ap);
	va_end(ap);
	return rc;
}

int ydoc_fail(const ydoc *d, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail_at(d, n->start_mark, fmt, ap);
	va_end(ap);
	return rc;
}

int ydoc_oom(const ydoc *d)
{
	return at_error_set(d->err, "%s: out of memory", d->name);
}

yaml_node_t *ydoc_root(const ydoc *d)
{
	return yaml_document_get_root_node((yaml_document_t *)&d->doc);
}

yaml_node_t *ydoc_node(const ydoc *d, int id)
{
	return yaml_document_get_node((yaml_document_t *)&d->doc, id);
}

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

const char *ydoc_string(const yaml_node_t *n)
{
	if (n->type != YAML_SCALAR_NODE || strlen(scalar_text(n)) != n->data.scalar.length)
		return NULL;
	return scalar_text(n);
}

/* How many bytes of s to show: at most MAX_SHOWN, not splitting a UTF-8
 * character. */
static int shown_len(const char *s, size_t len)
{
	if (len <= MAX_SHOWN)
		return (int)len;
	size_t cut = MAX_SHOWN;
	while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
		cut--;
	return (int)cut;
}

const char *ydoc_describe(const yaml_node_t *n, char *buf, size_t size)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		if (n->data.scalar.length == 0 && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
			snprintf(buf, size, "an empty value");
		else if (n->data.scalar.length > MAX_SHOWN)
			snprintf(buf, size, "\"%.*s...\"",
				 shown_len(scalar_text(n), n->data.scalar.length), scalar_text(n));
		else
			snprintf(buf, size, "\"%s\"", scalar_text(n));
		break;
	case YAML_SEQUENCE_NODE:
		snprintf(buf, size, "%s",
			 n->data.sequence.items.top == n->data.sequence.items.start
				 ? "an empty sequence" : "a sequence");
		break;
	case YAML_MAPPING_NODE:
		snprintf(buf, size, "%s",
			 n->data.mapping.pairs.top == n->data.mapping.pairs.start ? "an empty mapping"
										  : "a mapping");
		break;
	default:
		snprintf(buf, size, "nothing");
		break;
	}
	return buf;
}

int ydoc_fail_got(const ydoc *d, const yaml_node_t *n, const char *expected)
{
	char got[MAX_SHOWN + 16];
	ydoc_describe(n, got, sizeof got);
	return ydoc_fail(d, n, "expected %s, got %s", expected, got);
}

int ydoc_parse_ll(const char *s, long long *v)
{
	const char *digits = s[0] == '-' ? s + 1 : s;
	if (digits[0] == '\0' || (digits[0] == '0' && digits[1] != '\0'))
		return -1;
	for (const char *p = digits; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*v = x;
	return 0;
}

int ydoc_lookup_keys(const ydoc *d, const yaml_node_t *map, const char *const *keys,
		     size_t nkeys, const char *where, yaml_node_t **vals)
{
	for (size_t i = 0; i < nkeys; i++)
		vals[i] = NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *key = ydoc_node(d, p->key);
		if (key->type != YAML_SCALAR_NODE) {
			char expected[160];
			snprintf(expected, sizeof expected, "a key (a string) %s", where);
			return ydoc_fail_got(d, key, expected);
		}
		size_t i = 0;
		while (i < nkeys && strcmp(scalar_text(key), keys[i]) != 0)
			i++;
		if (i == nkeys) {
			char list[512] = "";
			for (size_t k = 0; k < nkeys; k++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
					 k ? ", " : "", keys[k]);
			char shown[MAX_SHOWN + 16];
			ydoc_describe(key, shown, sizeof shown);
			return ydoc_fail(d, key, "unknown key %s %s (expected one of: %s)", shown,
					 where, list);
		}
		if (vals[i])
			return ydoc_fail(d, key, "duplicate key \"%s\" %s", keys[i], where);
		vals[i] = ydoc_node(d, p->value);
	}
	return 0;
}

yaml_node_t *ydoc_find(const ydoc *d, const yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = ydoc_node(d, p->key);
		if (k->type == YAML_SCALAR_NODE && strcmp(scalar_text(k), key) == 0)
			return ydoc_node(d, p->value);
	}
	return NULL;
}

int ydoc_require(const ydoc *d, const yaml_node_t *map, const char *key, const char *where,
		 const yaml_node_t *val)
{
	return val ? 0 : ydoc_fail(d, map, "missing key \"%s\" %s", key, where);
}

/* Reader errors (bad UTF-8, control characters) carry only a byte offset,
 * so the line and column are counted here. */
static yaml_mark_t mark_of_offset(const char *text, size_t len, size_t off)
{
	yaml_mark_t m = { 0, 0, 0 };
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.column = 0;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			m.column++;
		}
	}
	m.index = off;
	return m;
}

static int syntax_error(const ydoc *d, const yaml_parser_t *p, const char *text, size_t len)
{
	if (p->error == YAML_MEMORY_ERROR)
		return ydoc_oom(d);
	const char *problem = p->problem ? p->problem : "unknown error";
	if (p->error == YAML_READER_ERROR)
		return ydoc_fail_at(d, mark_of_offset(text, len, p->problem_offset),
				    "invalid YAML: %s", problem);
	if (p->context)
		return ydoc_fail_at(d, p->problem_mark, "invalid YAML: %s (%s at %zu:%zu)", problem,
				    p->context, p->context_mark.line + 1,
				    p->context_mark.column + 1);
	return ydoc_fail_at(d, p->problem_mark, "invalid YAML: %s", problem);
}

/* A second document would be silently ignored otherwise. */
static int check_single_document(const ydoc *d, yaml_parser_t *p, const char *text,
				 size_t len)
{
	yaml_document_t next;
	if (!yaml_parser_load(p, &next))
		return syntax_error(d, p, text, len);
	int rc = 0;
	if (yaml_document_get_root_node(&next))
		rc = ydoc_fail_at(d, next.start_mark,
				  "expected a single YAML document, found another");
	yaml_document_delete(&next);
	return rc;
}

int ydoc_load(ydoc *d, const char *name, const char *text, size_t len, at_error *err)
{
	memset(d, 0, sizeof *d);
	d->name = name;
	d->err = err;
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return ydoc_oom(d);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int rc;
	if (!yaml_parser_load(&parser, &d->doc)) {
		rc = syntax_error(d, &parser, text, len);
	} else {
		d->loaded = 1;
		rc = check_single_document(d, &parser, text, len);
	}
	yaml_parser_delete(&parser);
	return rc;
}

void ydoc_free(ydoc *d)
{
	if (d->loaded)
		yaml_document_delete(&d->doc);
	d->loaded = 0;
}

static char *read_all(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n - 1, f);
		if (ferror(f)) {
			free(buf);
			return NULL;
		}
		if (n < cap - 1)
			break;
		char *bigger = realloc(buf, cap * 2);
		if (!bigger)
			free(buf);
		buf = bigger;
		cap *= 2;
	}
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

char *ydoc_read_file(const char *path, size_t *len, at_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		at_error_set(err, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	errno = 0;
	char *text = read_all(f, len);
	int saved = errno ? errno : ENOMEM;
	fclose(f);
	if (!text)
		at_error_set(err, "%s: cannot read: %s", path, strerror(saved));
	return text;
}

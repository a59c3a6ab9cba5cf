/* One YAML document held for checking, with the helpers that the project's
 * two YAML readers (template manifests, gen/manifest.c; sweep configs,
 * tuner/config.c) write their checks with: loading exactly one document,
 * and messages that point at the node as name:line:column, so that a
 * mistake in a file is found without reading the reader's code. */
#ifndef AT_COMMON_YAML_DOC_H
#define AT_COMMON_YAML_DOC_H

#include <stddef.h>
#include <stdio.h>
#include <yaml.h>

#include "common/error.h"

typedef struct ydoc {
	const char *name; /* the file, for messages */
	yaml_document_t doc;
	at_error *err;
	int loaded;
} ydoc;

/* Parses text (len bytes) as one YAML document into d; its root is NULL
 * for an empty text. 0, or -1 with err set: "name:line:col: invalid YAML:
 * ..." for a syntax error (with where the construct began), "expected a
 * single YAML document, found another" for a second one (which would be
 * silently ignored otherwise). Free d with ydoc_free either way. */
int ydoc_load(ydoc *d, const char *name, const char *text, size_t len, at_error *err);
void ydoc_free(ydoc *d);

/* The whole file at path, NUL-terminated (len bytes before it), malloc'd;
 * NULL with err "path: cannot open: ..." or "path: cannot read: ...". Reads
 * in chunks rather than trusting ftell, so that pipes and /dev/stdin work. */
char *ydoc_read_file(const char *path, size_t *len, at_error *err);

yaml_node_t *ydoc_root(const ydoc *d);
yaml_node_t *ydoc_node(const ydoc *d, int id);

/* Sets d's error to "name:line:col: " and the message; returns -1. */
int ydoc_fail_at(const ydoc *d, yaml_mark_t mark, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same at node n's start. */
int ydoc_fail(const ydoc *d, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "expected <expected>, got <what n is>" at n; returns -1. */
int ydoc_fail_got(const ydoc *d, const yaml_node_t *n, const char *expected);
/* "name: out of memory"; returns -1. */
int ydoc_oom(const ydoc *d);

/* What n is, for "got ...": "\"text\"" (long text cut at 80 bytes, on a
 * character boundary, with "..."), "an empty value", "a sequence", "an
 * empty sequence", "a mapping", "an empty mapping". Returns buf. */
const char *ydoc_describe(const yaml_node_t *n, char *buf, size_t size);

/* The scalar's text, or NULL for a non-scalar or for a quoted scalar with
 * an inner NUL ("12\0ab"), which C string functions would cut short. */
const char *ydoc_string(const yaml_node_t *n);

/* Only plain decimal digits with an optional minus: strtoll alone would
 * accept " 12", "+12" and stop silently at "12abc". Leading zeros are
 * refused because YAML 1.1 reads "010" as octal. 0, or -1. */
int ydoc_parse_ll(const char *s, long long *v);

/* Checks that every key of map is a string, one of keys[0..nkeys) and given
 * once, and puts each key's value (NULL when absent) in vals[i]. where
 * names the mapping after the key in messages ("in sweep entry", "at the
 * top level"). 0, or -1 with the error at the offending key. */
int ydoc_lookup_keys(const ydoc *d, const yaml_node_t *map, const char *const *keys,
		     size_t nkeys, const char *where, yaml_node_t **vals);

/* The value of key in map, or NULL. */
yaml_node_t *ydoc_find(const ydoc *d, const yaml_node_t *map, const char *key);

/* "missing key \"key\" <where>" at map, when val is NULL; 0 otherwise. */
int ydoc_require(const ydoc *d, const yaml_node_t *map, const char *key, const char *where,
		 const yaml_node_t *val);

#endif

/* The page's list of variants, so that the rows of a shape's table the page
 * does not write as HTML (reports/report_rest.h) name a variant in a few
 * characters: a variant (template and params) is stored once for the whole
 * page, and a shape's row says which by its line in the list, in base 36.
 * The default sweep has 27,879 variant rows but 5,366 distinct variants:
 * the params written once are what keeps its report under 2 MB.
 *
 * The list, as written into <pre id="variants"> (html.c's script reads it):
 *
 *   a softmax_warp: threads lanes rows_per_cta vec elems_per_thread ...
 *   b softmax_block: threads vec elems_per_thread stages ...
 *                                        <- a blank line
 *   a 128 32 8 4 32 1 0 1 0              <- variant 0: softmax_warp threads=128 ...
 *   b 256 4 8 1 0 1 0 0                  <- variant 1
 *
 * first the legends (a key, the template, its params' names in order), then
 * one line a variant: its legend's key and the values. Only plain names and
 * values are listed (see vdict_id); a row whose variant is not stays HTML. */
#ifndef AT_REPORTS_VARIANT_DICT_H
#define AT_REPORTS_VARIANT_DICT_H

#include <stddef.h>

#include "common/strbuf.h"

#define VDICT_MAX_LEGENDS 52 /* keys a-z, A-Z */
#define VDICT_MAX_PARAMS 32

typedef struct vdict_legend {
	char *template_name;
	char *names;   /* the params' names, space-separated */
} vdict_legend;

typedef struct vdict {
	vdict_legend legends[VDICT_MAX_LEGENDS];
	size_t n_legends;
	char **keys;     /* open addressing: "template\nparams", NULL when free */
	long *ids;       /* the variant's line, beside its key */
	size_t cap;      /* a power of two, or 0 */
	strbuf lines;    /* the variant lines, in id order */
	long n;          /* variants listed */
} vdict;

void vdict_init(vdict *v);
void vdict_free(vdict *v);

/* The variant's line in the list (adding it on first sight), or -1 when it
 * cannot be listed: a template name other than letters, digits, '_', '.',
 * '-'; params that are not space-separated name=value with plain names
 * (letters, digits, '_') and values (those and '.', '+', '-'); more than
 * VDICT_MAX_PARAMS params or VDICT_MAX_LEGENDS legends. */
long vdict_id(vdict *v, const char *template_name, const char *params);

/* id in base 36 (lower case) into buf (at least 16 bytes); returns buf. */
const char *vdict_base36(char *buf, long id);

/* The list as a collapsed <details id="variants-list"> holding <pre
 * id="variants">, with a line on how to read it. Nothing when it is empty. */
void vdict_write(strbuf *out, const vdict *v);

#endif

/* Splitting a result's parameter string: see params.h. */
#include "reports/params.h"

#include <stdlib.h>
#include <string.h>

static void copy_cut(char *dst, size_t cap, const char *src, size_t len)
{
	if (len >= cap)
		len = cap - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

size_t params_parse(const char *params, param_kv out[PARAMS_MAX])
{
	size_t n = 0;
	const char *p = params ? params : "";
	while (*p && n < PARAMS_MAX) {
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t");
		const char *eq = memchr(p, '=', len);
		if (eq && eq > p) {
			copy_cut(out[n].name, sizeof out[n].name, p, (size_t)(eq - p));
			copy_cut(out[n].value, sizeof out[n].value, eq + 1, len - (size_t)(eq - p) - 1);
			n++;
		}
		p += len;
	}
	return n;
}

const char *params_find(const param_kv *kv, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].name, name) == 0)
			return kv[i].value;
	return NULL;
}

static int as_number(const char *s, double *v)
{
	char *end;
	*v = strtod(s, &end);
	return *s && end != s && *end == '\0';
}

int params_value_cmp(const char *a, const char *b)
{
	double x, y;
	if (as_number(a, &x) && as_number(b, &y))
		return x < y ? -1 : x > y;
	return strcmp(a, b);
}

/* The parameter string of a result ("threads=256 vec=4 ...", in manifest
 * order) split into names and values, for the heat map. Tokens without '='
 * are skipped; over-long names or values are cut. */
#ifndef AT_REPORTS_PARAMS_H
#define AT_REPORTS_PARAMS_H

#include <stddef.h>

#define PARAMS_MAX 16

typedef struct param_kv {
	char name[64];
	char value[64];
} param_kv;

/* Splits params into at most PARAMS_MAX pairs; returns how many. */
size_t params_parse(const char *params, param_kv out[PARAMS_MAX]);

/* The value of name among the pairs, or NULL. */
const char *params_find(const param_kv *kv, size_t n, const char *name);

/* Orders two values: numerically when both are numbers, else as text. */
int params_value_cmp(const char *a, const char *b);

#endif

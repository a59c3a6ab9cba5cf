#include "dtype.h"

#include <string.h>

static const char *const dtype_names[AT_DTYPE_COUNT] = { "f32", "f16", "bf16" };
static const size_t dtype_sizes[AT_DTYPE_COUNT] = { 4, 2, 2 };

const char *at_dtype_name(at_dtype dt)
{
	return (unsigned)dt < AT_DTYPE_COUNT ? dtype_names[dt] : "?";
}

int at_dtype_parse(const char *name, at_dtype *out)
{
	for (int i = 0; i < AT_DTYPE_COUNT; i++) {
		if (strcmp(name, dtype_names[i]) == 0) {
			*out = (at_dtype)i;
			return 0;
		}
	}
	return -1;
}

size_t at_dtype_size(at_dtype dt)
{
	return (unsigned)dt < AT_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

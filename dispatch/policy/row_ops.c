/* The ops' names: see row_ops.h. */
#include "dispatch/policy/row_ops.h"

#include <string.h>

#include "include/autotune/dispatch.h"

/* the public enum (atd_query_op) and the library's indices agree */
_Static_assert(ATDI_SOFTMAX == (int)ATD_OP_SOFTMAX, "atd_op");
_Static_assert(ATDI_LOG_SOFTMAX == (int)ATD_OP_LOG_SOFTMAX, "atd_op");

static const char *const names[ATDI_NOPS] = { "softmax", "log_softmax" };

const char *atdi_op_name(int op)
{
	return op >= 0 && op < ATDI_NOPS ? names[op] : "?";
}

int atdi_op_find(const char *name)
{
	for (int i = 0; name && i < ATDI_NOPS; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *atdi_op_dtype_name(int op, int dtype)
{
	static const char *const kinds[ATDI_NOPS][3] = {
		{ "f32", "f16", "bf16" },
		{ "log_softmax f32", "log_softmax f16", "log_softmax bf16" },
	};
	return op >= 0 && op < ATDI_NOPS && dtype >= 0 && dtype < 3 ? kinds[op][dtype] : "?";
}

/* The table of ops: see ops.h. */
#include "tuner/ops/ops.h"

#include <string.h>

#include "common/strbuf.h"

/* The ops of this tree: one line an op. */
static const at_op *const builtin[] = {
	&softmax_op,
	&log_softmax_op,
	&softmax_backward_op,
	&log_softmax_backward_op,
	&cross_entropy_op,
};

#define NBUILTIN (sizeof builtin / sizeof builtin[0])
#define MAX_EXTRA 8

static const at_op *extra[MAX_EXTRA];
static size_t nextra;

size_t op_count(void)
{
	return NBUILTIN + nextra;
}

const at_op *op_at(size_t i)
{
	return i < NBUILTIN ? builtin[i] : i < NBUILTIN + nextra ? extra[i - NBUILTIN] : NULL;
}

const at_op *op_find(const char *name)
{
	for (size_t i = 0; name && i < op_count(); i++)
		if (strcmp(op_at(i)->name, name) == 0)
			return op_at(i);
	return NULL;
}

char *op_names(void)
{
	strbuf s = { 0 };
	for (size_t i = 0; i < op_count(); i++)
		strbuf_printf(&s, "%s%s", i ? ", " : "", op_at(i)->name);
	return strbuf_take(&s);
}

int op_register(const at_op *op)
{
	if (!op || !op->name || op_find(op->name) || nextra == MAX_EXTRA)
		return -1;
	extra[nextra++] = op;
	return 0;
}

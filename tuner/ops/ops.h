/* The ops the tuner knows: one table (ops.c) of descriptions (common/op.h),
 * one file each (NAME_op.c). Adding an op is a folder of templates with
 * `op: NAME`, its NAME_op.c (with its hooks, op_gpu.h, if it has its own
 * launch), one line in ops.c's table, and tests: the sweep, the check, the
 * database, the selection and the report look the op up here by name. */
#ifndef AT_TUNER_OPS_H
#define AT_TUNER_OPS_H

#include <stddef.h>

#include "common/op.h"

extern const at_op softmax_op;
extern const at_op log_softmax_op;
extern const at_op softmax_backward_op;
extern const at_op log_softmax_backward_op;
extern const at_op cross_entropy_op;

/* The op called name, or NULL when none is described. */
const at_op *op_find(const char *name);

/* The described ops in turn: i < op_count(). */
size_t op_count(void);
const at_op *op_at(size_t i);

/* "softmax, scale2": the names, for an error message (malloc'd). */
char *op_names(void);

/* Adds op to the table for this process (tests, and ops described outside
 * the tree): 0, or -1 when its name is taken or the table is full. The
 * description must outlive its use. */
int op_register(const at_op *op);

#endif

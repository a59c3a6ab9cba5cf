/* The row-wise ops the library serves, as indices: one public call each
 * (atd_softmax, atd_log_softmax), named in the database's winners.op and
 * in the manifests (a template computes its `op:` and its `also_ops:`,
 * common/template_rules.h). */
#ifndef AT_DISPATCH_ROW_OPS_H
#define AT_DISPATCH_ROW_OPS_H

typedef enum atdi_op {
	ATDI_SOFTMAX = 0,
	ATDI_LOG_SOFTMAX = 1,
	ATDI_NOPS
} atdi_op;

/* "softmax", "log_softmax"; "?" out of range. */
const char *atdi_op_name(int op);

/* "f32" for softmax (as the library always said it), "log_softmax f32"
 * for another op: what messages name a shape's kind by. */
const char *atdi_op_dtype_name(int op, int dtype);

/* The op called name: its index, or -1 for one the library does not serve. */
int atdi_op_find(const char *name);

#endif

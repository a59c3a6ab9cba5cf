/* The op description's arithmetic: see op.h. */
#include "common/op.h"

double at_op_bytes_moved(const at_op *op, at_dtype dt, long long M, long long N)
{
	return (double)(op->reads_per_elem + op->writes_per_elem) * (double)M * (double)N *
	       (double)at_dtype_size(dt);
}

double at_op_tolerance(const at_op *op, at_dtype dt)
{
	return (int)dt >= 0 && (int)dt < AT_DTYPE_COUNT ? op->tolerance[dt] : 0;
}

int at_op_inputs(const at_op *op)
{
	return op->ninputs > 1 ? op->ninputs : 1;
}

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

size_t at_op_side_offset(const at_op *op, at_dtype dt, long long M, long long N)
{
	size_t inputs = (size_t)M * (size_t)N * (size_t)at_op_inputs(op) * at_dtype_size(dt);
	return op->side_bytes ? (inputs + 15) / 16 * 16 : inputs;
}

size_t at_op_input_bytes(const at_op *op, at_dtype dt, long long M, long long N)
{
	return at_op_side_offset(op, dt, M, N) + (size_t)M * (size_t)op->side_bytes;
}

size_t at_op_device_input_stride(const at_op *op, at_dtype dt, long long M, long long N)
{
	size_t bytes = (size_t)M * (size_t)N * at_dtype_size(dt);
	return at_op_inputs(op) > 1 && !op->side_bytes ? (bytes + 255) / 256 * 256 : bytes;
}

size_t at_op_ref_count(const at_op *op, long long M, long long N)
{
	return (size_t)M * (size_t)N + (size_t)M * (size_t)op->row_results;
}

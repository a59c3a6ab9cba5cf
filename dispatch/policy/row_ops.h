/* The ops the library serves, one table (row_ops.c): each op's name (the
 * database's winners.op, the manifests' `op:`/`also_ops:`), the kernel
 * every template of its family defines, how that kernel is called, and
 * what a row of zeros gives. Adding an op to the library is a row here, a
 * launcher for a new signature (dispatch/runtime/op_launch.h), a built-in
 * kernel (builtin_params.h) and its public call: decide, resolve, the
 * module loader and online tuning take the op's row, never its index. */
#ifndef AT_DISPATCH_ROW_OPS_H
#define AT_DISPATCH_ROW_OPS_H

typedef enum atdi_op {
	ATDI_SOFTMAX = 0,
	ATDI_LOG_SOFTMAX = 1,
	ATDI_SOFTMAX_BACKWARD = 2,
	ATDI_LOG_SOFTMAX_BACKWARD = 3,
	ATDI_CROSS_ENTROPY = 4, /* N is V */
	ATDI_NOPS
} atdi_op;

/* How an op's kernel takes its arguments: which launcher runs it. */
typedef enum atdi_signature {
	ATDI_SIG_ROW,      /* (y, x, M, N, ldy, ldx, flags): launch_softmax */
	ATDI_SIG_ROW_GRAD, /* (dx, y, dy, M, N, lddx, ldy, lddy, flags): launch_softmax_backward */
	ATDI_SIG_CROSS_ENTROPY, /* ce_launch_args: launch_cross_entropy */
	ATDI_NSIGS
} atdi_signature;

/* The most kernels an op's code defines beside its own (atdi_op_desc.aux). */
#define ATDI_OP_MAX_AUX 8

/* The kernel a cross_entropy source may define beside cross_entropy_kernel
 * for the options most calls take (no soft-cap, no label smoothing), with
 * the same arguments, so that the other options' code does not set its
 * registers (launch_cross_entropy takes it for them). */
#define CE_PLAIN_KERNEL "cross_entropy_plain_kernel"

/* An empty kernel that a cross_entropy source defines when its row and
 * reduce kernels wait for the kernel before them (griddepcontrol.wait)
 * and its prepare lets the row kernel start: a marker, never launched.
 * Only then are they launched as programmatic dependent launches; a
 * database's older code would read the scale before prepare wrote it. */
#define CE_DEPENDENT_LAUNCH "cross_entropy_dependent_launch"

/* An empty kernel that a cross_entropy source defines when its scale
 * kernel waits for the kernel before it (autograd's fill of the loss's
 * gradient): a marker, never launched. */
#define CE_SCALE_WAITS "cross_entropy_scale_waits"

/* An empty kernel that a cross_entropy source defines when its row kernels
 * store each row's loss as CE_REDUCE_POLLED polls for it and let reduce
 * start only once they have waited for prepare: a marker, never launched.
 * Only then is that reduce launched for them (older code's row kernels
 * would let it start before prepare marked the losses pending). */
#define CE_LOSSES_POLLED "cross_entropy_losses_polled"

/* The reduce that sums the row losses as the row kernel stores them
 * (templates/cross_entropy_common.cuh), not after it has ended. */
#define CE_REDUCE_POLLED "cross_entropy_reduce_polled_kernel"

/* cross_entropy's aux kernels, by index. */
enum {
	ATDI_CE_PREPARE,
	ATDI_CE_REDUCE,
	ATDI_CE_SCALE,
	ATDI_CE_PLAIN,
	ATDI_CE_DEPENDENT,
	ATDI_CE_SCALE_WAITS,
	ATDI_CE_REDUCE_POLLED,
	ATDI_CE_LOSSES_POLLED
};

typedef struct atdi_op_desc {
	const char *name;   /* "softmax_backward": the tuner's and the database's */
	const char *kernel; /* "softmax_backward_kernel": the entry point of its code */
	/* The op whose templates compute this one (their manifests' `op:`):
	 * winners and models serve across ops of one family only, whose
	 * kernels share a signature. */
	int family;
	atdi_signature signature;
	int ninputs;     /* tensors of M x N read (1: x; 2: y and dy) */
	int flags_param; /* index of the kernel's last parameter, its flags */
	/* Kernels the op's code defines beside its own and its call launches
	 * around it or instead of it (cross_entropy's prepare, reduce, scale
	 * and plain); NULL: none. */
	const char *aux[ATDI_OP_MAX_AUX];
	const char *kinds[3]; /* per dtype, as messages and the online store name a shape */
	/* The output's elements when every input is 0 (online tuning's check
	 * that a variant runs and writes); NULL: the op is not tuned online. */
	double (*of_zeros)(long long N);
	/* Bit i: aux[i] may be missing from the code (its function then NULL):
	 * cross_entropy_plain_kernel, which older sources and some templates
	 * do not define, and the markers. */
	unsigned aux_optional;
	/* Bit i: aux[i] is a marker, an empty kernel never launched, whose
	 * presence says that some of the code's kernels wait for the kernel
	 * before them (griddepcontrol.wait): those are launched as
	 * programmatic dependent launches. Code stored before a kernel
	 * learnt to wait lacks its marker and is launched as it was. */
	unsigned aux_marker;
	/* The markers whose presence says that the op's own kernel waits
	 * (atdi_resolved.dependent_launch). */
	unsigned main_waits;
	/* marker_waits[i], for a marker aux[i]: the aux kernels (bit j: aux[j])
	 * that wait in code defining it (atdi_resolved.aux_dependent). */
	unsigned marker_waits[ATDI_OP_MAX_AUX];
	/* Bit i: aux[i] does the same work whatever the variant (cross_entropy's
	 * prepare, reduce and scale): the library launches the built-in
	 * module's, its own code, so that code stored before a change to
	 * them still gets the change. */
	unsigned aux_shared;
} atdi_op_desc;

/* The row of op, or NULL out of range. */
const atdi_op_desc *atdi_op_desc_of(int op);

/* "softmax", "log_softmax", ...; "?" out of range. */
const char *atdi_op_name(int op);

/* "f32" for softmax (as the library always said it), "log_softmax f32"
 * for another op: what messages name a shape's kind by. */
const char *atdi_op_dtype_name(int op, int dtype);

/* The op called name: its index, or -1 for one the library does not serve. */
int atdi_op_find(const char *name);

/* Whether a winner of op a may serve op b through its template's rules:
 * both in one family (the same kernel signature). */
int atdi_ops_share_code(int a, int b);

#endif

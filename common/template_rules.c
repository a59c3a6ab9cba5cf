/* The shape variables' names: one list for the manifest loader and the
 * dispatch library's rule evaluation. */
#include "common/template_rules.h"

const char *const tr_shape_var_names[TR_SHAPE_VARS] = {
	"M", "N", "elem_bytes", "sm_count", "cc", "max_threads", "max_smem", "regs_per_sm",
};

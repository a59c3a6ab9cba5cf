/* atd_query and atd_query_gpu (declared in include/autotune/dispatch.h):
 * a dry run of atd_softmax's decision (decide.h). */
#ifndef AT_DISPATCH_QUERY_H
#define AT_DISPATCH_QUERY_H

#include "dispatch/runtime/decide.h"

/* atd_query's dry run: nothing compiled, loaded, tuned or launched; a
 * stored kernel's digests are checked, as loading it would. A compile or
 * load is taken to succeed and a background compile to be done, so that
 * the answer is where the shape settles; a shape the handle would tune
 * online now is answered as if untuned (only timing on the GPU can say
 * which candidate wins). */
extern const atdi_loader atdi_dry_loader;

#endif

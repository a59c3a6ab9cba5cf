/* The kernel of each variant a sweep asks for, looked up by the variant's
 * identity (template, dtype, params) before its source is built: a
 * variant's source (the template with its includes, 23-55 KB) is
 * specialised, hashed and looked up in the kernel cache once per process,
 * not once for every shape that enumerates it and again when the
 * look-ahead queued it. Over the default grid 62% of the variants a shape
 * asks for were seen at an earlier shape, and every one was built twice:
 * that host work ran while the GPU waited. A kernel's source is a function
 * of the variant alone (kernels take M and N at run time), so within one
 * process the identity is as good a key as the source. Only the thread that
 * drives the sweep calls these. */
#ifndef AT_TUNER_VARIANT_KERNELS_H
#define AT_TUNER_VARIANT_KERNELS_H

#include <stddef.h>

#include "gen/specialize.h"
#include "tuner/sweep/kernel_cache.h"

/* kernel_cache_get for variants: sets entries[i] to the kernel of vs[i],
 * compiling what neither this run nor the database has, and waits until
 * all are ready. Fails if a source cannot be built or the database fails. */
int kernel_cache_get_variants(kernel_cache *c, const variant *vs, size_t n,
			      kernel_entry **entries, at_error *err);

/* kernel_cache_queue for variants: queues the kernels not seen before and
 * returns without waiting, entries[i] (when entries is not NULL) set to
 * vs[i]'s kernel, for kernel_cache_wait. */
int kernel_cache_queue_variants(kernel_cache *c, const variant *vs, size_t n,
				kernel_entry **entries, at_error *err);

#endif

/* NVRTC's output kept across test runs (tests/compile_memo.c), for the
 * tests that compile every variant of a template: what NVRTC makes of a
 * source is a function of the source, the options, the NVRTC version and
 * the architecture, which key it (kernel_cache_key, as the tuner's own
 * compile cache). $AUTOTUNE_TEST_COMPILE_CACHE names the database (`make
 * test` sets it to build/test-compile-cache.db, and `make sanitize` points
 * at the same file, so the sanitized run reads what the plain run compiled);
 * unset or empty, every compile is done. The PTX and NVRTC's log are kept
 * (not the cubin, which these tests do not read); the resources are parsed
 * from the log again on every hit, so that the parser is run each time. */
#ifndef TESTS_COMPILE_MEMO_H
#define TESTS_COMPILE_MEMO_H

#include "cuda/nvrtc_compile.h"

#define COMPILE_MEMO_ENV "AUTOTUNE_TEST_COMPILE_CACHE"

/* nvrtc_compile, or its kept outcome: the same status and *out (but no
 * cubin) as NVRTC gave for this source; *from_memo (may be NULL) says which.
 * An outcome of NVRTC's own failure (COMPILE_ERROR) is never kept. */
int memo_compile(const char *src, const char *name, int cc, compiled_kernel *out,
		 at_error *err, int *from_memo);

#endif

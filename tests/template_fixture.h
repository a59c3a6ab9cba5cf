/* The real templates in templates/ for the tests that enumerate, specialise
 * and compile them (tests/template_fixture.c): loading them, finding one by
 * name, a variant's parameter, enumeration and launch geometry on a nominal
 * device, and an NVRTC compile that must be clean. Written once so that the
 * template tests state only what is particular to their template. The tests
 * run from the repository root. */
#ifndef TESTS_TEMPLATE_FIXTURE_H
#define TESTS_TEMPLATE_FIXTURE_H

#include <stddef.h>

#include "gen/manifest.h"
#include "cuda/nvrtc_compile.h"
#include "gen/specialize.h"
#include "tuner/device.h"
#include "tuner/sweep/enumerate.h"

/* Loads every manifest in templates/ (a suite's .init) and frees them (its
 * .fini); fails the test if they do not load. */
void tf_load_templates(void);
void tf_free_templates(void);

/* Every loaded template (*n of them, in templates/'s order). */
const tmpl_manifest *tf_templates(size_t *n);

/* The loaded template of that name; fails the test if there is none. */
const tmpl_manifest *tf_template(const char *name);

/* The value of v's parameter `param`; fails the test if v's template has no
 * such parameter. */
long long tf_value(const variant *v, const char *param);

/* Rows of n elements of size bytes a thread of a tiny template takes
 * (softmax_tiny, softmax_backward_tiny): a 16-byte vector of them where
 * they divide it, else 0 (a group of lanes a row). */
long long tf_rows_a_vector(long long n, size_t size);

/* Checks a tiny template's launch at M rows of every N in 1..16 and every
 * dtype: rows whose bytes divide 16 give a CTA threads x vectors (1 where
 * the template has no such param; at most 16 rows a thread) x 16 / the
 * row's bytes rows, other rows threads / lanes; not persistent. */
void tf_expect_tiny_rows_per_cta(const tmpl_manifest *t, long long M);

/* Compiles every distinct kernel of a tiny template at M rows of 1, 2, 4
 * and 8 elements in every dtype where the row's bytes divide 16 (its
 * vectors of rows) and checks each PTX holds the n strings of wanted (the
 * 16-byte load and store). */
void tf_expect_vector_rows_in_ptx(const tmpl_manifest *t, long long M, const char *const *wanted,
				  size_t n);

/* The variants of t enumerated at an M x N shape of dtype dt on the nominal
 * device of compute capability cc (nominal_shape_env); *out is the
 * malloc'd array. Fails the test if enumeration fails. */
size_t tf_enumerate(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N,
		    variant **out);

/* How many variants tf_enumerate gives (whether a template serves a shape). */
size_t tf_count_variants(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N);
/* How many of those have param at value. */
size_t tf_count_with(const tmpl_manifest *t, int cc, at_dtype dt, long long M, long long N,
		     const char *param, long long value);

/* v's launch geometry at M x N on the nominal device of compute capability
 * cc; fails the test if it has none. */
launch_geometry tf_geometry(const variant *v, int cc, long long M, long long N);

/* v's specialised source (free it); fails the test if it cannot be made. */
char *tf_specialize(const variant *v);

/* Compiles src, v's specialised source, with NVRTC for sm_<cc> into *k
 * (compiled_kernel_free it; no cubin when NVRTC's outcome came from
 * tests/compile_memo.h); fails the test, naming the dtype and params,
 * unless it compiles without spills and without a stack frame. */
void tf_compile_clean(const variant *v, const char *src, int cc, compiled_kernel *k);
/* The same, allowing max_spill bytes of spills (and a stack frame for them). */
void tf_compile_within(const variant *v, const char *src, int cc, int max_spill,
		       compiled_kernel *k);

/* v specialised and compiled for sm_<cc> into *k, for a test that reads its
 * PTX (spills not checked); fails the test, naming the dtype and params,
 * unless it compiles. */
void tf_compile_ptx(const variant *v, int cc, compiled_kernel *k);

/* Sources already compiled by a test (the source of many variants does not
 * depend on the shape): tf_seen_add keeps src and returns 0 the first
 * time, else returns 1 (the caller frees src); tf_seen_free frees them. */
typedef struct tf_seen {
	char **srcs;
	size_t n;
} tf_seen;
int tf_seen_add(tf_seen *s, char *src);
void tf_seen_free(tf_seen *s);

/* Compiles clean (tf_compile_clean) for sm_<cc> the first of the n
 * variants at vs of each distinct source, and calls check(v, &k, ctx) with
 * it; fails the test if n is 0. */
typedef void (*tf_kernel_check)(const variant *v, const compiled_kernel *k, void *ctx);
void tf_for_each_distinct_kernel(const variant *vs, size_t n, int cc, tf_kernel_check check,
				 void *ctx);

/* Fails the test, naming v's dtype and params, unless each of the n
 * strings in wanted is in k's PTX. */
void tf_expect_in_ptx(const variant *v, const compiled_kernel *k, const char *const *wanted,
		      size_t n);

/* A tile template's kernel (softmax_tile, softmax_backward_tile): it has
 * registers, copies in by cp.async and waits with `wait` (the PTX of its
 * wait), and stores 16-byte vectors (evict-first with cache_hint). */
void tf_expect_tile_ptx(const variant *v, const compiled_kernel *k, const char *wait);

#endif

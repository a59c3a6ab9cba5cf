/* The run's compiled-kernel cache: see kernel_cache.h. */
#include "tuner/kernel_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdio.h>

#include "common/strbuf.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* A second, independent 64-bit hash, so that the persistent key is 128 bits
 * wide: collisions across millions of kernels stay out of reach. */
static uint64_t mix_hash(const char *s, uint64_t h)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

void kernel_cache_key(const char *source, int cc, char key[33])
{
	char salt[256];
	snprintf(salt, sizeof salt, "\n//%s|%s|sm_%d", nvrtc_options_string(), nvrtc_version_string(),
		 cc);
	uint64_t a = fnv1a(source), b = mix_hash(source, 0x6a09e667f3bcc909ULL);
	a = mix_hash(salt, a);
	b = mix_hash(salt, b);
	snprintf(key, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

void kernel_cache_init(kernel_cache *c, int cc, int nthreads, tdb *db)
{
	memset(c, 0, sizeof *c);
	c->db = db;
	c->nbuckets = 1024;
	c->buckets = xcalloc(c->nbuckets, sizeof *c->buckets);
	c->cc = cc;
	c->nthreads = nthreads < 1 ? 1 : nthreads;
}

void kernel_cache_free(kernel_cache *c)
{
	for (size_t b = 0; b < c->nbuckets; b++) {
		for (kernel_entry *e = c->buckets[b], *next; e; e = next) {
			next = e->next;
			if (e->module)
				cudrv.cuModuleUnload(e->module);
			compiled_kernel_free(&e->k);
			free(e->source);
			free(e->error);
			free(e);
		}
	}
	free(c->buckets);
	memset(c, 0, sizeof *c);
}

static kernel_entry *find(kernel_cache *c, const char *src, uint64_t h)
{
	for (kernel_entry *e = c->buckets[h % c->nbuckets]; e; e = e->next)
		if (e->hash == h && strcmp(e->source, src) == 0)
			return e;
	return NULL;
}

typedef struct compile_batch {
	kernel_entry **todo;
	size_t n;
	atomic_size_t next;
	int cc;
} compile_batch;

static void *compile_worker(void *arg)
{
	compile_batch *b = arg;
	for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
		kernel_entry *e = b->todo[i];
		at_error err = { { 0 } };
		e->status = nvrtc_compile(e->source, "variant.cu", b->cc, &e->k, &err);
		if (e->status == COMPILE_ERROR)
			e->error = xstrdup(err.msg);
	}
	return NULL;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void compile_all(kernel_cache *c, kernel_entry **todo, size_t n)
{
	compile_batch b = { .todo = todo, .n = n, .cc = c->cc };
	atomic_init(&b.next, 0);
	int nthreads = (size_t)c->nthreads < n ? c->nthreads : (int)n;
	pthread_t tids[256];
	int started = 0;
	double start = now_ms();
	for (int t = 1; t < nthreads && t < 256; t++)
		if (pthread_create(&tids[started], NULL, compile_worker, &b) == 0)
			started++;
	compile_worker(&b);
	for (int t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	c->compile_ms += now_ms() - start;
	c->compiled += n;
}

/* Fills e from the database's compile cache if it is there. */
static int load_from_db(kernel_cache *c, kernel_entry *e, int *found, at_error *err)
{
	cache_entry ce;
	if (tdb_cache_get(c->db, e->key, &ce, found, err))
		return -1;
	if (!*found)
		return 0;
	e->status = ce.status == 0 ? COMPILE_OK : COMPILE_FAILED;
	e->from_db = 1;
	e->k = (compiled_kernel){ .cubin = ce.cubin, .cubin_size = ce.cubin_size, .ptx = ce.ptx,
				  .log = ce.log, .registers = ce.registers,
				  .smem_bytes = ce.smem_bytes, .spill_bytes = ce.spill_bytes,
				  .stack_bytes = ce.stack_bytes, .compile_ms = ce.compile_ms };
	c->from_db++;
	return 0;
}

/* Stores what this batch compiled (not NVRTC's own failures: those may
 * pass another time). */
static int store_in_db(kernel_cache *c, kernel_entry **todo, size_t n, at_error *err)
{
	const char **keys = xmalloc((n ? n : 1) * sizeof *keys);
	cache_entry *ces = xcalloc(n ? n : 1, sizeof *ces);
	const cache_entry **ptrs = xmalloc((n ? n : 1) * sizeof *ptrs);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const kernel_entry *e = todo[i];
		if (e->status == COMPILE_ERROR)
			continue;
		ces[m] = (cache_entry){ .status = e->status == COMPILE_OK ? 0 : 1,
					.cubin = e->k.cubin, .cubin_size = e->k.cubin_size,
					.ptx = e->k.ptx, .log = e->k.log,
					.registers = e->k.registers, .smem_bytes = e->k.smem_bytes,
					.spill_bytes = e->k.spill_bytes,
					.stack_bytes = e->k.stack_bytes,
					.compile_ms = e->k.compile_ms };
		keys[m] = e->key;
		ptrs[m] = &ces[m];
		m++;
	}
	int rc = tdb_cache_put(c->db, keys, ptrs, m, c->cc, nvrtc_version_string(), err);
	free(keys);
	free(ces);
	free(ptrs);
	return rc;
}

int kernel_cache_get(kernel_cache *c, char *const *sources, size_t n,
		     kernel_entry **entries, at_error *err)
{
	kernel_entry **todo = xmalloc((n ? n : 1) * sizeof *todo);
	size_t ntodo = 0;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = fnv1a(sources[i]);
		kernel_entry *e = find(c, sources[i], h);
		if (!e) {
			e = xcalloc(1, sizeof *e);
			e->source = xstrdup(sources[i]);
			e->hash = h;
			e->next = c->buckets[h % c->nbuckets];
			c->buckets[h % c->nbuckets] = e;
			c->count++;
			kernel_cache_key(e->source, c->cc, e->key);
			int found = 0;
			if (c->db && rc == 0)
				rc = load_from_db(c, e, &found, err);
			if (!found)
				todo[ntodo++] = e;
		}
		entries[i] = e;
	}
	if (ntodo)
		compile_all(c, todo, ntodo);
	if (ntodo && c->db && rc == 0)
		rc = store_in_db(c, todo, ntodo, err);
	free(todo);
	return rc;
}

int kernel_entry_load(kernel_entry *e, at_error *err)
{
	if (e->fn)
		return 0;
	if (e->status != COMPILE_OK)
		return at_error_set(err, "the variant did not compile");
	CU_TRY(err, cudrv.cuModuleLoadData(&e->module, e->k.cubin));
	CUresult rc = cudrv.cuModuleGetFunction(&e->fn, e->module, "softmax_kernel");
	if (rc != CUDA_SUCCESS) {
		cudrv.cuModuleUnload(e->module);
		e->module = NULL;
		return cudrv_error(err, rc, "cuModuleGetFunction(softmax_kernel)");
	}
	/* The driver's numbers are authoritative; ptxas' log is only parsed
	 * for compile-only runs. */
	int regs = 0, smem = 0, local = 0;
	if (cudrv.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, e->fn) == CUDA_SUCCESS)
		e->k.registers = regs;
	if (cudrv.cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, e->fn) == CUDA_SUCCESS)
		e->k.smem_bytes = smem;
	if (cudrv.cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, e->fn) == CUDA_SUCCESS)
		e->k.stack_bytes = local;
	return 0;
}

/* The run's compiled-kernel cache: see kernel_cache.h. */
#include "tuner/sweep/kernel_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"

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

/* FNV-1a of s and mix_hash(s, the seed) in one pass: the two chains of
 * multiplies overlap, so a 40 KB source costs about one hash, not two. */
static void source_hashes(const char *s, uint64_t *fnv, uint64_t *mix)
{
	uint64_t a = 0xcbf29ce484222325ULL, b = 0x6a09e667f3bcc909ULL;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		a = (a ^ c) * 0x100000001b3ULL;
		b ^= c;
		b *= 0x9e3779b97f4a7c15ULL;
		b ^= b >> 29;
	}
	*fnv = a;
	*mix = b;
}

/* The key from the source's two hashes, salted with what else decides the
 * cubin. */
static void key_from_hashes(uint64_t a, uint64_t b, int cc, char key[33])
{
	char salt[256];
	snprintf(salt, sizeof salt, "\n//%s|%s|sm_%d", nvrtc_options_string(), nvrtc_version_string(),
		 cc);
	a = mix_hash(salt, a);
	b = mix_hash(salt, b);
	snprintf(key, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

void kernel_cache_key(const char *source, int cc, char key[33])
{
	uint64_t a, b;
	source_hashes(source, &a, &b);
	key_from_hashes(a, b, cc, key);
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fifo_push(entry_fifo *f, kernel_entry *e)
{
	if (f->count == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		kernel_entry **items = xmalloc(cap * sizeof *items);
		for (size_t i = 0; i < f->count; i++)
			items[i] = f->items[(f->head + i) % f->cap];
		free(f->items);
		f->items = items;
		f->head = 0;
		f->cap = cap;
	}
	f->items[(f->head + f->count++) % f->cap] = e;
}

static kernel_entry *fifo_pop(entry_fifo *f)
{
	if (!f->count)
		return NULL;
	kernel_entry *e = f->items[f->head];
	f->head = (f->head + 1) % f->cap;
	f->count--;
	return e;
}

static void fifo_free(entry_fifo *f)
{
	free(f->items);
	memset(f, 0, sizeof *f);
}

void kernel_cache_init(kernel_cache *c, int cc, int nthreads, tdb *db)
{
	memset(c, 0, sizeof *c);
	c->db = db;
	c->nbuckets = 1024;
	c->buckets = xcalloc(c->nbuckets, sizeof *c->buckets);
	c->cc = cc;
	c->nthreads = nthreads < 1 ? 1 : nthreads > 256 ? 256 : nthreads;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->done, NULL);
}

/* The next entry to compile, urgent ones first; NULL once stopped. An
 * entry asked for by a get is in both lists: the second pop skips it. */
static kernel_entry *next_job(kernel_cache *c)
{
	for (;;) {
		if (c->stop)
			return NULL;
		kernel_entry *e = fifo_pop(&c->urgent);
		if (!e)
			e = fifo_pop(&c->ahead);
		if (e && e->state == ENTRY_QUEUED)
			return e;
		if (!e)
			pthread_cond_wait(&c->work, &c->lock);
	}
}

/* Compiles e, which the caller took off a queue; called and returns with
 * the lock held. */
static void compile_job(kernel_cache *c, kernel_entry *e)
{
	e->state = ENTRY_COMPILING;
	c->running++;
	if (!c->first_start_ms)
		c->first_start_ms = now_ms();
	pthread_mutex_unlock(&c->lock);
	at_error err = { { 0 } };
	compiled_kernel k;
	int status = nvrtc_compile(e->source, "variant.cu", c->cc, &k, &err);
	pthread_mutex_lock(&c->lock);
	e->k = k;
	e->status = status;
	if (status == COMPILE_ERROR)
		e->error = xstrdup(err.msg);
	/* NVRTC's own failures may pass another time: not stored */
	e->stored = status == COMPILE_ERROR || !c->db;
	e->state = ENTRY_READY;
	c->compiled++;
	c->compile_cpu_ms += k.compile_ms;
	c->pending--;
	c->running--;
	if (!e->stored)
		fifo_push(&c->finished, e);
	pthread_cond_broadcast(&c->done);
}

static void *compile_worker(void *arg)
{
	kernel_cache *c = arg;
	/* below the caller's threads (the CPU reference, launching on the
	 * GPU), which the sweep waits for; failing to lower it is harmless */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 5);
	pthread_mutex_lock(&c->lock);
	for (kernel_entry *e; (e = next_job(c));)
		compile_job(c, e);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Starts the pool on first use (under lock). */
static void start_pool(kernel_cache *c)
{
	if (c->threads)
		return;
	/* a get compiles in its own thread too while it waits */
	int n = c->nthreads > 1 ? c->nthreads - 1 : 1;
	c->threads = xcalloc((size_t)n, sizeof *c->threads);
	for (int t = 0; t < n; t++)
		if (pthread_create(&c->threads[c->nstarted], NULL, compile_worker, c) == 0)
			c->nstarted++;
}

static void stop_pool(kernel_cache *c)
{
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->lock);
	for (int t = 0; t < c->nstarted; t++)
		pthread_join(c->threads[t], NULL);
	free(c->threads);
	c->threads = NULL;
	c->nstarted = 0;
}

/* Stores every kernel compiled since the last call in one transaction. */
static int store_finished(kernel_cache *c, at_error *err)
{
	pthread_mutex_lock(&c->lock);
	entry_fifo done = c->finished;
	memset(&c->finished, 0, sizeof c->finished);
	pthread_mutex_unlock(&c->lock);
	size_t n = done.count;
	const char **keys = xmalloc((n ? n : 1) * sizeof *keys);
	cache_entry *ces = xcalloc(n ? n : 1, sizeof *ces);
	const cache_entry **ptrs = xmalloc((n ? n : 1) * sizeof *ptrs);
	for (size_t i = 0; i < n; i++) {
		kernel_entry *e = fifo_pop(&done);
		ces[i] = (cache_entry){ .status = e->status == COMPILE_OK ? 0 : 1,
					.cubin = e->k.cubin, .cubin_size = e->k.cubin_size,
					.ptx = e->k.ptx, .log = e->k.log,
					.registers = e->k.registers, .smem_bytes = e->k.smem_bytes,
					.spill_bytes = e->k.spill_bytes,
					.stack_bytes = e->k.stack_bytes,
					.compile_ms = e->k.compile_ms };
		keys[i] = e->key;
		ptrs[i] = &ces[i];
		e->stored = 1;
	}
	int rc = c->db ? tdb_cache_put(c->db, keys, ptrs, n, c->cc, nvrtc_version_string(), err) : 0;
	free(keys);
	free(ces);
	free(ptrs);
	fifo_free(&done);
	return rc;
}

int kernel_cache_stop(kernel_cache *c, at_error *err)
{
	stop_pool(c);
	c->stop = 0; /* no thread left to see it; a later get starts the pool again */
	return store_finished(c, err);
}

void kernel_cache_free(kernel_cache *c)
{
	if (!c->buckets)
		return;
	at_error ignored = { { 0 } };
	(void)kernel_cache_stop(c, &ignored); /* best effort: it is only a cache */
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
	free(c->vslots); /* variant_kernels.h's index: it owns no entry */
	fifo_free(&c->urgent);
	fifo_free(&c->ahead);
	fifo_free(&c->finished);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->done);
	memset(c, 0, sizeof *c);
}

static kernel_entry *find(kernel_cache *c, const char *src, uint64_t h)
{
	for (kernel_entry *e = c->buckets[h % c->nbuckets]; e; e = e->next)
		if (e->hash == h && strcmp(e->source, src) == 0)
			return e;
	return NULL;
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
	e->stored = 1;
	e->state = ENTRY_READY;
	e->k = (compiled_kernel){ .cubin = ce.cubin, .cubin_size = ce.cubin_size, .ptx = ce.ptx,
				  .log = ce.log, .registers = ce.registers,
				  .smem_bytes = ce.smem_bytes, .spill_bytes = ce.spill_bytes,
				  .stack_bytes = ce.stack_bytes, .compile_ms = ce.compile_ms };
	c->from_db++;
	return 0;
}

/* Moves a queued entry to the front: a caller waits for it. Under lock. */
static void promote(kernel_cache *c, kernel_entry *e)
{
	if (e->state == ENTRY_QUEUED && !e->urgent) {
		e->urgent = 1;
		fifo_push(&c->urgent, e);
		pthread_cond_signal(&c->work);
	}
}

/* The entry of src: found, read from the database, or new and queued (at
 * the front when urgent). A queued entry asked for urgently moves up. */
static kernel_entry *resolve(kernel_cache *c, const char *src, int urgent, int *rc,
			     at_error *err)
{
	uint64_t h, h2;
	source_hashes(src, &h, &h2);
	kernel_entry *e = find(c, src, h);
	if (!e) {
		e = xcalloc(1, sizeof *e);
		e->source = xstrdup(src);
		e->hash = h;
		e->next = c->buckets[h % c->nbuckets];
		c->buckets[h % c->nbuckets] = e;
		c->count++;
		key_from_hashes(h, h2, c->cc, e->key);
		int found = 0;
		if (c->db && *rc == 0)
			*rc = load_from_db(c, e, &found, err);
		if (found)
			return e;
		pthread_mutex_lock(&c->lock);
		e->state = ENTRY_QUEUED;
		c->pending++;
		e->urgent = urgent;
		fifo_push(urgent ? &c->urgent : &c->ahead, e);
		start_pool(c);
		pthread_cond_signal(&c->work);
		pthread_mutex_unlock(&c->lock);
		return e;
	}
	if (urgent) {
		pthread_mutex_lock(&c->lock);
		promote(c, e);
		pthread_mutex_unlock(&c->lock);
	}
	return e;
}

/* Sleeps until an entry becomes ready; with c->interrupted, at most
 * KERNEL_CACHE_POLL_MS, since a signal handler cannot wake a condition
 * variable. Under lock. */
static void wait_done(kernel_cache *c)
{
	if (!c->interrupted) {
		pthread_cond_wait(&c->done, &c->lock);
		return;
	}
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += KERNEL_CACHE_POLL_MS * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&c->done, &c->lock, &t);
}

/* Waits until every entry is ready, compiling urgent ones in this thread
 * too rather than sit idle; tells c->progress after each wake. Returns
 * KERNEL_CACHE_INTERRUPTED when c->interrupted ended the wait, else 0. */
static int wait_ready(kernel_cache *c, kernel_entry **entries, size_t n)
{
	double start = now_ms();
	int waited = 0, interrupted = 0;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < n; i++)
		promote(c, entries[i]);
	for (size_t i = 0; i < n && !interrupted; i++) {
		while (entries[i]->state != ENTRY_READY) {
			waited = 1;
			if (c->interrupted && c->interrupted()) {
				interrupted = 1;
				break;
			}
			kernel_entry *job = fifo_pop(&c->urgent);
			if (job && job->state == ENTRY_QUEUED)
				compile_job(c, job);
			else if (!job)
				wait_done(c);
			if (c->progress) {
				pthread_mutex_unlock(&c->lock);
				c->progress(c->progress_arg);
				pthread_mutex_lock(&c->lock);
			}
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (waited)
		c->compile_ms += now_ms() - start;
	return interrupted ? KERNEL_CACHE_INTERRUPTED : 0;
}

int kernel_cache_get(kernel_cache *c, char *const *sources, size_t n,
		     kernel_entry **entries, at_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++)
		entries[i] = resolve(c, sources[i], 1, &rc, err);
	int waited = wait_ready(c, entries, n);
	if (rc == 0)
		rc = store_finished(c, err);
	return rc ? rc : waited;
}

int kernel_cache_queue(kernel_cache *c, char *const *sources, size_t n,
		       kernel_entry **entries, at_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		kernel_entry *e = resolve(c, sources[i], 0, &rc, err);
		if (entries)
			entries[i] = e;
	}
	if (rc == 0)
		rc = store_finished(c, err);
	return rc;
}

int kernel_cache_prefetch(kernel_cache *c, char *const *sources, size_t n, at_error *err)
{
	return kernel_cache_queue(c, sources, n, NULL, err);
}

int kernel_cache_wait(kernel_cache *c, kernel_entry **entries, size_t n, at_error *err)
{
	int waited = wait_ready(c, entries, n);
	int rc = store_finished(c, err);
	return rc ? rc : waited;
}

void kernel_cache_counts(kernel_cache *c, compile_counts *out)
{
	pthread_mutex_lock(&c->lock);
	*out = (compile_counts){ c->compiled, c->running, c->pending,
				 c->first_start_ms ? (now_ms() - c->first_start_ms) / 1e3 : 0 };
	pthread_mutex_unlock(&c->lock);
}

size_t kernel_cache_pending(kernel_cache *c)
{
	pthread_mutex_lock(&c->lock);
	size_t n = c->pending;
	pthread_mutex_unlock(&c->lock);
	return n;
}

int kernel_entry_load(kernel_entry *e, const char *kernel_name, at_error *err)
{
	if (e->fn)
		return 0;
	if (e->status != COMPILE_OK)
		return at_error_set(err, "the variant did not compile");
	CU_TRY(err, cudrv.cuModuleLoadData(&e->module, e->k.cubin));
	CUresult rc = cudrv.cuModuleGetFunction(&e->fn, e->module, kernel_name);
	if (rc != CUDA_SUCCESS) {
		cudrv.cuModuleUnload(e->module);
		e->module = NULL;
		char what[160];
		snprintf(what, sizeof what, "cuModuleGetFunction(%s)", kernel_name);
		return cudrv_error(err, rc, what);
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

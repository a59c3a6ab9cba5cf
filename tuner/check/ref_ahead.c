/* A shape's input and reference, computed ahead: see ref_ahead.h. */
#include "tuner/check/ref_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "tuner/check/reference.h"

/* Buffers for one shape's input and reference. */
typedef struct ref_slot {
	at_dtype dt;
	long long M, N;
	uint64_t seed;
	int valid; /* holds (dt, M, N, seed) */
	void *x;
	size_t x_cap;
	double *ref;
	size_t ref_cap;
} ref_slot;

static struct {
	pthread_mutex_t lock;
	ref_slot slot[2];
	int current; /* the slot acquire handed out; the other is prepared */
	int busy;    /* a thread is filling the other slot */
	pthread_t thread;
} ra = { .lock = PTHREAD_MUTEX_INITIALIZER };

uint64_t ref_shape_seed(uint64_t base, at_dtype dt, long long M, long long N)
{
	return base ^ ((uint64_t)M * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)N << 20) ^ (uint64_t)dt;
}

/* Room for bytes in *buf: grows by doubling so that a sweep over growing N
 * allocates (and first touches) a few times, not at every shape; a buffer
 * more than REF_AHEAD_SLACK times too large is given back. */
static void *room(void *buf, size_t *cap, size_t bytes)
{
	if (bytes <= *cap && *cap / REF_AHEAD_SLACK <= bytes)
		return buf;
	free(buf);
	size_t grown = bytes > *cap && *cap * 2 > bytes ? *cap * 2 : bytes;
	*cap = grown;
	return xmalloc(grown);
}

static int holds(const ref_slot *s, at_dtype dt, long long M, long long N, uint64_t seed)
{
	return s->valid && s->dt == dt && s->M == M && s->N == N && s->seed == seed;
}

static void fill(ref_slot *s)
{
	size_t count = (size_t)s->M * (size_t)s->N;
	s->x = room(s->x, &s->x_cap, count * at_dtype_size(s->dt));
	s->ref = room(s->ref, &s->ref_cap, count * sizeof *s->ref);
	ref_fill_random(s->x, s->dt, count, s->seed);
	ref_softmax(s->x, s->dt, s->M, s->N, s->N, s->ref);
	s->valid = 1;
}

static void *fill_thread(void *arg)
{
	fill(arg);
	return NULL;
}

static void set_shape(ref_slot *s, at_dtype dt, long long M, long long N, uint64_t seed)
{
	s->valid = 0;
	s->dt = dt;
	s->M = M;
	s->N = N;
	s->seed = seed;
}

static void wait_for_thread(void)
{
	if (ra.busy)
		pthread_join(ra.thread, NULL);
	ra.busy = 0;
}

void ref_ahead_prepare(at_dtype dt, long long M, long long N, uint64_t seed)
{
	if (M < 1 || N < 1 ||
	    (double)M * (double)N * (double)(at_dtype_size(dt) + sizeof(double)) > REF_AHEAD_MAX_BYTES)
		return;
	pthread_mutex_lock(&ra.lock);
	wait_for_thread();
	ref_slot *ahead = &ra.slot[1 - ra.current];
	if (!holds(&ra.slot[ra.current], dt, M, N, seed) && !holds(ahead, dt, M, N, seed)) {
		set_shape(ahead, dt, M, N, seed);
		/* without a thread, acquire computes it when it is asked for */
		ra.busy = pthread_create(&ra.thread, NULL, fill_thread, ahead) == 0;
	}
	pthread_mutex_unlock(&ra.lock);
}

void ref_ahead_acquire(at_dtype dt, long long M, long long N, uint64_t seed, const void **x,
		       const double **ref)
{
	pthread_mutex_lock(&ra.lock);
	wait_for_thread();
	if (holds(&ra.slot[1 - ra.current], dt, M, N, seed))
		ra.current = 1 - ra.current;
	ref_slot *s = &ra.slot[ra.current];
	if (!holds(s, dt, M, N, seed)) {
		set_shape(s, dt, M, N, seed);
		if (M > 0 && N > 0)
			fill(s);
		s->valid = 1;
	}
	*x = s->x;
	*ref = s->ref;
	pthread_mutex_unlock(&ra.lock);
}

void ref_ahead_release(void)
{
	pthread_mutex_lock(&ra.lock);
	wait_for_thread();
	for (int i = 0; i < 2; i++) {
		free(ra.slot[i].x);
		free(ra.slot[i].ref);
		memset(&ra.slot[i], 0, sizeof ra.slot[i]);
	}
	ra.current = 0;
	pthread_mutex_unlock(&ra.lock);
}

/* Shapes' inputs and references, computed ahead: see ref_ahead.h. */
#include "tuner/check/ref_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "tuner/check/reference.h"

typedef enum slot_state {
	SLOT_EMPTY,   /* holds nothing (its buffers may be kept) */
	SLOT_QUEUED,  /* waits for the worker */
	SLOT_FILLING, /* the worker computes it, without the lock */
	SLOT_READY,   /* holds (dt, M, N, seed) */
} slot_state;

/* Buffers for one shape's input and reference. */
typedef struct ref_slot {
	const at_op *op;
	at_dtype dt;
	long long M, N;
	uint64_t seed;
	slot_state state;
	unsigned long order; /* when it was queued: the worker takes the oldest */
	void *x;
	size_t x_cap;
	void *ref; /* the reference's floats, then its row results (ref_layout) */
	size_t ref_cap;
	size_t planned; /* x_cap + ref_cap once its queued shape is in (0: as they are) */
} ref_slot;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a slot was queued, or stop */
	pthread_cond_t ready; /* a slot was filled */
	ref_slot slot[REF_AHEAD_SLOTS];
	int held;             /* the slot acquire handed out, or -1 */
	unsigned long queued; /* slots queued so far */
	int started, stop;
	size_t budget; /* the slots' bytes at most; 0 until first needed */
	pthread_t worker;
} ra = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	 .ready = PTHREAD_COND_INITIALIZER, .held = -1 };

uint64_t ref_shape_seed(uint64_t base, at_dtype dt, long long M, long long N)
{
	return base ^ ((uint64_t)M * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)N << 20) ^ (uint64_t)dt;
}

/* The capacity a buffer of cap bytes grows to for bytes: by doubling, so
 * that a sweep over growing N allocates a few times, not at every shape. */
static size_t grown(size_t cap, size_t bytes)
{
	return bytes <= cap ? cap : cap * 2 > bytes ? cap * 2 : bytes;
}

/* Room for bytes in *buf, kept from shape to shape (first touching a fresh
 * buffer costs as much as filling it). */
static void *room(void *buf, size_t *cap, size_t bytes)
{
	if (bytes <= *cap)
		return buf;
	free(buf);
	*cap = grown(*cap, bytes);
	return xmalloc(*cap);
}

static size_t default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	double quarter = pages > 0 && page > 0 ? (double)pages * (double)page / 4 : REF_AHEAD_BUDGET;
	return (size_t)(quarter < REF_AHEAD_BUDGET ? quarter : REF_AHEAD_BUDGET);
}

int ref_ahead_pending(void)
{
	int n = 0;
	pthread_mutex_lock(&ra.lock);
	for (int i = 0; i < REF_AHEAD_SLOTS; i++)
		n += i != ra.held && ra.slot[i].state != SLOT_EMPTY;
	pthread_mutex_unlock(&ra.lock);
	return n;
}

void ref_ahead_set_budget(size_t bytes)
{
	pthread_mutex_lock(&ra.lock);
	ra.budget = bytes ? bytes : default_budget();
	pthread_mutex_unlock(&ra.lock);
}

static int same_shape(const ref_slot *s, const at_op *op, at_dtype dt, long long M, long long N,
		      uint64_t seed)
{
	return s->state != SLOT_EMPTY && s->op == op && s->dt == dt && s->M == M && s->N == N && s->seed == seed;
}

/* Where a slot's reference buffer holds the row results (doubles, after
 * the M x N floats), and its bytes. */
static size_t rows_offset(long long M, long long N)
{
	size_t floats = (size_t)M * (size_t)N * sizeof(float);
	return (floats + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

static size_t ref_bytes(const at_op *op, long long M, long long N)
{
	return rows_offset(M, N) + (size_t)M * (size_t)op->row_results * sizeof(double);
}

/* The op's inputs and the reference: an op of two inputs holds both (and
 * an op's side input and row results, common/op.h). */
static size_t shape_bytes(const at_op *op, at_dtype dt, long long M, long long N)
{
	return at_op_input_bytes(op, dt, M, N) + ref_bytes(op, M, N);
}

/* A slot's buffers' bytes, or what they will grow to for its queued shape. */
static size_t slot_bytes(const ref_slot *s)
{
	size_t now = s->x_cap + s->ref_cap;
	return s->planned > now ? s->planned : now;
}

/* The slots' buffers' bytes. Under the lock. */
static size_t held_bytes(void)
{
	size_t sum = 0;
	for (int i = 0; i < REF_AHEAD_SLOTS; i++)
		sum += slot_bytes(&ra.slot[i]);
	return sum;
}

/* Whether slot i (holding nothing) may take (op, dt, M, N) within the
 * budget, after letting go of the buffers of other slots holding nothing;
 * if so, what it will hold is counted from now on (its buffers grow when
 * the shape is computed). Under the lock. */
static int within_budget(int i, const at_op *op, at_dtype dt, long long M, long long N)
{
	if (!ra.budget)
		ra.budget = default_budget();
	ref_slot *s = &ra.slot[i];
	size_t after = grown(s->x_cap, at_op_input_bytes(op, dt, M, N)) +
		       grown(s->ref_cap, ref_bytes(op, M, N));
	s->planned = 0;
	size_t others = held_bytes() - (s->x_cap + s->ref_cap);
	for (int k = 0; k < REF_AHEAD_SLOTS && others + after > ra.budget; k++) {
		ref_slot *e = &ra.slot[k];
		if (k == i || k == ra.held || e->state != SLOT_EMPTY)
			continue;
		others -= slot_bytes(e);
		free(e->x);
		free(e->ref);
		e->x = NULL;
		e->ref = NULL;
		e->x_cap = e->ref_cap = e->planned = 0;
	}
	if (others + after > ra.budget)
		return 0;
	s->planned = after;
	return 1;
}

/* Fills s (its shape set); called without the lock by whoever owns s. */
static void fill(ref_slot *s)
{
	s->x = room(s->x, &s->x_cap, at_op_input_bytes(s->op, s->dt, s->M, s->N));
	s->ref = room(s->ref, &s->ref_cap, ref_bytes(s->op, s->M, s->N));
	/* the op's input (softmax's plants extreme rows) and reference */
	ref_op_check_data_f32(s->op, s->dt, s->M, s->N, s->seed, s->x, s->ref,
			      (double *)((char *)s->ref + rows_offset(s->M, s->N)));
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ra.lock);
	for (;;) {
		ref_slot *next = NULL;
		for (int i = 0; i < REF_AHEAD_SLOTS; i++)
			if (ra.slot[i].state == SLOT_QUEUED && (!next || ra.slot[i].order < next->order))
				next = &ra.slot[i];
		if (ra.stop)
			break;
		if (!next) {
			pthread_cond_wait(&ra.work, &ra.lock);
			continue;
		}
		next->state = SLOT_FILLING;
		pthread_mutex_unlock(&ra.lock);
		fill(next);
		pthread_mutex_lock(&ra.lock);
		next->state = SLOT_READY;
		pthread_cond_broadcast(&ra.ready);
	}
	pthread_mutex_unlock(&ra.lock);
	return NULL;
}

/* A slot that may take a new shape: not handed out, not being filled or
 * waiting to be; of those, one whose buffers hold bytes and are smallest
 * (big buffers stay for big shapes), else the largest (it grows least),
 * empty ones before ready ones. -1 if none. Under the lock. */
static int free_slot(size_t bytes)
{
	int best = -1;
	for (int i = 0; i < REF_AHEAD_SLOTS; i++) {
		const ref_slot *s = &ra.slot[i];
		if (i == ra.held || s->state == SLOT_QUEUED || s->state == SLOT_FILLING)
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		const ref_slot *b = &ra.slot[best];
		if ((s->state == SLOT_EMPTY) != (b->state == SLOT_EMPTY)) {
			if (s->state == SLOT_EMPTY)
				best = i;
			continue;
		}
		size_t cs = s->x_cap + s->ref_cap, cb = b->x_cap + b->ref_cap;
		int fits_s = cs >= bytes, fits_b = cb >= bytes;
		if (fits_s != fits_b ? fits_s : fits_s ? cs < cb : cs > cb)
			best = i;
	}
	return best;
}

static int find(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed)
{
	for (int i = 0; i < REF_AHEAD_SLOTS; i++)
		if (same_shape(&ra.slot[i], op, dt, M, N, seed))
			return i;
	return -1;
}

static void set_shape(ref_slot *s, const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		      slot_state state)
{
	s->op = op;
	s->dt = dt;
	s->M = M;
	s->N = N;
	s->seed = seed;
	s->state = state;
	s->order = ra.queued++;
}

void ref_ahead_prepare(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed)
{
	if (M < 1 || N < 1 ||
	    (double)M * (double)N *
			    (double)(at_op_inputs(op) * (int)at_dtype_size(dt) + (int)sizeof(float)) +
			    (double)M * (op->side_bytes + op->row_results * (int)sizeof(double)) >
		    REF_AHEAD_MAX_BYTES)
		return;
	pthread_mutex_lock(&ra.lock);
	if (!ra.started)
		ra.started = pthread_create(&ra.worker, NULL, worker, NULL) == 0;
	int i = find(op, dt, M, N, seed);
	if (i < 0 && ra.started && (i = free_slot(shape_bytes(op, dt, M, N))) >= 0 &&
	    within_budget(i, op, dt, M, N)) {
		set_shape(&ra.slot[i], op, dt, M, N, seed, SLOT_QUEUED);
		pthread_cond_signal(&ra.work);
	}
	pthread_mutex_unlock(&ra.lock);
}

void ref_ahead_acquire(const at_op *op, at_dtype dt, long long M, long long N, uint64_t seed,
		       const void **x, const float **ref, const double **rows)
{
	pthread_mutex_lock(&ra.lock);
	ra.held = -1;
	int i = find(op, dt, M, N, seed);
	while (i >= 0 && ra.slot[i].state != SLOT_READY) {
		pthread_cond_wait(&ra.ready, &ra.lock);
		i = find(op, dt, M, N, seed); /* still there: only acquire evicts a queued slot */
	}
	if (i < 0) {
		/* not prepared: computed now, in a slot the worker does not touch */
		while ((i = free_slot(shape_bytes(op, dt, M, N))) < 0)
			pthread_cond_wait(&ra.ready, &ra.lock);
		set_shape(&ra.slot[i], op, dt, M, N, seed, SLOT_FILLING);
		pthread_mutex_unlock(&ra.lock);
		if (M > 0 && N > 0)
			fill(&ra.slot[i]);
		pthread_mutex_lock(&ra.lock);
		ra.slot[i].state = SLOT_READY;
	}
	ra.held = i;
	*x = ra.slot[i].x;
	*ref = ra.slot[i].ref;
	*rows = (const double *)((const char *)ra.slot[i].ref + rows_offset(M, N));
	pthread_mutex_unlock(&ra.lock);
}

void ref_ahead_done(void)
{
	pthread_mutex_lock(&ra.lock);
	if (ra.held >= 0)
		ra.slot[ra.held].state = SLOT_EMPTY;
	ra.held = -1;
	pthread_mutex_unlock(&ra.lock);
}

void ref_ahead_release(void)
{
	pthread_mutex_lock(&ra.lock);
	ra.stop = 1;
	pthread_cond_broadcast(&ra.work);
	int started = ra.started;
	pthread_mutex_unlock(&ra.lock);
	if (started)
		pthread_join(ra.worker, NULL);
	pthread_mutex_lock(&ra.lock);
	for (int i = 0; i < REF_AHEAD_SLOTS; i++) {
		free(ra.slot[i].x);
		free(ra.slot[i].ref);
		memset(&ra.slot[i], 0, sizeof ra.slot[i]);
	}
	ra.held = -1;
	ra.started = ra.stop = 0;
	ra.budget = 0;
	pthread_mutex_unlock(&ra.lock);
}

/* The messages between the sweep's supervisor and its worker processes,
 * one fixed-size record each way over a pipe. Both ends are the same
 * program (the worker is forked), so the record is written as it is in
 * memory. */
#ifndef AT_TUNER_WORKER_MSG_H
#define AT_TUNER_WORKER_MSG_H

#include <stddef.h>

#include "tuner/sweep/tune_shape.h"

typedef enum worker_msg_type {
	/* worker -> supervisor */
	WMSG_READY = 1,    /* initialised: sweep_id, copy_gbps */
	WMSG_GPU,          /* running `variant` of `shape` on the GPU (-1: a baseline);
			      arms the watchdog, and every repeat re-arms it */
	WMSG_CPU,          /* off the GPU for now: disarms the watchdog */
	WMSG_STEP,         /* `step` of `steps` variants of the shape checked */
	WMSG_SHAPE_DONE,   /* summary, earlier, stats (since the last SHAPE_DONE),
			      text: a one-line outcome */
	WMSG_CONTEXT_LOST, /* `variant` killed the GPU context (text: why); the worker exits */
	WMSG_FATAL,        /* text: an error that ends the sweep; the worker exits */
	/* supervisor -> worker */
	WMSG_EXCLUDE,      /* `variant` of the next shape fails with text, without running */
	WMSG_TUNE,         /* tune `shape` */
	WMSG_QUIT,
} worker_msg_type;

typedef struct worker_stats {
	size_t compiled, from_db;
	double compile_ms, bench_ms;
} worker_stats;

typedef struct worker_msg {
	int type;
	int shape;   /* index into the plan's shapes */
	int variant; /* index into the shape's variants; -1: the baselines */
	size_t step, steps;
	long long sweep_id;
	double copy_gbps;
	int earlier; /* SHAPE_DONE: tuned by an earlier sweep */
	shape_summary summary;
	worker_stats stats;
	char text[1024];
} worker_msg;

/* Writes or reads one whole record, retrying on EINTR. Return 0, or -1 on an
 * error or (read) end of file. */
int worker_msg_write(int fd, const worker_msg *m);
int worker_msg_read(int fd, worker_msg *m);

/* A message of `type` with the rest zeroed. */
worker_msg worker_msg_make(int type);

#endif

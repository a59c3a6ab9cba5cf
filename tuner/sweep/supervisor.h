/* Running a sweep's shapes in worker processes, one per GPU, so that a
 * variant that kills its CUDA context (an illegal address, a launch
 * failure), crashes the process, or hangs the GPU costs one restart of
 * that worker, not the sweep.
 *
 * The supervisor never touches CUDA or the database itself: it forks a
 * worker per device, hands out shapes one at a time (so fast GPUs take more),
 * and watches. A worker announces each variant before running it on the GPU
 * (WMSG_GPU); one that then dies, or sends nothing for the watchdog's time,
 * is killed and restarted, and the shape is given to the new worker with
 * that variant excluded (stored as failed, with the reason). A shape whose
 * worker dies more than max_deaths times is abandoned. */
#ifndef AT_TUNER_SUPERVISOR_H
#define AT_TUNER_SUPERVISOR_H

#include <stddef.h>

#include "common/error.h"
#include "tuner/sweep/worker_msg.h"

typedef struct worker_start {
	int device;            /* GPU ordinal */
	int slot, nworkers;    /* which worker of how many */
	long long sweep_id;    /* 0: begin a sweep; else a restarted worker continues it */
	double copy_gbps;      /* with sweep_id: measured by the first process */
	worker_stats carried;  /* what earlier processes of this slot did */
	int report_steps;      /* send WMSG_STEP (a progress bar is drawn) */
} worker_start;

/* A worker's body, run in the forked child: reads commands from `in`, writes
 * messages to `out`. Its return value is the child's exit status. */
typedef int (*worker_main_fn)(void *arg, const worker_start *start, int in, int out);

typedef enum shape_state { SHAPE_PENDING, SHAPE_TUNED, SHAPE_ABANDONED } shape_state;

typedef struct shape_outcome {
	shape_state state;
	int earlier;           /* tuned by an earlier sweep */
	shape_summary summary;
	int deaths;            /* worker processes lost on this shape */
	char reason[1024];     /* SHAPE_ABANDONED: why */
} shape_outcome;

/* Ctrl-C or SIGTERM (interrupt.h), caught while supervise runs: no shape
 * is handed out any more, the workers get a SIGTERM (a second Ctrl-C at
 * the terminal reaches them as the default SIGINT), and each drops its
 * shape, stores the kernels it compiled and exits, within the grace time
 * or is killed. */
#define SUPERVISOR_GRACE_MS 60000

typedef struct supervisor_options {
	const int *devices;
	int ndevices;
	size_t nshapes;
	const char *const *labels; /* per shape, for progress lines */
	int watchdog_ms;           /* 0: no watchdog */
	int max_deaths;            /* per shape, before it is abandoned */
	int quiet;                 /* no progress on stderr */
	int grace_ms;              /* after Ctrl-C, how long workers get to store what they
				    * compiled before they are killed; 0: SUPERVISOR_GRACE_MS */
	worker_main_fn worker_main;
	void *worker_arg;
} supervisor_options;

/* What one device's workers did. */
typedef struct slot_report {
	int device;
	long long sweep_id;        /* 0: its worker never started */
	double copy_gbps;
	worker_stats stats;        /* summed over its shapes */
} slot_report;

typedef struct supervisor_report {
	shape_outcome *shapes;     /* nshapes, allocated by supervise */
	slot_report *slots;        /* nslots = ndevices */
	int nslots;
	worker_stats stats;        /* summed over every device */
	size_t restarts;
	size_t abandoned;
	int interrupted;           /* the signal that interrupted the sweep, or 0 */
} supervisor_report;

/* Runs every shape. Returns 0 when the sweep ran to its end (some shapes may
 * be abandoned: report->abandoned), -1 with err set when it could not (no
 * worker started, or one reported a fatal error such as a database
 * failure) or was interrupted (report->interrupted). report is filled
 * either way; free it with supervisor_report_free. */
int supervise(const supervisor_options *o, supervisor_report *report, at_error *err);
void supervisor_report_free(supervisor_report *r);

#endif

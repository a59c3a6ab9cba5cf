/* What `autotune sweep` is asked to do (its command-line options), shared
 * by the sweep (sweep.h) and its worker processes (sweep_worker.h). */
#ifndef AT_TUNER_SWEEP_OPTIONS_H
#define AT_TUNER_SWEEP_OPTIONS_H

#include "tuner/model/prune.h"
#include "tuner/sweep/shard.h"

/* A variant that sends nothing for this long while on the GPU is taken to
 * hang: its worker is killed and restarted (supervisor.h). Long enough for
 * any honest launch (the largest shapes take tens of milliseconds). */
#define SWEEP_DEFAULT_WATCHDOG_S 20

typedef struct sweep_options {
	const char *config_path;
	const char *db_path;
	const char *templates_dir; /* NULL: see plan_templates_dir */
	int compile_only;
	int arch;                  /* 0: the GPU's (or 90 when compiling only) */
	int device;                /* GPU ordinal (--device) */
	int devices[64];           /* --devices: one worker per GPU */
	int ndevices;              /* 0: just `device` */
	int watchdog_ms;           /* a variant silent on the GPU this long is killed; 0: never */
	int threads;               /* compile threads; 0: one per core */
	shard_spec shard;          /* --shard K/N; count 0: every shape */
	int full_timing;           /* --full-timing */
	int audit;                 /* --audit: rounds against full timing, per shape */
	prune_options prune;       /* --exhaustive, --keep, --explore */
	int no_model;              /* --no-model: leave the database's models as they are */
	long long prune_before;    /* the model learns from sweeps numbered below (sweep_run sets it) */
} sweep_options;

/* The options of a plain `autotune sweep` (no flags): the pruning's
 * defaults and the watchdog; every command that sweeps starts from them. */
static inline void sweep_options_defaults(sweep_options *o)
{
	*o = (sweep_options){ .watchdog_ms = SWEEP_DEFAULT_WATCHDOG_S * 1000 };
	prune_defaults(&o->prune);
}

#endif

/* `autotune sweep`: tune every shape of a config on the GPU and store the
 * results, or (compile_only) compile every variant without a GPU. */
#ifndef AT_TUNER_SWEEP_H
#define AT_TUNER_SWEEP_H

#include "common/error.h"
#include "tuner/shard.h"

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
} sweep_options;

/* Returns 0 on success, -1 with err set. Prints the final table on stdout
 * and progress on stderr. */
int sweep_run(const sweep_options *o, at_error *err);

/* --compile-only: returns 0 when every variant compiled, 1 when some did
 * not (each failure's log is printed), -1 on an error. */
int sweep_compile_only(const sweep_options *o, at_error *err);

#endif

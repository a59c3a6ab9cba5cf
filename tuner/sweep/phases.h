/* Where a sweep's time goes, on stderr when AUTOTUNE_PHASES=1 (as
 * build-dev/sweep.sh sums them; the sweep's own output is unchanged): each
 * shape's phases (tune_shape.c) and the worker's start (sweep_worker.c). */
#ifndef AT_TUNER_SWEEP_PHASES_H
#define AT_TUNER_SWEEP_PHASES_H

/* Whether AUTOTUNE_PHASES is 1. */
int phases_wanted(void);

/* A monotonic clock in milliseconds. */
double phases_now_ms(void);

#endif
